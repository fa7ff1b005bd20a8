"""Text -> token ids with the model's own tokenizer (Hugging Face `tokenizers`), special tokens kept.

The `tokenizers` library reads tokenizer.json directly and imports in milliseconds, which keeps
the app's start fast; transformers is only imported for folders that lack a tokenizer.json.
"""

from __future__ import annotations

import json
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path

from tokenizers import Tokenizer

from attnviz.errors import AttnvizError


@dataclass
class Encoded:
    ids: list[int]
    tokens: list[str]  # the tokenizer's own strings: '[CLS]', 'cat', '##s', 'Ġcat'
    labels: list[str]  # readable versions for axes: byte-level 'Ġcat' -> 'cat'
    truncated: bool
    n_pad: int = 0  # [PAD] tokens appended at the end


class HFTokenizer:
    """A Hugging Face tokenizer.json with truncation at the model's maximum length."""

    def __init__(self, backend, max_tokens: int, pad_token: str | None):
        self.backend = backend
        self.max_tokens = max_tokens
        self.backend.no_padding()
        self.backend.enable_truncation(max_length=max_tokens)
        self.byte_level = type(backend.decoder).__name__ == "ByteLevel" if backend.decoder else False
        self.special = {t.content for t in backend.get_added_tokens_decoder().values() if t.special}
        self.pad_token = pad_token or next(iter(sorted(self.special)), None)
        self.pad_id = backend.token_to_id(self.pad_token) if self.pad_token else 0

    @classmethod
    def from_folder(cls, folder: Path, max_tokens: int) -> HFTokenizer:
        path = folder / "tokenizer.json"
        if path.exists():
            backend = Tokenizer.from_file(str(path))
        else:  # an older folder with only vocab files: let transformers build the fast tokenizer
            from transformers import AutoTokenizer  # noqa: PLC0415 - transformers takes seconds: only for old folders

            try:
                backend = AutoTokenizer.from_pretrained(str(folder)).backend_tokenizer
            except Exception as err:
                raise AttnvizError(f"No usable tokenizer in {folder}: {err}") from None
        return cls(backend, max_tokens, _pad_token_of(folder))

    def encode(self, text: str, n_pad: int = 0) -> Encoded:
        enc = self.backend.encode(text)
        if all(t in self.special for t in enc.tokens):
            raise AttnvizError("The text has no tokens besides the model's special tokens: type some visible words.")
        ids, tokens = list(enc.ids), list(enc.tokens)
        labels = [self._label(i, t) for i, t in zip(ids, tokens, strict=True)]
        return self.pad(Encoded(ids, tokens, labels, truncated=bool(enc.overflowing)), n_pad)

    def pad(self, enc: Encoded, n_pad: int) -> Encoded:
        """Append n_pad [PAD] tokens (as batching does), keeping within the model's maximum."""
        if n_pad <= 0:
            return enc
        if self.pad_token is None:
            raise AttnvizError("This model's tokenizer has no padding token.")
        if len(enc.ids) + n_pad > self.max_tokens:
            raise AttnvizError(f"Padding to {len(enc.ids) + n_pad} tokens is more than the model's {self.max_tokens}.")
        return replace(
            enc, ids=enc.ids + [self.pad_id] * n_pad, tokens=enc.tokens + [self.pad_token] * n_pad,
            labels=enc.labels + [self.pad_token] * n_pad, n_pad=enc.n_pad + n_pad,
        )

    def token_of(self, token_id: int) -> tuple[str, str]:
        """(the tokenizer's string, a readable label) for one id, as generation needs for each new token."""
        token = self.backend.id_to_token(token_id)
        token = f"<{token_id}>" if token is None else token
        return token, self._label(token_id, token)

    def decode(self, ids: list[int]) -> str:
        return self.backend.decode(ids, skip_special_tokens=False)

    def _label(self, token_id: int, token: str) -> str:
        if not self.byte_level or token in self.special:
            return token
        text = self.backend.decode([token_id], skip_special_tokens=False)
        return text.strip() or "␣"


def _pad_token_of(folder: Path) -> str | None:
    for name in ("special_tokens_map.json", "tokenizer_config.json"):
        path = folder / name
        if path.exists():
            pad = json.loads(path.read_text(encoding="utf-8")).get("pad_token")
            if isinstance(pad, dict):
                pad = pad.get("content")
            if pad:
                return pad
    return None


class WordTokenizer:
    """The toy model's tokenizer: lower-case words and punctuation between [CLS] and [SEP].

    There is no fixed vocabulary: a word's id is a stable hash of it, so every word the class types
    gets its own (seeded) embedding and no [UNK] ever appears.
    """

    special = {"[CLS]", "[SEP]", "[PAD]"}
    pad_token = "[PAD]"
    reserved = {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2}

    def __init__(self, vocab_size: int, max_tokens: int):
        self.vocab_size = vocab_size
        self.max_tokens = max_tokens
        self.pad_id = 0

    def token_id(self, token: str) -> int:
        if token in self.reserved:
            return self.reserved[token]
        return len(self.reserved) + zlib.crc32(token.encode("utf-8")) % (self.vocab_size - len(self.reserved))

    def encode(self, text: str, n_pad: int = 0) -> Encoded:
        words = re.findall(r"\w+|[^\w\s]", text.lower())
        if not words:
            raise AttnvizError("The text has no words in it: type some visible words.")
        body_limit = self.max_tokens - 2
        tokens = ["[CLS]"] + words[:body_limit] + ["[SEP]"]
        ids = [self.token_id(t) for t in tokens]
        return self.pad(Encoded(ids, tokens, list(tokens), truncated=len(words) > body_limit), n_pad)

    pad = HFTokenizer.pad
