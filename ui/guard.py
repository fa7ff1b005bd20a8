"""The error guard and the truth badge: what a page shows when something goes wrong, and how it says it is right."""

from __future__ import annotations

import logging
import traceback
from contextlib import contextmanager

import streamlit as st

from attnviz.errors import AttnvizError

log = logging.getLogger("attnviz.app")


@contextmanager
def guard(what: str = "This part of the page"):
    """Show a user's mistake as st.error and an unexpected failure as a short message, never a traceback."""
    try:
        yield
    except AttnvizError as err:
        st.error(str(err), icon=":material/warning:")
    except Exception as err:
        log.error("%s failed:\n%s", what, traceback.format_exc())
        st.error(f"{what} could not be drawn: {type(err).__name__}: {err}", icon=":material/warning:")


def truth_badge(badge, check, matched) -> None:
    """The live check against transformers, shown in `badge` (an st.empty above the page's heatmaps).

    check() -> an attnviz.engine.truth result; matched(truth) -> the sentence for a match, saying what was compared.
    No reference, a difference and a check that could not run read the same on every page.
    """
    with st.spinner("Checking against transformers…"):
        try:
            truth = check()
            if truth.max_abs_diff is None:
                badge.info(f"Truth check: no transformers reference, since {truth.reason}.", icon=":material/info:")
            elif truth.matches:
                badge.success(matched(truth))
            else:
                badge.error(f"✗ differs from transformers: max |Δ| = {truth.max_abs_diff:.1e} (tolerance 1e-5).")
        except Exception as err:
            badge.warning(f"Truth check unavailable: {err}")
