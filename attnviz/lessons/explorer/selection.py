"""The selected cell of the explorer: (head, query, key) in the current layer, kept in the URL.

The URL keys are the step-by-step page's own widget keys (sbs_head, sbs_query, sbs_key; the layer is the
shared 'layer'), so a link copied from the explorer opens Step by step on the same pair.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.analysis.head_search import same_token_position

URL_KEYS = {"head": "sbs_head", "query": "sbs_query", "key": "sbs_key"}


def token_choice(t: int, labels: list[str]) -> str:
    """A token as Step by step's query/key pickers show it, '3: cat': the text their URL values must match."""
    return f"{t}: {labels[t]}" if 0 <= t < len(labels) else str(t)


def leading_int(value) -> int:
    """'3: cat' or '3' -> 3 (ValueError otherwise)."""
    return int(str(value).split(":", 1)[0].strip())


@dataclass(frozen=True)
class Selection:
    head: int
    query: int  # row i: the token that looks
    key: int  # column j: the token looked at

    def as_params(self, labels: list[str]) -> dict[str, str]:
        """The URL values, in the form Step by step's bound pickers accept ('3: cat' for a token)."""
        return {"sbs_head": str(self.head), "sbs_query": token_choice(self.query, labels),
                "sbs_key": token_choice(self.key, labels)}


def selection_from_params(params) -> Selection | None:
    """The selection a link carries (strings from the URL), or None when it carries none or garbage."""
    try:
        values = {name: leading_int(params[url_key]) for name, url_key in URL_KEYS.items()}
    except (KeyError, TypeError, ValueError):
        return None
    return Selection(**values)


def text_the_link_names(params, texts: list[list[str]]) -> list[str] | None:
    """The first of `texts` (token labels) in which the link's spelled tokens ('10: it') are the tokens at those
    positions; None when none is, or the link spells no token (a bare '10' is read in the text on screen).
    A browser's late rerun carries the address of the text it last received: its '10: it' is of that text."""
    spelled = [str(params.get(URL_KEYS[name])) for name in ("query", "key") if params.get(URL_KEYS[name]) is not None]
    if not spelled or not all(":" in value for value in spelled):
        return None
    for labels in texts:
        try:
            if all(token_choice(leading_int(value), labels) == value for value in spelled):
                return labels
        except ValueError:
            return None
    return None


def selection_from_click(click: dict | None, heads: list[int]) -> Selection | None:
    """A grid click {panel, row, col} -> the head that panel shows, the query row and the key column."""
    if not click or not 0 <= click.get("panel", -1) < len(heads):
        return None
    return Selection(head=heads[click["panel"]], query=int(click["row"]), key=int(click["col"]))


def clamp_selection(sel: Selection | None, n_tokens: int, n_heads: int) -> tuple[Selection | None, str | None]:
    """A selection that fits this text and model, and a message saying what was changed (None if nothing).

    A selection from a longer text (or a hand-edited link) is moved to the last token / head rather than
    dropped, so the class keeps looking at something, and the page says so.
    """
    if sel is None:
        return None, None
    if min(sel.head, sel.query, sel.key) < 0:
        return None, "The selected cell had a negative position, so nothing is selected: click a cell."
    head, query, key = min(sel.head, n_heads - 1), min(sel.query, n_tokens - 1), min(sel.key, n_tokens - 1)
    if (head, query, key) == (sel.head, sel.query, sel.key):
        return sel, None
    parts = []
    if head != sel.head:
        parts.append(f"head {sel.head} does not exist (heads 0 to {n_heads - 1}): head {head}")
    if (query, key) != (sel.query, sel.key):
        parts.append(f"query {sel.query} → key {sel.key} is outside this text of {n_tokens} tokens "
                     f"(0 to {n_tokens - 1}): query {query} → key {key}")
    return Selection(head, query, key), "The selected cell moved: " + "; ".join(parts) + "."


def grid_ring(sel: Selection | None, heads: list[int]) -> dict | None:
    """Where the grid draws the selection ring ({panel, row, col}), or None when that head is not shown."""
    if sel is None or sel.head not in heads:
        return None
    return {"panel": heads.index(sel.head), "row": sel.query, "col": sel.key}


def follow_selection(sel: Selection | None, old_labels: list[str], new_labels: list[str]
                     ) -> tuple[Selection | None, str | None]:
    """The selection after the text changed: the same query and key tokens in the new text (the same occurrence
    where it has as many: attnviz.analysis.head_search.same_token_position), and None with a message naming the
    token that went when the new text lacks one. Unchanged (and no message) when the text's tokens are the same."""
    if sel is None or list(old_labels) == list(new_labels):
        return sel, None
    if not (0 <= sel.query < len(old_labels) and 0 <= sel.key < len(old_labels)):
        return sel, None  # not a cell of the old text (a hand-edited link): clamp_selection says what it does
    query = same_token_position(old_labels, sel.query, new_labels)
    key = same_token_position(old_labels, sel.key, new_labels)
    gone = [f"{what} token “{old_labels[at]}” ({at})" for what, at, found in
            (("query", sel.query, query), ("key", sel.key, key)) if found is None]
    if gone:
        return None, (f"The selected {' and '.join(gone)} {'are' if len(gone) > 1 else 'is'} not in the new text, so "
                      "nothing is selected: click a cell.")
    return Selection(sel.head, query, key), None
