"""The app's speed and size figures, measured in a real server and a real headless Chromium.

    python benchmarks/bench_app.py            # prints a table; takes about two minutes

Bytes per cell: (a) the figure JSON our builders make, and (b) what the browser actually received
over Streamlit's websocket during the rerun, both divided by the heatmap cells shown.
Latency: click on the scaling toggle -> new heatmap data drawn (plotly's _fullData changed).
Cold start: `streamlit run app.py` launched -> first heatmap drawn, on a fresh server process.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402
from browser_helpers import chromium_page, streamlit_server, wait_for_app_idle, wait_for_heatmaps  # noqa: E402

import attnviz  # noqa: E402
from attnviz.draw.plotting import head_grid_figure  # noqa: E402

WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "see", "what", "it", "was", "doing", "there"]


def text_of(model, n_tokens: int) -> str:
    """A text that the model tokenizes into exactly n_tokens tokens (specials included)."""
    words = (WORDS * (n_tokens // len(WORDS) + 2))[: n_tokens - 2]
    text = " ".join(words)
    assert len(model.encode(text).ids) == n_tokens, len(model.encode(text).ids)
    return text


def figure_bytes_per_cell(model, n_tokens: int) -> tuple[float, float, float]:
    """ours (uint16 + tick labels), plotly float32, per-cell hover strings (bertviz-like), bytes per cell."""
    res = model.run(text_of(model, n_tokens))
    w = res.attentions[0]
    cells = w.numel()
    ours = len(head_grid_figure(w, res.labels, list(range(model.n_heads)))[0].to_json()) / cells
    f32 = go.Figure([go.Heatmap(z=w[h].numpy().astype(np.float32)) for h in range(model.n_heads)])
    hover = [[f"{res.labels[i]} → {res.labels[j]}: {w[0, i, j]:.3f}" for j in range(n_tokens)] for i in range(n_tokens)]
    strings = go.Figure([go.Heatmap(z=w[h].numpy().astype(np.float32), text=hover) for h in range(model.n_heads)])
    return ours, len(f32.to_json()) / cells, len(strings.to_json()) / cells


def model_view_bytes_per_cell(model, n_tokens: int) -> float | None:
    try:
        from attnviz.lessons.model_view import model_view_figure
    except ImportError:
        return None
    res = model.run(text_of(model, n_tokens))
    fig = model_view_figure(res.attentions, res.labels)
    fig = fig[0] if isinstance(fig, tuple) else fig
    return len(fig.to_json()) / res.attentions.numel()


class FrameCounter:
    """Bytes the page receives over its websockets."""

    def __init__(self, page):
        self.bytes = 0
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))

    def _add(self, payload):
        self.bytes += len(payload) if payload is not None else 0


def cold_start_seconds() -> float:
    """`streamlit run app.py` launched -> first heatmap drawn; the browser is already open, as a teacher's is."""
    with chromium_page() as page:
        start = time.perf_counter()
        with streamlit_server() as url:
            page.goto(url + "/")
            wait_for_heatmaps(page, timeout_ms=120_000)
            return time.perf_counter() - start


def toggle_latencies(page, url: str, text: str, rounds: int) -> list[float]:
    page.goto(f"{url}/?text={quote(text)}")
    drawn = wait_for_heatmaps(page, timeout_ms=120_000)
    wait_for_app_idle(page)
    toggle = page.get_by_text("Scale scores by 1/√d_k")
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        toggle.click()
        drawn = wait_for_heatmaps(page, previous=drawn, timeout_ms=60_000)
        times.append(time.perf_counter() - start)
        wait_for_app_idle(page)
    return times


def page_draw_seconds(page, url: str, path: str, text: str, counter: FrameCounter) -> tuple[float, int]:
    """Navigate to a page with this text: seconds until heatmaps are drawn, and bytes received."""
    page.goto(f"{url}/{path}?text={quote(text)}")
    wait_for_heatmaps(page, timeout_ms=120_000)
    wait_for_app_idle(page, timeout_ms=120_000)  # warm the caches: first run computes
    counter.bytes = 0
    start = time.perf_counter()
    page.reload()
    wait_for_heatmaps(page, timeout_ms=120_000)
    seconds = time.perf_counter() - start
    wait_for_app_idle(page, timeout_ms=120_000)
    return seconds, counter.bytes


def main() -> None:
    model = attnviz.load_model()
    print("Bytes per heatmap cell, 12 heads of one layer (figure JSON)")
    print(f"{'tokens':>7} | {'attnviz':>8} | {'plotly float32':>14} | {'per-cell hover':>14}   target <= 3")
    for n in (32, 128):
        ours, f32, strings = figure_bytes_per_cell(model, n)
        print(f"{n:>7} | {ours:>8.2f} | {f32:>14.2f} | {strings:>14.2f}")
    for n in (128, 512):
        mv = model_view_bytes_per_cell(model, n)
        if mv is not None:
            print(f"model view (6 x 12 heads), {n} tokens: {mv:.2f} bytes per cell of the full attention tensor")

    print("\nIn the browser (headless Chromium, `streamlit run app.py`)")
    cold = [cold_start_seconds() for _ in range(2)]
    print(f"cold start -> first heatmap drawn: {', '.join(f'{c:.1f}' for c in cold)} s   target <= 8 s")
    with streamlit_server() as url, chromium_page() as page:
        counter = FrameCounter(page)
        lat = toggle_latencies(page, url, text_of(model, 32), rounds=15)
        q = statistics.quantiles(lat, n=20)
        print(f"toggle scaling -> heatmaps redrawn, 32 tokens: p50 {statistics.median(lat) * 1000:.0f} ms, "
              f"p95 {q[18] * 1000:.0f} ms (n={len(lat)})   target p95 <= 300 ms")
        for n in (128, 512):
            seconds, received = page_draw_seconds(page, url, "", text_of(model, n), counter)
            shown = 12 * min(n, 128) ** 2 + n * n  # the grid (block-averaged above 128) + the enlarged head
            print(f"explorer, {n} tokens: drawn in {seconds:.2f} s, websocket {received / 1e3:.0f} kB = "
                  f"{received / shown:.2f} bytes per drawn cell   target <= 3 s, <= 3 B")
        try:
            lat512 = toggle_latencies(page, url, text_of(model, 512), rounds=3)
            print(f"explorer, 512 tokens: toggle scaling -> redrawn in {statistics.median(lat512):.2f} s (median of 3)")
        except Exception as err:
            print(f"explorer, 512 tokens: toggle scaling -> not redrawn within 60 s ({type(err).__name__})")
        for n, target in ((128, 1.5), (512, 3.0)):
            try:
                seconds, received = page_draw_seconds(page, url, "model_view", text_of(model, n), counter)
            except Exception as err:
                print(f"model view, {n} tokens: not measured ({type(err).__name__})")
                continue
            print(f"model view, {n} tokens: drawn in {seconds:.2f} s, websocket {received / 1e3:.0f} kB = "
                  f"{received / (72 * n * n):.2f} bytes per cell of the full tensor   target <= {target} s, <= 3 B")


if __name__ == "__main__":
    main()
