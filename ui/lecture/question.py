"""A step's question as the room sees it before Reveal, with what it refers to: the page's input (the sentence, the
number in words, the source: each page names its own with a Subject) and a choice's options lettered A, B, C… On the
projector in type for a lecture hall (≥ 32 px at 1024×768: 1.75rem of presentation mode's 19 px); on a phone the
same, smaller, above the answer box, whose options carry the same letters.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

import streamlit as st

from attnviz.lecture.kinds import Ask
from attnviz.lecture.kinds.base import letter
from ui.present import presenting


@dataclass(frozen=True)
class Subject:
    """What a page's lecture questions are about: the page's input, named for the room ("The number, in words"), read
    from its URL key as the page reads it (the step's state), else the page's default. NO_SUBJECT: a page whose
    questions are about what it makes itself (the induction page's random block), not the shared sentence.
    says: where the questions are about a setting rather than a text (the Scaling lab's d_k), the sentence that says
    what is measured, with {} where the setting's value goes; it is shown as written, not quoted as a text is."""

    label: str
    key: str
    default: str
    says: str = ""

    def value(self) -> str:
        if not self.key:
            return self.default
        raw = st.query_params.get(self.key)
        if raw is None:
            raw = st.session_state.get(self.key)
        return str(raw if raw not in (None, "") else self.default)


NO_SUBJECT = Subject("", "", "")


def esc(text: str) -> str:
    """Text for the question's HTML: <, > and & escaped (quotes are text here, not attributes)."""
    return html.escape(text, quote=False)


def marked(text: str, word: str) -> str:
    """The text, HTML-escaped, with the first whole-word occurrence of `word` in bold (a token question's query)."""
    if not word:
        return esc(text)
    found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text, flags=re.IGNORECASE)
    if found is None:
        return esc(text)
    return (esc(text[:found.start()]) + f"<b>{esc(found.group(0))}</b>"
            + esc(text[found.end():]))


def question_box(step, subject: Subject | None, sentence: str = "", ask: Ask | None = None, options: bool = True) -> None:
    """The question, what it refers to, and lettered options (ask: what the class is asked, when its options are
    lettered; options=False: the answer box under it shows them, lettered the same). subject: the page's input (None:
    the shared sentence, `sentence`, when the page uses one)."""
    projector = presenting()
    label = "Predict first." if step.predict_first else "Question."
    asked = " ".join(step.question.split())
    parts = [f"<p class='lq-ask'><b>{label}</b> {esc(asked)}</p>"]
    what, text = (subject.label, subject.value()) if subject is not None else ("The sentence", sentence)
    spec = step.answer
    if subject is not None and subject.says:
        parts.append(f"<p class='lq-about'>{esc(what)}: {esc(subject.says.format(text.strip()))}</p>")
    elif what and text.strip():
        query = str(getattr(spec, "query", "") or "")  # a question about one query token: in bold in its sentence
        parts.append(f"<p class='lq-about'>{esc(what)}: «{marked(text.strip(), query)}»</p>")
    if options and ask is not None and ask.lettered:
        parts.append("<ul class='lq-options'>" + "".join(f"<li><b>{letter(i)}.</b> {esc(str(o))}</li>"
                                                         for i, o in enumerate(ask.options)) + "</ul>")
    # markdown (its HTML allowed: every text in it is escaped here), so the question is the page's text as any other
    st.markdown((PROJECTOR_CSS if projector else PHONE_CSS) + "<div class='lq'>" + "".join(parts) + "</div>",
                unsafe_allow_html=True)
    if projector:
        st.html(IN_VIEW, unsafe_allow_javascript=True)


# a question with long options ran past a 1024×768 projector's bottom: once drawn, its box (the question, what it
# refers to, the options, Reveal) is scrolled up into view, once per page load, unless the lecturer scrolled. Only as
# far as it needs, and never so far that the lecture bar goes under Streamlit's header: scrolled to the box's top (as
# it was), the bar's buttons and title were cut (the default plan's step 2 on a projector's first load)
IN_VIEW = """<script>
(() => {
  const win = window.parent || window, doc = win.document;
  if (win.__attnvizQuestionInView) return;
  win.__attnvizQuestionInView = performance.now();  // when it started (a test waits for its 5 s to pass)
  let stopped = false;
  const stop = () => { stopped = true; };
  win.addEventListener('wheel', stop, {once: true, passive: true});
  win.addEventListener('touchmove', stop, {once: true, passive: true});
  const scroller = (e) => {  // the element that scrolls the page (Streamlit's main area)
    for (let p = e.parentElement; p; p = p.parentElement)
      if (p.scrollHeight > p.clientHeight + 1 && /auto|scroll/.test(win.getComputedStyle(p).overflowY)) return p;
    return doc.scrollingElement;
  };
  const start = performance.now();
  const timer = win.setInterval(() => {  // for 5 s: the page's last parts (fonts, pictures) still move it down
    const box = doc.querySelector('.st-key-lecture_question');
    if (stopped || performance.now() - start > 5000) { win.clearInterval(timer); return; }
    if (!box || !box.querySelector('button')) return;
    const below = box.getBoundingClientRect().bottom + 8 - win.innerHeight;  // the box's px under the screen's edge
    // the bar's row: the bar and its Students button beside it (taller, so it starts higher)
    const bar = doc.querySelector('.attnviz-lecture-bar'), header = doc.querySelector('[data-testid="stHeader"]');
    const row = bar && (bar.closest('[data-testid="stHorizontalBlock"]') || bar);
    const room = row && header ? row.getBoundingClientRect().top - header.getBoundingClientRect().bottom : below;
    // whole pixels (a scroll moves by those): the bar's top stops at or below the header's bottom edge
    const by = Math.floor(Math.min(below, room));
    if (by >= 1) scroller(box).scrollBy(0, by);
  }, 200);
})();
</script>"""


# Reveal sits in the box's bottom right corner, beside the question's last line (the options, or what it refers to),
# which keeps clear of it: on its own row under four options in two rows it was pushed below a 1024×768 projector's
# edge (the extended plan's step 4, heads under test's step 2)
PROJECTOR_CSS = """<style>
.lq p, .lq li { font-size: 1.75rem; line-height: 1.35; margin: 0 0 0.45rem 0; }
.lq-about { color: #31333f; }
.lq-options { display: flex; flex-wrap: wrap; gap: 0.3rem 2.4rem; padding-left: 0; list-style: none;
  margin: 0.2rem 0 0.3rem 0; }
.st-key-lecture_question { position: relative; }
.st-key-lecture_question .st-key-lecture_reveal { position: absolute; right: 1rem; bottom: 1rem; width: auto; }
.lq > :last-child { padding-right: 8.5rem; }
</style>"""
PHONE_CSS = """<style>
.lq p, .lq li { font-size: 1.25rem; line-height: 1.4; margin: 0 0 0.4rem 0; }
.lq-options { padding-left: 0; list-style: none; margin: 0.2rem 0; }
</style>"""
