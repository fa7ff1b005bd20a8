"""Parity with Hugging Face transformers: the from-scratch stack must reproduce its eager attentions.

The reference is transformers itself (attn_implementation="eager", float32, eval mode,
output_attentions=True) fed the very token ids our tokenizer produced (res.token_ids), so that
only the math is compared, never two tokenizers.
"""

import pytest
import torch
from helpers_tiny_models import TINY, hf_attentions, load_hf
from transformers import AutoTokenizer

import attnviz
from attnviz.engine.masks import causal_mask, window_mask

ATOL_ATTENTION = 1e-5
ATOL_HIDDEN = 1e-4

SENTENCES = {
    "plain": "The cat sat on the mat.",
    "accents": "Café crème, naïve façade — déjà vu à Zürich.",
    "cjk": "我爱我的猫。猫が好きです。고양이",
    "emoji": "I love my 🐈 and 🍕!! 👩‍💻 codes 🚀",
    "repeated": "the the the cat the",
    "long": (
        "Attention lets every token in a sentence look at every other token, weigh how relevant each one is "
        "through the dot product of a query with the keys, and then average the values with those weights; "
        "stacking many heads and layers lets the model build up syntax, coreference and meaning step by step, "
        "which is exactly what this app tries to show a class, one heatmap at a time."
    ),
}


def max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    assert a.shape == b.shape, (a.shape, b.shape)
    return (a - b).abs().max().item()


@pytest.fixture(scope="module")
def bundled_hf(bundled_model):
    return load_hf(bundled_model.source)


# ---- the bundled MiniLM: real weights ------------------------------------------------------


@pytest.mark.parametrize("text", SENTENCES.values(), ids=SENTENCES.keys())
def test_bundled_attentions_match_transformers(bundled_model, bundled_hf, text):
    res = bundled_model.run(text)
    theirs, hidden = hf_attentions(bundled_hf, res.token_ids)
    assert res.attentions.shape == (6, 12, len(res.tokens), len(res.tokens))
    assert max_abs_diff(res.attentions, theirs) <= ATOL_ATTENTION
    assert max_abs_diff(res.hidden, hidden) <= ATOL_HIDDEN


def test_bundled_tokens_agree_with_transformers_tokenizer(bundled_model):
    # The parity tests feed HF our ids; this proves those ids are the ones HF would have made.
    hf_tok = AutoTokenizer.from_pretrained(bundled_model.source)
    for text in SENTENCES.values():
        assert bundled_model.run(text).token_ids == hf_tok(text)["input_ids"]


def test_long_sentence_is_long_enough_to_matter(bundled_model):
    assert len(bundled_model.run(SENTENCES["long"]).tokens) > 60


# ---- tiny random models of each family, saved and loaded back through the public API ------


@pytest.mark.parametrize("family", sorted(TINY))
def test_tiny_model_loads_as_its_family(tiny_model_folder, family):
    model = attnviz.load_model(str(tiny_model_folder(family)))
    assert model.family == family
    assert (model.n_layers, model.n_heads, model.d_model) == (2, 4, 32)


@pytest.mark.parametrize("family", sorted(TINY))
@pytest.mark.parametrize("text", [SENTENCES["plain"], SENTENCES["emoji"], SENTENCES["repeated"]])
def test_tiny_model_matches_transformers(tiny_model_folder, family, text):
    folder = tiny_model_folder(family)
    res = attnviz.load_model(str(folder)).run(text)
    theirs, hidden = hf_attentions(load_hf(folder), res.token_ids)
    assert max_abs_diff(res.attentions, theirs) <= ATOL_ATTENTION
    assert max_abs_diff(res.hidden, hidden) <= ATOL_HIDDEN


def test_tiny_models_attend_unevenly(tiny_model_folder):
    # Near-uniform weights would make the parity above nearly vacuous: the seeded noise must bite.
    for family in TINY:
        res = attnviz.load_model(str(tiny_model_folder(family))).run(SENTENCES["plain"])
        n = len(res.tokens)
        assert res.attentions.amax() > 3.0 / n, family


# ---- batches with padding ------------------------------------------------------------------


def test_run_batch_matches_transformers_on_real_rows(bundled_model, bundled_hf):
    texts = ["The cat sat on the mat.", "A much longer sentence about a dog that ran after the cat all day."]
    encs, ours = bundled_model.run_batch(texts)  # (B, L, H, T, T)
    hf_tok = AutoTokenizer.from_pretrained(bundled_model.source)
    batch = hf_tok(texts, padding=True, return_tensors="pt")
    assert [e.ids for e in encs] == batch["input_ids"].tolist()
    theirs, _ = hf_attentions(bundled_hf, batch["input_ids"].tolist(), batch["attention_mask"])
    for b, enc in enumerate(encs):
        n_real = len(enc.ids) - enc.n_pad
        # Pad query rows are garbage in both implementations (nobody reads them): compare real rows.
        assert max_abs_diff(ours[b, :, :, :n_real], theirs[b, :, :, :n_real]) <= ATOL_ATTENTION


def test_run_batch_gives_pad_keys_exactly_zero_weight(bundled_model):
    encs, ours = bundled_model.run_batch(["Short one.", "This sentence is quite a bit longer than that."])
    short = encs[0]
    assert short.n_pad > 0
    assert (ours[0, ..., len(short.ids) - short.n_pad :] == 0).all()
    assert encs[1].n_pad == 0


def test_run_batch_real_rows_equal_single_runs(bundled_model):
    # Padding must not leak into the real tokens: the short text's rows equal its unpadded run.
    _, ours = bundled_model.run_batch(["Short one.", "This sentence is quite a bit longer than that."])
    single = bundled_model.run("Short one.").attentions
    n = single.shape[-1]
    assert max_abs_diff(ours[0, :, :, :n, :n], single) <= ATOL_ATTENTION


# ---- GPT-2: its causal mask is built in and combines with the user's mask -------------------


def test_gpt2_is_causal_without_a_user_mask(tiny_model_folder):
    res = attnviz.load_model(str(tiny_model_folder("gpt2"))).run(SENTENCES["plain"])
    assert (res.attentions.triu(diagonal=1) == 0).all()
    assert torch.equal(res.mask, causal_mask(len(res.tokens)))


def test_gpt2_window_mask_keeps_only_causal_and_window(tiny_model_folder):
    res = attnviz.load_model(str(tiny_model_folder("gpt2"))).run(SENTENCES["plain"], mask="window:1")
    n = len(res.tokens)
    allowed = causal_mask(n) & window_mask(n, 1)  # each token sees itself and the one before
    assert torch.equal(res.mask, allowed)
    assert (res.attentions[..., ~allowed] == 0).all()
    assert torch.allclose(res.attentions.sum(-1), torch.ones(res.attentions.shape[:-1]), atol=1e-6)
    assert (res.attentions.diagonal(offset=-1, dim1=-2, dim2=-1) > 0).all()  # the window is used


# ---- the same parity on a GPU, where there is one -------------------------------------------


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_bundled_attentions_on_cuda_match_transformers(bundled_hf):
    model = attnviz.load_model(device="cuda")
    for text in (SENTENCES["plain"], SENTENCES["long"]):
        res = model.run(text)
        assert res.attentions.device.type == "cpu"
        theirs, _ = hf_attentions(bundled_hf, res.token_ids)
        assert max_abs_diff(res.attentions, theirs) <= ATOL_ATTENTION
