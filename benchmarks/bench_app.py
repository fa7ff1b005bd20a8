"""The app's speed and size figures, measured in a real server and a real headless Chromium.

    python benchmarks/bench_app.py            # prints a table; takes about two minutes

Bytes per cell: (a) the heatmap component payloads the pages send (attnviz.draw.heatmap_payload.heatmap_payload,
with the arguments the explorer's layer_grid_payload and the model view's thumbnail grid use), next to
what plotly figure JSON of the same cells would cost; and (b) what the browser actually received over
Streamlit's websocket during a rerun, divided by the heatmap cells shown.
Latency: click on the scaling toggle -> new heatmap data drawn (the component's drawn checksum changed).
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
from attnviz.analysis.stats import head_entropy, head_max_weight  # noqa: E402
from attnviz.draw.heatmap_payload import decode_payload, heatmap_payload  # noqa: E402
from attnviz.lessons.model_view import thumbnail_titles, thumbnails  # noqa: E402

WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "see", "what", "it", "was", "doing", "there"]


def text_of(model, n_tokens: int) -> str:
    """A text that the model tokenizes into exactly n_tokens tokens (specials included)."""
    words = (WORDS * (n_tokens // len(WORDS) + 2))[: n_tokens - 2]
    text = " ".join(words)
    assert len(model.encode(text).ids) == n_tokens, len(model.encode(text).ids)
    return text


def explorer_grid_payload(res, layer: int = 0) -> bytes:
    """What the explorer sends for one layer's 12 heads: ui/heatmap.layer_grid_payload's heatmap_payload call."""
    w = res.attentions[layer]  # (H, n, n)
    entropy, peak = head_entropy(w), head_max_weight(w)
    titles = [f"head {h} · H {entropy[h]:.2f} · max {peak[h]:.2f}" for h in range(w.shape[0])]
    return heatmap_payload(w, list(res.labels), titles=titles, columns=3, selectable=True, name="grid")


def model_view_grid_payload(res) -> tuple[bytes, int]:
    """What the model view sends for its thumbnail grid (app_pages/model_view.py's heatmap_grid call), and its block."""
    n_layers, n_heads = res.attentions.shape[:2]
    pooled, labels, block = thumbnails(res.attentions, res.labels)
    payload = heatmap_payload(pooled, labels, titles=thumbnail_titles(n_layers, n_heads), columns=n_heads,
                              thumbnails=True, selectable=True, highlight=0, show_values=False, name="mv_grid")
    return payload, block


def plotly_bytes_per_cell(res) -> tuple[float, float]:
    """For comparison: plotly figure JSON of the same 12 heads, float32 arrays and bertviz-like per-cell hover strings."""
    w = res.attentions[0]
    n = w.shape[-1]
    f32 = go.Figure([go.Heatmap(z=w[h].numpy().astype(np.float32)) for h in range(w.shape[0])])
    hover = [[f"{res.labels[i]} → {res.labels[j]}: {w[0, i, j]:.3f}" for j in range(n)] for i in range(n)]
    strings = go.Figure([go.Heatmap(z=w[h].numpy().astype(np.float32), text=hover) for h in range(w.shape[0])])
    return len(f32.to_json()) / w.numel(), len(strings.to_json()) / w.numel()


def print_payload_sizes(model) -> None:
    print("Explorer: one layer's 12 heads, every token (the component payload the page sends)")
    print(f"{'tokens':>7} | {'bytes':>9} | {'B/cell':>6} | {'cell type':>9} | {'plotly float32':>14} | {'per-cell hover':>14}")
    for n in (32, 128, 512):
        res = model.run(text_of(model, n))
        payload = explorer_grid_payload(res)
        meta = decode_payload(payload)[0]
        # plotly's JSON of 12 × 512² cells (and 3 million hover strings) is too slow to build for a comparison
        f32, strings = (f"{b:.2f}" for b in plotly_bytes_per_cell(res)) if n <= 128 else ("-", "-")
        print(f"{n:>7} | {len(payload):>9,} | {len(payload) / res.attentions[0].numel():>6.2f} | "
              f"{'uint' + str(8 * meta['bytes_per_cell']):>9} | {f32:>14} | {strings:>14}")
    print("\nModel view: the thumbnail grid, 6 layers x 12 heads (at most 32 x 32 cells each, pooled above 32 tokens)")
    print(f"{'tokens':>7} | {'block':>5} | {'bytes':>7} | {'JSON':>6} | {'B/pooled cell':>13} | {'B/weight of the tensor':>22}")
    for n in (32, 128, 512):
        res = model.run(text_of(model, n))
        payload, block = model_view_grid_payload(res)
        meta, drawn = decode_payload(payload)
        json_bytes = len(payload) - drawn.size * meta["bytes_per_cell"]
        print(f"{n:>7} | {block:>5} | {len(payload):>7,} | {json_bytes:>6,} | {len(payload) / drawn.size:>13.2f} | "
              f"{len(payload) / res.attentions.numel():>22.4f}")


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
    print_payload_sizes(model)
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
            shown = 12 * n * n + n * n  # the grid (every token) + the enlarged head
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
            m = -(-n // -(-n // 32))  # thumbnail cells per side
            shown = 72 * m * m + 2 * n * n  # the thumbnails + the enlarged head + the rollout
            print(f"model view, {n} tokens: drawn in {seconds:.2f} s, websocket {received / 1e3:.0f} kB = "
                  f"{received / shown:.2f} bytes per drawn cell, {received / (72 * n * n):.3f} per weight of the "
                  f"full tensor   target <= {target} s")


if __name__ == "__main__":
    main()
