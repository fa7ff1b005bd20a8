"""A corpus of sentences with labelled relations (query token -> the key token(s) it should look at), and its
batched encoding for a model.

A corpus file is JSON Lines, one sentence a line (attnviz/training/make_corpus.py writes the shipped one):

    {"id": "fit-00-big", "text": "The book didn't fit in the car because it was too big.",
     "tokens": ["[CLS]", "the", "book", ...],                  # the tokenizer's tokens the positions count
     "relations": {"coreference": [{"query": 11, "keys": [2], "candidates": [2, 9]}], ...}}

Positions count the model's tokens, specials included ([CLS] = 0). An item's keys are a set: "specials" lists
every [CLS], [SEP] and punctuation position, and a head meets the claim when its most-weighted key is any of them.
`candidates` (coreference only) are the nouns the pronoun could mean, for the nearest-noun rule.

    corpus = load_corpus()                      # the shipped relations.jsonl
    batch = encode_corpus(model, corpus)        # ids (B, T), real (B, T): one padded batch, [PAD] keys masked
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import torch

from attnviz.engine.masks import combine_masks
from attnviz.errors import AttnvizError
from attnviz.paths import CORPORA

CORPORA_DIR = CORPORA
DEFAULT_CORPUS = "relations"

# relation -> what it claims, in words (the page's picker and its sentences use these)
RELATIONS = {
    "coreference": "pronoun → its antecedent",
    "verb_subject": "verb → its subject",
    "same_word": "a word → the same word earlier",
    "previous_token": "every word → the token before it",
    "specials": "every word → [CLS], [SEP] or punctuation",
}


@dataclass(frozen=True)
class Item:
    """One labelled query: in sentence `sentence`, token `query` should look at one of `keys`."""

    sentence: int  # index into Corpus.sentences
    query: int
    keys: tuple[int, ...]
    candidates: tuple[int, ...] = ()  # coreference: every noun the pronoun could mean, in order


@dataclass(frozen=True)
class Sentence:
    id: str
    text: str
    tokens: tuple[str, ...]
    relations: dict  # relation -> tuple[Item, ...]


@dataclass(frozen=True)
class Corpus:
    name: str
    sentences: tuple[Sentence, ...]

    def items(self, relation: str) -> list[Item]:
        """Every labelled query of one relation over the corpus, sentence by sentence."""
        check_relation(relation)
        found = [item for s in self.sentences for item in s.relations.get(relation, ())]
        if not found:
            raise AttnvizError(f"The corpus '{self.name}' labels no sentence with the relation '{relation}'.")
        return found

    def subset(self, indices, name: str | None = None) -> Corpus:
        """The chosen sentences as a corpus of their own, their items numbered anew."""
        chosen = [self.sentences[i] for i in indices]
        renumbered = tuple(Sentence(s.id, s.text, s.tokens, {
            relation: tuple(dataclasses.replace(it, sentence=new) for it in items)
            for relation, items in s.relations.items()}) for new, s in enumerate(chosen))
        return Corpus(name or f"{self.name} ({len(chosen)} sentences)", renumbered)

    @property
    def relations(self) -> list[str]:
        """The relations some sentence labels, in RELATIONS' order."""
        present = {r for s in self.sentences for r in s.relations}
        return [r for r in RELATIONS if r in present]


@dataclass(frozen=True)
class CorpusBatch:
    """Every sentence of a corpus in one padded batch."""

    ids: torch.Tensor  # (B, T) token ids, [PAD] after each sentence's end
    real: torch.Tensor  # (B, T) bool, True = a real token (False = padding)
    mask: torch.Tensor  # (B, 1, 1, T) or (B, 1, T, T) bool: the mask every layer applies (padding keys off, causal)
    lengths: tuple[int, ...]


def check_relation(relation: str) -> str:
    if relation not in RELATIONS:
        raise AttnvizError(f"'{relation}' is not a relation attnviz labels. The relations are: {', '.join(RELATIONS)}.")
    return relation


def corpus_path(name: str) -> Path:
    return CORPORA_DIR / f"{name}.jsonl"


def load_corpus(source: str | Path = DEFAULT_CORPUS) -> Corpus:
    """A corpus by its shipped name ("relations") or a path to a .jsonl file; AttnvizError naming the line of the
    first problem (malformed JSON, a missing field, a position outside the sentence, a relation with no target)."""
    path = Path(source) if Path(str(source)).suffix == ".jsonl" else corpus_path(str(source))
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in CORPORA_DIR.glob("*.jsonl"))) or "none"
        raise AttnvizError(f"No corpus at {path}. The shipped corpora are: {shipped}.")
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines:
        raise AttnvizError(f"The corpus file {path.name} has no sentences.")
    sentences = tuple(parse_sentence(line, index, f"{path.name}, line {index + 1}") for index, line in enumerate(lines))
    return Corpus(path.stem, sentences)


def parse_sentence(line: str, index: int, where: str) -> Sentence:
    """One JSON line -> a Sentence whose items point into its own tokens."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise AttnvizError(f"{where} is not valid JSON ({err.msg} at character {err.pos}).") from None
    if not isinstance(record, dict):
        raise AttnvizError(f"{where} must be a JSON object with id, text, tokens and relations.")
    missing = [k for k in ("id", "text", "tokens", "relations") if k not in record]
    if missing:
        raise AttnvizError(f"{where} lacks {', '.join(missing)}: each sentence needs id, text, tokens and relations.")
    tokens, relations = record["tokens"], record["relations"]
    if not (isinstance(tokens, list) and tokens and all(isinstance(t, str) for t in tokens)):
        raise AttnvizError(f"{where}: tokens must be a non-empty list of strings.")
    if not isinstance(relations, dict):
        raise AttnvizError(f"{where}: relations must map a relation's name to its labelled queries.")
    items = {check_relation(name): tuple(parse_item(entry, index, len(tokens), f"{where}, {name}")
                                         for entry in entries) for name, entries in relations.items()}
    return Sentence(str(record["id"]), str(record["text"]), tuple(tokens), items)


def parse_item(entry, index: int, n: int, where: str) -> Item:
    if not isinstance(entry, dict) or "query" not in entry:
        raise AttnvizError(f"{where}: each labelled query needs a 'query' position and its 'keys'.")
    keys = entry.get("keys")
    if not keys:
        raise AttnvizError(f"{where}: the query at {entry['query']} has no target (its 'keys' are empty or missing): "
                           "a relation needs at least one key to score.")
    positions = [entry["query"], *keys, *entry.get("candidates", [])]
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < n:
            raise AttnvizError(f"{where}: position {p!r} is not a token of this sentence (0 to {n - 1}).")
    return Item(index, int(entry["query"]), tuple(int(k) for k in keys),
                tuple(int(c) for c in entry.get("candidates", [])))


def check_tokens(model, corpus: Corpus) -> None:
    """AttnvizError unless the model splits every sentence into the tokens its positions count."""
    for s in corpus.sentences:
        tokens = tuple(model.encode(s.text).tokens)
        if tokens != s.tokens:
            raise AttnvizError(f"{model.name} splits the corpus's sentences differently from the tokenizer the "
                               f"corpus was labelled with (“{s.text}”: {len(tokens)} tokens against "
                               f"{len(s.tokens)}), so its positions would point at the wrong tokens. The shipped "
                               "corpus is labelled for all-MiniLM-L6-v2 (and models with its BERT tokenizer).")


def encode_corpus(model, corpus: Corpus) -> CorpusBatch:
    """Every sentence padded to the longest, with the mask a real batch uses: [PAD] keys off (and causal for a
    decoder). The tokens are checked against the corpus's first."""
    check_tokens(model, corpus)
    encs = [model.encode(s.text) for s in corpus.sentences]
    T = max(len(e.ids) for e in encs)
    pad = model.tokenizer.pad_id
    ids = torch.tensor([e.ids + [pad] * (T - len(e.ids)) for e in encs])  # (B, T)
    real = torch.tensor([[True] * len(e.ids) + [False] * (T - len(e.ids)) for e in encs])  # (B, T)
    mask = combine_masks(real[:, None, None, :], model.builtin_mask(T))  # (B, 1, 1, T), or (B, 1, T, T) causal
    return CorpusBatch(ids, real, mask, tuple(len(e.ids) for e in encs))
