// attnviz heatmap: draws the payload of attnviz/draw/heatmap.py on a <canvas>.
// Streamlit components v2 calls the default export again with the same parentElement whenever the
// data changes (keyed component), so everything here is find-or-create and assigns handlers, never stacks them.
// Token labels are typed by students: they only ever reach the page through textContent.

const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"];
const RDBU_R = ["#053061", "#2166ac", "#4393c3", "#92c5de", "#d1e5f0", "#f7f7f7", "#fddbc7", "#f4a582", "#d6604d", "#b2182b", "#67001f"];
const MASKED = [158, 158, 158];  // −∞ cells: grey
const LABEL_PX = 13;  // a label needs this many pixels along its axis, so denser labels are thinned
const MINUS_INF = "−∞";

function lut(stops) {  // 256 RGB entries linearly interpolated between the stops
  const rgb = stops.map((h) => [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16)));
  const out = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1), k = Math.min(Math.floor(t), rgb.length - 2), f = t - k;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(rgb[k][c] * (1 - f) + rgb[k + 1][c] * f);
  }
  return out;
}
const LUTS = { weights: lut(VIRIDIS), signed: lut(RDBU_R) };
// the same colours as one RGBA word each, for writing a pixel in one store (ImageData is little-endian RGBA)
const rgba = (r, g, b) => (r | (g << 8) | (b << 16) | (255 << 24)) >>> 0;
const WORDS = Object.fromEntries(Object.entries(LUTS).map(([k, t]) =>
  [k, Uint32Array.from({ length: 256 }, (_, i) => rgba(t[i * 3], t[i * 3 + 1], t[i * 3 + 2]))]));
const MASKED_WORD = rgba(...MASKED);

// The four letters a payload starts with: AVHM (a heatmap), AVSW (a switch's two states), AVRW (a row of heatmaps)
const magicOf = (u8) => String.fromCharCode(u8[0], u8[1], u8[2], u8[3]);

function decode(u8) {  // u8: a Uint8Array, here and below (rowParts wraps what Streamlit hands the component)
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  if (magicOf(u8) !== "AVHM") throw new Error("not an attnviz heatmap payload");
  const bpc = dv.getUint8(5), len = dv.getUint32(8, true);
  const meta = JSON.parse(new TextDecoder().decode(u8.subarray(12, 12 + len)));
  const count = meta.panels * meta.rows * meta.cols, off = 12 + len;
  let cells;
  if (bpc === 0) {  // one bit a cell (a mask's M), least significant first: 1 = −∞ -> the uint8 code 255 below
    const bits = u8.subarray(off, off + Math.ceil(count / 8));
    cells = new Uint8Array(count);
    for (let i = 0; i < count; i++) if ((bits[i >> 3] >> (i & 7)) & 1) cells[i] = 255;
    return { meta, cells, top: 255, bpc: 1, sum: checksum(bits) };
  }
  if (bpc === 4) cells = (u8.byteOffset + off) % 4 === 0 ? new Float32Array(u8.buffer, u8.byteOffset + off, count)
    : new Float32Array(u8.slice(off, off + 4 * count).buffer);
  else if (bpc === 1) cells = u8.subarray(off, off + count);
  else if ((u8.byteOffset + off) % 2 === 0) cells = new Uint16Array(u8.buffer, u8.byteOffset + off, count);
  else cells = new Uint16Array(u8.slice(off, off + 2 * count).buffer);
  const top = bpc === 1 ? 255 : bpc === 2 ? 65535 : -Infinity;  // float32: −∞ is itself
  return { meta, cells, top, bpc, sum: checksum(u8.subarray(off, off + bpc * count)) };
}

// A switch payload (attnviz/draw/heatmap_switch.py) holds the heatmap in both states of a sidebar switch, the one
// shown now first: {model: that one, switch: {control: the switch's widget key, byState: Map(state -> model)}}.
// A plain payload: {model, switch: null}.
function decodeAny(u8) {
  if (magicOf(u8) !== "AVSW") return { model: decode(u8), switch: null };
  const { head, parts } = unwrap(u8, (h) => h.states.length);
  const byState = new Map(head.states.map((state, i) => [state, decode(parts[i])]));
  return { model: byState.get(head.states[0]), switch: { control: head.control, byState } };
}

// A row payload (attnviz/draw/heatmap_row.py) holds several payloads drawn side by side; any other is one part.
function rowParts(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (magicOf(u8) !== "AVRW") return [u8];
  return unwrap(u8, (h) => h.count).parts;
}

// A wrapper payload's JSON head and inner payloads, each starting on a 4-byte boundary (attnviz/draw/payload_frames.py)
function unwrap(u8, countOf) {
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength), len = dv.getUint32(4, true);
  const head = JSON.parse(new TextDecoder().decode(u8.subarray(8, 8 + len)));
  const parts = [];
  let off = 8 + len;
  for (let i = 0, n = countOf(head); i < n; i++) {
    const size = dv.getUint32(off, true);
    parts.push(u8.subarray(off + 4, off + 4 + size));
    off += 4 + size + ((4 - (size % 4)) % 4);
  }
  return { head, parts };
}

const sameCells = (a, b) => a.sum === b.sum && a.cells.length === b.cells.length;

// Every mounted heatmap, for the switch watcher below (shared by every copy of this module the page loads).
const LIVE = window.__avhmLive || (window.__avhmLive = new Set());

// Streamlit draws a switch (st.toggle) as an element whose data-selected attribute follows its state, inside a
// container classed st-key-<its widget key>. Watching that attribute sees a flip, by mouse or keyboard, as soon
// as the page shows it: each heatmap holding that switch's other state draws it then, before the rerun arrives.
// Should Streamlit ever draw switches differently, nothing breaks: the heatmaps wait for the rerun, as without this.
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

function checksum(bytes) {  // of the cells' bytes, for the redraw check and for tests that wait for new data
  let h = 0x811c9dc5 ^ bytes.length, i = 0;  // four bytes a step where aligned: 3 MB of cells at 512 tokens
  if (bytes.byteOffset % 4 === 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length >> 2);
    for (; i < words.length; i++) h = Math.imul(h ^ words[i], 16777619);
    i *= 4;
  }
  for (; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], 16777619);
  return h >>> 0;
}

function valueAt(m, p, r, c) {  // the number a cell stands for (−Infinity for a masked cell)
  const code = m.cells[(p * m.meta.rows + r) * m.meta.cols + c];
  if (m.bpc === 4) return code;
  if (m.meta.kind === "weights") return code / (m.top - 1);
  if (code === m.top) return -Infinity;
  const [lo, hi] = m.meta.bounds[p];
  return lo + (code / (m.top - 1)) * (hi > lo ? hi - lo : 1);
}

function panelImage(m, p) {  // one panel as a rows × cols image, 1 pixel per cell (no allocation per cell: 3M cells at 512 tokens)
  const { rows, cols, kind } = m.meta;
  const [clo, chi] = m.meta.ranges[p];
  const words = WORDS[kind], img = new ImageData(cols, rows), px = new Uint32Array(img.data.buffer);
  const span = chi > clo ? chi - clo : 1, top = m.top, cells = m.cells, base = p * rows * cols, n = rows * cols;
  let lo = 0, step = 1 / (top - 1);  // value = lo + code · step
  if (m.bpc === 4) step = 1;  // float32: the value itself
  else if (kind !== "weights") { const [blo, bhi] = m.meta.bounds[p]; lo = blo; step = (bhi > blo ? bhi - blo : 1) / (top - 1); }
  const a = (lo - clo) / span * 255, b = step / span * 255;  // colour index = a + code · b
  const masks = kind !== "weights";  // signed codes reserve `top` (float32: −∞ itself) for a masked cell
  const colour = (code) => (masks && code === top ? MASKED_WORD : words[Math.max(0, Math.min(255, Math.round(a + code * b)))]);
  if (m.bpc === 1) {  // 256 codes: colour each once, then every cell is one look-up
    const byCode = Uint32Array.from({ length: 256 }, (_, code) => colour(code));
    for (let i = 0; i < n; i++) px[i] = byCode[cells[base + i]];
  } else for (let i = 0; i < n; i++) px[i] = colour(cells[base + i]);
  const canvas = document.createElement("canvas");
  canvas.width = cols; canvas.height = rows;
  canvas.getContext("2d").putImageData(img, 0, 0);
  return canvas;
}

function fmt(v, m) {  // a value in the hover, to what its bytes hold: uint8 weights 2 decimals, the rest 3
  return numberText(v, m.bpc === 1 && m.meta.kind === "weights" ? 2 : 3);
}

const cellText = (v) => numberText(v, 2);  // a value printed in its cell

function numberText(v, digits) {  // "−0.21", "−∞"; a value that rounds to zero reads "0.00", never "−0.00"
  if (v === -Infinity) return MINUS_INF;
  const text = Math.abs(v).toFixed(digits);
  return (v < 0 && Number(text) !== 0 ? "−" : "") + text;
}

function short(v) {  // a legend tick: 0.5, 1, −2.37
  return (v < 0 ? "−" : "") + String(+Math.abs(v).toPrecision(3));
}

function el(tag, cls, parent, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

const widths = new Map();  // label list -> its widest label: a page's heatmaps mostly share one token list
function textWidth(labels, font) {  // widest label in px (capped), measured once per list of labels
  const key = font + "\u0001" + labels.join("\u0001");
  if (widths.has(key)) return widths.get(key);
  measure.font = font;
  let w = 0;
  for (const s of labels) w = Math.max(w, measure.measureText(s).width);
  if (widths.size > 32) widths.clear();
  widths.set(key, Math.min(w, 110));
  return widths.get(key);
}

function layout(s) {  // panel positions in CSS pixels for the current width
  const { meta } = s.model;
  // the width the ResizeObserver last reported: reading clientWidth on every update would force the browser to
  // lay out the whole page synchronously, once per heatmap
  if (!s.width) s.width = s.root.clientWidth || 600;
  const width = Math.max(160, s.width);
  const K = meta.columns, gridRows = Math.ceil(meta.panels / K);
  const labels = !meta.thumbnails;
  const pad = meta.thumbnails ? 4 : 0;  // room on both sides for the frame around a highlighted thumbnail
  const rowLabW = labels ? Math.ceil(s.rowTextW) + 8 : pad, colLabH = labels ? Math.ceil(s.colTextW) + 8 : 0;
  const gap = meta.thumbnails ? 6 : 14, titleH = 18;
  const avail = (width - rowLabW - gap * (K - 1) - 2 - pad) / K;
  const maxH = meta.panels === 1 ? Math.max(240, Math.min(760, window.innerHeight * 0.8)) : Infinity;
  const maxCell = meta.show_values ? 56 : 40;
  // a thumbnail stays a thumbnail (at most 200 px) when a small model leaves room for more: the enlarged head is below
  const maxSide = meta.thumbnails ? 200 : Infinity;
  const cell = Math.max(0.25, Math.min(avail / meta.cols, maxH / meta.rows, maxCell, maxSide / Math.max(meta.rows, meta.cols)));
  // square cells, except that a wide, short matrix (tokens × 384 features) gets rows tall enough to read
  const cellH = meta.rows < meta.cols ? Math.max(cell, Math.min(LABEL_PX + 1, maxCell, 600 / meta.rows)) : cell;
  const pw = cell * meta.cols, ph = cellH * meta.rows;
  const boxes = [];
  for (let p = 0; p < meta.panels; p++) {
    const gr = Math.floor(p / K), gc = p % K;
    const below = p + K < meta.panels;  // the last panel in its column gets the key labels
    const y0 = gr * (titleH + ph + gap) + (labels ? gr * 0 : 0);
    boxes.push({ p, x: rowLabW + gc * (pw + gap), y: y0 + titleH, w: pw, h: ph, gr, gc, keyLabels: labels && !below });
  }
  // grid rows are separated by the key-label band only where some panel of the row above shows it
  let extra = 0;
  for (let gr = 0; gr < gridRows; gr++) {
    const rowBoxes = boxes.filter((b) => b.gr === gr);
    for (const b of rowBoxes) b.y += extra;
    if (rowBoxes.some((b) => b.keyLabels)) extra += colLabH;
  }
  const height = Math.ceil(gridRows * (titleH + ph + gap) + extra);
  return { width: Math.ceil(rowLabW + K * pw + gap * (K - 1) + 2 + pad), height, cell, cellH, boxes, rowLabW, colLabH, titleH };
}

function hit(s, x, y) {  // (x, y) in CSS px on the canvas -> {panel, row, col} or null (outside every panel)
  for (const b of s.lay.boxes) {
    if (x >= b.x && x < b.x + b.w && y >= b.y && y < b.y + b.h) {
      const row = Math.min(s.model.meta.rows - 1, Math.floor((y - b.y) / s.lay.cellH));
      const col = Math.min(s.model.meta.cols - 1, Math.floor((x - b.x) / s.lay.cell));
      return { panel: b.p, row, col };
    }
  }
  return null;
}

function paint(s) {  // the canvas: panels, values in big cells, the selection ring
  const { meta } = s.model, lay = s.lay, dpr = window.devicePixelRatio || 1;
  const cv = s.canvas;
  cv.width = Math.round(lay.width * dpr); cv.height = Math.round(lay.height * dpr);
  cv.style.width = lay.width + "px"; cv.style.height = lay.height + "px";
  const ctx = cv.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.imageSmoothingEnabled = false;
  for (const b of lay.boxes) ctx.drawImage(s.images[b.p], b.x, b.y, b.w, b.h);
  if (meta.show_values && Math.min(lay.cell, lay.cellH) >= 26) {
    ctx.font = `${Math.min(13, Math.floor(lay.cell / 3))}px sans-serif`;
    ctx.textAlign = "center"; ctx.textBaseline = "middle";
    for (const b of lay.boxes) for (let r = 0; r < meta.rows; r++) for (let c = 0; c < meta.cols; c++) {
      const v = valueAt(s.model, b.p, r, c);
      const [clo, chi] = meta.ranges[b.p], t = (v - clo) / (chi - clo || 1);
      ctx.fillStyle = v === -Infinity ? "#222" : meta.kind === "weights" ? (t > 0.6 ? "#111" : "#fff") : (Math.abs(t - 0.5) > 0.3 ? "#fff" : "#111");
      const text = cellText(v);
      ctx.fillText(text, b.x + (c + 0.5) * lay.cell, b.y + (r + 0.5) * lay.cellH);
    }
  }
  if (meta.thumbnails) {  // a thumbnail stands for a whole head: frame the highlighted one, ring no cell
    const b = lay.boxes[s.highlight];
    if (b) { ctx.lineWidth = 2; ctx.strokeStyle = "#e4003a"; ctx.strokeRect(b.x - 2, b.y - 2, b.w + 4, b.h + 4); }
    return;
  }
  const sel = s.selection;
  if (sel && sel.panel < meta.panels && sel.row < meta.rows && sel.col < meta.cols) {
    const b = lay.boxes[sel.panel], w = Math.max(lay.cell, 6), h = Math.max(lay.cellH, 6);
    const x = b.x + (sel.col + 0.5) * lay.cell - w / 2, y = b.y + (sel.row + 0.5) * lay.cellH - h / 2;
    ctx.lineWidth = 3; ctx.strokeStyle = "#ffffff"; ctx.strokeRect(x - 1.5, y - 1.5, w + 3, h + 3);
    ctx.lineWidth = 2; ctx.strokeStyle = "#e4003a"; ctx.strokeRect(x - 1.5, y - 1.5, w + 3, h + 3);
  }
}

const measure = document.createElement("canvas").getContext("2d");
function fitTitle(title, width) {  // drop trailing " · " parts until the title fits its panel; "…" says some were
  measure.font = "12px sans-serif";  // dropped (the full title is the tooltip)
  const parts = title.split(" · "), n = parts.length;
  const text = () => parts.join(" · ") + (parts.length < n ? " …" : "");
  while (parts.length > 1 && measure.measureText(text()).width > width) parts.pop();
  return text();
}

function placeLabels(s) {  // token labels as DOM text, every k-th when dense so they never overlap
  const { meta } = s.model, lay = s.lay;
  s.labels.replaceChildren();
  s.labels.style.width = lay.width + "px"; s.labels.style.height = lay.height + "px";
  const every = Math.max(1, Math.ceil(LABEL_PX / lay.cell)), everyRow = Math.max(1, Math.ceil(LABEL_PX / lay.cellH));
  s.root.dataset.labelStep = String(every);
  for (const b of lay.boxes) {
    const t = el("div", "avhm-title", s.labels, fitTitle(meta.titles[b.p], b.w));
    t.title = meta.titles[b.p];
    if (meta.thumbnails && b.p === s.highlight) t.classList.add("avhm-title-on");
    t.style.left = b.x + "px"; t.style.top = b.y - lay.titleH + "px"; t.style.width = b.w + "px";
    if (meta.thumbnails) continue;
    if (b.gc === 0) for (let r = 0; r < meta.rows; r += everyRow) {
      const d = el("div", "avhm-lab avhm-row", s.labels, meta.row_labels[r]);
      d.style.top = b.y + (r + 0.5) * lay.cellH + "px"; d.style.width = lay.rowLabW - 6 + "px";
    }
    if (b.keyLabels) for (let c = 0; c < meta.cols; c += every) {
      const d = el("div", "avhm-lab avhm-col", s.labels, meta.col_labels[c]);
      d.style.left = b.x + (c + 0.5) * lay.cell + "px"; d.style.top = b.y + b.h + 4 + "px";
      d.style.height = lay.colLabH - 6 + "px";
    }
  }
}

function legend(s) {
  const { meta } = s.model;
  s.legend.replaceChildren();
  const scale = el("div", "avhm-scale", s.legend);  // the bar and its ticks: the title goes beside them, or below
  const bar = el("canvas", "avhm-bar", scale);
  bar.width = 256; bar.height = 1;
  const ctx = bar.getContext("2d"), img = ctx.createImageData(256, 1), table = LUTS[meta.kind];
  for (let i = 0; i < 256; i++) { img.data.set([table[i * 3], table[i * 3 + 1], table[i * 3 + 2], 255], i * 4); }
  ctx.putImageData(img, 0, 0);
  const [lo, hi] = meta.ranges[0];
  const ticks = el("div", "avhm-ticks", scale);
  const same = meta.ranges.every((r) => r[0] === lo && r[1] === hi);
  if (meta.kind === "weights") {
    el("span", "", ticks, "0"); el("span", "", ticks, same ? short(hi / 2) : "½ max"); el("span", "", ticks, same ? short(hi) : "max");
    el("div", "avhm-legend-title", s.legend, same ? "weight after softmax" : "weight after softmax, each head's colours 0 … its own largest weight");
  } else {
    el("span", "", ticks, same ? short(lo) : "−max"); el("span", "", ticks, "0"); el("span", "", ticks, same ? short(hi) : "+max");
    const masked = Array.prototype.some.call(s.model.cells, (v) => v === s.model.top);
    el("div", "avhm-legend-title", s.legend, (same ? "value (blue < 0 < red)" : "value, each panel its own ±max") + (masked ? " · grey = −∞ (masked)" : ""));
  }
}

function showTip(s, ev) {
  const { meta } = s.model;
  const at = hit(s, ev.offsetX * (s.lay.width / (s.canvas.clientWidth || s.lay.width)),
                 ev.offsetY * (s.lay.height / (s.canvas.clientHeight || s.lay.height)));
  if (!at) { s.tip.style.display = "none"; return; }
  const v = valueAt(s.model, at.panel, at.row, at.col);
  const lines = [meta.titles[at.panel],
    `${meta.kind === "weights" ? "query" : "row"} ${at.row}: ${meta.row_labels[at.row]}`,
    `${meta.kind === "weights" ? "key" : meta.x_title} ${at.col}: ${meta.col_labels[at.col]}`,
    `${meta.kind === "weights" ? "weight" : "value"}: ${fmt(v, s.model)}`];
  s.tip.replaceChildren();
  for (const line of lines) if (line) el("div", "", s.tip, line);
  s.tip.style.display = "block";
  const x = ev.offsetX + 14, y = ev.offsetY + 14;
  s.tip.style.left = Math.min(x, Math.max(0, s.lay.width - 230)) + "px";
  s.tip.style.top = y + "px";
}

function downloadPng(s) {  // the heatmap with its titles and labels, as a PNG file
  const { meta } = s.model, lay = s.lay, scale = 2;
  const out = document.createElement("canvas");
  const legendH = 36;
  out.width = lay.width * scale; out.height = (lay.height + legendH) * scale;
  const ctx = out.getContext("2d");
  ctx.scale(scale, scale);
  ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, lay.width, lay.height + legendH);
  ctx.drawImage(s.canvas, 0, 0, lay.width, lay.height);
  ctx.fillStyle = "#222"; ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
  for (const d of s.labels.children) {
    const x = parseFloat(d.style.left || "0"), y = parseFloat(d.style.top || "0");
    if (d.classList.contains("avhm-title")) { ctx.textAlign = "center"; ctx.fillText(d.textContent, x + parseFloat(d.style.width) / 2, y + 9); }
    else if (d.classList.contains("avhm-row")) { ctx.textAlign = "right"; ctx.fillText(d.textContent, lay.rowLabW - 6, y, lay.rowLabW - 6); }
    else { ctx.save(); ctx.translate(x, y); ctx.rotate(-Math.PI / 2); ctx.textAlign = "right"; ctx.fillText(d.textContent, 0, 0, lay.colLabH - 6); ctx.restore(); }
  }
  ctx.drawImage(s.legend.querySelector("canvas"), 0, lay.height + 6, 200, 10);
  ctx.textAlign = "left"; ctx.fillText(s.legend.querySelector(".avhm-legend-title").textContent, 210, lay.height + 11);
  out.toBlob((blob) => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (meta.titles.length === 1 ? meta.titles[0] : "heatmap").replace(/[^\w.-]+/g, "_").slice(0, 60) + ".png";
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }, "image/png");
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
  s.rowTextW = textWidth(model.meta.row_labels, "11px sans-serif");
  s.colTextW = textWidth(model.meta.col_labels, "11px sans-serif");
  const m = model.meta;
  s.canvas.setAttribute("aria-label", `${m.panels === 1 ? m.titles[0] : m.panels + " heatmaps"}: ${m.rows} × ${m.cols} ${m.kind}`);
  s.root.dataset.kind = m.kind;
  legend(s);
}

function onSwitch(s, control, state) {  // a sidebar switch flipped: draw this heatmap's state for it, if it has one
  const next = s.switch && s.switch.control === control ? s.switch.byState.get(state) : null;
  if (!next || sameCells(next, s.model)) return;
  show(s, next);
  s.hook.swaps = (s.hook.swaps || 0) + 1;  // drawn here, without the server (tests read this)
  if (s.width) render(s);
}

export default function (component) {
  const { data, parentElement, setStateValue, key } = component;  // key: Streamlit's element id
  if (!data) return undefined;
  const parts = rowParts(data), boxes = slots(parentElement, parts.length);
  const cleanups = parts.map((bytes, i) => mount(boxes[i], bytes, setStateValue, parts.length === 1 ? key : `${key}_${i}`));
  return () => cleanups.forEach((cleanup) => cleanup());
}

// parent's own child of this class. Not querySelector(":scope > …"): the component's parent is a shadow root, where
// :scope matches nothing, and every update then added one more heatmap below the last.
const child = (parent, cls) => [...parent.children].find((e) => e.classList.contains(cls)) || null;

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
    const canvas = el("canvas", "avhm-canvas", wrap);
    canvas.setAttribute("role", "img");
    const labels = el("div", "avhm-labels", wrap);
    const tip = el("div", "avhm-tip", wrap);
    const foot = el("div", "avhm-foot", root);
    const legendBox = el("div", "avhm-legend", foot);
    const png = el("button", "avhm-png", foot, "Download PNG");
    png.type = "button";
    root.__avhm = { root, canvas, labels, tip, legend: legendBox, png, selection: null };
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
    titles: () => [...s.labels.querySelectorAll(".avhm-title")].map((e) => ({ shown: e.textContent, full: e.title })),
    printed: (p, r, c) => cellText(valueAt(s.model, p, r, c)),  // the text a cell gets when values are printed
    pixel: (p, r, c) => [...s.images[p].getContext("2d").getImageData(c, r, 1, 1).data],  // the colour a cell was given
    selection: () => s.selection,
    highlight: () => s.highlight,
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
    if (!s.model.meta.selectable) return;
    const k = s.lay.width / (s.canvas.clientWidth || s.lay.width);
    const at = hit(s, ev.offsetX * k, ev.offsetY * k);
    if (!at) return;  // a click between panels or on a label selects nothing
    s.selection = at;
    if (s.model.meta.thumbnails) { s.highlight = at.panel; placeLabels(s); }  // framed now, before the rerun
    paint(s);
    s.hook.ringAt = performance.now();  // the ring painted, on the page's clock (benchmarks time a click to here)
    // a thumbnail click is an event (enlarge that head): stamped, so the same cell clicked again after the page
    // moved elsewhere is still a change that reaches Python
    s.setStateValue("selection", s.model.meta.thumbnails ? { ...at, t: Date.now() } : at);
  };
  s.png.onclick = () => downloadPng(s);
  if (!s.observer) {
    s.observer = new ResizeObserver((entries) => {
      const w = entries[entries.length - 1].contentRect.width;
      if (!w || Math.abs(w - s.width) < 2) return;
      s.width = w;
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
