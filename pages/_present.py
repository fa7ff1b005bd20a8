"""Presentation mode for a projector: `?present=1` in the link, or the sidebar toggle.

It collapses the sidebar on load (app.py reads the link) and sets larger type. Only CSS, bound to the
URL, so a lecturer's link opens ready to show.
"""

from __future__ import annotations

import streamlit as st

KEY = "present"
ON = ("1", "true", "yes", "on")
CSS = """<style>
html { font-size: 19px; }
[data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2rem; padding-right: 2rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"] { font-size: 1.12rem; line-height: 1.5; }
h1 { font-size: 2.4rem !important; } h2 { font-size: 1.9rem !important; } h3 { font-size: 1.5rem !important; }
.katex-display > .katex { font-size: 1.12em; }
</style><i id="attnviz-present" hidden></i>"""  # the marker tells FIT_MATH the formulas' type size changed


# KaTeX never wraps a display formula: where one is still wider than its column (a narrow column at
# 1024 px), shrink that formula to the column's width instead of letting its end be cut off.
FIT_MATH = """<script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const win = doc.defaultView;
  // At most one pass per animation frame however many DOM mutations a rerun makes, and in it first every
  // write that a measurement needs, then every read (one layout), then only the font sizes that change.
  // A formula's natural width is remembered per rendered node and text, so an unchanged formula is never
  // reset and re-measured: a per-formula reset-read-write loop cost 66 ms per scaling toggle.
  const natural = new WeakMap();
  const fit = () => {
    win.__attnvizFitPending = false;
    const shown = [...doc.querySelectorAll('.katex-display')].filter(d => d.firstElementChild);
    // presentation mode sets larger type (and leaves its marker): natural widths measured without it are stale.
    // Looking the marker up costs nothing; reading the computed font size forced a style pass every frame.
    const type = doc.getElementById('attnviz-present') ? 'present' : 'normal';
    const fresh = shown.map(d => {
      const k = d.firstElementChild, known = natural.get(k);
      return !known || known.text !== k.textContent || known.type !== type;
    });
    shown.forEach((d, i) => { if (fresh[i] && d.firstElementChild.style.fontSize) d.firstElementChild.style.fontSize = ''; });
    const sizes = shown.map((d, i) => [d.clientWidth, fresh[i] ? d.scrollWidth : 0]);
    shown.forEach((d, i) => {
      const k = d.firstElementChild, [w, s] = sizes[i];
      if (fresh[i]) natural.set(k, {text: k.textContent, type, width: s});
      const full = natural.get(k).width;
      const size = w > 0 && full > w + 1 ? (1.21 * (w - 2) / full).toFixed(3) + 'em' : '';
      if (k.style.fontSize !== size) k.style.fontSize = size;
    });
  };
  const soon = () => {
    if (win.__attnvizFitPending) return;
    win.__attnvizFitPending = true;
    win.requestAnimationFrame(fit);
  };
  if (!win.__attnvizFitMath) {
    win.__attnvizFitMath = true;
    new MutationObserver(soon).observe(doc.body, {childList: true, subtree: true});
    win.addEventListener('resize', soon);
  }
  soon();
})();
</script>"""


# the explorer's 'why this weight' column: should a formula still be wider than it, it scrolls sideways
# instead of being cut (static, so that a fragment rerun of the panel does not send it again)
WHY_CSS = "<style>.st-key-why .katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 6px; }</style>"


def fit_wide_math() -> None:
    """Every page: formulas wider than their column are scaled down to fit (see FIT_MATH)."""
    st.html(WHY_CSS + FIT_MATH, unsafe_allow_javascript=True)


def asked_in_link() -> bool:
    """True when the page was opened with ?present=1 (or true/yes/on)."""
    return str(st.query_params.get(KEY, "")).strip().lower() in ON


def presentation_toggle() -> bool:
    """The sidebar toggle (bound to ?present=); injects the larger type when on."""
    if KEY not in st.session_state and asked_in_link():
        st.session_state[KEY] = True  # ?present=1: a toggle's own URL form is 'true', so read the link ourselves
    on = st.sidebar.toggle("Presentation mode", key=KEY, help="Larger type for a projector; the link gets "
                           "?present=true, and opening it starts with the sidebar collapsed.",
                           bind="query-params", persist_state="session")
    if on:
        st.html(CSS)
    return on
