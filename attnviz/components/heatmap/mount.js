// mountHeatmaps: one heatmap (or a row of them) in the element it is handed, and everything that
// keeps it live: the DOM (found or created), mouse events, the selection ring, the swap to a switch's other state.
// Streamlit's components v2 calls it again with the same parentElement whenever the data changes (a keyed
// component), so everything here is find-or-create and assigns handlers, never stacks them. Nothing here needs
// Streamlit beyond {data, parentElement, setStateValue, key}: each host (streamlit.js; viewer.js for a notebook's
// widget and a standalone HTML file) calls mountHeatmaps with those.
import { PALETTE } from "./palette.js";
import { child, el } from "./dom.js";
import { cellText } from "./format.js";
import { decodeAny, rowParts, sameCells, valueAt } from "./decode.js";
import { HEADER_PX, hit, layout, textWidth, typeOf } from "./layout.js";
import { paintCells, panelImage } from "./draw.js";
import { legend, placeLabels, showTip, tipAt } from "./labels.js";
import { downloadPng } from "./export.js";
import { cellSentence, describeGrid, moved, nameGrid, readCell } from "./access.js";
import { tableBox } from "./table.js";

// Every mounted heatmap, for the switch watcher below (shared by every copy of this module the page loads).
const LIVE = window.__avhmLive || (window.__avhmLive = new Set());

// Streamlit draws a switch (st.toggle) as an element whose data-selected attribute follows its state, inside a
// container classed st-key-<its widget key>. Watching that attribute sees a flip, by mouse or keyboard, as soon
// as the page shows it: each heatmap holding that switch's other state draws it then, before the rerun arrives.
// Should Streamlit ever draw switches differently (or a page have no Streamlit at all), nothing breaks: the
// heatmaps wait for the new data, as without this.
function watchSwitches() {
  if (window.__avhmSwitchWatch) return;
  window.__avhmSwitchWatch = new MutationObserver((records) => {
    for (const r of records) {
      const box = r.target;
      if (!box.dataset || box.dataset.testid !== "stCheckbox") continue;
      const holder = box.closest('[class*="st-key-"]');
      const keyClass = holder && [...holder.classList].find((c) => c.startsWith("st-key-"));
      if (!keyClass) continue;
      const control = keyClass.slice("st-key-".length), state = box.dataset.selected === "true";
      for (const s of LIVE) if (s.onSwitch) s.onSwitch(control, state);
    }
  });
  window.__avhmSwitchWatch.observe(document.body, { attributes: true, attributeFilter: ["data-selected"], subtree: true });
}

function onSwitch(s, control, state) {  // a sidebar switch flipped: draw this heatmap's state for it, if it has one
  const next = s.switch && s.switch.control === control ? s.switch.byState.get(state) : null;
  if (!next || sameCells(next, s.model)) return;
  show(s, next);
  s.hook.swaps = (s.hook.swaps || 0) + 1;  // drawn here, without the server (tests read this)
  if (s.width) render(s);
}

function paint(s) {  // the cells, then what marks a cell or panel: the frame of a highlighted thumbnail, the ring
  const ctx = paintCells(s), { meta } = s.model, lay = s.lay;
  s.note.textContent = meta.show_values && !s.valuesPx && (s.fontPx || 11) > 11
    ? "The cells are too small for numbers a room can read: hover a cell for its value." : "";
  if (meta.thumbnails) {  // a thumbnail stands for a whole head: frame the highlighted one, ring no cell
    const b = lay.boxes[s.highlight];
    if (b) { ctx.lineWidth = 2; ctx.strokeStyle = PALETTE.ring; ctx.strokeRect(b.x - 2, b.y - 2, b.w + 4, b.h + 4); }
  }
  const sel = s.selection;
  if (!meta.thumbnails && sel && sel.panel < meta.panels && sel.row < meta.rows && sel.col < meta.cols) {
    const { x, y, w, h } = cellBox(s, sel);
    ctx.lineWidth = 3; ctx.strokeStyle = "#ffffff"; ctx.strokeRect(x - 1.5, y - 1.5, w + 3, h + 3);
    ctx.lineWidth = 2; ctx.strokeStyle = PALETTE.ring; ctx.strokeRect(x - 1.5, y - 1.5, w + 3, h + 3);
  }
  // the keyboard's cursor, while the grid has the keyboard's focus: dashed, outside the ring, over a white rim
  const at = s.cursor;
  if (at && s.keyboard && at.panel < meta.panels && at.row < meta.rows && at.col < meta.cols) {
    const { x, y, w, h } = cellBox(s, at);
    ctx.setLineDash([]); ctx.lineWidth = 4; ctx.strokeStyle = "#ffffff"; ctx.strokeRect(x - 4, y - 4, w + 8, h + 8);
    ctx.setLineDash([4, 3]); ctx.lineWidth = 2; ctx.strokeStyle = PALETTE.cursor; ctx.strokeRect(x - 4, y - 4, w + 8, h + 8);
    ctx.setLineDash([]);
  }
}

function cellBox(s, at) {  // a cell's box on the canvas, CSS px, at least 6 px a side (a ring must show)
  const lay = s.lay, b = lay.boxes[at.panel], w = Math.max(lay.cell, 6), h = Math.max(lay.cellH, 6);
  return { x: b.x + (at.col + 0.5) * lay.cell - w / 2, y: b.y + (at.row + 0.5) * lay.cellH - h / 2, w, h };
}

// A heatmap drawn for the first time needs its width, and reading it (clientWidth) lays the page out there and
// then. Sixteen heatmaps mounting in one update (the Masks lab) did that sixteen times; queued to the next
// frame, all widths are read in one layout and then every first drawing is done.
const firstDraws = new Set();
function drawFirstTimes() {
  const queued = [...firstDraws];
  firstDraws.clear();
  for (const s of queued) if (!s.width) s.width = s.root.clientWidth || 600;
  for (const s of queued) render(s);
}

function render(s) {
  const started = performance.now();
  s.lay = layout(s);
  paint(s);
  placeLabels(s);
  s.root.dataset.draws = String((+s.root.dataset.draws || 0) + 1);
  s.root.dataset.checksum = `${s.model.sum}:${s.model.cells.length}`;
  s.root.dataset.cell = s.lay.cell.toFixed(2);
  // when these cells were first drawn, on the page's clock (benchmarks time a click to here): a later redraw of the
  // same cells (a resize, or the rerun's payload after a switch already swapped them in) keeps the first time
  if (s.hook.drawn !== s.root.dataset.checksum) s.hook.at = performance.now();
  s.hook.drawn = s.root.dataset.checksum;
  s.hook.draws = +s.root.dataset.draws;
  s.hook.ms = s.decodeMs + performance.now() - started;  // decode + paint of the last payload, for benchmarks
}

function show(s, model) {  // make `model` the one drawn (the next render paints it)
  // a selection the server asserts (a restored link, a clamp) replaces the one clicked here; one it merely
  // repeats from an unchanged payload does not
  if (!s.model || JSON.stringify(s.model.meta.selection) !== JSON.stringify(model.meta.selection)) s.selection = model.meta.selection;
  s.highlight = model.meta.highlight ?? null;  // the page's highlight; a click here moves it until the next payload
  s.model = model;
  s.images = Array.from({ length: model.meta.panels }, (_, p) => panelImage(model, p));
  // presentation mode's larger labels take more room; read once per heatmap (and again on a resize): reading a
  // computed style forces the browser to resolve the page's styles, three times per switch flip on the explorer
  if (!s.fontPx) ({ px: s.fontPx, family: s.fontFamily } = typeOf(s));
  s.rowTextW = textWidth(model.meta.row_labels, `${s.fontPx}px sans-serif`);
  s.colTextW = textWidth(model.meta.col_labels, `${s.fontPx}px sans-serif`);
  const m = model.meta;
  s.root.dataset.kind = m.kind;
  legend(s);
  describeGrid(s);
  tableBox(s);
  // the summary scans every cell: just after this drawing where that is quick, else when the grid is focused (12
  // heads of 512 tokens, 3M cells, took 24 ms on a busy machine: a switch's swap need not pay that for a name no one
  // has asked for yet; benchmarks/bench_heatmap_access.py)
  if (m.panels * m.rows * m.cols <= SUMMARY_AFTER_DRAW_CELLS) setTimeout(() => nameGrid(s), 0);
  if (s.cursor) {
    s.cursor = { panel: Math.min(s.cursor.panel, m.panels - 1), row: Math.min(s.cursor.row, m.rows - 1),
                 col: Math.min(s.cursor.col, m.cols - 1) };
    if (s.keyboard) readCell(s, s.cursor);
  }
}

const SUMMARY_AFTER_DRAW_CELLS = 300_000;  // 12 heads of 158 tokens: a few ms of scanning

// A cell picked, by a click or by Enter on the cursor: the same selection, ring and event
function pick(s, at) {
  s.selection = at;
  if (s.model.meta.thumbnails) { s.highlight = at.panel; placeLabels(s); }  // framed now, before the rerun
  paint(s);
  s.hook.ringAt = performance.now();  // the ring painted, on the page's clock (benchmarks time a click to here)
  // a thumbnail click is an event (enlarge that head): stamped, so the same cell clicked again after the page
  // moved elsewhere is still a change that reaches Python
  s.setStateValue("selection", s.model.meta.thumbnails ? { ...at, t: Date.now() } : at);
}

// The keyboard: the grid takes the keys that move its cursor, and Enter (or Space) to pick; any other key (Tab)
// goes on to the page, so the focus is never trapped.
const REDUCED_MOTION = window.matchMedia ? window.matchMedia("(prefers-reduced-motion: reduce)") : { matches: true };
function onKey(s, ev) {
  if (ev.altKey || ev.metaKey) return;
  const meta = s.model.meta, at = s.cursor || { panel: 0, row: 0, col: 0 };
  if (ev.key === "Enter" || ev.key === " ") {
    ev.preventDefault();
    if (meta.selectable) pick(s, at);
    readCell(s, at);
    return;
  }
  const next = moved(at, ev.key, ev.ctrlKey, meta);
  if (!next) return;
  ev.preventDefault();
  moveCursor(s, next);
}

function moveCursor(s, at) {  // the cursor to `at`: painted, read, its hover shown beside it, scrolled into view
  s.cursor = at;
  s.keyboard = true;
  readCell(s, at);
  if (!s.lay) return;  // focused before its first drawing (a frame away): that drawing paints the cursor
  paint(s);
  const { x, y, w, h } = cellBox(s, at), k = (s.canvas.clientWidth || s.lay.width) / s.lay.width;
  tipAt(s, at, (x + w) * k, (y + h / 2) * k);
  // a cell-sized mark, scrolled to the nearest edge that shows it: below the app's sticky header, not under it
  const mark = el("div", "", s.wrap);
  mark.style.cssText = `position:absolute;left:${(x - 4) * k}px;top:${(y - 4) * k}px;width:${(w + 8) * k}px;height:${(h + 8) * k}px;scroll-margin-top:${HEADER_PX}px`;
  mark.scrollIntoView({ block: "nearest", inline: "nearest", behavior: REDUCED_MOTION.matches ? "auto" : "smooth" });
  mark.remove();
}

function onFocus(s) {  // reached by Tab (or a click): the cursor where it was, on the selected cell, or the first
  nameGrid(s);
  const fromKeys = s.wrap.matches(":focus-visible");
  const at = s.cursor || s.selection || { panel: 0, row: 0, col: 0 };
  if (fromKeys) moveCursor(s, at);
  else { s.cursor = at; readCell(s, at); }
}

function onBlur(s) {
  s.keyboard = false;
  s.tip.style.display = "none";
  if (s.lay) paint(s);
}

export function mountHeatmaps(component) {  // every host calls this (streamlit.js, viewer.js)
  const { data, parentElement, setStateValue, key } = component;  // key: Streamlit's element id
  if (!data) return undefined;
  const parts = rowParts(data), boxes = slots(parentElement, parts.length);
  const cleanups = parts.map((bytes, i) => mount(boxes[i], bytes, setStateValue, parts.length === 1 ? key : `${key}_${i}`));
  return () => cleanups.forEach((cleanup) => cleanup());
}

function slots(parent, count) {  // where each heatmap goes: the component itself for one, else equal columns of a row
  if (count === 1) return [parent];
  const row = child(parent, "avhm-many") || el("div", "avhm-many", parent);
  row.style.gridTemplateColumns = `repeat(${count}, minmax(0, 1fr))`;
  while (row.children.length > count) row.lastChild.remove();
  while (row.children.length < count) el("div", "avhm-slot", row);
  return [...row.children];
}

function mount(parentElement, data, setStateValue, key) {  // one heatmap in parentElement -> its cleanup
  const started = performance.now();
  let root = child(parentElement, "avhm");
  if (!root) {
    root = el("div", "avhm", parentElement);
    const wrap = el("div", "avhm-wrap", root);
    // Tab scrolls the grid into view by itself too (the browser's own, as the focus arrives): below the header
    wrap.style.scrollMarginTop = `${HEADER_PX}px`;
    const canvas = el("canvas", "avhm-canvas", wrap);
    const labels = el("div", "avhm-labels", wrap);
    const tip = el("div", "avhm-tip", wrap);
    const foot = el("div", "avhm-foot", root);
    const legendBox = el("div", "avhm-legend", foot);
    const note = el("span", "avhm-note", foot);  // where the values are when the cells cannot print them (paint)
    const png = el("button", "avhm-png", foot, "Download PNG");
    png.type = "button";
    root.__avhm = { root, wrap, canvas, labels, tip, foot, legend: legendBox, note, png, selection: null, cursor: null };
    root.style.setProperty("--avhm-ring", PALETTE.ring);
  }
  const s = root.__avhm;
  s.setStateValue = setStateValue;
  const { model, switch: other } = decodeAny(data);
  s.switch = other;
  if (other) { s.onSwitch = (control, state) => onSwitch(s, control, state); watchSwitches(); }
  else s.onSwitch = null;
  LIVE.add(s);
  // unchanged cells and meta (e.g. the rerun after a switch this heatmap already swapped for) are not redone
  if (!s.model || !sameCells(s.model, model) || JSON.stringify(s.model.meta) !== JSON.stringify(model.meta)) show(s, model);
  s.decodeMs = performance.now() - started;
  // a JS-readable hook per heatmap, by the key the page gave it (tests and benchmarks read the drawn data here)
  const name = s.model.meta.name || key;
  root.dataset.name = name;
  window.attnvizHeatmaps = window.attnvizHeatmaps || {};
  s.hook = window.attnvizHeatmaps[name] = window.attnvizHeatmaps[name] || {};
  Object.assign(s.hook, {
    meta: () => s.model.meta,
    value: (p, r, c) => valueAt(s.model, p, r, c),
    values: (p) => { const { rows, cols } = s.model.meta, out = []; for (let r = 0; r < rows; r++) { const row = []; for (let c = 0; c < cols; c++) row.push(valueAt(s.model, p, r, c)); out.push(row); } return out; },
    labels: () => [...s.labels.querySelectorAll(".avhm-lab")].map((e) => e.textContent),
    // cut: the shown text runs past its box (CSS's ellipsis mid-word), which fitTitle's whole " · " parts never do
    titles: () => [...s.labels.querySelectorAll(".avhm-title")].map((e) => ({ shown: e.textContent, full: e.title,
                                                                            cut: e.scrollWidth > e.clientWidth + 1
                                                                                 || e.scrollHeight > e.clientHeight + 1 })),
    valuesPx: () => s.valuesPx || 0,  // the type size of the numbers printed in cells (0: none printed)
    note: () => s.note.textContent,
    printed: (p, r, c) => cellText(valueAt(s.model, p, r, c), s.model.meta.kind),  // the text a cell gets when values are printed
    pixel: (p, r, c) => [...s.images[p].getContext("2d").getImageData(c, r, 1, 1).data],  // the colour a cell was given
    selection: () => s.selection,
    highlight: () => s.highlight,
    cursor: () => s.cursor,  // the keyboard's cell, or null
    sentence: (p, r, c) => cellSentence(s.model, p, r, c),  // what a screen reader hears for that cell
    // what a screen reader is handed now: the grid's name and the active cell's text
    reading: () => { const id = s.wrap.getAttribute("aria-activedescendant"), active = id && s.wrap.querySelector(`[id="${id}"]`);
      return { name: s.wrap.getAttribute("aria-label"), description: s.help.textContent, active: active ? active.textContent : null }; },
    // the switch whose other state this heatmap holds ({control, states}), or null
    switch: () => (s.switch ? { control: s.switch.control, states: [...s.switch.byState.keys()] } : null),
    // a click on cell (row, col) of a panel, in screen coordinates: what a test's mouse needs
    cellCenter: (p, r, c) => { const b = s.lay.boxes[p], rect = s.canvas.getBoundingClientRect(), k = rect.width / s.lay.width;
      return { x: rect.left + (b.x + (c + 0.5) * s.lay.cell) * k, y: rect.top + (b.y + (r + 0.5) * s.lay.cellH) * k }; },
    // scroll a cell to the middle of the screen (a test's mouse can only click what is on screen)
    reveal: (p, r, c) => { const b = s.lay.boxes[p], m = el("div", "", s.canvas.parentElement);
      m.style.cssText = `position:absolute;left:${b.x + c * s.lay.cell}px;top:${b.y + r * s.lay.cellH}px;width:1px;height:1px`;
      m.scrollIntoView({ block: "center", inline: "nearest" }); m.remove(); },
  });
  if (s.width) render(s);
  else {
    firstDraws.add(s);
    if (firstDraws.size === 1) requestAnimationFrame(drawFirstTimes);
  }
  s.canvas.onmousemove = (ev) => showTip(s, ev);
  s.canvas.onmouseleave = () => { s.tip.style.display = "none"; };
  s.canvas.style.cursor = s.model.meta.selectable ? "pointer" : "crosshair";
  s.canvas.onclick = (ev) => {
    const k = s.lay.width / (s.canvas.clientWidth || s.lay.width);
    const at = hit(s, ev.offsetX * k, ev.offsetY * k);
    if (!at) return;  // a click between panels or on a label selects nothing
    s.cursor = at;  // the keyboard goes on from the clicked cell
    if (s.model.meta.selectable) pick(s, at);
  };
  s.wrap.onkeydown = (ev) => onKey(s, ev);
  s.wrap.onfocus = () => onFocus(s);
  s.wrap.onblur = () => onBlur(s);
  s.png.onclick = () => downloadPng(s);
  if (!s.observer) {
    s.observer = new ResizeObserver((entries) => {
      const w = entries[entries.length - 1].contentRect.width;
      if (!w || Math.abs(w - s.width) < 2) return;
      s.width = w;
      ({ px: s.fontPx, family: s.fontFamily } = typeOf(s));  // a new width may come with presentation mode's type
      firstDraws.delete(s);  // drawn here, with the width the observer measured; no need to wait for the frame
      render(s);
    });
    s.observer.observe(root);
  }
  // Streamlit may run a superseded call's cleanup after a newer call has drawn (data that changed while the module
  // loaded): only the latest call's cleanup unregisters the heatmap
  const generation = s.generation = (s.generation || 0) + 1;
  return () => {
    if (s.generation !== generation) return;
    if (s.observer) s.observer.disconnect();
    s.observer = null; LIVE.delete(s);
    if (window.attnvizHeatmaps) delete window.attnvizHeatmaps[root.dataset.name];
  };
}
