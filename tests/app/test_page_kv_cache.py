"""The KV-cache page in AppTest: the step view, the cached-vs-full proof and the memory figures are attnviz's."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import re

import numpy as np
import pytest
from apptest_helpers import app_menu, assert_healthy, chart_specs, drawn_heatmap, has_heatmap, page_text, run_app

from attnviz.engine.kv_cache import HALF_BYTES, kv_cache_bytes_per_token
from attnviz.lecture import load_plan
from attnviz.lessons.kv_cache.decoding import agreement, step_view
from attnviz.paths import LECTURES

PAGE = "app_pages/kv_cache.py"
PROMPT = "the cat sat on the mat . the cat"
DRAWN = 0.0005 + 1e-7  # weights travel as thousandths


@pytest.fixture(scope="module")
def page():
    at = run_app({"model": "tiny-llama", "kv_prompt": PROMPT, "kv_new": "6"}, page=PAGE)
    at.slider(key="kv_step").set_value(3)
    at.selectbox(key="kv_layer").set_value(1)
    at.selectbox(key="kv_head").set_value(3)
    return at.run()


def test_step_view_draws_the_cache_and_row_attnviz_computes(page, tiny_llama):
    assert_healthy(page)
    cached = tiny_llama.generate(PROMPT, max_new_tokens=6, cache=True)
    v = step_view(tiny_llama, cached, 3, 1, 3)
    keys, rows, _ = drawn_heatmap(page, "kv_k")
    assert keys.shape == (cached.n_prompt + 3, tiny_llama.d_head) and rows == cached.labels[: cached.n_prompt + 3]
    np.testing.assert_allclose(keys, v.keys.numpy(), rtol=1e-5, atol=1e-6)
    values, _, _ = drawn_heatmap(page, "kv_v")
    np.testing.assert_allclose(values, v.values.numpy(), rtol=1e-5, atol=1e-6)
    row, _, cols = drawn_heatmap(page, "kv_row")
    np.testing.assert_allclose(row, cached.steps[3].attention[1, 3][None].numpy(), atol=DRAWN)
    assert cols == rows
    assert v.kv_head == 3 // (tiny_llama.n_heads // tiny_llama.n_kv_heads)
    assert v.recomputed_difference < 1e-5
    assert " ".join(cached.labels[cached.n_prompt:]) in page_text(page)


def test_cached_equals_full_recomputation_on_screen(page, tiny_llama):
    a = agreement(tiny_llama.generate(PROMPT, 6, cache=True), tiny_llama.generate(PROMPT, 6, cache=False))
    metrics = {m.label: m.value for m in page.metric}
    assert metrics["Same tokens both ways"] == "yes" and a.same_tokens
    assert metrics["Max |Δ| of attention rows"] == f"{a.max_abs_difference:.1e}"
    assert a.max_abs_difference <= 1e-5


def test_timing_and_memory_charts(page, tiny_llama):
    specs = chart_specs(page)
    timing = specs["kv_time"]["data"]
    assert len(timing) == 2 and len(timing[0]["x"]) == 5  # steps 1..5 (step 0 includes the prefill)
    bars = specs["kv_mem"]["data"][0]
    per_token = lambda kv: kv_cache_bytes_per_token(tiny_llama.n_layers, kv, tiny_llama.d_head, HALF_BYTES)
    assert list(bars["y"]) == [per_token(tiny_llama.n_heads), per_token(tiny_llama.n_kv_heads), per_token(1)]
    table = page.dataframe[0].value
    llama3 = table[table["model"] == "Llama-3-8B"].iloc[0]
    assert llama3["K/V heads"] == 8 and llama3["KiB per token"] == 128.0


def test_an_encoder_opens_the_page_on_tiny_llama_and_says_so():
    """No page is an error by default: with the bundled BERT chosen, the page teaches on tiny-llama, says why, and
    leaves the sidebar's choice alone."""
    at = run_app({}, page=PAGE)  # the bundled BERT
    assert_healthy(at)
    assert not at.error
    assert any("is an encoder" in i.value and "tiny-llama" in i.value for i in at.info)
    assert "wrote:" in page_text(at) and has_heatmap(at, "kv_row")
    assert at.sidebar.selectbox(key="model").value == "all-MiniLM-L6-v2"


@pytest.mark.parametrize("prompt, message", [
    (" ".join(["the"] * 300), "longer than"),
    (" ".join(["the"] * 250), "more would pass"),
])
def test_a_prompt_past_the_models_length_is_a_clear_message(prompt, message):
    at = run_app({"model": "tiny-llama", "kv_prompt": prompt, "kv_new": "12"}, page=PAGE)
    assert_healthy(at)
    assert any(message in e.value for e in at.error), [e.value for e in at.error]


def test_the_default_prompt_shows_tiny_llama_continuing_a_copy_and_says_what_it_was_trained_for(tiny_llama):
    at = run_app({"model": "tiny-llama"}, page=PAGE)
    assert_healthy(at)
    prompt = at.text_input(key="kv_prompt").value
    words = prompt.split()
    block = words[: words.index(words[0], 1)]  # a block of distinct words, then its start again
    start = words[len(block):]
    assert len(block) >= 8 and start == block[: len(start)] and len(set(block)) == len(block)
    n_new = at.number_input(key="kv_new").value
    wrote = tiny_llama.generate(prompt, max_new_tokens=n_new, cache=True)
    expected = (block[len(start):] + block)[:n_new]
    assert wrote.labels[wrote.n_prompt:] == expected  # it continues the copy, word for word
    text = page_text(at)
    assert f"wrote: **{' '.join(expected)}**" in text
    assert "attnviz-tiny-llama was trained on nothing but blocks of random words written twice" in text
    # step 0, the page's first: the prefill computes every prompt token's keys (it said "only 2 new keys … the other
    # 13 rows were read from memory", true of every later step alone)
    assert f"Step 0 writes new token 1: the context holds **{wrote.n_prompt} tokens**" in text
    assert f"keys and values of all {wrote.n_prompt} prompt tokens" in text
    assert f"the other {wrote.n_prompt - 1} rows were read from memory" not in text


def test_the_lectures_kv_step_opens_at_the_step_its_question_asks_about(tiny_llama):
    """The default plan asks about "its 10th new token": the step opened at (kv_step) writes it, and says so; the
    step opened at Step 0 until its state named one."""
    plan = load_plan(LECTURES / "attention.toml", {path: title for _, path, title in app_menu()})
    s = next(s for s in plan.steps if s.page == "kv_cache")
    asked = int(re.search(r"(\d+)(?:st|nd|rd|th) new token", s.question).group(1))
    state = dict(s.state)
    at = run_app(state, page=PAGE)
    assert_healthy(at)
    assert at.slider(key="kv_step").value == asked - 1
    cached = tiny_llama.generate(at.text_input(key="kv_prompt").value, max_new_tokens=at.number_input(key="kv_new").value,
                                 cache=True)
    text = page_text(at)
    n = cached.n_prompt + asked - 1
    assert f"Step {asked - 1} writes new token {asked}: the context holds **{n} tokens**" in text
    assert f"only **{tiny_llama.n_kv_heads} new keys**" in text and f"the other {n - 1} rows were read from memory" in text


def test_one_new_token_draws_its_one_step_without_a_slider(tiny_llama):
    """A slider needs two ends: with one new token the page said "could not be drawn" (the long link sweep's
    kv_new=1). Now its one step is drawn, and said to be the only one."""
    at = run_app({"model": "tiny-llama", "kv_prompt": PROMPT, "kv_new": "1"}, page=PAGE)
    assert_healthy(at)
    assert not at.error and not at.slider
    assert "**Step 0**, the only step of this decoding" in page_text(at)
    cached = tiny_llama.generate(PROMPT, max_new_tokens=1, cache=True)
    assert len(cached.steps) == 1
    row, _, _ = drawn_heatmap(at, "kv_row")
    np.testing.assert_allclose(row, cached.steps[0].attention[0, 0][None].numpy(), atol=DRAWN)
