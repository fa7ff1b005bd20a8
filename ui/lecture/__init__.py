"""Lecture mode's Streamlit side: the plans a server offers (plans), the rooms that let the presenter-notes view
follow the projector (room), and what a page shows while it is a step of a lecture (bar: the lecture bar, the
keyboard, the students' QR code, the predict-first gate). The pages are app_pages/lecture.py and lecture_notes.py.
"""
