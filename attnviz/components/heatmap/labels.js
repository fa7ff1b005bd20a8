// Every word the heatmap shows, as DOM text (selectable, read by screen readers, testable): panel titles, token
// labels, the legend under the canvas, and the hover. The legend's words come in the payload (meta.legend, made by
// attnviz/draw/heatmap_payload.py legend_of); only its colours are drawn here.
import { el } from "./dom.js";
import { hoverText } from "./format.js";
import { LUTS, SWATCHES, cssColour } from "./scales.js";
import { valueAt } from "./decode.js";
import { hit, labelPlan, titleWidth } from "./layout.js";

// drop trailing " · " parts until the title fits its room (its panel's width, on one or two lines); "…" says some
// were dropped (the full title is the tooltip). Two lines lose some width where they wrap between words.
// -> {shown, w}: the text kept and its width on one line
function fitTitle(s, title, width, lines) {
  const parts = title.split(" · "), n = parts.length, room = lines > 1 ? 2 * width * 0.9 : width;
  const text = () => parts.join(" · ") + (parts.length < n ? " …" : "");
  let w = titleWidth(s, text());
  while (parts.length > 1 && w > room) { parts.pop(); w = titleWidth(s, text()); }
  return { shown: text(), w };
}

export function placeLabels(s) {  // titles, and token labels every k-th when dense so they never overlap
  const { meta } = s.model, lay = s.lay;
  s.labels.replaceChildren();
  s.labels.style.width = lay.width + "px"; s.labels.style.height = lay.height + "px";
  const font = s.fontPx || 11, cols = labelPlan(meta.cols, lay.cell, font), rows = labelPlan(meta.rows, lay.cellH, font);
  const every = cols.step, everyRow = rows.step;
  s.root.dataset.labelStep = String(every);
  for (const b of lay.boxes) {
    const twoLines = lay.titleH > lay.oneLineH, { shown, w } = fitTitle(s, meta.titles[b.p], b.w, twoLines ? 2 : 1);
    const t = el("div", "avhm-title", s.labels, shown);
    t.title = meta.titles[b.p];
    if (meta.thumbnails && b.p === s.highlight) t.classList.add("avhm-title-on");
    const wraps = twoLines && w > b.w;  // else on the line next to the panel, as a short one
    if (wraps) t.classList.add("avhm-title-2");
    t.style.left = b.x + "px"; t.style.top = b.y - (wraps ? lay.titleH : lay.oneLineH) + "px"; t.style.width = b.w + "px";
    if (meta.thumbnails) continue;
    if (b.gc === 0) for (let r = 0; r < meta.rows; r += everyRow) {
      const d = el("div", "avhm-lab avhm-row", s.labels, meta.row_labels[r]);
      if (rows.fontPx < font) d.style.fontSize = rows.fontPx + "px";
      d.style.top = b.y + (r + 0.5) * lay.cellH + "px"; d.style.width = lay.rowLabW - 6 + "px";
    }
    if (b.keyLabels) for (let c = 0; c < meta.cols; c += every) {
      const d = el("div", "avhm-lab avhm-col", s.labels, meta.col_labels[c]);
      if (cols.fontPx < font) d.style.fontSize = cols.fontPx + "px";
      d.style.left = b.x + (c + 0.5) * lay.cell + "px"; d.style.top = b.y + b.h + 4 + "px";
      d.style.height = lay.colLabH - 6 + "px";
    }
  }
}

// The legend: a colour bar with its ticks where the kind has a scale (a mask has none), a swatch for each colour
// that stands for a word (−∞, may attend), and the title.
export function legend(s) {
  const { meta } = s.model, { ticks, swatches, title } = meta.legend;
  s.legend.replaceChildren();
  s.legend.dataset.kind = meta.kind;
  if (ticks.length) {
    const scale = el("div", "avhm-scale", s.legend);  // the bar and its ticks: the title goes beside them, or below
    const bar = el("canvas", "avhm-bar", scale);
    bar.width = 256; bar.height = 1;
    const ctx = bar.getContext("2d"), img = ctx.createImageData(256, 1), table = LUTS[meta.kind];
    for (let i = 0; i < 256; i++) img.data.set([table[i * 3], table[i * 3 + 1], table[i * 3 + 2], 255], i * 4);
    ctx.putImageData(img, 0, 0);
    const row = el("div", "avhm-ticks", scale);
    for (const t of ticks) el("span", "", row, t);
  }
  for (const [name, text] of swatches) {
    const item = el("span", "avhm-swatch", s.legend);
    el("i", "", item).style.background = cssColour(SWATCHES[name]);
    el("span", "", item, text);
  }
  el("div", "avhm-legend-title", s.legend, title);
}

// the words a cell's row and column are named by: "query" and "key" for weights and masks, else the payload's own
export function axisWords(meta) {
  const qk = meta.kind === "weights" || meta.kind === "mask";  // query × key, unless the payload names its axes
  return meta.axis_words || [qk ? "query" : "row", qk ? "key" : meta.x_title];
}
// what a value is called in the hover and the reading: the legend's word, else "weight" (weights) or "value"
export const valueWord = (meta) => meta.legend.hover || (meta.kind === "weights" ? "weight" : "value");
// what a mask's cell means, in the legend's own words: "0 (may attend)" or "−∞ (masked)"
export const maskWord = (meta, v) => meta.legend.swatches.find(([name]) => name === (v === -Infinity ? "masked" : "may_attend"))[1];

export function showTip(s, ev) {  // the hover, at the mouse
  const at = hit(s, ev.offsetX * (s.lay.width / (s.canvas.clientWidth || s.lay.width)),
                 ev.offsetY * (s.lay.height / (s.canvas.clientHeight || s.lay.height)));
  if (!at) { s.tip.style.display = "none"; return; }
  tipAt(s, at, ev.offsetX, ev.offsetY);
}

// the hover of cell `at` ({panel, row, col}) beside (x, y), CSS px in the canvas as shown: panel, query (or row) and
// key (or column) with their tokens, the value
export function tipAt(s, at, x, y) {
  const { meta } = s.model;
  const v = valueAt(s.model, at.panel, at.row, at.col);
  const [rowWord, colWord] = axisWords(meta);
  // "layer 3", not "layer 3: layer 3", where a label already says what the axis word and number say
  const named = (word, i, label) => (label === `${word} ${i}` ? label : `${word} ${i}: ${label}`);
  const lines = [meta.titles[at.panel],
    named(rowWord, at.row, meta.row_labels[at.row]),
    named(colWord, at.col, meta.col_labels[at.col]),
    meta.kind === "mask" ? `M: ${maskWord(meta, v)}` : `${valueWord(meta)}: ${hoverText(v, s.model)}`];
  s.tip.replaceChildren();
  for (const line of lines) if (line) el("div", "", s.tip, line);
  s.tip.style.display = "block";
  s.tip.style.left = Math.min(x + 14, Math.max(0, s.lay.width - 230)) + "px";
  s.tip.style.top = y + 14 + "px";
}
