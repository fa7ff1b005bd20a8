// The bytes payload of attnviz/draw/heatmap_payload.py (and its wrappers: heatmap_switch.py, heatmap_row.py) -> a model:
// {meta: the JSON block, cells: the codes (a typed array over panels × rows × cols), top: the masked code, bpc, sum}.
// Streamlit hands top-level bytes over as a Uint8Array that may be a view into a larger buffer: every read here
// goes through byteOffset.

// The four letters a payload starts with: AVHM (a heatmap), AVSW (a switch's two states), AVRW (a row of heatmaps)
const magicOf = (u8) => String.fromCharCode(u8[0], u8[1], u8[2], u8[3]);

export function decode(u8) {  // u8: a Uint8Array, here and below (rowParts wraps what the component is handed)
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
export function decodeAny(u8) {
  if (magicOf(u8) !== "AVSW") return { model: decode(u8), switch: null };
  const { head, parts } = unwrap(u8, (h) => h.states.length);
  const byState = new Map(head.states.map((state, i) => [state, decode(parts[i])]));
  return { model: byState.get(head.states[0]), switch: { control: head.control, byState } };
}

// A row payload (attnviz/draw/heatmap_row.py) holds several payloads drawn side by side; any other is one part.
export function rowParts(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  if (magicOf(u8) !== "AVRW") return [u8];
  return unwrap(u8, (h) => h.count).parts;
}

// A wrapper payload's JSON head and inner payloads, each starting on a 4-byte boundary (attnviz/draw/payload_frames.py)
export function unwrap(u8, countOf) {
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

export const sameCells = (a, b) => a.sum === b.sum && a.cells.length === b.cells.length;

export function valueAt(m, p, r, c) {  // the number a cell stands for (−Infinity for a masked cell)
  const code = m.cells[(p * m.meta.rows + r) * m.meta.cols + c];
  if (m.bpc === 4) return code;
  if (m.meta.kind === "weights") return code / (m.top - 1);
  if (code === m.top) return -Infinity;
  const [lo, hi] = m.meta.bounds[p];
  return lo + (code / (m.top - 1)) * (hi > lo ? hi - lo : 1);
}
