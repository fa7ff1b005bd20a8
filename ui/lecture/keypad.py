"""A phone's number keypad for a number answer.

The number answer is a text box (ui/lecture/answers.py): st.number_input dropped a value the browser's number box
cannot hold (5,000 digits, 1e400) without a word, where a text box sends every value to the check that says what is
wrong. Streamlit's text box takes no inputmode, so a phone showed its letters. This script gives that one box
inputmode="decimal" (the digits and the decimal mark: an iPhone's has no minus sign, so a plan asks for sizes and
counts), a pattern of what a number looks like, and no autocomplete, autocorrect or spell check; a box drawn again
by a rerun gets them again.
"""

from __future__ import annotations

import streamlit as st

# a number as a student types it (what Ask.check reads: a sign, digits with a "." or "," and an exponent); escaped for
# the browser's "v" flag, which the pattern attribute compiles with
NUMBER_PATTERN = r"\s*[\-+]?(\d+([.,]\d*)?|[.,]\d+)([eE][\-+]?\d+)?\s*"
BOX = '.st-key-lecture_answer [data-testid="stTextInput"] input'

KEYPAD_JS = """<script>
(() => {
  const win = window.parent || window, doc = win.document;
  if (win.__attnvizNumberKeypad) return;
  win.__attnvizNumberKeypad = true;
  const give = () => {
    for (const box of doc.querySelectorAll('BOX')) {
      if (box.inputMode === 'decimal') continue;
      box.inputMode = 'decimal';
      box.setAttribute('pattern', 'PATTERN');
      box.setAttribute('autocomplete', 'off');
      box.setAttribute('autocorrect', 'off');
      box.setAttribute('enterkeyhint', 'send');
      box.spellcheck = false;
    }
  };
  give();
  new win.MutationObserver(give).observe(doc.body, {childList: true, subtree: true});
})();
</script>""".replace("BOX", BOX.replace('"', '\\"')).replace("PATTERN", NUMBER_PATTERN.replace("\\", "\\\\"))


def number_keypad() -> None:
    """The answer box's number keypad on a phone (installed once per page load; it follows the box's reruns)."""
    st.html(KEYPAD_JS, unsafe_allow_javascript=True)
