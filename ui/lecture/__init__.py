"""Lecture mode's Streamlit side: the lecture store of this process (store), the plans a server offers (plans), what
a page shows while it is a step of a lecture (bar: the lecture bar, the keyboard, the Students popover, the
predict-first gate), following a room (follow), the class's answers (answers), the addresses students reach
(addresses) and the room's record (record). The pages are app_pages/lecture.py, lecture_notes.py and follow.py.
"""
