// Where everything goes, in CSS pixels: panels in a grid, square cells (rows stretched for a wide, short matrix),
// room for the token labels; and the way back from a mouse position to a cell.

export const LABEL_PX = 13;  // at the default 11 px type, a label needs this many pixels along its axis

// the labels' type: {px: its size in CSS px, the page's --avhm-font (presentation mode sets 20 px); family: what
// titles are drawn, and so measured, in}, read once per payload
export function typeOf(s) {
  const style = getComputedStyle(s.root);
  return { px: parseFloat(style.fontSize) || 11, family: style.fontFamily || "sans-serif" };
}
export function labelPx(s) { return LABEL_PX + (s.fontPx || 11) - 11; }  // denser labels than this are thinned
export const ALL_LABELS_UP_TO = 16;  // up to this many tokens every label shows (a smaller type where cells are small):
// a class must tell "it" from "tired", and the hover alone does not do that on a projector
const SMALLEST_FONT_PX = 7;

// {step: label every step-th of `count` cells of cellPx, fontPx: their type size} at the page's type size `font`
export const PROJECTOR_FONT_PX = 20;  // the smallest label presentation mode draws: what a back row reads
export function labelPlan(count, cellPx, font = 11) {
  const need = LABEL_PX + font - 11;  // labelPx
  if (cellPx >= need) return { step: 1, fontPx: font };
  // on a projector (presentation mode's larger type) labels stay at least 20 px: thinned, never shrunk below that
  const smallest = font > 11 ? Math.min(font, PROJECTOR_FONT_PX) : SMALLEST_FONT_PX;
  if (count <= ALL_LABELS_UP_TO && (font <= 11 || cellPx >= smallest)) {
    return { step: 1, fontPx: Math.max(smallest, Math.min(font, Math.floor(cellPx))) };
  }
  return { step: Math.ceil(need / cellPx), fontPx: font };
}
// The type of the numbers printed in cells, in CSS px, or 0 for none: at the page's default type min(13, cell / 3) in
// cells of at least 26 px; on a projector (presentation mode's larger type) PROJECTOR_FONT_PX, where the widest number
// (widthAt(px): its width at that size) fits its cell, else none, and the foot says the values are on hover: a number
// the back row cannot read is not printed.
export function valuePlan(cellW, cellH, font, widthAt) {
  if (font > 11) return widthAt(PROJECTOR_FONT_PX) + 6 <= cellW && PROJECTOR_FONT_PX + 4 <= cellH ? PROJECTOR_FONT_PX : 0;
  return Math.min(cellW, cellH) >= 26 ? Math.min(13, Math.floor(cellW / 3)) : 0;
}
export const measure = document.createElement("canvas").getContext("2d");  // text widths, without the page's layout

const widths = new Map();  // label list -> its widest label: a page's heatmaps mostly share one token list
export function textWidth(labels, font) {  // widest label in px (capped), measured once per list of labels
  const key = font + "\u0001" + labels.join("\u0001");
  if (widths.has(key)) return widths.get(key);
  measure.font = font;
  let w = 0;
  for (const s of labels) w = Math.max(w, measure.measureText(s).width);
  if (widths.size > 32) widths.clear();
  widths.set(key, Math.min(w, 110));
  return widths.get(key);
}

// The most one heatmap's cells may take in height: 80 % of the window; on a projector (presentation mode's larger
// type) the whole heatmap, its title and key labels included, fits the first screen under the page's header bar,
// together with what sits above it in its lecture figure (ui/focus.py brings the figure's top to just under the bar):
// the back row reads the key under the ring without a scroll. Not below a label's height per row: a label the class
// cannot read does not help, so a long text keeps every label and scrolls.
export const HEADER_PX = 64;  // ui/focus.py's scroll-margin-top (4rem): the header bar and a little air
function cellsHeight(s, titleH, colLabH, rows) {
  const usual = Math.max(240, Math.min(760, window.innerHeight * 0.8));
  if ((s.fontPx || 11) <= 11) return usual;
  const host = s.root.getRootNode().host;  // the component's element in the page (the root sits in its shadow root)
  const figure = host && host.closest('[class*="st-key-figure_"]');
  const above = figure ? Math.max(0, host.getBoundingClientRect().top - figure.getBoundingClientRect().top) : 0;
  const room = window.innerHeight - HEADER_PX - above - titleH - colLabH - 16;  // 16: the gaps around the labels, and air
  return Math.min(usual, Math.max(room, rows * labelPx(s)));
}

// A title wider than its panel wraps onto a second line, and every panel of the heatmap gets that room: on one line
// CSS cut it mid-word ("share of queries whose top ke…" on a projector, "layer 0, head 0: ‖α …" on a phone).
export const TITLE_LINE_EM = 1.45;  // a title line's height in ems of the title's type (heatmap.css .avhm-title)
export function titleFont(s) { return `${(s.fontPx || 11) + 1}px ${s.fontFamily || "sans-serif"}`; }
export function titleWidth(s, title) { measure.font = titleFont(s); return measure.measureText(title).width; }

export function layout(s) {  // panel positions in CSS pixels for the current width
  const { meta } = s.model;
  // the width the ResizeObserver last reported: reading clientWidth on every update would force the browser to
  // lay out the whole page synchronously, once per heatmap
  if (!s.width) s.width = s.root.clientWidth || 600;
  const width = Math.max(160, s.width);
  const K = meta.columns, gridRows = Math.ceil(meta.panels / K);
  const labels = !meta.thumbnails;
  const pad = meta.thumbnails ? 4 : 0;  // room on both sides for the frame around a highlighted thumbnail
  const rowLabW = labels ? Math.ceil(s.rowTextW) + 8 : pad, colLabH = labels ? Math.ceil(s.colTextW) + 8 : 0;
  const gap = meta.thumbnails ? 6 : 14, oneLineH = Math.round(18 + ((s.fontPx || 11) - 11) * 1.5);
  const avail = (width - rowLabW - gap * (K - 1) - 2 - pad) / K;
  // cells that print numbers are larger, on a projector a little more: a 20 px '−0.12' needs about 60 px
  const maxCell = meta.show_values ? ((s.fontPx || 11) > 11 ? 64 : 56) : 40;
  // a thumbnail stays a thumbnail (at most 200 px) when a small model leaves room for more: the enlarged head is below
  const maxSide = meta.thumbnails ? 200 : Infinity;
  const cellFor = (titleH) => {  // a single heatmap's cells share the first screen with its title
    const maxH = meta.panels === 1 ? cellsHeight(s, titleH, colLabH, meta.rows) : Infinity;
    return Math.max(0.25, Math.min(avail / meta.cols, maxH / meta.rows, maxCell, maxSide / Math.max(meta.rows, meta.cols)));
  };
  let titleH = oneLineH, cell = cellFor(titleH);
  if (!meta.thumbnails && meta.titles.some((t) => titleWidth(s, t) > cell * meta.cols)) {  // a thumbnail's is a name
    titleH = oneLineH + Math.round(TITLE_LINE_EM * ((s.fontPx || 11) + 1));
    cell = cellFor(titleH);
  }
  // square cells, except that a wide, short matrix (tokens × 384 features) gets rows tall enough to read
  const cellH = meta.rows < meta.cols ? Math.max(cell, Math.min(labelPx(s) + 1, maxCell, 600 / meta.rows)) : cell;
  const pw = cell * meta.cols, ph = cellH * meta.rows;
  const boxes = [];
  for (let p = 0; p < meta.panels; p++) {
    const gr = Math.floor(p / K), gc = p % K;
    const below = p + K < meta.panels;  // the last panel in its column gets the key labels
    boxes.push({ p, x: rowLabW + gc * (pw + gap), y: gr * (titleH + ph + gap) + titleH, w: pw, h: ph, gr, gc,
                 keyLabels: labels && !below });
  }
  // grid rows are separated by the key-label band only where some panel of the row above shows it
  let extra = 0;
  for (let gr = 0; gr < gridRows; gr++) {
    const rowBoxes = boxes.filter((b) => b.gr === gr);
    for (const b of rowBoxes) b.y += extra;
    if (rowBoxes.some((b) => b.keyLabels)) extra += colLabH;
  }
  const height = Math.ceil(gridRows * (titleH + ph + gap) + extra);
  return { width: Math.ceil(rowLabW + K * pw + gap * (K - 1) + 2 + pad), height, cell, cellH, boxes, rowLabW, colLabH, titleH,
           oneLineH };
}

export function hit(s, x, y) {  // (x, y) in CSS px on the canvas -> {panel, row, col} or null (outside every panel)
  for (const b of s.lay.boxes) {
    if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) {
      const row = Math.min(s.model.meta.rows - 1, Math.floor((y - b.y) / s.lay.cellH));
      const col = Math.min(s.model.meta.cols - 1, Math.floor((x - b.x) / s.lay.cell));
      return { panel: b.p, row, col };
    }
  }
  return null;
}
