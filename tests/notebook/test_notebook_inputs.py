"""What attnviz.show / save_html accept and refuse, and what their document holds: the run's own numbers."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import attnviz
from attnviz import AttnvizError, AttnvizWarning
from attnviz.draw.heatmap_payload import decode_payload
from attnviz.draw.payload_frames import unwrap
from attnviz.lessons.model_view import pool_patterns
from attnviz.notebook.content import document_of
from attnviz.notebook.document import SCORES_BUDGET, pool_blocks

TOKENS = ["[CLS]", "a", "b", "c", "[SEP]"]


def weights(layers=2, heads=3, n_q=5, n_k=5, seed=0) -> torch.Tensor:
    return torch.softmax(torch.randn(layers, heads, n_q, n_k, generator=torch.Generator().manual_seed(seed)), dim=-1)


def document(obj, **kw) -> tuple[dict, list[bytes]]:
    return unwrap(document_of(obj, **kw), lambda h: h["parts"])


# ---- bad input: a clear AttnvizError before anything is drawn ------------------------------------------------

@pytest.mark.parametrize("attention, match", [
    (torch.rand(2, 3, 4), None),  # one layer (heads, n_q, n_k) with 3 queries and 4 keys: key_tokens missing
    (torch.rand(2, 3, 5, 5, 5, 1), "must be \\(layers, heads, n_q, n_k\\)"),
    (torch.rand(6, 2, 3, 5, 5), "batch of 2"),
    ([torch.rand(2, 3, 5, 5)], "batch of 2 sequences"),
    ([torch.rand(1, 3, 5, 5), torch.rand(1, 2, 5, 5)], "different shapes"),
    ([torch.rand(5, 5)], "each layer must be"),
    ("not attention", "must be a tensor"),
])
def test_wrong_shapes_are_named(attention, match):
    if match is None:
        with pytest.raises(AttnvizError, match="3 queries but 4 keys"):
            attnviz.save_html(attention, "/dev/null", tokens=["x"] * 3)
        return
    with pytest.raises(AttnvizError, match=match):
        document_of(attention, tokens=TOKENS)


def test_a_token_list_of_the_wrong_length_is_named():
    with pytest.raises(AttnvizError, match="There are 4 tokens but the attention has 5 queries"):
        document_of(weights(), tokens=TOKENS[:4])
    with pytest.raises(AttnvizError, match="There are 6 key_tokens but the attention has 7 keys"):
        document_of(weights(n_k=7), tokens=TOKENS, key_tokens=list("abcdef"))
    with pytest.raises(AttnvizError, match="a list of tokens"):
        document_of(weights(), tokens="[CLS] a b c [SEP]")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_inf_are_named_with_where(bad):
    a = weights()
    a[1, 2, 3, 4] = bad
    with pytest.raises(AttnvizError, match="layer 1, head 2, query 3, key 4"):
        document_of(a, tokens=TOKENS)


def test_scores_are_not_weights():
    scores = torch.randn(2, 3, 5, 5) * 4
    with pytest.raises(AttnvizError, match="Scores before the softmax are not weights"):
        document_of(scores, tokens=TOKENS)


def test_rows_that_do_not_sum_to_one_are_drawn_with_a_warning_and_zero_rows_are_fine():
    a = weights()
    a[0, 0, 2] *= 0.5
    with pytest.warns(AttnvizWarning, match="1 of 30 attention rows do not sum to 1.*layer 0, head 0, query 2 sums to 0.5"):
        document_of(a, tokens=TOKENS)
    b = weights()
    b[0, 0, 2] = 0.0  # a fully masked query row: attnviz's own rule gives zeros
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        document_of(b, tokens=TOKENS)


@pytest.mark.parametrize("kw, match", [
    ({"view": "grid"}, "view must be one of 'heads', 'model'"),
    ({"layer": 2}, "There is no layer 2: this attention has 2 layers, 0 to 1"),
    ({"layer": -1}, "There is no layer -1"),
    ({"heads": [0, 3]}, "There is no head 3: this attention has 3 heads, 0 to 2"),
    ({"heads": [1, 1]}, "names one head twice"),
    ({"heads": "all"}, "head must be None"),
    ({"layer": 0.5}, "layer must be None"),
    ({"scores": "yes"}, "scores must be 'auto', True or False"),
])
def test_unknown_views_and_out_of_range_layers_and_heads_are_named(kw, match):
    with pytest.raises(AttnvizError, match=match):
        document_of(weights(), tokens=TOKENS, **kw)


def test_a_run_result_refuses_tokens_and_nothing_is_refused():
    res = attnviz.load_model("toy").run("the cat sat")
    with pytest.raises(AttnvizError, match="carries its own tokens"):
        document_of(res, tokens=["a"])
    with pytest.raises(AttnvizError, match="Nothing to draw"):
        attnviz.show(None)


# ---- the document holds the run's own numbers ---------------------------------------------------------------

def test_transformers_style_tuple_of_layers_equals_the_stacked_tensor():
    a = weights()
    as_tuple = tuple(a[i][None] for i in range(2))  # output_attentions: per layer (1, heads, n, n)
    assert document_of(as_tuple, tokens=TOKENS) == document_of(a, tokens=TOKENS)
    assert document_of(a.numpy(), tokens=TOKENS) == document_of(a, tokens=TOKENS)


def test_a_kept_run_carries_its_scores_mask_and_scale_and_its_grids_are_its_weights(minilm):
    res = minilm.run("The cat sat on the mat.", mask="causal", keep=True)
    head, parts = document(res, layer=[1, 4], heads=[0, 5])
    (s,) = head["sets"]
    assert s["layers"] == [1, 4] and s["heads"] == [0, 5] and s["row_labels"] == res.labels
    assert s["scale_name"] == "1/√32" and s["agreement"] < 1e-5
    for at, layer in enumerate([1, 4]):
        _, drawn = decode_payload(parts[s["grids"][at]])
        np.testing.assert_allclose(drawn, res.attentions[layer, [0, 5]].numpy(), atol=s["weight_error"][at] + 1e-7)
        scores = np.frombuffer(parts[s["scores"][at]], dtype="<f4").reshape(2, len(res.labels), len(res.labels))
        np.testing.assert_array_equal(scores, res.traces[layer].scores[0, [0, 5]].numpy())
    allowed = np.frombuffer(parts[s["allowed"]], dtype=np.uint8).reshape(len(res.labels), -1)
    np.testing.assert_array_equal(allowed.astype(bool), res.mask.numpy())
    assert "masked" in head["subtitle"] and "1/√32" in head["subtitle"]


def test_scores_past_the_budget_are_left_out_and_the_document_says_why(minilm, monkeypatch):
    res = minilm.run("The cat sat on the mat.", keep=True)
    monkeypatch.setattr("attnviz.notebook.document.SCORES_BUDGET", 100)
    (s,) = document(res)[0]["sets"]
    assert s["scores"] is None and "were left out: pass layer= (one layer) or scores=True" in s["no_scores"]
    (s,) = document(res, scores=True)[0]["sets"]
    assert s["scores"] is not None
    assert SCORES_BUDGET >= 4 * 12 * 512 * 512  # one layer of 12 heads at 512 tokens fits


def test_a_run_without_keep_says_how_to_get_the_arithmetic(minilm):
    (s,) = document(minilm.run("The cat sat."))[0]["sets"]
    assert s["scores"] is None and "keep=True" in s["no_scores"]


def test_an_encoder_decoder_run_gives_cross_attention_first():
    bart = attnviz.load_model("attnviz-tiny-bart")
    pair = bart.run("three hundred forty two", target="342")
    head, parts = document(pair)
    names = [s["name"] for s in head["sets"]]
    assert names[0].startswith("cross-attention") and "decoder self-attention (causal)" in names
    cross = head["sets"][0]
    assert cross["row_labels"] == pair.labels and cross["col_labels"] == pair.source_labels
    assert cross["rows"] == len(pair.labels) != cross["cols"] == len(pair.source_labels)
    meta, drawn = decode_payload(parts[cross["grids"][1]])
    np.testing.assert_allclose(drawn, pair.cross_attentions[1].numpy(), atol=cross["weight_error"][1] + 1e-7)
    assert meta["col_labels"] == pair.source_labels


def test_thumbnails_pool_as_the_model_view_does_and_rectangles_keep_row_sums():
    a = weights(layers=1, heads=2, n_q=70, n_k=70)
    np.testing.assert_allclose(pool_blocks(a, 3, 3).numpy(), pool_patterns(a.numpy(), 3), atol=1e-6)
    rect = pool_blocks(weights(layers=1, heads=2, n_q=40, n_k=90), 2, 3)  # (1, 2, 20, 30)
    assert rect.shape == (1, 2, 20, 30)
    torch.testing.assert_close(rect.sum(-1), torch.ones(1, 2, 20))


def test_the_saved_page_fetches_nothing_and_escapes_the_title(tmp_path, minilm):
    res = minilm.run("The cat sat.")
    page = attnviz.save_html(res, tmp_path / "a.html").read_text(encoding="utf-8")
    assert "default-src 'none'" in page  # the page's own policy: nothing from elsewhere, even if asked
    assert "<script src" not in page and "<link" not in page


def test_row_sums_and_largest_weights_come_from_the_float32_weights_not_the_stored_cells():
    a = weights(layers=2, heads=3, n_q=5, n_k=7)
    head, parts = document(a, tokens=TOKENS, key_tokens=list("abcdefg"), heads=[2, 0])
    (s,) = head["sets"]
    for at, layer in enumerate([0, 1]):
        stats = np.frombuffer(parts[s["row_stats"][at]], dtype="<f4").reshape(2, 5, 3)
        chosen = a[layer, [2, 0]]
        np.testing.assert_allclose(stats[..., 0], chosen.double().sum(-1).numpy(), atol=1e-6)
        np.testing.assert_array_equal(stats[..., 1], chosen.argmax(-1).numpy())
        np.testing.assert_array_equal(stats[..., 2], chosen.max(-1).values.numpy())


def test_too_many_weights_for_a_browser_tab_are_refused_with_the_way_out(monkeypatch):
    monkeypatch.setattr("attnviz.notebook.document.MAX_CELLS", 100)
    with pytest.raises(AttnvizError, match="choose fewer with layer= or heads="):
        document_of(weights(), tokens=TOKENS)
    document_of(weights(), tokens=TOKENS, layer=0, heads=[0])  # 25 weights: fine


def test_importing_attnviz_imports_no_widget_library():
    """The app imports attnviz; anywidget (and ipywidgets) load only when show() is called."""
    code = "import sys, attnviz; print(any(m.split('.')[0] in ('anywidget', 'ipywidgets') for m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "False"
