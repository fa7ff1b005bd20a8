"""Efficient attention page: each method's pattern and error beside exact attention, and its measured cost."""
