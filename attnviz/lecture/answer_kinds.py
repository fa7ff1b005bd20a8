"""The kinds of answer a lecture step's question can take from the class, one home for each:

    answer = { kind = "token" }                                  # tap the key token the query looks at most
    answer = { kind = "token", query = "it" }                    # ... for this query token (its first occurrence)
    answer = { kind = "token", query = "it", layer = 2, head = 5 }   # the model's truth: this layer's, this head's row
    answer = { kind = "choice", options = ["layer 0", "layer 3"] }
    answer = { kind = "number" }                                 # a weight, a variance, a count
    answer = { kind = "number", quantity = "weight", query = "ran", key = "dog", layer = 0, head = 1 }
    answer = { kind = "number", quantity = "dot_variance", d_k = 256 }

A kind says how the plan writes it (parsed here, every problem named with its step and field). A number answer may
name the quantity of the step that attnviz computes (QUANTITIES): at Reveal the class's histogram marks that
computed value; without one it marks the plan's `expected` (when that is a number), labelled as the plan's.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnviz.errors import AttnvizError

KINDS = ("token", "choice", "number")
ANSWER_KEYS = ("kind", "options", "query", "layer", "head", "quantity", "key", "d_k")
MAX_OPTIONS = 12
MAX_D_K = 4096
# what a number answer's right value can be computed as (ui/lecture/answers.number_truth computes each)
QUANTITIES = {
    "weight": "the model's attention weight of the query token `query` on the key token `key` (their texts), at "
              "`layer` and `head` (else the page's layer and selected or chosen heads), for the page's settings",
    "dot_variance": "Var(q·k) of q, k with `d_k` independent N(0, 1) entries, measured (the Scaling lab's experiment)",
    "dot_spread": "the typical size of q·k, √Var(q·k), at `d_k`, measured (the Scaling lab's experiment)",
    "heads_per_kv": "how many query heads read each key/value head in the page's model (n_heads / n_kv_heads)",
}
NEEDS = {"weight": ("query", "key"), "dot_variance": ("d_k",), "dot_spread": ("d_k",), "heads_per_kv": ()}


@dataclass(frozen=True)
class AnswerSpec:
    """What a step's question asks the class for."""

    kind: str  # one of KINDS
    options: tuple[str, ...] = ()  # choice: the options, in the plan's order
    query: str = ""  # token: the query token whose row the class predicts ("" = the page's selected query)
    layer: int | None = None  # token, weight: the layer whose row is the model's truth (None = the page's layer)
    head: int | None = None  # token, weight: the head whose row is the truth (None = the page's selected or chosen heads)
    quantity: str = ""  # number: what attnviz computes as the right answer (a key of QUANTITIES), "" = the plan's
    key: str = ""  # number, quantity "weight": the key token's text
    d_k: int | None = None  # number, quantity "dot_variance" or "dot_spread": the width of q and k


def parse_answer(where: str, raw: object) -> AnswerSpec | None:
    """A step's `answer` table, checked (None when the step has none)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise AttnvizError(f'{where}: answer must be a table, e.g. answer = {{ kind = "token" }}.')
    unknown = sorted(set(raw) - set(ANSWER_KEYS))
    if unknown:
        raise AttnvizError(f"{where}: answer has unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)}. "
                           f"It may have: {', '.join(ANSWER_KEYS)}.")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise AttnvizError(f"{where}: answer.kind must be one of {', '.join(map(repr, KINDS))}, not {kind!r}.")
    options = raw.get("options", [])
    if kind == "choice":
        if (not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS
                or not all(isinstance(o, str) and o.strip() for o in options)):
            raise AttnvizError(f"{where}: a choice answer needs options = [\"…\", \"…\"]: 2 to {MAX_OPTIONS} texts.")
        if len({o.strip() for o in options}) != len(options):
            raise AttnvizError(f"{where}: answer.options repeats an option.")
    elif "options" in raw:
        raise AttnvizError(f"{where}: answer.options belongs to kind = \"choice\" only.")
    quantity = raw.get("quantity", "")
    if quantity and (kind != "number" or quantity not in QUANTITIES):
        raise AttnvizError(f"{where}: answer.quantity is one of {', '.join(map(repr, QUANTITIES))}, for kind = "
                           "\"number\" only.")
    weight = quantity == "weight"  # a number that is one of the model's weights: a token question's fields
    query = raw.get("query", "")
    if not isinstance(query, str) or (query and kind != "token" and not weight):
        raise AttnvizError(f"{where}: answer.query is a token's text, for kind = \"token\" or quantity = \"weight\" "
                           "only.")
    key = raw.get("key", "")
    if not isinstance(key, str) or (key and not weight):
        raise AttnvizError(f"{where}: answer.key is a key token's text, for quantity = \"weight\" only.")
    where_in = {}
    for field in ("layer", "head"):
        value = raw.get(field)
        if value is not None and ((kind != "token" and not weight) or isinstance(value, bool)
                                  or not isinstance(value, int) or not 0 <= value < 1000):
            raise AttnvizError(f"{where}: answer.{field} is a {field} number from 0, for kind = \"token\" or quantity "
                               "= \"weight\" only.")
        where_in[field] = value
    d_k = raw.get("d_k")
    if d_k is not None and (quantity not in ("dot_variance", "dot_spread") or isinstance(d_k, bool)
                            or not isinstance(d_k, int) or not 1 <= d_k <= MAX_D_K):
        raise AttnvizError(f"{where}: answer.d_k is a whole number from 1 to {MAX_D_K}, for quantity = "
                           "\"dot_variance\" or \"dot_spread\" only.")
    spec = AnswerSpec(kind, tuple(o.strip() for o in options), query.strip(), where_in["layer"], where_in["head"],
                      quantity, key.strip(), d_k)
    missing = [field for field in NEEDS.get(quantity, ()) if getattr(spec, field) in ("", None)]
    if missing:
        raise AttnvizError(f"{where}: quantity = \"{quantity}\" needs answer.{' and answer.'.join(missing)}: "
                           f"{QUANTITIES[quantity]}.")
    return spec


# ---- how a student's answer is checked, and how the class's answers are tallied --------------------------------
#
# Values are kept in the store as text: token -> the key token's position ("3"), choice -> the option's text,
# number -> the number as Python writes it ("0.25").

MAX_NUMBER = 1e9  # a weight, a variance or a count: anything bigger is a typo


def check_answer(spec: AnswerSpec, raw: object, tokens: tuple[str, ...] = ()) -> str:
    """A student's answer as the store keeps it, or an AttnvizError saying what is allowed. tokens: the key tokens a
    token answer picks from (the step's sentence, as the model reads it)."""
    text = str(raw if raw is not None else "").strip()
    if spec.kind == "token":
        if not text.isdigit() or not 0 <= int(text) < len(tokens):
            raise AttnvizError(f"Pick one of the sentence's {len(tokens)} tokens (positions 0 to {len(tokens) - 1}).")
        return str(int(text))
    if spec.kind == "choice":
        if text not in spec.options:
            raise AttnvizError("Pick one of the options: " + ", ".join(spec.options) + ".")
        return text
    try:
        number = float(text)
    except ValueError:
        raise AttnvizError(f"'{text[:30]}' is not a number: type one such as 0.25 or 12.") from None
    if not abs(number) <= MAX_NUMBER:  # also refuses nan and inf
        raise AttnvizError(f"Give a number between -{MAX_NUMBER:g} and {MAX_NUMBER:g}.")
    return repr(number)


def shown_answer(spec: AnswerSpec, value: str, tokens: tuple[str, ...] = ()) -> str:
    """A kept answer as a student reads it back ("'animal' (token 6)", "layer 3", "0.25")."""
    if spec.kind == "token":
        position = int(value) if value.isdigit() else -1
        return f"'{tokens[position]}' (token {position})" if 0 <= position < len(tokens) else f"token {value}"
    if spec.kind == "number":
        return f"{float(value):g}"
    return value


def token_counts(values: list[str], n_tokens: int) -> list[int]:
    """How many students picked each key token (position 0 .. n_tokens-1); answers outside the sentence (kept for
    another sentence) are not counted."""
    counts = [0] * n_tokens
    for value in values:
        if value.isdigit() and int(value) < n_tokens:
            counts[int(value)] += 1
    return counts


def choice_counts(spec: AnswerSpec, values: list[str]) -> list[int]:
    """How many students picked each option, in the plan's order."""
    return [sum(v == option for v in values) for option in spec.options]


def numbers(values: list[str]) -> list[float]:
    """The class's numbers (a value that is not one, kept by an older plan, is left out)."""
    out = []
    for value in values:
        try:
            out.append(float(value))
        except ValueError:
            continue
    return out


def bare(token: str) -> str:
    """A token as a person types it: without the tokenizers' word marks (Ġ, ▁, ##) and case."""
    return token.replace("Ġ", "").replace("▁", "").replace("##", "").strip().lower()


def query_position(spec: AnswerSpec, tokens: tuple[str, ...], selected: int | None) -> int:
    """The query token whose row a token question asks about: the plan's `query` (its first occurrence), else the
    page's selected query, else the last token. AttnvizError when the plan's query is not in the sentence."""
    if spec.query:
        return token_position(spec.query, tokens, "query")
    if selected is not None and 0 <= selected < len(tokens):
        return selected
    return len(tokens) - 1


def token_position(text: str, tokens: tuple[str, ...], role: str) -> int:
    """The first token that reads as `text` (bare: without marks and case). AttnvizError when none does."""
    for position, token in enumerate(tokens):
        if bare(token) == bare(text):
            return position
    raise AttnvizError(f"The plan's {role} token '{text}' is not in this sentence's tokens.")


def right_number(expected: str) -> float | None:
    """The plan's expected answer as a number, when it is one."""
    try:
        return float(expected)
    except ValueError:
        return None


def right_choice(spec: AnswerSpec, expected: str) -> str | None:
    """The plan's expected answer when it is one of the options."""
    return expected.strip() if expected.strip() in spec.options else None
