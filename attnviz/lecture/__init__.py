"""Lecture mode's backend: a lecture plan (an ordered list of steps, each a page of the app with its URL state,
presenter notes and an optional question to ask before revealing), its TOML loading and checking, the links
that open a step, and the QR code of a link. Streamlit-free: ui/lecture/ draws it.
"""

from attnviz.lecture.links import (
    LECTURE_KEYS,
    follow_link,
    is_loopback,
    notes_link,
    step_link,
    step_query,
    student_link,
    students_base,
)
from attnviz.lecture.plan import Plan, Step, load_plan, parse_plan
from attnviz.lecture.qr import qr_png

__all__ = ["LECTURE_KEYS", "Plan", "Step", "follow_link", "is_loopback", "load_plan", "notes_link", "parse_plan", "qr_png",
           "step_link", "step_query", "student_link", "students_base"]
