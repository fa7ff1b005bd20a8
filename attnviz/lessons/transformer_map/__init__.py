"""The Transformer map's page: its blocks and their links (blocks.py), drawn as one SVG (figure.py)."""
