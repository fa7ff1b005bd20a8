"""Words a screen reader says without the reader moving there: a lecture's step change, a Reveal, an answer taken
(WCAG 4.1.3, status messages).

One polite live region (role="status") per browser page, made by the first announcement and kept outside
Streamlit's own elements, so that a rerun never replaces it: a screen reader only reads what changes inside a
region it already knows. A step change is a new page load (the lecture bar's links), so the region is new then: its
first words are written a moment after it is made, once a screen reader has seen it. Each message is said once per
page load (its key): a rerun that draws the same confirmation again says nothing.

The element that carries the script takes no room: its container is hidden (ui/accessibility.py's style).
"""

from __future__ import annotations

import json

import streamlit as st

REGION_ID = "attnviz-live"
MARK = "attnviz-say"  # the class of the hidden element beside the script (ui/accessibility.py hides its container)
KEEP = 3  # messages the region holds: a step's title and an answer's confirmation can come within a second
# how long a message stays in the region: a follower's page is not loaded again at a new step, and a reader who moved
# through the page found the last step's "Your answer is in" and "Revealed" there, hidden
LAST_MS = 10_000

SAY = """<span class="MARK" hidden></span><script>
(() => {
  const w = window.parent || window, doc = w.document;
  const said = w.__attnvizSaid || (w.__attnvizSaid = new Set());
  const key = KEY, text = TEXT;
  if (said.has(key)) return;
  said.add(key);
  let region = doc.getElementById('REGION');
  const fresh = !region;
  if (fresh) {
    region = doc.createElement('div');
    region.id = 'REGION';
    region.setAttribute('role', 'status');
    region.setAttribute('aria-live', 'polite');
    region.setAttribute('aria-relevant', 'additions text');
    // seen by screen readers, not on screen
    region.style.cssText = 'position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;'
      + 'clip:rect(0 0 0 0);white-space:nowrap;border:0;';
    doc.body.appendChild(region);
  }
  const write = () => {
    const line = doc.createElement('p');
    line.textContent = text;
    region.appendChild(line);
    while (region.childElementCount > KEEP) region.firstElementChild.remove();
    setTimeout(() => line.remove(), LAST_MS);  // said by then; read later, it would be stale
  };
  if (fresh) setTimeout(write, 700); else write();  // a new region: words after a screen reader has met it
})();
</script>"""


def announce(text: str, key: str) -> None:
    """Say `text` through the page's polite live region, once per page load for this `key`."""
    script = (SAY.replace("MARK", MARK).replace("REGION", REGION_ID).replace("KEEP", str(KEEP))
              .replace("LAST_MS", str(LAST_MS)).replace("KEY", js_string(key)).replace("TEXT", js_string(text)))
    st.html(script, unsafe_allow_javascript=True)


def js_string(text: str) -> str:
    """A JavaScript string literal of `text` that cannot end the script it sits in (a plan's title may hold "</")."""
    return json.dumps(text).replace("<", "\\u003c")
