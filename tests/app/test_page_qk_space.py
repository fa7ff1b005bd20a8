"""Query–key space in Streamlit's AppTest: the points are the PCA of the run's own Q and K (recomputed here in
numpy from the kept trace), the lines are the pairs the run weighs most, the highlighted row holds the run's
weights and scores; a click written into the chart's state highlights a row; bad links and texts get messages."""

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import base64

import numpy as np
import pytest
from apptest_helpers import assert_healthy, page_text, run_app

PAGE = "app_pages/qk_space.py"
TEXT = "The animal didn't cross the street because it was too tired."


def alerts(at, kind: str) -> str:
    return "\n".join(str(e.value) for e in getattr(at, kind))


def figure(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def points(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(queries (n, 2), keys (n, 2)) as drawn: traces 0 and 1 (plotly JSON may send arrays as typed arrays)."""
    def values(a):
        if isinstance(a, dict) and "bdata" in a:
            return np.frombuffer(base64.b64decode(a["bdata"]), dtype=np.dtype(a["dtype"]))
        return np.asarray(a, dtype=float)

    q, k = spec["data"][0], spec["data"][1]
    return np.stack([values(q["x"]), values(q["y"])], 1), np.stack([values(k["x"]), values(k["y"])], 1)


def numpy_plane(q: np.ndarray, k: np.ndarray, shared: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """An independent PCA: AttentionViz's translation and scaling, then the covariance's top two eigenvectors."""
    if shared:
        k = k - k.mean(0) + q.mean(0)
        a = np.sqrt(np.linalg.norm(k, axis=1).mean() / np.linalg.norm(q, axis=1).mean())
        q, k = q * a, k / a
    x = np.concatenate([q, k]).astype(np.float64)
    values, vectors = np.linalg.eigh(np.cov(x.T))
    axes = vectors[:, [-1, -2]].T  # (2, d)
    xy = (x - x.mean(0)) @ axes.T
    return xy[: len(q)], xy[len(q):], values[[-1, -2]] / values.sum()


def assert_same_plane(drawn_q, drawn_k, q_xy, k_xy):
    """Equal up to the sign of each axis (a PCA axis has no sign of its own; the page fixes one)."""
    for axis in range(2):
        sign = np.sign(np.dot(drawn_q[:, axis], q_xy[:, axis]) + np.dot(drawn_k[:, axis], k_xy[:, axis]))
        np.testing.assert_allclose(drawn_q[:, axis], sign * q_xy[:, axis], atol=1e-3)
        np.testing.assert_allclose(drawn_k[:, axis], sign * k_xy[:, axis], atol=1e-3)


@pytest.fixture(scope="module")
def it_row():
    return run_app({"text": TEXT, "layer": "3", "qk_head": "1", "qk_row": "10"}, page=PAGE)


@pytest.fixture(scope="module")
def kept(minilm):
    return minilm.run(TEXT, keep=True)


@pytest.mark.parametrize("space", ["shared", "raw"])
def test_the_points_are_the_pca_of_the_heads_own_queries_and_keys(space, minilm, kept):
    at = run_app({"text": TEXT, "layer": "3", "qk_head": "1", "qk_space": space}, page=PAGE)
    assert_healthy(at)
    trace = kept.traces[3]
    q_xy, k_xy, shares = numpy_plane(trace.q[0, 1].numpy(), trace.k[0, 1].numpy(), space == "shared")
    spec = figure(at)
    assert_same_plane(*points(spec), q_xy, k_xy)
    title = spec["layout"]["title"]["text"]
    assert title == f"PCA of [Q; K] for layer 3 head 1<br>(explains {100 * shares.sum():.1f}% of variance)"
    assert spec["layout"]["xaxis"]["title"]["text"] == f"PC 1 ({100 * shares[0]:.1f}%)"
    assert f"{100 * shares[0]:.1f}% and {100 * shares[1]:.1f}% of their variance, out of 32 dimensions" in page_text(at)
    assert ("AttentionViz does it" in page_text(at)) == (space == "shared")


def test_the_lines_are_the_pairs_the_run_weighs_most(it_row, kept):
    weights = kept.attentions[3, 1].numpy()
    shapes = figure(it_row)["layout"]["shapes"]
    grey = [s for s in shapes if s["line"]["color"].startswith("rgba")]
    red = [s for s in shapes if not s["line"]["color"].startswith("rgba")]
    strong = [(i, j) for i, j in zip(*np.nonzero(weights >= 0.3), strict=True)]
    assert len(grey) == sum(1 for i, _ in strong if i != 10)  # the highlighted query's own lines are red
    assert len(red) == int((weights[10] >= 0.02).sum())
    assert f"Lines: {len(strong)} pairs with weight ≥ 0.30" in page_text(it_row)
    at = run_app({"text": TEXT, "layer": "3", "qk_head": "1", "qk_threshold": "0.9"}, page=PAGE)
    assert len(figure(at)["layout"].get("shapes", [])) == int((weights >= 0.9).sum())


def test_the_highlighted_row_holds_the_runs_weights_and_scores(it_row, kept):
    table = it_row.dataframe[0].value
    weights = kept.attentions[3, 1, 10].numpy()
    trace = kept.traces[3]
    scores = (trace.q[0, 1] @ trace.k[0, 1].T).numpy()[10] * kept.scale
    order = np.argsort(-weights, kind="stable")
    assert list(table["key"]) == [f"{kept.labels[j]} ({j})" for j in order]
    np.testing.assert_allclose(table["weight"], weights[order], atol=1e-6)
    np.testing.assert_allclose(table["q·k × s"], scores[order], atol=1e-4)
    assert table.iloc[0]["key"] == "animal (2)" and round(float(table.iloc[0]["weight"]), 2) == 0.68
    q_drawn, k_drawn = points(figure(it_row))
    np.testing.assert_allclose(table["distance in plane"], np.linalg.norm(k_drawn[order] - q_drawn[10], axis=1), atol=1e-3)
    assert "**Row of query it (10)**" in page_text(it_row)


def test_a_click_on_a_point_highlights_its_row_and_the_picker_still_works(kept):
    at = run_app({"text": TEXT, "layer": "3", "qk_head": "1"}, page=PAGE)
    assert at.selectbox(key="qk_row").value is None and "Click a query or key point" in alerts(at, "info")
    at.session_state["qk_plot"] = {"selection": {"points": [{"curve_number": 1, "point_index": 8}],
                                                 "point_indices": [8], "box": [], "lasso": []}}
    at.run()  # a click on key 8 ('street'): its query row
    assert_healthy(at)
    assert at.selectbox(key="qk_row").value == 8 and at.query_params["qk_row"] == "8"
    assert at.dataframe[0].value.iloc[0]["weight"] == pytest.approx(float(kept.attentions[3, 1, 8].max()), abs=1e-6)
    at.selectbox(key="qk_row").set_value(2).run()  # the picker after a click: the old click does not come back
    assert at.selectbox(key="qk_row").value == 2 and "**Row of query animal (2)**" in page_text(at)


def test_a_rope_model_says_which_queries_and_keys(tiny_llama):
    text = "red green blue house music red green blue"
    at = run_app({"model": "tiny-llama", "text": text, "layer": "1", "qk_head": "3", "qk_space": "raw"}, page=PAGE)
    assert_healthy(at)
    res = tiny_llama.run(text, keep=True)
    trace = res.traces[1]
    q_xy, k_xy, shares = numpy_plane(trace.q[0, 3].numpy(), trace.k[0, 3].numpy(), False)
    spec = figure(at)
    assert_same_plane(*points(spec), q_xy, k_xy)
    assert spec["layout"]["title"]["text"].startswith("PCA of [Q′; K′] for layer 1 head 3")
    text_on_page = page_text(at)
    assert "after RoPE's rotation by position" in text_on_page
    assert "The keys are those of K/V head 1 of 2, the one this query head reads" in text_on_page


def test_the_nearest_key_count_is_the_planes(it_row, kept):
    q_drawn, k_drawn = points(figure(it_row))
    weights = kept.attentions[3, 1].numpy()
    nearest = np.linalg.norm(q_drawn[:, None] - k_drawn[None], axis=2).argmin(1)
    same = int((nearest == weights.argmax(1)).sum())
    assert f"For {same} of 16 queries the key they give the most weight is also their nearest" in page_text(it_row)


@pytest.mark.parametrize("query,message", [("dog", "“dog” is not a token of this text"),
                                           ("40", "There is no highlighted query token at position 40")])
def test_a_row_the_text_does_not_have_is_said(query, message):
    at = run_app({"text": TEXT, "layer": "3", "qk_head": "1", "qk_row": query}, page=PAGE)
    assert_healthy(at)
    assert message in alerts(at, "error") and "Showing no token" in alerts(at, "error")
    assert at.get("plotly_chart")


@pytest.mark.parametrize("text", ["", " \n "])
def test_empty_text_asks_for_text(text):
    at = run_app({"text": text}, page=PAGE)
    assert_healthy(at)
    assert "The plane appears as soon as there is text." in alerts(at, "warning")
    assert not at.get("plotly_chart")


def test_a_text_longer_than_the_model_takes_is_cut_and_drawn_without_labels():
    at = run_app({"text": "word " * 600}, page=PAGE)
    assert_healthy(at)
    assert "512 tokens" in alerts(at, "info") and "cut" in alerts(at, "info")
    spec = figure(at)
    assert len(points(spec)[0]) == 512 and spec["data"][0]["mode"] == "markers"  # hover only past 40 tokens
    assert len(spec["layout"].get("shapes", [])) <= 150
