"""The tiny model's words, its word-level tokenizer, and the repeated random sequences it trains on.

Why repeated random words: the first copy of a random sequence cannot be predicted (any word may
come next), but every word of the second copy can, by looking back at what followed the same word
the first time. A model that lowers its loss on the second copies has to grow previous-token and
induction heads, which is exactly what the Induction heads page then finds and shows.
"""

from __future__ import annotations

from pathlib import Path

import torch
from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
from tokenizers.models import WordLevel

WORDS_FILE = Path(__file__).with_name("words.txt")
SPECIALS = ["[PAD]", "[BOS]", "[UNK]"]  # ids 0, 1, 2
PUNCTUATION = [".", ",", "'", "?", "!", ";", ":", "-", "(", ")", '"']
PAD_ID, BOS_ID = 0, 1  # [UNK] (2) is the tokenizer's alone


def vocabulary() -> list[str]:
    """Specials, punctuation, then 1000 common English words (BERT's most frequent whole words plus
    everyday words from the app's example sentences): readable tokens, one id each."""
    words = WORDS_FILE.read_text(encoding="utf-8").split()
    return SPECIALS + PUNCTUATION + words


def first_word_id() -> int:
    """Training sequences draw only from words, never from specials or punctuation."""
    return len(SPECIALS) + len(PUNCTUATION)


def build_tokenizer(max_tokens: int):
    """A `tokenizers` word-level tokenizer: lower-cased words and punctuation, [BOS] in front, [UNK] for the rest."""
    vocab = {token: i for i, token in enumerate(vocabulary())}
    tok = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()  # \w+ or a run of punctuation
    tok.post_processor = processors.TemplateProcessing(single="[BOS] $A", special_tokens=[("[BOS]", BOS_ID)])
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    tok.add_special_tokens(SPECIALS)
    tok.enable_truncation(max_length=max_tokens)
    return tok


def tokenizer_config(max_tokens: int) -> dict:
    """tokenizer_config.json: lets transformers' AutoTokenizer (and attnviz) find the special tokens."""
    return {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "[BOS]", "pad_token": "[PAD]",
            "unk_token": "[UNK]", "model_max_length": max_tokens, "add_bos_token": True}


def random_words(n_rows: int, length: int, vocab_size: int, generator: torch.Generator) -> torch.Tensor:
    """(n_rows, length) word ids, distinct within a row (so 'the word after its earlier occurrence' is unique)."""
    n_words = vocab_size - first_word_id()
    order = torch.rand(n_rows, n_words, generator=generator).argsort(dim=1)  # (n_rows, n_words)
    return order[:, :length] + first_word_id()


def repeated_batch(n_rows: int, half: int, prefix: int, vocab_size: int, generator: torch.Generator,
                   copies: int = 2) -> torch.Tensor:
    """(n_rows, 1 + prefix + copies*half) ids: [BOS], `prefix` random words, then `half` random words `copies` times.

    The random prefix moves the repeat to different positions, so the heads learn it at any offset;
    more than two copies give more predictable tokens per sequence, which shortens training.
    """
    words = random_words(n_rows, prefix + half, vocab_size, generator)  # (n_rows, prefix + half)
    noise, seq = words[:, :prefix], words[:, prefix:]
    bos = torch.full((n_rows, 1), BOS_ID, dtype=torch.long)
    return torch.cat([bos, noise] + [seq] * copies, dim=1)  # (n_rows, 1 + prefix + copies*half)
