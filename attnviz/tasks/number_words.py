"""The translation task the why-attention models learn: numbers written in words -> the same numbers in digits.

    "three hundred forty two thousand seven , ninety"  ->  "342007 , 90"

One example is 1 to MAX_NUMBERS numbers between 1 and 999,999,999, separated by commas. A number of d digits
is drawn by first drawing d (1..9, all equally likely) and then the number (some of them rounded, see
draw_number): so short and long numbers are equally common, and the source runs from 1 word ("seven") to
about 45. That spread of lengths is the point: a model that must squeeze the whole source into one
fixed-size vector gets worse as the source grows, one that can look back at every source word need not.

Held-out examples are set apart by a hash of their source text (crc32 % HELD_OUT_EVERY == 0): training never
draws one of them, so every held-out sentence is new to every model, whatever the seeds. (Very short sources are
few, e.g. nine one-word numbers; the held-out ones among them are simply never trained on as a whole sentence.)

The tokenizer is word-level, shared by source and target: specials, ',', the ten digits (each digit of "342007"
is its own token) and the 31 number words. Its specials follow BART's ids (<s> 0, <pad> 1, </s> 2, <unk> 3), so
BART's loader and transformers read the same folder.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import torch
from tokenizers import Regex, Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

from attnviz.errors import AttnvizError

ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SCALES = [(10**6, "million"), (10**3, "thousand")]
SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]  # ids 0..3, BART's
BOS_ID, PAD_ID, EOS_ID = 0, 1, 2  # <unk> (3) is the tokenizer's alone
SEPARATOR = ","
DIGITS = [str(d) for d in range(10)]
MAX_VALUE = 10**9 - 1
MAX_NUMBERS = 3
HELD_OUT_EVERY = 10


def vocabulary() -> list[str]:
    """Specials, the separator, the digits, then the number words: 46 tokens, one id each."""
    return SPECIALS + [SEPARATOR] + DIGITS + ONES + TENS[2:] + ["hundred"] + [name for _, name in SCALES[::-1]]


def _below_thousand(n: int) -> list[str]:
    words = []
    if n >= 100:
        words += [ONES[n // 100], "hundred"]
        n %= 100
    if n >= 20:
        words.append(TENS[n // 10])
        n %= 10
        if n:
            words.append(ONES[n])
    elif n or not words:
        words.append(ONES[n])
    return words


def number_to_words(n: int) -> str:
    """342007 -> 'three hundred forty two thousand seven' (American style: no 'and', no hyphens)."""
    if not 0 <= n <= MAX_VALUE:
        raise ValueError(f"number_to_words takes 0..{MAX_VALUE}, not {n}")
    if n == 0:
        return "zero"
    words = []
    for size, name in SCALES:
        if n >= size:
            words += _below_thousand(n // size) + [name]
            n %= size
    if n:
        words += _below_thousand(n)
    return " ".join(words)


@dataclass(frozen=True)
class Example:
    source: str  # "three hundred forty two thousand seven , ninety"
    target: str  # "342007 , 90"
    numbers: tuple[int, ...]

    @property
    def n_words(self) -> int:
        """Source length in words (separators included, specials not): the x axis of the lesson's figure."""
        return len(self.source.split())


def example_of(numbers) -> Example:
    numbers = tuple(int(n) for n in numbers)
    return Example(f" {SEPARATOR} ".join(number_to_words(n) for n in numbers),
                   f" {SEPARATOR} ".join(str(n) for n in numbers), numbers)


def is_held_out(source: str) -> bool:
    return zlib.crc32(source.encode("utf-8")) % HELD_OUT_EVERY == 0


def draw_number(gen: torch.Generator) -> int:
    """A number of d digits, d = 1..9 equally likely; a third are rounded and a sixth lose a middle group.

    Uniform numbers are almost never round, and models trained on them alone write "one million" as "100":
    rounding to k significant digits (k = 1..d) gives "forty thousand", "seven hundred million"; zeroing a
    3-digit group below the leading one gives gaps of zeros such as "one million five" (1000005)."""
    d = int(torch.randint(1, 10, (1,), generator=gen))  # digits, 1..9
    low = 10 ** (d - 1)
    n = low + int(torch.randint(0, 10**d - low, (1,), generator=gen))
    kind = float(torch.rand(1, generator=gen))
    if kind < 1 / 3:  # round to k significant digits
        k = int(torch.randint(1, d + 1, (1,), generator=gen))
        n -= n % 10 ** (d - k)
    elif kind < 1 / 2 and d >= 4:  # zero one whole group of three digits below the leading group
        group = int(torch.randint(0, (d - 1) // 3, (1,), generator=gen))  # 0: units, 1: thousands
        n -= (n // 10 ** (3 * group) % 1000) * 10 ** (3 * group)
    return n


def _draw(gen: torch.Generator, max_numbers: int) -> Example:
    count = int(torch.randint(1, max_numbers + 1, (1,), generator=gen))
    return example_of([draw_number(gen) for _ in range(count)])


def training_examples(n: int, gen: torch.Generator, max_numbers: int = MAX_NUMBERS) -> list[Example]:
    """n fresh examples from the generator, none of them held out."""
    out = []
    while len(out) < n:
        ex = _draw(gen, max_numbers)
        if not is_held_out(ex.source):
            out.append(ex)
    return out


def held_out_examples(n: int, seed: int, max_numbers: int = MAX_NUMBERS) -> list[Example]:
    """n seeded examples that training never sees (same distribution otherwise), distinct from each other."""
    gen, out, seen = torch.Generator().manual_seed(seed), [], set()
    while len(out) < n:
        ex = _draw(gen, max_numbers)
        if is_held_out(ex.source) and ex.source not in seen:
            seen.add(ex.source)
            out.append(ex)
    return out


def build_tokenizer(max_tokens: int):
    """A `tokenizers` word-level tokenizer: '<s> words </s>', each digit a token, '-' read as a space."""
    vocab = {token: i for i, token in enumerate(vocabulary())}
    tok = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(Regex("-"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Whitespace(),
                                                 pre_tokenizers.Digits(individual_digits=True)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>",
                                                       special_tokens=[("<s>", BOS_ID), ("</s>", EOS_ID)])
    tok.decoder = decoders.WordPiece(prefix="##")  # joins tokens with spaces
    tok.add_special_tokens(SPECIALS)
    tok.enable_truncation(max_length=max_tokens)
    return tok


def tokenizer_config(max_tokens: int) -> dict:
    """tokenizer_config.json: lets transformers' AutoTokenizer (and attnviz) find the special tokens."""
    return {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<s>", "eos_token": "</s>",
            "pad_token": "<pad>", "unk_token": "<unk>", "model_max_length": max_tokens}


def unknown_words(tokenizer, text: str) -> list[str]:
    """The words of `text` outside the task's vocabulary (a `tokenizers` Tokenizer built by build_tokenizer)."""
    enc = tokenizer.encode(text)
    return [text[a:b] for t, (a, b) in zip(enc.tokens, enc.offsets, strict=True) if t == "<unk>"]


def check_known_words(tokenizer, text: str, model_name: str) -> None:
    """A clear error naming the words a model of this task cannot read (it would see each as <unk>)."""
    unknown = unknown_words(tokenizer, text)
    if unknown:
        shown = ", ".join(f"'{w}'" for w in dict.fromkeys(unknown))
        raise AttnvizError(f"{model_name} reads only number words (zero ... nineteen, twenty ... ninety, hundred, "
                           f"thousand, million) and commas; it does not know {shown}.")


def digits_text(tokens: list[str]) -> str:
    """Output tokens -> readable text: digits joined, ', ' between numbers, specials dropped ('3 4 2 , 9' -> '342, 9')."""
    text = "".join(t if t != SEPARATOR else ", " for t in tokens if t not in SPECIALS)
    return text


def pad_batch(rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids (B, L) padded with <pad>, lengths (B,))."""
    lengths = torch.tensor([len(r) for r in rows])
    ids = torch.full((len(rows), int(lengths.max())), PAD_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r)
    return ids, lengths
