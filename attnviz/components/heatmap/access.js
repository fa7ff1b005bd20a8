// The heatmap for a keyboard and a screen reader: the WAI-ARIA grid pattern with aria-activedescendant, over the
// canvas, which keeps its look. The wrap around the canvas is one tab stop with role="grid"; its name is the
// heatmap's title and a one-line summary (its three largest values). Its active descendant is a visually hidden
// cell holding the cell under the cursor as a sentence: "query 8 'it', key 2 'animal': weight 0.683 (layer 3,
// head 1)". Two such cells take turns, so every move changes the active descendant and a screen reader reads the
// new one. The numbers are the drawn ones (decode.js valueAt, printed as the hover prints them), named as the
// legend names them; layer and head come from the payload (panel_names) or the panel's own title, never guessed.
// mount.js wires the keys and paints the cursor; this part holds what they need.
import { el } from "./dom.js";
import { MINUS_INF, hoverText } from "./format.js";
import { valueAt } from "./decode.js";
import { axisWords, maskWord, valueWord } from "./labels.js";

export const PAGE_ROWS = 8;  // PageUp / PageDown in a heatmap of one panel
export const SUMMARY_CELLS = 3;  // the largest values a heatmap's name lists

// The cell a key moves the cursor to ({panel, row, col}), or null for a key the grid leaves to the page (Tab among
// them: the grid is one tab stop and never holds the focus). Arrows: one cell, within the panel. Home / End: the
// row's first / last key. Ctrl+Home / Ctrl+End: the column's first / last query. PageUp / PageDown: the same cell
// of the previous / next panel (head) where there are several, else PAGE_ROWS rows up / down.
export function moved(at, key, ctrl, meta) {
  const { panels, rows, cols } = meta, { panel, row, col } = at;
  const within = (v, n) => Math.max(0, Math.min(n - 1, v));
  const go = (p, r, c) => ({ panel: within(p, panels), row: within(r, rows), col: within(c, cols) });
  switch (key) {
    case "ArrowLeft": return go(panel, row, col - 1);
    case "ArrowRight": return go(panel, row, col + 1);
    case "ArrowUp": return go(panel, row - 1, col);
    case "ArrowDown": return go(panel, row + 1, col);
    case "Home": return ctrl ? go(panel, 0, col) : go(panel, row, 0);
    case "End": return ctrl ? go(panel, rows - 1, col) : go(panel, row, cols - 1);
    case "PageUp": return panels > 1 ? go(panel - 1, row, col) : go(panel, row - PAGE_ROWS, col);
    case "PageDown": return panels > 1 ? go(panel + 1, row, col) : go(panel, row + PAGE_ROWS, col);
    default: return null;
  }
}

// what the keys do, said once (the grid's description)
export function keysHelp(meta) {
  const pages = meta.panels > 1 ? "Page Up, Page Down: the same cell in the previous or next panel"
    : `Page Up, Page Down: ${PAGE_ROWS} rows up or down`;
  const enter = !meta.selectable ? "" : meta.thumbnails ? " Enter opens that head." : " Enter shows the cell's arithmetic.";
  return `Arrow keys move between cells; Home, End: the row's first or last cell; Control+Home, Control+End: the ` +
    `column's first or last cell; ${pages}.${enter}`;
}

// "layer 3, head 1" for panel p: the payload's name for it, or the "layer L, head H" its title says; else, where
// there are several panels, its title; else "" (the heatmap's name, its title, says what it is)
export function panelName(meta, p) {
  if (meta.panel_names) return meta.panel_names[p];
  const said = /\blayer (\d+), head (\d+)\b/.exec(meta.titles[p]);
  if (said) return `layer ${said[1]}, head ${said[2]}`;
  return meta.panels > 1 ? meta.titles[p] : "";
}

// a row's or column's name in a sentence: "query 8 'it'"; "layer 3" where the label is just the word and number
const spoken = (word, i, label) => (label === `${word} ${i}` ? label : `${word} ${i} '${label}'`);

// what a value says: "weight 0.683", "value −∞ (masked)", "M 0 (may attend)"
export function valueSentence(m, v) {
  const { meta } = m;
  if (meta.kind === "mask") return `M ${maskWord(meta, v)}`;
  return `${valueWord(meta)} ${v === -Infinity ? `${MINUS_INF} (masked)` : hoverText(v, m)}`;
}

// the sentence a screen reader hears for cell (p, r, c)
export function cellSentence(m, p, r, c) {
  const { meta } = m, [rowWord, colWord] = axisWords(meta), where = panelName(meta, p);
  return `${spoken(rowWord, r, meta.row_labels[r])}, ${spoken(colWord, c, meta.col_labels[c])}: ` +
    `${valueSentence(m, valueAt(m, p, r, c))}${where ? ` (${where})` : ""}`;
}

// The `count` cells with the largest values (signed: largest in size), −∞ left out: [{p, r, c, v}], largest first.
// Weights compare their codes (one scale for every panel) in one flat pass: 3M cells at 512 tokens, none decoded
// but the ones kept.
export function largestCells(m, count = SUMMARY_CELLS) {
  const { panels, rows, cols, kind } = m.meta, best = [];
  const keep = (k, i) => {  // i: the cell's index, panel-major
    let j = best.length;
    while (j > 0 && best[j - 1].k < k) j--;
    best.splice(j, 0, { k, i });
    if (best.length > count) best.pop();
  };
  if (kind === "weights" && m.bpc !== 4) {
    const cells = m.cells;
    let floor = -1;  // the smallest kept code once `count` are kept: most cells fail this one test
    for (let i = 0, n = cells.length; i < n; i++) {
      if (cells[i] <= floor) continue;
      keep(cells[i], i);
      if (best.length === count) floor = best[count - 1].k;
    }
  } else {
    const size = kind === "signed" ? Math.abs : (v) => v;
    for (let p = 0; p < panels; p++) for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) {
      const v = valueAt(m, p, r, c);
      if (v === -Infinity) continue;
      const k = size(v);
      if (best.length < count || k > best[count - 1].k) keep(k, (p * rows + r) * cols + c);
    }
  }
  return best.map(({ i }) => {
    const c = i % cols, r = Math.floor(i / cols) % rows, p = Math.floor(i / (rows * cols));
    return { p, r, c, v: valueAt(m, p, r, c) };
  });
}

// "weights" for "weight"; a name of several words stays as it is: "values (share / weight)"
export const plural = (word) => (/^\w+$/.test(word) ? `${word}s` : `values (${word})`);

// one line on the whole heatmap: its largest values, or for a mask how many cells it masks
export function summary(m) {
  const { meta } = m;
  let masked = 0;
  if (meta.kind === "mask" || meta.kind === "signed") {
    for (let p = 0; p < meta.panels; p++) for (let r = 0; r < meta.rows; r++) for (let c = 0; c < meta.cols; c++) {
      if (valueAt(m, p, r, c) === -Infinity) masked++;
    }
  }
  const cells = meta.panels * meta.rows * meta.cols;
  if (meta.kind === "mask") return `${masked} of ${cells} cells masked (${MINUS_INF}), the others 0 (may attend).`;
  const [rowWord, colWord] = axisWords(meta), word = valueWord(meta);
  const top = largestCells(m).map(({ p, r, c, v }) => {
    const where = panelName(meta, p);
    return `${hoverText(v, m)} at ${spoken(rowWord, r, meta.row_labels[r])}, ${spoken(colWord, c, meta.col_labels[c])}` +
      (where ? ` (${where})` : "");
  });
  const what = `largest ${plural(word)}${meta.kind === "signed" ? " in size" : ""}`;
  const lead = top.length ? `The ${top.length} ${what}: ${top.join("; ")}.` : "";
  return lead + (masked ? ` ${masked} of ${cells} cells ${MINUS_INF} (masked).` : "");
}

// the heatmap's accessible name: what it is (the payload's label, else its one title, else its panels), its size
export function gridLabel(meta) {
  const what = meta.label || (meta.panels === 1 ? meta.titles[0] : `${meta.panels} heatmaps: ${meta.titles[0]} … ` +
    meta.titles[meta.panels - 1]);
  return `${what}: ${meta.panels > 1 ? `${meta.panels} panels of ` : ""}${meta.rows} × ${meta.cols} ${meta.kind}`;
}

let uid = 0;  // ids unique in the page: a notebook or a saved file holds several heatmaps in one document

// The grid's own elements in the wrap (found or created): two visually hidden rows of one cell each, taking turns
// as the active descendant. The canvas, labels and hover are hidden from screen readers: the cells say it all.
export function gridParts(s) {
  const w = s.wrap;
  if (!s.cells) {
    const id = `avhm-${++uid}`;
    w.tabIndex = 0;
    w.setAttribute("role", "grid");
    w.setAttribute("aria-readonly", "true");
    for (const e of [s.canvas, s.labels, s.tip]) e.setAttribute("aria-hidden", "true");
    s.cells = ["a", "b"].map((ab) => {
      const row = el("div", "avhm-sr", w);
      row.setAttribute("role", "row");
      const cell = el("div", "", row);
      cell.setAttribute("role", "gridcell");
      cell.id = `${id}-${ab}`;
      return { row, cell };
    });
    s.help = el("div", "avhm-sr", s.root);
    s.help.id = `${id}-keys`;
    s.help.setAttribute("aria-hidden", "true");  // read as the grid's description only
    w.setAttribute("aria-describedby", s.help.id);
    s.turn = 0;
  }
  return s.cells;
}

// the grid's name, description and size for the model drawn now (the summary is filled in by nameGrid)
export function describeGrid(s) {
  const { meta } = s.model;
  gridParts(s);
  s.help.textContent = keysHelp(meta);
  s.wrap.setAttribute("aria-rowcount", String(meta.rows));
  s.wrap.setAttribute("aria-colcount", String(meta.cols));
  s.wrap.setAttribute("aria-label", gridLabel(meta) + ".");
  s.named = null;
}

export function nameGrid(s) {  // the name with the summary, once per model (a scan of every cell)
  if (s.named === s.model) return;
  const started = performance.now();
  s.named = s.model;
  s.wrap.setAttribute("aria-label", `${gridLabel(s.model.meta)}. ${summary(s.model)}`);
  if (s.hook) s.hook.summaryMs = performance.now() - started;  // benchmarks read it
}

// the cursor's cell as the active descendant: the other of the two cells takes the sentence, so a screen reader
// sees a new active cell on every move, even to a cell whose sentence reads the same
export function readCell(s, at) {
  const cells = gridParts(s), sel = s.selection;
  s.turn = 1 - s.turn;
  const { row, cell } = cells[s.turn], idle = cells[1 - s.turn];
  row.setAttribute("aria-rowindex", String(at.row + 1));
  cell.setAttribute("aria-colindex", String(at.col + 1));
  const selected = !!sel && sel.panel === at.panel && sel.row === at.row && sel.col === at.col;
  cell.setAttribute("aria-selected", String(selected));
  cell.textContent = cellSentence(s.model, at.panel, at.row, at.col);
  idle.cell.textContent = "";
  s.wrap.setAttribute("aria-activedescendant", cell.id);
}
