// The viewer of a notebook's widget and of a saved HTML file: one document (attnviz/notebook/document.py) drawn
// with the same heatmaps as the app (mountHeatmaps), a picker for the attention (self, cross), the view (the heads
// of one layer, or every layer × head) and the layer, and the arithmetic of a clicked cell, worked out here from the
// document alone: no server answers a click in a saved file.
import { child, el } from "./dom.js";
import { MINUS_INF, numberText } from "./format.js";
import { unwrap, valueAt } from "./decode.js";
import { mountHeatmaps } from "./mount.js";

export function readDocument(u8) {  // {head, parts} of a document's bytes
  if (String.fromCharCode(u8[0], u8[1], u8[2], u8[3]) !== "AVDC") throw new Error("not an attnviz document");
  return unwrap(u8, (h) => h.parts);
}

// onSelect(cell or null): told of every click (the widget hands it to Python), may be null
export function startViewer(root, u8, onSelect) {
  const doc = readDocument(u8), v = root.__avviewer || (root.__avviewer = { root });
  v.doc = doc; v.onSelect = onSelect;
  v.set = 0; v.view = doc.head.view; v.layerAt = doc.head.sets[0].opens_at || 0; v.cell = null;
  build(v);
  draw(v);
  return v;
}

function build(v) {  // the DOM, made anew for a new document (find-or-create would keep a stale picker)
  const { head } = v.doc;
  v.root.replaceChildren();
  const box = el("div", "avv", v.root);
  if (head.title) el("div", "avv-title", box, head.title);
  if (head.subtitle) el("div", "avv-subtitle", box, head.subtitle);
  for (const note of head.notes) el("div", "avv-note", box, note);
  const bar = el("div", "avv-bar", box);
  if (head.sets.length > 1) {
    v.setPick = picker(bar, "Attention", head.sets.map((s) => s.name), (i) => { v.set = i; v.layerAt = head.sets[i].opens_at || 0; v.cell = null; draw(v); });
  }
  v.viewPick = picker(bar, "View", ["heads of one layer", "every layer × head"], (i) => { v.view = i ? "model" : "heads"; draw(v); });
  v.viewPick.select.dataset.role = "view";
  v.layerBox = el("span", "avv-pick", bar);
  const body = el("div", "avv-body", box);
  v.headsSlot = el("div", "avv-fig avv-heads", body);
  v.whyBox = el("div", "avv-why", body);
  v.modelSlot = el("div", "avv-fig avv-model", body);
}

function picker(bar, label, options, onPick) {  // a labelled <select> -> {select}
  const wrap = el("label", "avv-pick", bar, label + " ");
  const select = el("select", "", wrap);
  options.forEach((text, i) => { const o = el("option", "", select, text); o.value = String(i); });
  select.onchange = () => onPick(+select.value);
  return { select };
}

function draw(v) {
  const s = v.doc.head.sets[v.set];
  v.viewPick.select.value = v.view === "model" ? "1" : "0";
  if (v.setPick) v.setPick.select.value = String(v.set);
  // the layer picker is made anew: one that had the keyboard's focus passes it on (else a keyboard's next arrow
  // key, after the first changed the layer, would go nowhere)
  const active = v.root.getRootNode().activeElement, focused = !!active && v.layerBox.contains(active);
  v.layerBox.replaceChildren();
  const heads = v.view === "heads";
  v.headsSlot.style.display = v.whyBox.style.display = heads ? "" : "none";
  v.modelSlot.style.display = heads ? "none" : "";
  if (heads) {
    if (s.layers.length > 1) {
      const pick = picker(v.layerBox, "Layer", s.layers.map(String), (i) => { v.layerAt = i; draw(v); });
      pick.select.value = String(v.layerAt);
      pick.select.dataset.role = "layer";
      if (focused) pick.select.focus();
    } else el("span", "", v.layerBox, `Layer ${s.layers[0]}`);
    mountHeatmaps({ data: v.doc.parts[s.grids[v.layerAt]], parentElement: v.headsSlot, key: "attnviz-heads",
                    setStateValue: (name, cell) => { v.cell = cell; why(v); if (v.onSelect) v.onSelect(described(v)); } });
    why(v);
  } else {
    mountHeatmaps({ data: v.doc.parts[s.mosaic], parentElement: v.modelSlot, key: "attnviz-model",
                    setStateValue: (name, cell) => openHead(v, cell) });
    el("span", "avv-hint", v.layerBox, "Click a thumbnail to open that layer's heads.");
    if (s.block[0] > 1 || s.block[1] > 1) {
      el("span", "avv-hint", v.layerBox, `each thumbnail cell averages ${s.block[0]} queries and sums ${s.block[1]} keys` +
         " (rows still sum to 1)");
    }
  }
}

function openHead(v, cell) {  // a thumbnail clicked: that layer's heads, the clicked head ringed on its first cell
  const s = v.doc.head.sets[v.set], K = s.heads.length;
  // picked by the keyboard (Enter): the focus goes on to those heads, not to the page (the thumbnails are hidden)
  const active = v.root.getRootNode().activeElement, keyed = !!active && v.modelSlot.contains(active);
  v.view = "heads"; v.layerAt = Math.floor(cell.panel / K);
  draw(v);
  v.root.scrollIntoView && v.headsSlot.scrollIntoView({ block: "nearest" });
  const drawn = keyed && child(v.headsSlot, "avhm");
  if (!drawn) return;
  const [br, bc] = s.block;  // a thumbnail's cell covers br queries × bc keys: the cursor on the first of them
  drawn.__avhm.cursor = { panel: cell.panel % K, row: Math.min(cell.row * br, s.rows - 1), col: Math.min(cell.col * bc, s.cols - 1) };
  drawn.__avhm.wrap.focus();
}

function described(v) {  // the clicked cell in the run's own indices (what the widget hands to Python)
  if (!v.cell) return null;
  const s = v.doc.head.sets[v.set];
  return { attention: s.name, layer: s.layers[v.layerAt], head: s.heads[v.cell.panel], query: v.cell.row, key: v.cell.col };
}

const ROW = (label, value) => [label, value];
function table(box, rows) {  // label | value lines, as text
  const t = el("table", "avv-steps", box);
  for (const [label, value] of rows) { const tr = el("tr", "", t); el("td", "", tr, label); el("td", "avv-num", tr, value); }
}

function why(v) {  // the arithmetic of the clicked cell, or what to do
  const s = v.doc.head.sets[v.set], box = v.whyBox;
  box.replaceChildren();
  el("div", "avv-why-title", box, "Why this weight");
  const c = v.cell;
  if (!c || c.panel >= s.heads.length || c.row >= s.rows || c.col >= s.cols) {
    el("div", "avv-hint", box, "Click a cell of a head to see how its weight was computed.");
    return;
  }
  const layer = s.layers[v.layerAt], head = s.heads[c.panel], i = c.row, j = c.col;
  el("div", "avv-why-cell", box, `layer ${layer}, head ${head}: query ${i} “${s.row_labels[i]}” → key ${j} “${s.col_labels[j]}”`);
  if (s.scores) scoresArithmetic(v, s, box, c); else weightsOnly(v, s, box, c);
}

function scoresArithmetic(v, s, box, c) {  // z = q·k · s + M; a = e^(z − max) / Σ e^(z − max), in float64 here
  const part = v.doc.parts[s.scores[v.layerAt]], n = s.cols, i = c.row, j = c.col;
  const at0 = part.byteOffset + 4 * ((c.panel * s.rows + i) * n);  // row i of head c.panel's Q Kᵀ, read in place where aligned
  const scores = at0 % 4 === 0 ? new Float32Array(part.buffer, at0, n) : new Float32Array(part.buffer.slice(at0, at0 + 4 * n));
  const allowedPart = s.allowed === null ? null : v.doc.parts[s.allowed];
  const may = (k) => !allowedPart || allowedPart[i * n + k] === 1;
  const z = Array.from(scores, (q, k) => (may(k) ? q * s.scale : -Infinity));  // the row's logits, M added
  const live = z.filter((x) => x > -Infinity).length;
  if (!live) {
    table(box, [ROW("q·k (Q Kᵀ, unscaled)", numberText(scores[j], 4)), ROW("M (mask)", `${MINUS_INF}: every key of this row is masked`)]);
    el("div", "avv-hint", box, "attnviz gives a row with no key to attend to zero weights (as PyTorch's SDPA does): weight 0.");
    return;
  }
  let m = -Infinity, at = 0;
  z.forEach((x, k) => { if (x > m) { m = x; at = k; } });
  let sum = 0;
  for (const x of z) sum += Math.exp(x - m);
  const e = Math.exp(z[j] - m), w = e / sum;
  table(box, [
    ROW("q·k (Q Kᵀ, unscaled)", numberText(scores[j], 4)),
    ROW(`× scale ${s.scale_name}`, numberText(scores[j] * s.scale, 4)),
    ROW("+ M (mask)", may(j) ? "0 (may attend)" : `${MINUS_INF} (masked)`),
    ROW("= z, the logit", numberText(z[j], 4)),
    ROW(`row max m (key ${at} “${s.col_labels[at]}”)`, numberText(m, 4)),
    ROW("e^(z − m)", numberText(e, 4)),
    ROW(`Σ e^(z_k − m) over the row's ${live} unmasked keys`, numberText(sum, 4)),
    ROW("weight = e^(z − m) / Σ", numberText(w, 4)),
  ]);
  el("div", "avv-hint", box, `Subtracting the row's max changes no weight (it cancels in the fraction); it keeps e^z from ` +
    `overflowing. Worked out here, in double precision, from the run's scores Q Kᵀ that came with this view; this softmax ` +
    `matches attnviz's own float32 weights to within ${s.agreement.toExponential(1)} for every layer and head shown.`);
}

function weightsOnly(v, s, box, c) {  // no scores: the weight as stored, and its row's sum and largest from the run
  // this viewer's own heatmap (not the page-wide test hook: a notebook shows several viewers, one hook name)
  const drawn = child(v.headsSlot, "avhm"), m = drawn && drawn.__avhm.model;
  if (!m) return;
  const part = v.doc.parts[s.row_stats[v.layerAt]], at0 = part.byteOffset + 12 * (c.panel * s.rows + c.row);
  const [sum, key, largest] = at0 % 4 === 0 ? new Float32Array(part.buffer, at0, 3) : new Float32Array(part.buffer.slice(at0, at0 + 12));
  const err = s.weight_error[v.layerAt], digits = err < 5e-5 ? 4 : 3;
  table(box, [
    ROW(`weight (as stored in this file, ±${err.toPrecision(1)})`, numberText(valueAt(m, c.panel, c.row, c.col), digits)),
    ROW(`row ${c.row} sums to`, numberText(sum, 4)),
    ROW(`largest in the row: key ${key} “${s.col_labels[key]}”`, numberText(largest, 4)),
  ]);
  el("div", "avv-hint", box, s.no_scores);
}
