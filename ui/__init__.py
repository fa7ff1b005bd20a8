"""attnviz's Streamlit layer: what pages import. attnviz itself never imports streamlit; this package does.

One module per idea: state (the view state of a run), pickers (one per kind of choice), runs (models and runs,
shared), memo (the one cache style), guard (errors and the truth badge), page (the one shape of a page),
present (presentation mode), heatmap (the canvas heatmap component), scale_swap (heatmaps that carry the
switch's other state), tables (the one way a page shows a table). A page's own bigger pieces live beside it in app_pages/.
"""

from ui.focus import figure
from ui.guard import guard, truth_badge
from ui.lecture.question import NO_SUBJECT, Subject
from ui.page import clamp_token_choice, open_page, run_notes, seed_from_url, setting_place
from ui.pickers import BOUND
from ui.state import LessonModel, ViewState, mark_drawn, rerun_parts, view_state
from ui.tables import table

__all__ = ["BOUND", "NO_SUBJECT", "LessonModel", "Subject", "ViewState", "clamp_token_choice", "figure", "guard", "mark_drawn",
           "open_page", "rerun_parts", "run_notes", "seed_from_url", "setting_place", "table", "truth_badge",
           "view_state"]
