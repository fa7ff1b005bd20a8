// Numbers as the heatmap prints them: in a cell, in the hover. Legend ticks come ready-made in the payload.

export const MINUS_INF = "−∞";

export function numberText(v, digits) {  // "−0.21", "−∞"; a value that rounds to zero reads "0.00", never "−0.00"
  if (v === -Infinity) return MINUS_INF;
  const text = Math.abs(v).toFixed(digits);
  return (v < 0 && Number(text) !== 0 ? "−" : "") + text;
}

// a value printed in its cell; a mask's cells are exactly 0 or −∞, and "0.00" would suggest a rounded number
export const cellText = (v, kind) => (kind === "mask" && v === 0 ? "0" : numberText(v, 2));

export function hoverText(v, m) {  // a value in the hover, to what its bytes hold: uint8 weights 2 decimals, the rest 3
  return numberText(v, m.bpc === 1 && m.meta.kind === "weights" ? 2 : 3);
}
