// One colour scale per kind of matrix (the kinds of attnviz/draw/heatmap_payload.py SCALE_KINDS), its colours from
// attnviz/draw/palette.py (their one home, where a test checks them under simulated colour-vision deficiencies):
//   weights    viridis over the panel's range (0..1, or 0..its own largest weight)
//   signed     RdBu reversed, centred at 0: blue < 0 < red
//   magnitude  the signed map's upper half, white at 0: |x| gets the colour a signed map gives x > 0, so a |Δ| map
//              and the Δ map it came from agree
//   mask       no scale, two colours: 0 (may attend) and −∞ (masked)
// −∞ is grey in every kind that can hold it (signed scores S″ and a mask's M), so "grey = masked" holds app-wide.
import { PALETTE } from "./palette.js";

const rgbOf = (hex) => [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
const MASKED = rgbOf(PALETTE.masked);  // −∞: grey
const MAY_ATTEND = rgbOf(PALETTE.may_attend);  // a mask's 0: green, darker than the grey so the two differ in print too
export const SWATCHES = { masked: MASKED, may_attend: MAY_ATTEND };  // a legend swatch's colour name -> its colour

function lut(stops) {  // 256 RGB entries linearly interpolated between the stops
  const rgb = stops.map(rgbOf);
  const out = new Uint8Array(256 * 3);
  for (let i = 0; i < 256; i++) {
    const t = (i / 255) * (rgb.length - 1), k = Math.min(Math.floor(t), rgb.length - 2), f = t - k;
    for (let c = 0; c < 3; c++) out[i * 3 + c] = Math.round(rgb[k][c] * (1 - f) + rgb[k + 1][c] * f);
  }
  return out;
}
export const LUTS = { weights: lut(PALETTE.weights), signed: lut(PALETTE.signed), magnitude: lut(PALETTE.magnitude) };  // a mask has none
// the same colours as one RGBA word each, for writing a pixel in one store (ImageData is little-endian RGBA)
const rgba = (r, g, b) => (r | (g << 8) | (b << 16) | (255 << 24)) >>> 0;
const WORDS = Object.fromEntries(Object.entries(LUTS).map(([k, t]) =>
  [k, Uint32Array.from({ length: 256 }, (_, i) => rgba(t[i * 3], t[i * 3 + 1], t[i * 3 + 2]))]));
const MASKED_WORD = rgba(...MASKED), MAY_ATTEND_WORD = rgba(...MAY_ATTEND);
export const cssColour = (rgb) => `rgb(${rgb.join(",")})`;

// code -> the RGBA word of panel p's cell with that code. Cell codes map linearly onto the panel's colour range
// (value = lo + code · step); every kind but weights reserves the top code (float32: −∞ itself) for a masked cell.
export function cellColour(m, p) {
  const { kind } = m.meta, top = m.top, words = WORDS[kind];
  if (kind === "mask") return (code) => (code === top ? MASKED_WORD : MAY_ATTEND_WORD);
  const [clo, chi] = m.meta.ranges[p], span = chi > clo ? chi - clo : 1;
  let lo = 0, step = 1 / (top - 1);
  if (m.bpc === 4) step = 1;  // float32: the value itself
  else if (kind !== "weights") { const [blo, bhi] = m.meta.bounds[p]; lo = blo; step = (bhi > blo ? bhi - blo : 1) / (top - 1); }
  const a = (lo - clo) / span * 255, b = step / span * 255;  // colour index = a + code · b
  const masks = kind !== "weights";
  return (code) => (masks && code === top ? MASKED_WORD : words[Math.max(0, Math.min(255, Math.round(a + code * b)))]);
}

// the colour a value's printed text needs to be read on its cell (t: where the value sits in the colour range, 0..1)
export function inkOn(kind, v, t) {
  if (v === -Infinity) return "#222";
  if (kind === "weights") return t > 0.6 ? "#111" : "#fff";
  if (kind === "magnitude") return t > 0.6 ? "#fff" : "#111";
  if (kind === "mask") return "#fff";
  return Math.abs(t - 0.5) > 0.3 ? "#fff" : "#111";
}
