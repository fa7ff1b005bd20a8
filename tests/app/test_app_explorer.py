"""The explorer page in Streamlit's AppTest: what it draws equals what attnviz computes."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import (
    assert_healthy,
    drawn_grid,
    drawn_heatmap,
    heatmap_payloads,
    page_text,
    run_app,
    switch_states,
)
from streamlit.errors import StreamlitAPIException

import attnviz
import ui.state as ui
from attnviz.draw.export import head_csv
from attnviz.draw.heatmap_payload import decode_payload

TEXT = "The cat sat on the mat because it was tired."


def grid(at):
    """head name -> (weights as drawn, row labels, column labels) from the canvas component's payload."""
    return {title.split(" · ")[0]: panel for title, panel in drawn_grid(at, "grid").items()}


def assert_drawn_equals(drawn: dict, attentions, layer: int, heads: list[int], labels: list[str]):
    """The drawn heads are these, labelled with these tokens, and hold these weights (uint16: to 1e-5)."""
    assert list(drawn) == [f"head {h}" for h in heads]
    for h in heads:
        z, rows, cols = drawn[f"head {h}"]
        assert rows == cols == list(labels)  # as typed: the browser sets them as text, never markup
        np.testing.assert_allclose(z, attentions[layer, h].numpy(), atol=1e-5)


def test_default_page_draws_every_head_of_layer_0_as_attnviz_computes(minilm):
    at = run_app()
    assert_healthy(at)
    res = minilm.run(at.text_area(key="text").value)
    assert_drawn_equals(grid(at), res.attentions, 0, list(range(12)), res.labels)
    assert "matches transformers" in page_text(at)


def test_setting_text_layer_and_heads_redraws_those_heads(minilm):
    at = run_app()
    at.text_area(key="text").input(TEXT)
    at.selectbox(key="layer").set_value(3)
    at.multiselect(key="heads").set_value([1, 7])
    at.run()
    assert_healthy(at)
    res = minilm.run(TEXT)
    assert_drawn_equals(grid(at), res.attentions, 3, [1, 7], res.labels)


@pytest.mark.parametrize("mask_key, extra, spec", [
    ("causal", {}, "causal"),
    ("window", {"window": 1}, "window:1"),
    ("strided", {"stride": 2}, "strided:2"),
    ("global", {"gwindow": 1, "globals": "0"}, "global:1:0"),
    ("random", {"keep": 0.5, "seed": 3}, "random:0.5:3"),
    ("padding", {"pad": 2}, "padding:2"),
])
def test_each_mask_changes_the_weights_as_attnviz_computes(minilm, mask_key, extra, spec):
    at = run_app({"text": TEXT})
    at.selectbox(key="mask").set_value(mask_key).run()
    for key, value in extra.items():
        widget = at.get("slider") + at.get("text_input") + at.get("number_input")
        [w for w in widget if w.key == key][0].set_value(value)
    at.run()
    assert_healthy(at)
    res = minilm.run(TEXT, mask=spec)
    assert_drawn_equals(grid(at), res.attentions, 0, list(range(12)), res.labels)
    plain = minilm.run(TEXT).attentions
    if mask_key == "padding":  # two [PAD] tokens appended: their key columns get no weight
        assert res.tokens[-2:] == ["[PAD]", "[PAD]"] and np.all(grid(at)["head 0"][0][:, -2:] == 0)
    else:
        assert not np.allclose(res.attentions, plain)
    if mask_key == "causal":
        z = grid(at)["head 0"][0]
        assert np.all(np.triu(z, k=1) == 0)


def test_scaling_off_and_a_custom_factor_change_the_weights(minilm):
    at = run_app({"text": TEXT})
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    unscaled = minilm.run(TEXT, scale=False)
    assert_drawn_equals(grid(at), unscaled.attentions, 0, list(range(12)), unscaled.labels)
    assert "Scaling is off" in page_text(at)
    # the toggle reran the explorer's scale-dependent parts alone (its callback's st.rerun(SCALE_PARTS)): the
    # sidebar, the page title and the layer picker were not redrawn, and the parts read the new scale from the
    # widget's state
    assert not at.title and not at.sidebar.toggle and not [s for s in at.selectbox if s.key == "layer"]
    at.run()  # a full run brings the sidebar back (a browser keeps it on screen all along)
    assert at.title and at.toggle(key="scaled").value is False
    at.number_input(key="factor").set_value(0.5).run()
    half = minilm.run(TEXT, scale=0.5)
    assert_drawn_equals(grid(at), half.attentions, 0, list(range(12)), half.labels)
    assert not np.allclose(unscaled.attentions, half.attentions)


def test_query_params_restore_the_view(toy):
    at = run_app({"model": "toy", "text": "one two three four", "mask": "window", "window": "1", "layer": "1",
                  "heads": "1", "scaled": "false"})
    assert_healthy(at)
    assert at.selectbox(key="model").value == "toy"
    res = toy.run("one two three four", mask="window:1", scale=False)
    assert_drawn_equals(grid(at), res.attentions, 1, [1], res.labels)


def test_math_panel_fills_in_d_k_and_draws_the_mask(minilm):
    at = run_app({"text": "a b c", "mask": "causal"})
    latex = "\n".join(e.value for e in at.latex)
    assert r"\sqrt{32}" in latex and r"-\infty" in latex
    assert "each token sees itself and the tokens before it" in page_text(at)


def test_csv_download_holds_the_chosen_heads_weights(toy):
    at = run_app({"model": "toy", "text": "red green blue"})
    at.selectbox(key="focus").set_value(1).run()

    expected = head_csv(toy.run("red green blue"), 0, 1)
    buttons = at.get("download_button")
    assert any("CSV" in b.proto.label for b in buttons)
    assert "0:[CLS]" in expected and expected.count("\n") == 5 + 1


def test_the_downloads_name_the_settings_their_weights_were_computed_with(toy):
    """A file leaves the page's controls behind: the PNGs' caption and the CSV's corner name the model, the mask and
    the scores' factor, of the state each one draws (the enlarged head's other state: the scaling flipped)."""
    at = run_app({"model": "toy", "text": "red green blue", "mask": "causal", "scaled": "false"})
    assert_healthy(at)
    said = "toy, mask causal, scores × 1"
    assert decode_payload(heatmap_payloads(at)["grid"])[0]["caption"] == said
    assert decode_payload(heatmap_payloads(at)["focus_head"])[0]["caption"] == said
    control, states = switch_states(at, "focus_head")
    assert control == "scaled" and states[True][0]["caption"] == f"toy, mask causal, scores × {4 ** -0.5:.4g}"  # d_k 4
    assert states[False][0]["caption"] == said
    corner = head_csv(toy.run("red green blue"), 0, 1, said).splitlines()[0]
    assert corner.startswith('"query \\ key (layer 0, head 1; toy, mask causal, scores × 1)",0:[CLS]')  # a CSV cell


def test_enlarged_head_shows_every_token_with_values_in_cells(toy):
    at = run_app({"model": "toy", "text": "red green blue"})
    at.selectbox(key="focus").set_value(1).run()
    z, rows, cols = drawn_heatmap(at, "focus_head")
    res = toy.run("red green blue")
    np.testing.assert_allclose(z, res.attentions[0, 1].numpy(), atol=1e-5)
    assert rows == cols == res.labels

    meta, _ = decode_payload(heatmap_payloads(at)["focus_head"])
    assert meta["show_values"] and meta["selectable"]  # numbers printed in the cells at this size


def test_a_mistral_folder_says_its_head_sizes_and_its_builtin_window(tiny_decoder_folder):
    folder = str(tiny_decoder_folder("mistral"))
    at = run_app({"model": "other", "model_path": folder, "text": "the cat sat on the mat and the dog sat"})
    assert_healthy(at)
    assert not at.error
    model = attnviz.load_model(folder)
    text = page_text(at)
    assert model.shared_window == 5 and "sliding window of 5 keys" in text
    if model.n_heads * model.d_head == model.d_model:
        assert f"d_model = n_heads·d_head = {model.n_heads}·{model.d_head} = {model.d_model}" in text
    assert f"{model.n_kv_heads} K/V heads shared by the {model.n_heads} query heads" in text


def test_a_llama_folder_with_its_own_head_dim_is_not_called_d_model_over_heads(tiny_decoder_folder):
    at = run_app({"model": "other", "model_path": str(tiny_decoder_folder("llama")), "text": "the cat sat on the mat"})
    assert_healthy(at)
    text = page_text(at)
    assert "d_model 32 · 4 heads × d_head 16 (Q projects to 64)" in text
    assert "d_model = n_heads·d_head" not in text
    assert r"4\cdot16 = 64" in text and r"\to d_{model} = 32" in text


def test_a_qwen2_folder_with_per_layer_windows_says_which_layers_slide(tiny_decoder_folder):
    folder = str(tiny_decoder_folder("qwen2-windowed"))
    text = "the cat sat on the mat and the dog sat"
    at = run_app({"model": "other", "model_path": folder, "text": text, "layer": "1"})
    assert_healthy(at)
    model = attnviz.load_model(folder)
    assert model.cfg.windows == (None, 3) and model.shared_window is None
    said = page_text(at)
    assert "layer 0: full causal attention" in said and "layer 1: a sliding window of 3 keys" in said
    res = model.run(text)
    z = grid(at)["head 0"][0]
    np.testing.assert_allclose(z, res.attentions[1, 0].numpy(), atol=1e-5)
    assert np.all(np.tril(z, k=-3) == 0)  # layer 1 sees itself and the 2 tokens before, no further


def test_a_scale_toggle_after_a_run_that_drew_no_fragment_reruns_the_whole_page(monkeypatch, minilm):
    """The scale controls' callback names the explorer's fragments; if the last run never drew them, the toggle
    must still work (a whole-page rerun), not fail on an unknown fragment key."""
    at = run_app({"text": TEXT})
    real = ui.st.rerun

    def unknown_key(scope="app"):
        if "explorer_grid" in scope:
            raise StreamlitAPIException("unknown fragment key")
        return real(scope)

    monkeypatch.setattr(ui.st, "rerun", unknown_key)
    at.toggle(key="scaled").set_value(False).run()
    assert_healthy(at)
    assert at.title and at.sidebar.toggle  # the whole page ran
    unscaled = minilm.run(TEXT, scale=False)
    assert_drawn_equals(grid(at), unscaled.attentions, 0, list(range(12)), unscaled.labels)


def test_the_truth_badge_says_what_it_checked_and_a_note_says_when_the_heatmaps_are_not_that(minilm):
    at = run_app({"text": TEXT})
    badge = " ".join(str(s.value) for s in at.success)
    assert "matches transformers at the trained settings (no mask, scores divided by √d_k = √32)" in badge
    assert "did not cover" not in page_text(at)
    at = run_app({"text": TEXT, "mask": "causal"})  # an encoder under a causal mask: not what transformers ran
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "These heatmaps use a causal mask, which the check against transformers did not cover" in warnings
    at.toggle(key="scaled").set_value(False).run()  # the note is in the part a toggle reruns: it follows the toggle
    warnings = " ".join(str(w.value) for w in at.warning)
    assert "These heatmaps use a causal mask and no scaling (factor 1), which the check" in warnings


def test_on_tiny_llama_the_badge_names_its_built_in_causal_mask_and_causal_is_no_difference(tiny_llama):
    at = run_app({"model": "tiny-llama", "text": "the cat sat on the mat", "mask": "causal"})
    assert_healthy(at)
    badge = " ".join(str(s.value) for s in at.success)
    assert f"trained settings (its built-in causal mask, scores divided by √d_k = √{tiny_llama.d_head})" in badge
    assert "no mask" not in badge and "did not cover" not in page_text(at)
    at = run_app({"model": "tiny-llama", "text": "the cat sat on the mat", "mask": "window", "window": "1"})
    assert "These heatmaps use a sliding window mask (window:1), which the check" in page_text(at)


def test_chinese_text_gets_a_note_that_the_vocabulary_lacks_the_characters_shown_as_unk(minilm):
    at = run_app({"text": "我喜欢猫。The cat sat."})
    assert_healthy(at)
    notes = " ".join(str(i.value) for i in at.info)
    assert "3 of the 11 tokens are [UNK] (喜, 欢, 猫): all-MiniLM-L6-v2's vocabulary has no piece for these" in notes
    assert "[UNK]" not in " ".join(str(i.value) for i in run_app({"text": TEXT}).info)
