"""Tiny random Hugging Face models saved with a tokenizer, built offline, for parity tests.

Each builder writes a folder that looks exactly like a hub snapshot (config.json,
model.safetensors, tokenizer.json, tokenizer_config.json) so that attnviz.load_model(folder)
goes through the same loading code a real model does.

Weights are seeded and widened past transformers' default init (std 0.02, zero biases, unit
LayerNorms): near-uniform attention and zero biases would let a wrong bias or a transposed
matrix slip through a parity test unnoticed.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import json
from pathlib import Path

import torch
import transformers
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SIZE = {"hidden": 32, "layers": 2, "heads": 4, "ffn": 64, "positions": 64}
SEED = 1234
TRAINING_TEXT = [
    "The cat sat on the mat.",
    "A dog ran after the cat, and the cat ran up a tree!",
    "Attention lets every token look at every other token.",
    "Queries meet keys; values are averaged by the weights.",
    "The the the cat the.",
]
BERT_SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # ids 0..4, pad_token_id = 1 as in RoBERTa


# ---- tokenizers --------------------------------------------------------------------------


def wordpiece_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """A lower-casing WordPiece with letters, '##'-letters and a few words, BERT's [CLS] x [SEP]."""
    letters = list("abcdefghijklmnopqrstuvwxyz0123456789.,!?;'")
    words = sorted({w.strip(".,!?;").lower() for line in TRAINING_TEXT for w in line.split()} - {""})
    pieces = BERT_SPECIALS + letters + ["##" + c for c in letters] + words
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    tok.decoder = decoders.WordPiece()
    tok.add_special_tokens(BERT_SPECIALS)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]",
        mask_token="[MASK]",
    )


def byte_level_bpe(specials: list[str], vocab_size: int) -> Tokenizer:
    """A ByteLevel BPE trained on TRAINING_TEXT: every byte is in the alphabet, so nothing is unknown."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(TRAINING_TEXT, trainer)
    return tok


def gpt2_tokenizer() -> transformers.PreTrainedTokenizerFast:
    tok = byte_level_bpe(["<|endoftext|>"], vocab_size=300)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<|endoftext|>",
    )


def roberta_tokenizer() -> transformers.PreTrainedTokenizerFast:
    tok = byte_level_bpe(ROBERTA_SPECIALS, vocab_size=300)
    tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))  # <s> x </s>
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>",
        pad_token="<pad>", unk_token="<unk>", mask_token="<mask>",
    )


# ---- models ------------------------------------------------------------------------------


def bert_config(vocab_size: int) -> transformers.BertConfig:
    return transformers.BertConfig(
        vocab_size=vocab_size, hidden_size=SIZE["hidden"], num_hidden_layers=SIZE["layers"],
        num_attention_heads=SIZE["heads"], intermediate_size=SIZE["ffn"], max_position_embeddings=SIZE["positions"],
        pad_token_id=0,
    )


def gpt2_config(vocab_size: int) -> transformers.GPT2Config:
    return transformers.GPT2Config(
        vocab_size=vocab_size, n_embd=SIZE["hidden"], n_layer=SIZE["layers"], n_head=SIZE["heads"],
        n_inner=SIZE["ffn"], n_positions=SIZE["positions"], bos_token_id=0, eos_token_id=0,
    )


def roberta_config(vocab_size: int) -> transformers.RobertaConfig:
    # RoBERTa spends positions 0 and 1 on padding_idx: 2 more positions for the same usable length
    return transformers.RobertaConfig(
        vocab_size=vocab_size, hidden_size=SIZE["hidden"], num_hidden_layers=SIZE["layers"],
        num_attention_heads=SIZE["heads"], intermediate_size=SIZE["ffn"],
        max_position_embeddings=SIZE["positions"] + 2, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        type_vocab_size=1,
    )


def distilbert_config(vocab_size: int) -> transformers.DistilBertConfig:
    return transformers.DistilBertConfig(
        vocab_size=vocab_size, dim=SIZE["hidden"], n_layers=SIZE["layers"], n_heads=SIZE["heads"],
        hidden_dim=SIZE["ffn"], max_position_embeddings=SIZE["positions"], pad_token_id=0,
    )


def bart_config(vocab_size: int) -> transformers.BartConfig:
    # Encoder and decoder differ in depth and heads, so a mix-up of the two halves cannot pass unseen;
    # scale_embedding on, so the sqrt(d_model) factor is exercised.
    return transformers.BartConfig(
        vocab_size=vocab_size, d_model=SIZE["hidden"], encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
        decoder_attention_heads=2, encoder_ffn_dim=SIZE["ffn"], decoder_ffn_dim=SIZE["ffn"] + 16,
        max_position_embeddings=SIZE["positions"], scale_embedding=True, pad_token_id=1, bos_token_id=0,
        eos_token_id=2, decoder_start_token_id=2, forced_eos_token_id=2,
    )


TINY = {  # family -> (tokenizer builder, config builder)
    "bert": (wordpiece_tokenizer, bert_config),
    "gpt2": (gpt2_tokenizer, gpt2_config),
    "roberta": (roberta_tokenizer, roberta_config),
    "distilbert": (wordpiece_tokenizer, distilbert_config),
}


SEQ2SEQ = {"bart": (roberta_tokenizer, bart_config)}  # encoder–decoders: same tokenizer specials as BART's


def widen_weights(model: torch.nn.Module, seed: int) -> None:
    """Seeded noise on every parameter, biases and LayerNorms included, so nothing is trivially 0 or 1."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.add_(torch.randn(p.shape, generator=g) * 0.15)


def save_tiny_model(family: str, folder: Path, seed: int = SEED) -> Path:
    """Build a seeded tiny `family` model plus tokenizer and save both into `folder` (safetensors)."""
    make_tokenizer, make_config = {**TINY, **SEQ2SEQ}[family]
    tokenizer = make_tokenizer()
    config = make_config(len(tokenizer))
    torch.manual_seed(seed)
    model = transformers.AutoModel.from_config(config, attn_implementation="eager")
    widen_weights(model, seed)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def load_hf(folder: Path | str) -> torch.nn.Module:
    """The reference: transformers' own eager float32 implementation of the saved folder."""
    model = transformers.AutoModel.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32)
    return model.eval()


def hf_attentions(hf_model, ids: list[int], attention_mask=None):
    """(stacked attentions (L, H, n, n), last hidden state (n, C)) of one sequence, or batched with a mask."""
    input_ids = torch.tensor([ids]) if attention_mask is None else torch.tensor(ids)
    with torch.no_grad():
        out = hf_model(input_ids=input_ids, attention_mask=attention_mask, output_attentions=True)
    atts = torch.stack(out.attentions, dim=1 if attention_mask is not None else 0)
    if attention_mask is None:
        return atts[:, 0], out.last_hidden_state[0]
    return atts, out.last_hidden_state  # (B, L, H, n, n), (B, n, C)


# ---- Llama-family decoders (RoPE, GQA, RMSNorm, SwiGLU), saved with their LM head --------------


def llama_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """Byte-level BPE that puts <s> (BOS) first, as Llama tokenizers do."""
    tok = byte_level_bpe(["<s>", "</s>"], vocab_size=300)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")


def qwen2_tokenizer() -> transformers.PreTrainedTokenizerFast:
    """Byte-level BPE without a BOS, as Qwen2's is."""
    tok = byte_level_bpe(["<|endoftext|>"], vocab_size=300)
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")


DECODER_SIZE = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64,
                "max_position_embeddings": 96, "eos_token_id": None}
TINY_DECODERS = {  # name -> (family, tokenizer builder, config class, config fields beyond DECODER_SIZE)
    # GQA 4 query heads over 2 K/V heads; head_dim 16 given by the config (not 32 / 4); rope theta not 10000
    "llama": ("llama", llama_tokenizer, transformers.LlamaConfig,
              {"num_key_value_heads": 2, "head_dim": 16, "rope_parameters": {"rope_type": "default", "rope_theta": 500.0}}),
    # Llama 3.1's rope scaling, tied embeddings, every bias switched on
    "llama3-tied": ("llama", llama_tokenizer, transformers.LlamaConfig,
                    {"num_key_value_heads": 1, "tie_word_embeddings": True, "attention_bias": True, "mlp_bias": True,
                     "rope_parameters": {"rope_type": "llama3", "rope_theta": 50000.0, "factor": 8.0, "low_freq_factor": 1.0,
                                         "high_freq_factor": 4.0, "original_max_position_embeddings": 32}}),
    # q/k/v biases; multi-query attention (one K/V head); a large theta as Qwen2 uses
    "qwen2": ("qwen2", qwen2_tokenizer, transformers.Qwen2Config,
              {"num_key_value_heads": 1, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}),
    # Qwen2's per-layer windows: layer 0 full causal, layer 1 (from max_window_layers on) a window of 3 keys
    "qwen2-windowed": ("qwen2", qwen2_tokenizer, transformers.Qwen2Config,
                       {"num_key_value_heads": 2, "use_sliding_window": True, "sliding_window": 3, "max_window_layers": 1}),
    # a sliding window of 5 keys, shorter than the test sentences
    "mistral": ("mistral", llama_tokenizer, transformers.MistralConfig,
                {"num_key_value_heads": 2, "sliding_window": 5,
                 "rope_parameters": {"rope_type": "default", "rope_theta": 20000.0}}),
}
LEGACY_ROPE = {"rope_theta": 30000.0, "rope_scaling": {"type": "linear", "factor": 2.0}}  # a pre-5.x config.json


def save_tiny_decoder(name: str, folder: Path, seed: int = SEED, legacy_rope: bool = False) -> Path:
    """A seeded tiny Llama-family causal LM (with its head) plus tokenizer, saved into `folder` (safetensors).

    legacy_rope: rewrite config.json in the older form (top-level rope_theta + rope_scaling, linear scaling).
    """
    _, make_tokenizer, config_class, fields = TINY_DECODERS[name]
    tokenizer = make_tokenizer()
    config = config_class(vocab_size=len(tokenizer), **DECODER_SIZE, **fields)
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config, attn_implementation="eager")
    widen_weights(model, seed)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    if legacy_rope:
        path = Path(folder) / "config.json"
        saved = json.loads(path.read_text())
        saved.pop("rope_parameters", None)
        path.write_text(json.dumps({**saved, **LEGACY_ROPE}, indent=2))
    return folder


def load_hf_causal_lm(folder: Path | str) -> torch.nn.Module:
    """transformers' own causal LM (with its head) for the folder, eager attention, float32, eval mode."""
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32)
    return model.eval()
