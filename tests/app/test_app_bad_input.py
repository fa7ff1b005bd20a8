"""Bad input on the explorer: a clear message, never a traceback, and the rest of the page keeps working."""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
from apptest_helpers import assert_healthy, drawn_grid, heatmap_payloads, page_text, run_app

from attnviz.draw.heatmap_payload import decode_payload


def alerts(at, kind: str) -> str:
    return "\n".join(str(e.value) for e in getattr(at, kind))


def grid(at) -> dict:
    """head name -> (weights as drawn, row labels, column labels) of the explorer's head grid."""
    return {title.split(" · ")[0]: panel for title, panel in drawn_grid(at, "grid").items()}


def assert_page_still_works(at, drawn: bool = True):
    assert_healthy(at)
    assert at.selectbox(key="model") is not None and at.text_area(key="text") is not None
    if drawn:
        panels = grid(at)
        assert panels and all(np.isfinite(z).all() for z, _, _ in panels.values())


# ---- text ------------------------------------------------------------------------------------

NO_TEXT = {
    "empty": "",
    "whitespace": "   \n\t  ",
    "zero-width only": "\u200b\u200c\u200d\ufeff",
}


@pytest.mark.parametrize("text", NO_TEXT.values(), ids=NO_TEXT.keys())
def test_text_with_nothing_to_attend_to_asks_for_text(text):
    at = run_app({"text": text})
    assert "text" in alerts(at, "warning").lower()
    assert_page_still_works(at, drawn=False)


ODD_TEXT = {
    "emoji": "I love 🍕 and 🚀 launches! 👩‍👩‍👧",
    "right-to-left": "مرحبا بالعالم، كيف حالك؟",
    "CJK": "我爱自然语言处理。猫が好きです。",
    "zero-width inside words": "hel\u200blo wor\u200dld",
    "combining marks": "Z̷̢a̶l̴g̸o̵ text",
    "control characters": "\x00\x07 bell and null",
    "punctuation only": "!!! ??? ...",
    "script tag": "<script>alert(1)</script>",
    "img onerror": "<img src=x onerror=alert(1)>",
    "markdown and latex": "**bold** $x^2$ \\frac{1}{2} [link](http://x)",
}


@pytest.mark.parametrize("text", ODD_TEXT.values(), ids=ODD_TEXT.keys())
def test_odd_text_is_drawn_as_plain_tokens(text):
    at = run_app({"text": text})
    assert_page_still_works(at)
    _, labels, _ = grid(at)["head 0"]
    assert labels[0] == "[CLS]" and labels[-1] == "[SEP]"
    if "<" in text:  # the tokens travel as typed; the browser sets them with textContent, never as markup
        assert "<" in labels and ">" in labels


def test_ten_thousand_characters_are_cut_to_the_model_limit_and_say_so():
    at = run_app({"text": ("The quick brown fox jumps over the lazy dog. " * 230)[:10_000]})
    assert_page_still_works(at)
    assert "512 tokens" in alerts(at, "info") and "cut" in alerts(at, "info")

    meta, _ = decode_payload(heatmap_payloads(at)["grid"])
    assert (meta["panels"], meta["rows"], meta["cols"], meta["bytes_per_cell"]) == (12, 512, 512, 1)  # every token


# ---- model -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def odd_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("odd-models")
    unsupported = root / "mamba"
    unsupported.mkdir()
    (unsupported / "config.json").write_text(json.dumps({"model_type": "mamba", "hidden_size": 8}))
    pickle_only = root / "pickle-only"
    pickle_only.mkdir()
    (pickle_only / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (pickle_only / "pytorch_model.bin").write_bytes(b"not read")
    return {"unsupported architecture": str(unsupported), "pickle weights only": str(pickle_only)}


BAD_MODELS = {
    "missing folder": ("/no/such/model/folder", "No folder"),
    "hub name while offline": ("someone/model-that-is-not-cached", "not reachable"),
    "not a name": ("not a model!!", "neither a model folder nor"),
    "unsupported architecture": (None, "not supported"),
    "pickle weights only": (None, "safetensors"),
}


@pytest.mark.parametrize("case", BAD_MODELS, ids=BAD_MODELS.keys())
def test_a_model_that_cannot_load_says_why_and_falls_back_to_the_bundled_one(case, odd_folders):
    path, words = BAD_MODELS[case]
    at = run_app({"model": "other", "model_path": path or odd_folders[case], "text": "hello world"})
    assert words in alerts(at, "error")
    assert "bundled" in alerts(at, "error")
    assert_page_still_works(at)
    assert "all-MiniLM-L6-v2" in page_text(at)


# ---- masks and settings ----------------------------------------------------------------------

BAD_MASKS = {
    "custom not 0/1": ({"mask": "custom", "custom": "12/ab"}, "error", "rows of 0 and 1"),
    "custom wrong size": ({"mask": "custom", "custom": "10/01"}, "error", "must be 5×5"),
    "global token out of range": ({"mask": "global", "globals": "99"}, "error", "outside the sequence"),
    "global token not a number": ({"mask": "global", "globals": "a,b"}, "error", "whole number"),
    "custom row forbids everything": ({"mask": "custom", "custom": "10000/00000/00100/00010/00001"}, "warning",
                                      "zero weights"),
}


@pytest.mark.parametrize("case", BAD_MASKS, ids=BAD_MASKS.keys())
def test_a_bad_mask_is_explained_and_the_heatmaps_stay(case):
    query, kind, words = BAD_MASKS[case]
    at = run_app({"model": "toy", "text": "one two three", **query})
    assert words in alerts(at, kind), (alerts(at, "error"), alerts(at, "warning"))
    assert_page_still_works(at)


def test_a_row_that_forbids_everything_is_drawn_as_zeros_not_nan():
    at = run_app({"model": "toy", "text": "one two three", "mask": "custom", "custom": "10000/00000/00100/00010/00001"})
    z, _, _ = grid(at)["head 0"]
    assert np.all(z[1] == 0) and np.isclose(z[0].sum(), 1.0, atol=0.01)


def test_a_dead_row_warning_names_tokens_as_typed_never_as_emoji():
    at = run_app({"model": "toy", "text": ":cat: sat", "mask": "custom", "custom": "100000/000000/000000/000000/000010/000001"})
    warning = alerts(at, "warning")
    assert "zero weights" in warning and ":cat:" not in warning and ":\u2060" in warning
    assert warning.replace("\u2060", "").replace("\\", "").count(":") >= 2  # the colons are still shown


IMPOSSIBLE_URLS = {
    "unknown mask": {"mask": "bogus"},
    "layer out of range": {"layer": "99"},
    "head out of range": {"heads": "99"},
    "huge factor": {"factor": "1e9"},
    "unknown model choice": {"model": "gpt-17"},
    "negative window": {"mask": "window", "window": "-4"},
}


@pytest.mark.parametrize("query", IMPOSSIBLE_URLS.values(), ids=IMPOSSIBLE_URLS.keys())
def test_impossible_settings_in_a_shared_link_do_not_break_the_page(query):
    at = run_app({"model": "toy", "text": "one two three", **query})
    assert_page_still_works(at)


def test_a_links_values_the_controls_do_not_offer_are_said_not_dropped_without_a_word():
    """A teacher's link with a typo (mask=bogus) or a crafted one: each value a control does not take is named, with
    what the page shows instead; a link of values the controls offer says nothing."""
    at = run_app({"heads": ["-1", "99", "abc"], "layer": "999", "mask": "bogus", "scaled": "maybe", "factor": "abc"})
    assert_page_still_works(at)
    said = sorted(t.value for t in at.toast)
    assert said == sorted(f"This link's {k}={v} is not a value this page offers: {k} is {shown} instead (its default)."
                          for k, v, shown in [("heads", "-1,99,abc", "left empty"), ("layer", "999", "0"),
                                              ("mask", "bogus", "none"), ("scaled", "maybe", "true"),
                                              ("factor", "abc", "0.0")]), said
    cut = run_app({"heads": ["1", "99"]}).toast  # a list cut down to what the control offers
    assert [t.value for t in cut] == ["This link's heads=1,99 is not a value this page offers: heads is 1 instead."]
    assert not run_app({"layer": "3", "mask": "causal", "scaled": "FALSE", "heads": ["1", "2"]}).toast
