"""The browser side of attnviz's components: JS and CSS files, and the plain-Python functions that hand them over.

Nothing here imports streamlit: the Streamlit layer registers them, and a Jupyter widget or a standalone HTML page
can take the same source.
"""
