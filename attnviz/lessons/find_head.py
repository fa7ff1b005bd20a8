"""The Find-the-head page's words and table: built from attnviz.analysis.head_search's ranking, never from the
page's own arithmetic."""

from __future__ import annotations

from attnviz.analysis.head_search import COLUMN_SHARE, HeadWeight
from attnviz.draw.text import markdown_literal
from attnviz.lessons.explorer.selection import Selection

MAX_TOP = 6  # the most heads the page draws in full


PRONOUNS = {"it", "its", "he", "him", "his", "she", "her", "they", "them", "their", "this", "that"}
ARTICLES = {"the", "a", "an"}


def default_pair(labels: list[str]) -> tuple[int, int]:
    """The pair the page opens on, a guess at the question a class asks (no model is consulted): the first pronoun
    as the query and the first word before it that is not an article or a special token as the key ("it" -> "animal"
    in the bundled sentence); without a pronoun, the third token looking at the second."""
    words = [label.lower().lstrip("Ġ▁") for label in labels]
    for q, word in enumerate(words):
        if word in PRONOUNS:
            for k in range(q):
                if words[k].isalpha() and words[k] not in ARTICLES | PRONOUNS and not labels[k].startswith(("[", "<")):
                    return q, k
    n = len(labels)
    return min(2, n - 1), min(1, n - 1)


def token_name(i: int, labels: list[str]) -> str:
    """A token as the pickers show it: 'it (10)'."""
    return f"{labels[i]} ({i})"


def ranking_rows(ranked: list[HeadWeight], allowed: int) -> list[dict]:
    """The table: every head, its weight, that weight as a multiple of an even spread (1 / allowed keys), the mean
    weight the other queries give the same key (the baseline), and whether the head is a column head."""
    return [{"rank": h.rank, "layer": h.layer, "head": h.head, "weight": h.weight, "others": h.others,
             "column": h.column, "× even spread": h.weight * allowed if allowed else 0.0} for h in ranked]


def summary_sentence(ranked: list[HeadWeight], query: int, key: int, labels: list[str], allowed: int) -> str:
    """What the ranking says, in markdown: the best head, its weight against an even spread (1 / allowed keys) and
    against the other queries' mean for the same key (whether it picks this key out for this query or gives it
    weight from everywhere), then how many heads give half or more and the median. Short: on a 1024-pixel
    projector the map under it must stay on the first screen."""
    best = ranked[0]
    q, k = markdown_literal(token_name(query, labels)), markdown_literal(token_name(key, labels))
    if allowed == 0:
        return f"The mask lets query {q} see no key at all: its row is all zeros in every head."
    even = 1 / allowed
    many = sum(h.weight >= 0.5 for h in ranked)  # the heads that give this key half of the query's attention or more
    return (f"**Layer {best.layer}, head {best.head}** gives the most: **{best.weight:.2f}** of query {q}'s attention "
            f"goes to key {k}, {best.weight / even:.1f}× an even spread over the {allowed} keys it may see "
            f"(1/{allowed} = {even:.3f}). {baseline_sentence(best, q, k)} {many} of the {len(ranked)} heads "
            f"{'gives' if many == 1 else 'give'} it half or more; the median head gives {median_weight(ranked):.3f}.")


def baseline_sentence(head: HeadWeight, q: str, k: str) -> str:
    """One head's weight beside the other queries' mean for the same key (q, k: the tokens as markdown)."""
    if head.others is None:
        return f"No other query may see {k}: there is no baseline."
    if head.column:
        return (f"But its other queries give {k} **{head.others:.2f}** on average: a **column head**, which looks at "
                f"{k} from almost everywhere.")
    return f"Its other queries give {k} only **{head.others:.2f}** on average: it picks {k} out for {q}."


def column_heads_sentence(shown: list[HeadWeight], key: int, labels: list[str]) -> str:
    """Which of the heads drawn in full are column heads for this key (the other queries' mean at least
    head_search.COLUMN_SHARE of this query's weight), in one sentence."""
    k = markdown_literal(token_name(key, labels))
    column = [h for h in shown if h.column]
    names = ", ".join(f"layer {h.layer} head {h.head} (others {h.others:.2f} vs {h.weight:.2f})" for h in column)
    if not column:
        which = f"None of these {len(shown)} heads is" if len(shown) > 1 else "This head is not"
        return (f"{which} a column head: the other queries give {k} less than {COLUMN_SHARE:g}× this query's "
                "weight on average, so the weight is about this query.")
    return (f"Column head{'s' if len(column) > 1 else ''} (the other queries give {k} at least {COLUMN_SHARE:g}× this "
            f"query's weight on average): {names}. The others pick {k} out for this query.")


def median_weight(ranked: list[HeadWeight]) -> float:
    """The middle weight of the ranking (the mean of the two middle ones for an even count)."""
    weights = sorted(h.weight for h in ranked)
    mid = len(weights) // 2
    return weights[mid] if len(weights) % 2 else (weights[mid - 1] + weights[mid]) / 2


def masked_pair_sentence(query: int, key: int, labels: list[str]) -> str:
    """Why every head gives 0: the mask forbids the pair."""
    return (f"The mask forbids query {markdown_literal(token_name(query, labels))} from seeing key "
            f"{markdown_literal(token_name(key, labels))}: every head gives this pair weight 0, so the ranking "
            "below is only the heads' order. Pick another pair, or another mask.")


def explorer_params(head: HeadWeight, query: int, key: int, labels: list[str]) -> dict[str, str]:
    """The explorer's URL keys for this head and pair: its layer, that head alone, and the pair selected (the cell
    ringed, its arithmetic beside it)."""
    return {"layer": str(head.layer), "heads": str(head.head),
            **Selection(head=head.head, query=query, key=key).as_params(labels)}
