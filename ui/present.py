"""Presentation mode for a projector: `?present=1` in the link, or the sidebar toggle.

It keeps the sidebar collapsed (app.py asks `presenting()` on every run), moves the shared controls into the
page (ui/page.py), and sets larger type, heatmap labels included. The mode lives in the session, not in the
URL alone: Streamlit drops a link's parameters on a page switch, and a toggle bound to `present` rewrote
present=1 as present=true, or dropped it, so the first click of a lecture reopened the sidebar. Each run
writes present=1 back into the address bar, so the link a lecturer copies opens the same way.
"""

from __future__ import annotations

import streamlit as st

from ui.fit_pictures import FIT_PICTURES

KEY = "present"
ON = ("1", "true", "yes", "on")
CSS = """<style>
html { font-size: 19px; --avhm-font: 20px; }
/* the page starts below the header (3.75rem, the menu in it) with a small gap: at 3.4rem the lecture bar's buttons
   and a two-line step title began under it, cut */
[data-testid="stMainBlockContainer"] { max-width: 100%; padding: 4.25rem 2rem 2rem 2rem; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li,
[data-testid="stCaptionContainer"] { font-size: 1.12rem; line-height: 1.5; }
/* a table's words and the code in them (step 2's digits) as large as the text around them: ≥ 20 px */
[data-testid="stMarkdownContainer"] table { font-size: 1.12rem; }
[data-testid="stMarkdownContainer"] code { font-size: 0.95em; }
/* the map under a lecture step's explanation (ui/lecture/gate.py, at the figure's top): its own limit (the screen
   under the header, 100vh - 10.5rem) left its last labels under the screen's edge on a 1024×768 projector; 1.5rem
   less holds them, its words a px smaller (about 19 px) */
[class*="st-key-figure_"]:has(.st-key-lecture_explain) .av-tmap svg { max-height: calc(100vh - 12rem); }
/* a plain table (ui/tables.py: a projector's tables are st.table, not the grid's canvas) in the same type */
[data-testid="stTable"] :is(td, th) { font-size: 1.12rem; }
h1 { font-size: 2rem !important; padding-top: 0 !important; } h2 { font-size: 1.7rem !important; }
h3 { font-size: 1.4rem !important; }
.katex-display > .katex { font-size: 1.12em; }
/* the SVG charts (attnviz/draw/line_chart.py): 17 units of type drawn at about 1.2 px per unit, ≥ 20 px */
.av-line svg text { font-size: 17px; } .av-line { max-width: 100% !important; } .av-line svg { max-width: 800px; }
.av-line-legend { font-size: 1.05em !important; }
[data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: 2.25rem; line-height: 1.25; }
/* the presenter's row of controls: labels a size down, so four controls fit a 1024 px projector */
.st-key-presenter_controls [data-testid="stWidgetLabel"] p, .st-key-presenter_controls button p,
.st-key-presenter_controls [data-testid="stWidgetLabel"] { font-size: 0.85rem !important; }
/* the mask button names the mask in use ("Mask: built-in causal + window 2"): it wraps rather than end in … */
.st-key-presenter_controls [data-testid="stPopover"] button p { white-space: normal; text-align: left; }
.st-key-presenter_controls [data-testid="stPopover"] button div { overflow: visible; text-overflow: clip; }
</style><i id="attnviz-present" hidden></i>"""  # the marker tells FIT_MATH the formulas' type size changed


# KaTeX never wraps a display formula: where one is still wider than its column (a narrow column at
# 1024 px), shrink that formula to the column's width instead of letting its end be cut off.
FIT_MATH = """<script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const win = doc.defaultView;
  if (win.__attnvizFitMath) return;
  win.__attnvizFitMath = true;
  // A formula's natural width is remembered per rendered node, text, type size and fonts: an unchanged formula is
  // never reset and measured again. Its room is read when that room changes size (a ResizeObserver) or the formula
  // is new or changed, not after every change of the page: that read every formula's width, and so laid the page
  // out, four or five times per layer change of the explorer.
  const natural = new WeakMap();
  const hidden = new WeakSet();  // formulas met with no width: their room's ResizeObserver sees them shown, not look
  // KaTeX's fonts arrive after the first formulas are drawn, and change their widths: each arrival measures anew
  let fonts = 0;
  doc.fonts.addEventListener('loadingdone', () => { fonts += 1; fit([...doc.querySelectorAll('.katex-display')]); });
  // presentation mode sets larger type (and leaves its marker), fonts arrive: natural widths measured before are stale
  const typeNow = () => (doc.getElementById('attnviz-present') ? 'present' : 'normal') + fonts;
  const stale = (k, type) => {  // a formula (its KaTeX node) new, changed in place, or measured at another type
    const known = natural.get(k);
    return !known || known.text !== k.textContent || known.type !== type;
  };
  const fit = (displays) => {  // first every write a measurement needs, then every read (one layout), then the sizes
    const type = typeNow();
    for (const d of displays) if (!d.isConnected) sized.unobserve(d);  // a box gone with a rerun: let it go
    const shown = displays.filter(d => d.isConnected && d.firstElementChild);
    const fresh = shown.map(d => stale(d.firstElementChild, type));
    shown.forEach((d, i) => { if (fresh[i] && d.firstElementChild.style.fontSize) d.firstElementChild.style.fontSize = ''; });
    // a fresh formula's natural width, and its type size as a multiple of the text around it (KaTeX's 1.21em, or
    // what Streamlit's or presentation mode's CSS made it): the fitted size is that multiple, scaled down
    const em = (e) => parseFloat(win.getComputedStyle(e).fontSize);
    const sizes = shown.map((d, i) => [room(d).clientWidth, fresh[i] ? d.scrollWidth : 0,
                                       fresh[i] ? em(d.firstElementChild) / em(d) : 0]);
    shown.forEach((d, i) => {
      const k = d.firstElementChild, [w, s, base] = sizes[i];
      if (fresh[i] && s > 0) { natural.set(k, {text: k.textContent, type, width: s, base}); hidden.delete(k); }
      if (fresh[i] && s === 0) hidden.add(k);
      if (!natural.has(k)) return;  // hidden (a closed expander, another tab): measured when its room is shown
      const {width: full, base: times} = natural.get(k);
      const size = w > 0 && full > w + 1 ? (times * (w - 2) / full).toFixed(3) + 'em' : '';
      if (k.style.fontSize !== size) k.style.fontSize = size;
    });
  };
  // the room a formula has: its element's box, which the column sets. Not the formula's own box: inside a flex
  // item that box follows the formula's size, and a fit made it narrower, so the next fit smaller, and so on.
  const room = (d) => d.closest('[data-testid="stElementContainer"]') || d.parentElement || d;
  // a box whose size changed (a new formula, a resized column, presentation mode's type): fit the formulas in it
  const sized = new win.ResizeObserver((entries) =>
    fit(entries.flatMap(e => e.target.isConnected ? [...e.target.querySelectorAll('.katex-display')] : [e.target])));
  const watched = new WeakSet();
  let pending = false;
  const look = () => {  // once per animation frame with changes: no layout is read here, unless a formula changed
    pending = false;
    const again = [], type = typeNow();
    for (const d of doc.querySelectorAll('.katex-display')) {
      if (!watched.has(d)) { watched.add(d); sized.observe(room(d)); again.push(d); }
      else if (d.firstElementChild && !hidden.has(d.firstElementChild) && stale(d.firstElementChild, type))
        again.push(d);  // drawn anew in the same box, or its text changed
    }
    if (again.length) fit(again);
  };
  const soon = () => { if (!pending) { pending = true; win.requestAnimationFrame(look); } };
  new MutationObserver(soon).observe(doc.body, {childList: true, subtree: true});
  soon();
})();
</script>"""


# the explorer's 'why this weight' column: should a formula still be wider than it, it scrolls sideways
# instead of being cut (static, so that a fragment rerun of the panel does not send it again)
WHY_CSS = """<style>.st-key-why .katex-display { overflow-x: auto; overflow-y: hidden; padding-bottom: 6px; }
[data-testid="stColumn"]:has(.st-key-why) { align-self: stretch; }
@media (min-width: 640px) and (min-height: 600px) {
[data-testid="stLayoutWrapper"]:has(> .st-key-why) { position: sticky; top: 3.75rem; }
.st-key-why { max-height: calc(100vh - 4.5rem); overflow-y: auto; } }
</style>"""  # the explorer's 'why this weight' column stays in view beside the grid and the enlarged head below it: where
# the columns sit side by side (Streamlit stacks them under 640 px) on a screen tall enough; on a phone or a page
# zoomed to 200 % it was a slot of 312-568 px to read the arithmetic through


def page_style(presenting: bool) -> None:
    """Every page: formulas wider than their column are scaled down to fit (see FIT_MATH), pictures' figures lose
    their empty bottom (ui/fit_pictures.py), and presentation mode's larger type when on. One element, not two: each
    element of a page costs a gap of space on a projector."""
    st.html(WHY_CSS + FIT_MATH + FIT_PICTURES + (CSS if presenting else ""), unsafe_allow_javascript=True)


def table_height(rows: int, most: int | None = None) -> int:
    """The height (px) of an st.dataframe or st.data_editor that shows `rows` rows and its header without scrolling,
    at most `most` rows (a longer list scrolls): a row is 35 px, and on a projector 19/16 of that (its larger type
    makes the grid's rows taller, and a height worked out at 35 px cut the table's last rows off)."""
    shown = rows if most is None else min(rows, most)
    row = 42 if presenting() else 35  # 35 × 19/16, as the browser rounds it
    return row * (shown + 1) + 5  # and the grid's border


def asked_in_link() -> bool:
    """True when the page was opened with ?present=1 (or true/yes/on)."""
    return str(st.query_params.get(KEY, "")).strip().lower() in ON


def presenting() -> bool:
    """Presentation mode is on: the toggle's state once this session has one, else the link's present=1."""
    if KEY in st.session_state:
        return bool(st.session_state[KEY])
    return asked_in_link()


def presentation_toggle() -> bool:
    """The sidebar toggle; keeps present=1 in the address bar while on (page_style sets the larger type)."""
    if KEY not in st.session_state:
        st.session_state[KEY] = asked_in_link()
    on = st.sidebar.toggle("Presentation mode", key=KEY, persist_state="session",
                           help="Larger type for a projector, the sidebar closed and the sentence, model, mask and "
                                "scaling above each page. The link gets ?present=1: opening it starts so.")
    if on:
        if st.query_params.get(KEY) != "1":
            st.query_params[KEY] = "1"
    elif KEY in st.query_params:
        del st.query_params[KEY]
    return on
