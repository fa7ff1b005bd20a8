"""attnviz-tiny-bart on the Cross-attention page: what it can read, what it writes, and what its rows are.

The model was trained on one task only (attnviz/tasks/number_words.py): 1 to 3 numbers written in words,
commas between them, each number 1 .. 999,999,999 -> the same numbers in digits. Its 46-token vocabulary is that
task's: a word outside it would reach the model as <unk>, so such a source is refused with the words named,
and a typed target (teacher forcing) may hold only digits and commas.

Rows of its decoder attentions: position t reads decoder input token t (the target shifted right behind </s>)
and is where the model writes target token t; `written_labels` names each row "read→written".
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnviz.errors import AttnvizError
from attnviz.lessons.why_attention.tiny_bart import greedy_ids
from attnviz.tasks.number_words import (
    DIGITS,
    MAX_NUMBERS,
    MAX_VALUE,
    SEPARATOR,
    check_known_words,
    digits_text,
    number_to_words,
)

# the longest source the task draws: MAX_NUMBERS numbers of 14 words each ("seven hundred seventy seven million
# seven hundred seventy seven thousand ...") and the commas between them
LONGEST_NUMBER_WORDS = len(number_to_words(777_777_777).split())
TRAINED_MAX_WORDS = MAX_NUMBERS * LONGEST_NUMBER_WORDS + MAX_NUMBERS - 1

EXAMPLES = {  # a lecturer's picks, named by the digits they should give: label -> source
    "3412": "three thousand four hundred twelve",
    "785412360 (long)": "seven hundred eighty five million four hundred twelve thousand three hundred sixty",
    "42, 700, 9": "forty two , seven hundred , nine",
    "1000005": "one million five",
}
DEFAULT_SOURCE = EXAMPLES["3412"]


def task_description(model_name: str) -> str:
    """What the model was trained on, in one paragraph (the numbers come from number_words.py)."""
    return (f"**{model_name}** is a small BART (2 encoder and 2 decoder layers, 4 heads, d_model 64) that attnviz "
            f"trained on one task: **numbers written in words → the same numbers in digits**, 1 to {MAX_NUMBERS} "
            f"numbers between 1 and {MAX_VALUE:,} separated by commas (at most {TRAINED_MAX_WORDS} words). Its "
            "vocabulary is that task's only: the number words *zero … nineteen*, *twenty … ninety*, *hundred*, "
            "*thousand*, *million*, the comma, and the ten digits it writes (each digit is one token). No *and*, "
            "no other word.")


def check_source(model, source: str) -> list[str]:
    """Refuse a source the model cannot read (AttnvizError: empty, a word outside its vocabulary, past its
    positions); return notes for one it can read but was never trained on (longer than the task's longest)."""
    if not source.strip():
        raise AttnvizError("Type a number in words, for example 'three hundred forty two'.")
    check_known_words(model.tokenizer.backend, source, model.name)
    enc = model.encode(source)
    if all(t in model.tokenizer.special for t in enc.tokens):
        raise AttnvizError("Type a number in words, for example 'three hundred forty two'.")
    if enc.truncated:
        raise AttnvizError(f"This source is longer than {model.name} can read ({model.max_tokens} tokens with <s> and "
                           f"</s>; it was trained on at most {TRAINED_MAX_WORDS} words): shorten it.")
    words = len(enc.ids) - 2  # without <s> and </s>
    numbers = source.count(SEPARATOR) + 1
    notes = []
    if words > TRAINED_MAX_WORDS or numbers > MAX_NUMBERS:
        notes.append(f"This source ({words} words, {numbers} numbers) is longer than anything {model.name} was trained "
                     f"on (at most {MAX_NUMBERS} numbers, {TRAINED_MAX_WORDS} words): expect mistakes in its output.")
    return notes


def check_digit_target(model, target: str) -> None:
    """A typed target (teacher forcing) must be digits and commas, the only tokens the decoder was taught to write."""
    if not target.strip():
        raise AttnvizError("Type a target in digits, for example '3412', or use the model's own output.")
    allowed = set(DIGITS) | {SEPARATOR}
    wrong = [ch for ch in target if not ch.isspace() and ch not in allowed]
    if wrong:
        shown = ", ".join(f"'{c}'" for c in dict.fromkeys(wrong))
        raise AttnvizError(f"A target for {model.name} is digits and commas only (what it was trained to write); "
                           f"it cannot take {shown}.")
    if model.encode(target).truncated:
        raise AttnvizError(f"This target is longer than {model.name}'s decoder can take: at most {model.max_tokens} "
                           "tokens with <s> and </s>, one per digit or comma.")


@dataclass(frozen=True)
class GreedyOutput:
    tokens: list[str]  # the digits and commas written, <s> and </s> left out
    text: str  # '342007, 90'
    finished: bool  # False when it stopped at the length limit without writing </s>


def greedy_output(model, source: str) -> GreedyOutput:
    """The model's own answer: greedy decoding with attnviz's from-scratch BART, at the trained settings."""
    ids = greedy_ids(model, model.encode(source).ids)
    tokens = [model.tokenizer.token_of(i)[0] for i in ids]
    body = [t for t in tokens if t not in model.tokenizer.special]
    if not body:
        raise AttnvizError(f"{model.name} wrote no digits for this text.")
    return GreedyOutput(body, digits_text(body), ids[-1] == model.decoder_start_id)


def written_labels(decoder_labels: list[str], end: str = "</s>") -> list[str]:
    """Row names 'read→written': decoder position t reads input token t and writes target token t, which is input
    token t+1 (the input is the target shifted right); the last position writes the end token."""
    return [f"{a}→{b}" for a, b in zip(decoder_labels, [*decoder_labels[1:], end], strict=True)]


@dataclass(frozen=True)
class StrongestLink:
    row: str
    source: str
    weight: float


def strongest_links(weights: torch.Tensor, rows: list[str], sources: list[str]) -> list[StrongestLink]:
    """For each row of one head's (T, S) weights: the source token it weights most, and that weight."""
    best = weights.max(dim=-1)  # values (T,), indices (T,)
    return [StrongestLink(rows[t], sources[int(best.indices[t])], float(best.values[t])) for t in range(len(rows))]


# ---- what the page says the alignment looks like (pinned by tests/lessons/test_number_task.py) ---------

CLAIM_EXAMPLES, CLAIM_SEED = 200, 777  # held-out sentences the figures below were measured on
ALIGNMENT_CLAIM = (
    "**Reading the alignment.** In decoder layer 1 the heads are sharp and step through the source from left to "
    "right as the digits are written: a staircase more than a strict diagonal, since words and digits do not pair "
    "one to one. Head 1 is the clearest: on 200 held-out sentences, from the row writing the first digit on, its "
    "most-weighted source token never moved left from one row to the next, and a row gave that token 0.83 of its "
    "weight on average. In the default sentence (3412) its row writing 3 reads *three*, the row writing 4 reads "
    "*four*, the rows writing 1 and 2 both read *twelve*, and no row's strongest word is *thousand*. Layer 0's "
    "weights are spread out: a row's largest weight is 0.16 to 0.49 on average, by head."
)


@dataclass(frozen=True)
class HeadSharpness:
    monotone_share: float  # share of sentences whose rows' most-weighted source position never moves left
    mean_max_weight: float  # a row's largest weight, averaged over rows and sentences


@torch.inference_mode()
def head_sharpness(model, examples) -> dict[tuple[int, int], HeadSharpness]:
    """Per (decoder layer, head), over examples given with their true targets (teacher forcing): how sharp and how
    left-to-right the cross-attention rows are, from the row writing the first token on (row 0 writes <s>)."""
    monotone: dict[tuple[int, int], int] = {}
    sharp: dict[tuple[int, int], float] = {}
    for ex in examples:
        weights = model.run(ex.source, target=ex.target).cross_attentions[:, :, 1:]  # (layers, nh, T-1, S)
        best = weights.max(dim=-1)  # values, indices (layers, nh, T-1)
        never_left = (best.indices[..., 1:] >= best.indices[..., :-1]).all(-1)  # (layers, nh)
        mean_max = best.values.mean(-1)  # (layers, nh)
        for L in range(weights.shape[0]):
            for h in range(weights.shape[1]):
                monotone[L, h] = monotone.get((L, h), 0) + int(never_left[L, h])
                sharp[L, h] = sharp.get((L, h), 0.0) + float(mean_max[L, h])
    n = len(examples)
    return {k: HeadSharpness(monotone[k] / n, sharp[k] / n) for k in monotone}
