"""Text a user typed, made safe to put inside Streamlit markdown (alerts, captions, st.markdown).

Streamlit's markdown turns ':cat:' into an emoji, ':material/x:' into an icon, '$…$' into LaTeX and
'**' into bold. A token is shown as the characters typed: every markdown character is backslash-escaped,
and a word joiner (U+2060, invisible) after each ':' keeps a shortcode from ever forming.
"""

from __future__ import annotations

MARKDOWN_SPECIALS = set("\\`*_{}[]()#+-.!|<>~$&")
WORD_JOINER = "\u2060"


def markdown_literal(text: str) -> str:
    """'1:cat:' -> text that Streamlit's markdown shows as exactly '1:cat:' (no emoji, no bold, no LaTeX)."""
    out = []
    for ch in str(text):
        if ch in MARKDOWN_SPECIALS:
            out.append("\\" + ch)
        elif ch == ":":
            out.append(":" + WORD_JOINER)
        elif ch in "\n\r":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)
