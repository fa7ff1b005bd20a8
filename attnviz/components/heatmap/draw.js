// The canvas: each panel as an image of 1 pixel per cell, scaled up without smoothing, and the values printed in
// cells big enough to hold them. The selection ring and the thumbnail frame are the mount's (mount.js).
import { cellText } from "./format.js";
import { cellColour, inkOn } from "./scales.js";
import { valueAt } from "./decode.js";
import { measure, valuePlan } from "./layout.js";

// one panel as a rows × cols image (no allocation per cell: 3M cells at 512 tokens)
export function panelImage(m, p) {
  const { rows, cols } = m.meta;
  const img = new ImageData(cols, rows), px = new Uint32Array(img.data.buffer);
  const colour = cellColour(m, p), cells = m.cells, base = p * rows * cols, n = rows * cols;
  if (m.bpc === 1) {  // 256 codes: colour each once, then every cell is one look-up
    const byCode = Uint32Array.from({ length: 256 }, (_, code) => colour(code));
    for (let i = 0; i < n; i++) px[i] = byCode[cells[base + i]];
  } else for (let i = 0; i < n; i++) px[i] = colour(cells[base + i]);
  const canvas = document.createElement("canvas");
  canvas.width = cols; canvas.height = rows;
  canvas.getContext("2d").putImageData(img, 0, 0);
  return canvas;
}

export function paintCells(s) {  // the canvas sized to the layout, its panels and printed values -> its 2-D context
  const { meta } = s.model, lay = s.lay, dpr = window.devicePixelRatio || 1;
  const cv = s.canvas;
  cv.width = Math.round(lay.width * dpr); cv.height = Math.round(lay.height * dpr);
  cv.style.width = lay.width + "px"; cv.style.height = lay.height + "px";
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.imageSmoothingEnabled = false;
  for (const b of lay.boxes) ctx.drawImage(s.images[b.p], b.x, b.y, b.w, b.h);
  s.valuesPx = meta.show_values ? valuePlan(lay.cell, lay.cellH, s.fontPx || 11, (px) => widestValue(s, px)) : 0;
  if (s.valuesPx) {
    ctx.font = `${s.valuesPx}px sans-serif`;
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (const b of lay.boxes) for (let r = 0; r < meta.rows; r++) for (let c = 0; c < meta.cols; c++) {
      const v = valueAt(s.model, b.p, r, c);
      const [clo, chi] = meta.ranges[b.p];
      ctx.fillStyle = inkOn(meta.kind, v, (v - clo) / (chi - clo || 1));
      ctx.fillText(cellText(v, meta.kind), b.x + (c + 0.5) * lay.cell, b.y + (r + 0.5) * lay.cellH);
    }
  }
  return ctx;
}

function widestValue(s, px) {  // the widest number any cell would print, at px (each distinct text measured once)
  const { meta } = s.model, seen = new Set();
  measure.font = `${px}px sans-serif`;
  let widest = 0;
  for (let p = 0; p < meta.panels; p++) for (let r = 0; r < meta.rows; r++) for (let c = 0; c < meta.cols; c++) {
    const text = cellText(valueAt(s.model, p, r, c), meta.kind);
    if (!seen.has(text)) { seen.add(text); widest = Math.max(widest, measure.measureText(text).width); }
  }
  return widest;
}
