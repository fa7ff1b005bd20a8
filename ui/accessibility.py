"""What every page does for its readers (WCAG 2.1 AA, docs/accessibility.md), called once per run by app.py:

- its own document title ("Scaling lab · attnviz"), the first words a screen reader says of a new page and what a
  browser's tabs and history list (2.4.2); a lecture step names itself over it (ui/lecture/bar.py);
- a focus ring that can be seen on every control (2.4.7): Streamlit's own is a faint tint on some controls and none
  on others (its menu's links, a checkbox, a toggle); and on the controls whose focused element is hidden (the input
  of a checkbox, a toggle, a radio button, a slider's thumb), the ring is drawn around what can be seen;
- a closed sidebar out of the Tab order (2.4.3): Streamlit only slides it off the screen;
- motion only for those who want it (2.3.3): with the system's "reduce motion" set, no animation or transition runs
  (Streamlit's running man, its expanders and menu sliding open, its fading of elements during a run): CSS stops
  what is styled, and the animations Streamlit starts from a script are given no duration;
- a phone's menu (the header's, moved into the sidebar) marked up as lists a screen reader can count (1.3.1), in a
  box of its own that scrolls, so the page's settings under it start on the sidebar's first screen;
- words that wrap rather than end in "…" where Streamlit cuts a line (a page link on a phone: 1.4.10);
- a plain table that scrolls sideways in a narrow window reachable by keyboard (2.1.1).

The style goes in Streamlit's event container (a style-only st.html), where it takes no room on the page; the one
script (SCRIPT) sits in an element the style hides.
Streamlit's own skip link ("Skip to main content", the first stop of Tab) takes the keyboard past the menu.
"""

from __future__ import annotations

import streamlit as st

APP = "attnviz"
# a blue with at least 3:1 against white and against the dark theme's background (#171614): a ring that shows on
# both themes, and on a primary (red) button's surroundings
RING = "#1a6fd8"

STYLE = f"""<style>
:root {{ --attnviz-ring: {RING}; }}
/* every control that takes the keyboard's focus: a ring outside it (it does not move the layout) */
:focus-visible {{ outline: 3px solid var(--attnviz-ring) !important; outline-offset: 2px !important; }}
/* the input of a checkbox, toggle or radio button is hidden: the ring goes around its label, which shows it */
label:has(input[type="checkbox"]:focus-visible), label:has(input[type="radio"]:focus-visible),
/* a slider's input sits hidden inside its thumb */
[data-testid="stSlider"] [data-rac]:has(> div > input[type="range"]:focus-visible),
/* a text box's, number box's and select box's input fills part of the box: the ring goes around the whole box */
[data-baseweb="input"]:has(input:focus-visible), [data-baseweb="textarea"]:has(textarea:focus-visible),
[data-baseweb="select"] > div:has(input:focus-visible) {{
  outline: 3px solid var(--attnviz-ring) !important; outline-offset: 2px !important; }}
/* a table (Streamlit's data grid) draws its cells on a canvas and gives no sign of the focused one: the ring goes
around the table while the keyboard is in it; its toolbar, shown only on hover, shows while one of its buttons has
the focus */
[data-testid="stDataFrameResizable"]:focus-within {{ outline: 3px solid var(--attnviz-ring) !important;
  outline-offset: 2px !important; }}
[data-testid="stElementToolbar"]:focus-within {{ opacity: 1 !important; }}
/* a screen with no hover (a phone): Streamlit shows a table's toolbar at all times, 44 px above the table, over the
words there (a figure's caption); it shows as a hover shows it on a desk, once the table is tapped or has the focus */
@media (hover: none) {{
  [data-testid="stFullScreenFrame"]:not(:hover):not(:focus-within) [data-testid="stElementToolbar"] {{
    visibility: hidden; }} }}
/* a box that scrolls (a wide formula, the page's main area) draws its ring inside: outside, its column would cut it */
.katex-display:focus-visible, [data-testid="stMain"]:focus-visible {{ outline-offset: -3px !important; }}
[data-baseweb="input"] input:focus-visible, [data-baseweb="textarea"] textarea:focus-visible,
[data-baseweb="select"] input:focus-visible {{ outline: none !important; }}
/* a caption is Streamlit's body text at 60 % opacity, which fades a link in it as well (a blue link at 60 %: 3:1
on white): the same grey as a colour instead, so the words keep 4.6:1 or more (the theme's text colour,
.streamlit/config.toml) and a link in a caption its own colour */
[data-testid="stCaptionContainer"] {{ opacity: 1 !important;
  color: color-mix(in srgb, currentColor 60%, transparent) !important; }}
/* a disabled widget's label is the body colour at 40 % (2.6:1 on white), and its words are hidden from screen readers
while the control carries its name, so axe cannot tell it belongs to an inactive control (which WCAG 1.4.3 exempts):
at 60 %, as a caption, it still reads as quieter than an active label and meets 4.5:1 */
[data-testid="stWidgetLabel"][disabled] {{ color: color-mix(in srgb, currentColor 60%, transparent) !important; }}
/* a disabled multiselect's chosen values (its tags: the heads a follower's phone shows knocked out) are the body colour
at 40 % on a 20 % tint (2.4:1), in a box react-aria marks data-disabled, which axe cannot read as an inactive control
either: at 75 % they read as quieter than an active tag's and meet 4.5:1 */
[data-testid="stMultiSelect"] [data-disabled="true"] [data-tag] {{
  color: color-mix(in srgb, currentColor 75%, transparent) !important; }}
[data-testid="stMultiSelect"] [data-disabled="true"] [data-tag] span {{ color: inherit !important; }}
/* a primary button's words: white on the light theme's accent, dark on the dark theme's brighter one */
[data-testid="stBaseButton-primary"], [data-testid="stBaseLinkButton-primary"] {{
  color: light-dark(#ffffff, #171614) !important; }}
/* a closed sidebar (a phone, a projector) is off the screen, but Streamlit leaves its two dozen controls in the Tab
order and the accessibility tree: Tab walked through them unseen (WCAG 2.4.3, 2.4.7). Hidden while it is closed. */
[data-testid="stSidebar"][data-collapsed="true"], [data-testid="stSidebar"][data-collapsed="true"] * {{
  visibility: hidden !important; }}
/* the elements that carry scripts alone (a live region's words, ui/announce.py; SCRIPT below) take no room */
.stElementContainer:has(.attnviz-say, .attnviz-script) {{ display: none !important; }}
/* a phone's menu (the header's, in the sidebar at a phone's width) is 24 pages in 8 sections, about 1,400 px: the
page's own settings sat under it, the Text box a long scroll down. The menu keeps every page and scrolls in a box of
its own, so the settings start on the sidebar's first screen (its links take the keyboard's focus: 2.1.1) */
ul[data-testid="stSidebarNavItems"] {{ max-height: 35vh; overflow-y: auto; overscroll-behavior: contain; }}
/* a page link (st.page_link) is one line cut with "…" where it is longer than its column (a phone): it wraps */
[data-testid="stPageLink-NavLink"] p, [data-testid="stPageLink-NavLink"] span {{ white-space: normal !important;
  overflow: visible !important; text-overflow: clip !important; }}
@media (prefers-reduced-motion: reduce) {{
  *, *::before, *::after {{ animation-duration: 0.001ms !important; animation-iteration-count: 1 !important;
    animation-delay: 0s !important; transition-duration: 0.001ms !important; transition-delay: 0s !important;
    scroll-behavior: auto !important; }}
}}
</style>"""


# What no style can do, as one script installed once per page load:
# - motion: Streamlit opens and closes an expander with a script's animation (Element.animate, half a second): with
#   "reduce motion" asked for, every such animation is given no duration;
# - the phone's menu: at a phone's width Streamlit moves the header's menu into the sidebar as one list whose items sit
#   in a <div> per section, beside the section's heading: a screen reader can count neither the list nor a section's
#   pages (axe: list and listitem, 25 faults). Each section becomes a list named by its heading (which a screen reader
#   then skips, the list saying it), and the outer list a plain container; redone whenever Streamlit redraws the menu.
#   The menu scrolls in its own box (STYLE): the open page's link, when out of the box's view, is scrolled into it, a
#   third of the way down (the menu's top, its first section's heading, stays when the link is in view there).
SCRIPT = """<span class="attnviz-script" hidden></span><script>
(() => {
  const w = window.parent || window;
  if (w.__attnvizAids) return;
  w.__attnvizAids = true;
  const doc = w.document;
  const reduce = w.matchMedia('(prefers-reduced-motion: reduce)');
  const animate = w.Element.prototype.animate;
  w.Element.prototype.animate = function (frames, options) {
    if (reduce.matches) options = typeof options === 'number' ? 0 : {...(options || {}), duration: 0, delay: 0};
    return animate.call(this, frames, options);
  };
  const sections = () => {
    for (const closed of doc.querySelectorAll('[data-testid="stSidebar"][data-collapsed="true"] ul[data-attnviz-shown]'))
      delete closed.dataset.attnvizShown;  // a closed sidebar's menu: its next opening shows the page's link again
    for (const menu of doc.querySelectorAll('ul[data-testid="stSidebarNavItems"]')) {
      if (menu.getAttribute('role') !== 'none') menu.setAttribute('role', 'none');
      for (const group of menu.children) {
        if (group.tagName !== 'DIV' || group.getAttribute('role') === 'list') continue;
        const heading = group.querySelector(':scope > header');
        group.setAttribute('role', 'list');
        if (heading) {
          group.setAttribute('aria-label', (heading.querySelector('p') || heading).textContent.trim());  // not its icon
          heading.setAttribute('aria-hidden', 'true');
        }
      }
      const here = menu.querySelector('a[aria-current="page"]');  // the open page's link, in the menu's box
      // once per page and opening of the sidebar (a reader's own scrolling stays), once the box scrolls (its style in)
      const open = menu.closest('[data-testid="stSidebar"]')?.getAttribute('data-collapsed') === 'false';
      if (here && open && menu.dataset.attnvizShown !== here.href && menu.scrollHeight > menu.clientHeight) {
        menu.dataset.attnvizShown = here.href;
        const box = menu.getBoundingClientRect(), link = here.getBoundingClientRect();
        if (link.top < box.top || link.bottom > box.bottom)  // out of the box's view: a third of the way down it
          menu.scrollTop += link.top - box.top - menu.clientHeight / 3;
      }
    }
  };
  // a plain table (st.table, a projector's tables: ui/tables.py) scrolls sideways in its own box where it is wider
  // than its column (a narrow window): that box takes the keyboard's focus then, so its hidden columns can be reached
  // (2.1.1), and is named for a screen reader; a box that does not scroll is no stop of Tab
  const scrolls = (box) => {
    if (box.scrollWidth > box.clientWidth + 1) {
      box.tabIndex = 0;
      box.setAttribute('role', 'region');
      box.setAttribute('aria-label', 'table, scrolls sideways');
    } else if (box.hasAttribute('tabindex')) {
      box.removeAttribute('tabindex'); box.removeAttribute('role'); box.removeAttribute('aria-label');
    }
  };
  // read when the box or its table changes size (a ResizeObserver also reports each on its first observe), not at
  // every change of the page: each read of a width lays the page out
  const BOX = '[data-testid="stTable"] > div';
  const sized = new w.ResizeObserver((entries) => entries.forEach((e) => scrolls(e.target.closest(BOX))));
  const watched = new WeakSet();
  const tables = () => {
    for (const part of doc.querySelectorAll(`${BOX}, ${BOX} > table`))
      if (!watched.has(part)) { watched.add(part); sized.observe(part); }
  };
  let pending = false;
  new w.MutationObserver(() => {
    if (pending) return;
    pending = true;
    w.requestAnimationFrame(() => { pending = false; sections(); tables(); });
  }).observe(doc.body, {childList: true, subtree: true, attributes: true, attributeFilter: ['data-collapsed']});
  sections();
  tables();
})();
</script>"""


def document_title(page: str) -> str:
    """The browser's title for a page or a lecture step: what it is first, then the app."""
    return f"{page} · {APP}"


def page_aids(title: str) -> None:
    """The page's own document title (`title`: its menu title) and the app-wide style above."""
    st.set_page_config(page_title=document_title(title))
    st.html(STYLE)
    st.html(SCRIPT, unsafe_allow_javascript=True)
