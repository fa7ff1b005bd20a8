// DOM helpers shared by every part. Token labels are typed by students: text reaches the page only through
// textContent, never innerHTML (components v2 runs in the page itself, not in a sandboxed iframe).

export function el(tag, cls, parent, text) {  // a new element, classed, filled with text, appended to parent
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// parent's own child of this class, or null. Not querySelector(":scope > …"): Streamlit's parent is a shadow
// root, where :scope matches nothing, and every update then added one more heatmap below the last.
export const child = (parent, cls) => [...parent.children].find((e) => e.classList.contains(cls)) || null;
