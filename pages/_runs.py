"""Running the model for a page, with the checks the explorer does first (text, mask size), as messages."""

from __future__ import annotations

import streamlit as st

from attnviz.errors import AttnvizError
from attnviz.masks import padding_count, parse_mask
from pages import _ui as ui


def checked_run(model, spec: str, device: str, text: str, mask_spec: str, scale, keep: bool = False,
                who: str = ""):
    """-> (RunResult, the mask spec really used). Raises AttnvizError for an empty text.

    An empty 'custom:' means the causal pattern for this many tokens; a mask that does not fit the
    text is reported and replaced by no mask, so the page still shows something true.
    """
    n = len(model.encode(text).ids) + padding_count(mask_spec)
    mask_spec = ui.custom_mask_default(mask_spec, n)
    try:
        parse_mask(mask_spec, n)
    except AttnvizError as err:
        st.error(f"{who}mask: {err} Showing no mask instead.", icon=":material/warning:")
        mask_spec = "none"
    res = ui.cached_run(spec, device, text, mask_spec, scale, keep)
    for note in res.notes:
        st.info(f"{who}{note}", icon=":material/content_cut:")
    return res, mask_spec
