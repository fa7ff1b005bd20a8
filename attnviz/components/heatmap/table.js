// The table view under a heatmap: one row per query (or row) with its largest keys (or columns) and their values,
// as table text: for a screen reader, for a reader who wants the numbers, and as a printed handout. A disclosure
// (<details>) under the heatmap, filled only while open (12 heads × 512 queries is 6,144 rows); the numbers are the
// drawn ones, printed as the hover prints them.
import { el } from "./dom.js";
import { MINUS_INF, hoverText } from "./format.js";
import { valueAt } from "./decode.js";
import { axisWords, valueWord } from "./labels.js";
import { panelName, plural } from "./access.js";

export const TOP_KEYS = 3;
const ORDINALS = ["largest", "2nd", "3rd"];
const MASK_KEYS_LISTED = 12;  // a mask's row lists this many keys it may attend to, then says how many more

// row r of panel p: its TOP_KEYS largest cells (signed: largest in size), −∞ left out, and weights of exactly 0 (a
// masked key's, or none to speak of): [{c, v}], largest first
export function topOfRow(m, p, r, count = TOP_KEYS) {
  const { kind, cols } = m.meta, best = [];
  if (kind === "weights") {  // the codes rise with the weights: compare them, decode only the ones kept
    const at = (p * m.meta.rows + r) * cols;
    for (let c = 0; c < cols; c++) {
      const code = m.cells[at + c];
      if (code === 0 || (best.length === count && code <= best[count - 1].code)) continue;
      let i = best.length;
      while (i > 0 && best[i - 1].code < code) i--;
      best.splice(i, 0, { c, code });
      if (best.length > count) best.pop();
    }
    return best.map(({ c }) => ({ c, v: valueAt(m, p, r, c) }));
  }
  const size = kind === "signed" ? Math.abs : (v) => v;
  for (let c = 0; c < cols; c++) {
    const v = valueAt(m, p, r, c);
    if (v === -Infinity) continue;
    let i = best.length;
    while (i > 0 && size(best[i - 1].v) < size(v)) i--;
    if (i < count) best.splice(i, 0, { c, v });
    if (best.length > count) best.pop();
  }
  return best;
}

export function tableBox(s) {  // the disclosure, found or created under the heatmap's foot
  if (!s.table) {
    const box = el("details", "avhm-table", s.root);
    s.root.insertBefore(box, s.foot.nextSibling);
    s.table = { box, summary: el("summary", "", box), body: el("div", "avhm-table-body", box), drawn: null };
    // a region that scrolls takes the keyboard's focus, so arrow keys scroll it (WCAG 2.1.1; axe's
    // scrollable-region-focusable)
    s.table.body.tabIndex = 0;
    s.table.body.setAttribute("role", "region");
    box.ontoggle = () => { if (box.open) fillTable(s); };
  }
  const { meta } = s.model, [rowWord] = axisWords(meta);
  s.table.summary.textContent = meta.kind === "mask" ? `Table view: the keys each ${rowWord} may attend to`
    : `Table view: each ${rowWord}'s ${TOP_KEYS} largest ${plural(valueWord(meta))}`;
  s.table.body.setAttribute("aria-label", s.table.summary.textContent);
  if (s.table.box.open) fillTable(s);
  return s.table;
}

export function fillTable(s) {
  const t = s.table, m = s.model;
  if (t.drawn === m) return;
  t.drawn = m;
  const { meta } = m, [rowWord, colWord] = axisWords(meta), word = valueWord(meta);
  const spoken = (w, i, label) => (label === `${w} ${i}` ? label : `${i} '${label}'`);
  t.body.replaceChildren();
  el("p", "avhm-table-note", t.body, meta.kind === "mask"
    ? `Each ${rowWord}'s keys with M = 0 (may attend); every other key is ${MINUS_INF} (masked).`
    : `Each ${rowWord}'s ${TOP_KEYS} largest ${plural(word)}${meta.kind === "signed" ? " in size" : ""}, largest ` +
      `first, each as ${colWord} position 'token': ${word}${meta.kind === "weights" ? " (a weight of 0 is left out)" : ""}.`);
  for (let p = 0; p < meta.panels; p++) {
    const table = el("table", "", t.body), where = panelName(meta, p);
    el("caption", "", table, meta.titles[p] + (where && !meta.titles[p].includes(where) ? ` (${where})` : ""));
    const head = el("tr", "", el("thead", "", table));
    const columns = meta.kind === "mask" ? ["may attend to", "masked"] : ORDINALS.slice(0, TOP_KEYS).map((o) => `${o} ${colWord}`);
    for (const text of [rowWord, ...columns]) el("th", "", head, text).scope = "col";
    const body = el("tbody", "", table);
    for (let r = 0; r < meta.rows; r++) {
      const tr = el("tr", "", body);
      el("th", "", tr, spoken(rowWord, r, meta.row_labels[r])).scope = "row";
      if (meta.kind === "mask") { maskCells(m, p, r, tr); continue; }
      const top = topOfRow(m, p, r);
      for (let i = 0; i < TOP_KEYS; i++) {
        const at = top[i];
        el("td", "", tr, at ? `${spoken(colWord, at.c, meta.col_labels[at.c])}: ${hoverText(at.v, m)}` : "");
      }
    }
  }
}

function maskCells(m, p, r, tr) {  // a mask's row: the keys it may attend to (the first few named), how many masked
  const { meta } = m, open = [];
  for (let c = 0; c < meta.cols; c++) if (valueAt(m, p, r, c) !== -Infinity) open.push(c);
  const named = open.slice(0, MASK_KEYS_LISTED).map((c) => `${c} '${meta.col_labels[c]}'`).join(", ");
  const more = open.length > MASK_KEYS_LISTED ? ` and ${open.length - MASK_KEYS_LISTED} more` : "";
  el("td", "", tr, open.length ? `${open.length}: ${named}${more}` : "none");
  el("td", "", tr, String(meta.cols - open.length));
}
