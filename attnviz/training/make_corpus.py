"""Write the corpus the Head claims page tests heads on: `python -m attnviz.training.make_corpus`.

Why here: attnviz/training/ is the one home of the seeded scripts that make what attnviz ships (its models, and
now this data); the app only reads what they wrote (attnviz.analysis.corpus), never runs them.

What it writes, attnviz/assets/corpora/relations.jsonl, one sentence a line: Winograd-style coreference
sentences from five templates ("The trophy didn't fit in the suitcase because it was too big / small"), each noun
pair written with both readings, so that in half of them the pronoun refers to the nearer noun and in half to the
farther one. Every relation is labelled by construction, as token positions of all-MiniLM-L6-v2's tokenizer
([CLS] = 0), with the tokens themselves kept so that a loader can check that a model splits the text the same way:

    coreference        the pronoun -> its antecedent (and both candidates, for the nearest-noun rule)
    verb_subject       the template's verb -> its subject
    same_word          the second "the" -> the first
    previous_token     every word -> the token before it
    specials           every word -> [CLS], [SEP] and the punctuation (keys as a set)

The same seed gives the same file byte for byte (tests/training/test_make_corpus.py regenerates it).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from attnviz.engine.models.loading import load_model
from attnviz.paths import CORPORA

SEED = 0
PAIRS_PER_TEMPLATE = 30  # x 2 readings x 5 templates = 300 sentences
CORPUS_PATH = CORPORA / "relations.jsonl"
PUNCTUATION = set(".,;:!?'\"()-")

# Each template: its words with {x} and {y} for the two nouns, {p} the pronoun, {a} the word that decides the
# reading; the verb whose subject is x; and the readings: the deciding word -> which noun the pronoun means.
TEMPLATES = [
    dict(name="fit", text="The {x} didn't fit in the {y} because {p} was too {a}.", pronoun="it", verb="fit",
         readings={"big": "x", "small": "y"},
         x=["trophy", "ball", "book", "lamp", "chair", "guitar", "painting", "cake", "bottle", "clock", "pillow"],
         y=["suitcase", "bag", "drawer", "car", "closet", "basket", "box", "cupboard", "case", "envelope"]),
    dict(name="crush", text="The {x} crushed the {y} because {p} was so {a}.", pronoun="it", verb="crushed",
         readings={"heavy": "x", "fragile": "y"},
         x=["rock", "table", "tree", "piano", "truck", "stone", "wall", "statue", "door"],
         y=["glass", "vase", "cup", "egg", "phone", "lamp", "bowl", "mirror", "plate", "bottle"]),
    dict(name="cross", text="The {x} didn't cross the {y} because {p} was too {a}.", pronoun="it", verb="cross",
         readings={"tired": "x", "wide": "y"},
         x=["animal", "dog", "horse", "cat", "cow", "fox", "bird", "sheep", "deer", "rabbit"],
         y=["street", "river", "road", "field", "bridge", "valley", "lake", "highway", "canal"]),
    dict(name="lose", text="The {x} lost to the {y} because {p} was {a}.", pronoun="he", verb="lost",
         readings={"weaker": "x", "stronger": "y"},
         x=["man", "boy", "player", "teacher", "doctor", "student", "king", "father", "brother", "soldier"],
         y=["man", "boy", "player", "teacher", "doctor", "student", "king", "father", "brother", "soldier"]),
    dict(name="pass", text="The {x} didn't go through the {y} because {p} was too {a}.", pronoun="it", verb="go",
         readings={"wide": "x", "narrow": "y"},
         x=["table", "sofa", "bed", "piano", "desk", "car", "truck", "boat", "wardrobe"],
         y=["door", "window", "gate", "hole", "tunnel", "entrance", "opening", "passage"]),
]


def single_token_position(enc, text: str, word: str, start: int) -> int:
    """The token position of the word at character `start`; it must be one whole token (no word pieces), so a
    head's weight on it is one number."""
    for t, (a, b) in enumerate(enc.offsets):
        if a == start and b == start + len(word) and enc.tokens[t] not in ("[CLS]", "[SEP]"):
            return t
    raise ValueError(f"'{word}' in '{text}' is not one token of the tokenizer: pick another word.")


def sentence_record(backend, template: dict, x: str, y: str, deciding: str, index: int) -> dict:
    """One sentence: its text, tokens and every labelled relation as token positions."""
    pronoun = template["pronoun"]
    text = template["text"].format(x=x, y=y, p=pronoun, a=deciding)
    enc = backend.encode(text)
    tokens = list(enc.tokens)
    lowered = text.lower()
    # the characters where each slot's word starts: the template's words are found in order, left to right
    x_at = lowered.index(f" {x} ") + 1
    y_at = lowered.index(f" {y} ", x_at + len(x)) + 1
    p_at = lowered.index(f" {pronoun} ", y_at + len(y)) + 1
    verb_at = lowered.index(f" {template['verb']} ") + 1
    x_pos, y_pos = (single_token_position(enc, text, w, at) for w, at in ((x, x_at), (y, y_at)))
    p_pos = single_token_position(enc, text, pronoun, p_at)
    verb_pos = single_token_position(enc, text, template["verb"], verb_at)
    the = [t for t, token in enumerate(tokens) if token == "the"]
    antecedent = x_pos if template["readings"][deciding] == "x" else y_pos
    words = [t for t, token in enumerate(tokens) if token not in ("[CLS]", "[SEP]")]
    specials = [t for t, token in enumerate(tokens) if token in ("[CLS]", "[SEP]") or token in PUNCTUATION]
    relations = {
        "coreference": [{"query": p_pos, "keys": [antecedent], "candidates": [x_pos, y_pos], "reading": deciding}],
        "verb_subject": [{"query": verb_pos, "keys": [x_pos]}],
        "same_word": [{"query": the[1], "keys": [the[0]]}],
        "previous_token": [{"query": q, "keys": [q - 1]} for q in words],
        "specials": [{"query": q, "keys": specials} for q in words if q not in specials],
    }
    return {"id": f"{template['name']}-{index:02d}-{deciding}", "text": text, "tokens": tokens, "relations": relations}


def make_corpus(backend, seed: int = SEED) -> list[dict]:
    """Every template's first PAIRS_PER_TEMPLATE noun pairs in a seeded order, each with both readings."""
    rng = random.Random(seed)
    records = []
    for template in TEMPLATES:
        pairs = [(x, y) for x in template["x"] for y in template["y"] if x != y]
        rng.shuffle(pairs)
        for index, (x, y) in enumerate(pairs[:PAIRS_PER_TEMPLATE]):
            for deciding in template["readings"]:
                records.append(sentence_record(backend, template, x, y, deciding, index))
    return records


def corpus_text(records: list[dict]) -> str:
    """JSON Lines: one sentence a line, keys in a fixed order, ASCII only."""
    return "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records)


def minilm_backend():
    """all-MiniLM-L6-v2's own tokenizer (the bundled model's tokenizer.json): the positions are its tokens."""
    return load_model().tokenizer.backend


def main(argv: list[str] | None = None) -> Path:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CORPUS_PATH)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(corpus_text(make_corpus(minilm_backend(), args.seed)), encoding="utf-8")
    print(f"wrote {args.out}")
    return args.out


if __name__ == "__main__":
    main()
