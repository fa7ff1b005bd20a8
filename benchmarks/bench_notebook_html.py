"""attnviz.save_html at ~500 tokens: the file's size and the time from opening it to the heatmaps drawn, in a real
headless Chromium with every network request refused; bertviz's head_view on the same attention beside it, when
bertviz can be imported.

    python benchmarks/bench_notebook_html.py [n_tokens] [--bertviz-js DIR]

n_tokens: default 500 (all-MiniLM-L6-v2 takes 512 at most). Each file is opened `ROUNDS` times, each in a new tab;
"drawn" is the moment the page's heads heatmap has painted (its hook's `at`, on the page's own clock since the
navigation started), and "wall" is the same seen from Python (goto started -> the hook seen, polled every 20 ms).

bertviz (not a dependency: `pip install --no-deps --target DIR bertviz` and put DIR on PYTHONPATH) writes HTML that
loads require.js, d3 and jQuery from cdnjs. Offline it cannot draw: the script says so. With --bertviz-js DIR (a
folder holding require.js, d3.min.js and jquery.min.js, e.g. from `npm pack requirejs@2.3.6 d3@5.7.0
jquery@2.2.4`), those three requests are answered from DIR instead, so both are timed in the same offline browser.
bertviz's "drawn": its SVG holds the token texts of both columns and at least one attention line.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"
ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from browser_helpers import chromium_page  # noqa: E402

import attnviz  # noqa: E402

ROUNDS = 5
WORDS = ["the", "cat", "sat", "on", "a", "mat", "and", "the", "dog", "ran", "to", "see", "what", "it", "was", "doing", "there"]
ATTNVIZ_DRAWN = ("() => { const h = window.attnvizHeatmaps && window.attnvizHeatmaps['attnviz-heads'];"
                 " return h && h.draws >= 1 ? h.at : null; }")
BERTVIZ_DRAWN = """(n) => {
  const texts = document.querySelectorAll('#vis text').length, lines = document.querySelectorAll('#vis line').length;
  return texts >= 2 * n && lines > 0 ? performance.now() : null; }"""
CDN = {"require.min.js": "require.js", "d3.min.js": "d3.min.js", "jquery.min.js": "jquery.min.js"}


def text_of(model, n_tokens: int) -> str:
    """A text that the model tokenizes into exactly n_tokens tokens (specials included)."""
    words = (WORDS * (n_tokens // len(WORDS) + 2))[: n_tokens - 2]
    return " ".join(words)


def time_open(path: Path, drawn_js: str, arg=None, cdn_dir: Path | None = None, timeout_s: float = 180) -> dict:
    """Open `path` in a new tab, every request but the file (and, with cdn_dir, bertviz's three scripts) refused."""
    url = path.resolve().as_uri()
    refused: list[str] = []
    with chromium_page(1400, 1000) as page:
        def route(r):
            name = r.request.url.rsplit("/", 1)[-1]
            if r.request.url == url:
                r.continue_()
            elif cdn_dir is not None and name in CDN and "cdnjs.cloudflare.com" in r.request.url:
                r.fulfill(path=str(cdn_dir / CDN[name]), content_type="text/javascript")
            else:
                refused.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        started = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
        drawn_at = None
        while time.perf_counter() - started < timeout_s:
            try:
                drawn_at = page.evaluate(drawn_js, arg)
            except Exception:  # the page may still be navigating
                drawn_at = None
            if drawn_at is not None:
                break
            time.sleep(0.02)
        wall = time.perf_counter() - started
        return {"drawn_ms": drawn_at, "wall_s": wall if drawn_at is not None else None, "refused": refused}


def report(name: str, path: Path, runs: list[dict]) -> None:
    drawn = [r["drawn_ms"] for r in runs if r["drawn_ms"] is not None]
    walls = [r["wall_s"] for r in runs if r["wall_s"] is not None]
    size = path.stat().st_size / 1e6
    if not drawn:
        print(f"{name:<44} {size:>8.1f} MB   never drawn in {len(runs)} tries; refused: {runs[0]['refused'][:3]}")
        return
    print(f"{name:<44} {size:>8.1f} MB   drawn p50 {statistics.median(drawn) / 1e3:.2f} s, max {max(drawn) / 1e3:.2f} s"
          f" (page clock) · wall p50 {statistics.median(walls):.2f} s, max {max(walls):.2f} s · {len(drawn)}/{len(runs)}"
          f" drawn · requests refused: {len(runs[0]['refused'])}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n_tokens", nargs="?", type=int, default=500)
    ap.add_argument("--bertviz-js", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    args = ap.parse_args()
    model = attnviz.load_model()
    text = text_of(model, args.n_tokens)
    res = model.run(text, keep=True)
    n = len(res.tokens)
    print(f"all-MiniLM-L6-v2, {n} tokens, {model.n_layers} layers × {model.n_heads} heads; {args.rounds} opens each, "
          "a new tab each, every network request refused")
    folder = Path(tempfile.mkdtemp(prefix="attnviz-bench-html-"))
    cases = [("attnviz, every layer (weights only)", dict()),
             ("attnviz, layer 0 with its scores (keep=True)", dict(layer=0)),
             ("attnviz, every layer × head (view='model')", dict(view="model"))]
    for name, kw in cases:
        started = time.perf_counter()
        path = attnviz.save_html(res, folder / f"attnviz-{len(kw)}-{kw.get('view', '')}.html", **kw)
        saved = time.perf_counter() - started
        drawn_js = ATTNVIZ_DRAWN if kw.get("view") != "model" else ATTNVIZ_DRAWN.replace("attnviz-heads", "attnviz-model")
        runs = [time_open(path, drawn_js) for _ in range(args.rounds)]
        report(name, path, runs)
        print(f"{'':<44} save_html took {saved:.2f} s")
    try:
        from bertviz import head_view  # noqa: PLC0415 — optional: not a dependency; the comparison is skipped without it
    except ImportError:
        print("bertviz: not importable here (pip install --no-deps --target DIR bertviz; PYTHONPATH=DIR)")
        return
    started = time.perf_counter()
    html = head_view(attention=[a[None] for a in res.attentions], tokens=res.tokens, html_action="return").data
    path = folder / "bertviz.html"
    path.write_text("<!doctype html><html><head><meta charset='utf-8'></head><body>" + html + "</body></html>",
                    encoding="utf-8")
    print(f"{'':<44} bertviz head_view(html_action='return') took {time.perf_counter() - started:.2f} s")
    runs = [time_open(path, BERTVIZ_DRAWN, n, None, timeout_s=20)]
    report("bertviz head_view, offline", path, runs)
    if args.bertviz_js:
        runs = [time_open(path, BERTVIZ_DRAWN, n, args.bertviz_js, timeout_s=240) for _ in range(min(args.rounds, 2))]
        report("bertviz head_view, its 3 scripts served locally", path, runs)


if __name__ == "__main__":
    main()
