// The Jupyter host (anywidget: JupyterLab, Notebook 7, VS Code, Colab): the widget's `document` traitlet holds the
// bytes of attnviz/notebook/document.py; a click is sent back to Python as the `selection` traitlet.
import { startViewer } from "./viewer.js";

// anywidget hands bytes over as a DataView (older front ends: an ArrayBuffer or a typed array)
function bytesOf(b) {
  if (b instanceof Uint8Array) return b;
  if (ArrayBuffer.isView(b)) return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  return new Uint8Array(b);
}

export default {
  render({ model, el }) {
    const draw = () => startViewer(el, bytesOf(model.get("document")), (cell) => {
      model.set("selection", cell);
      model.save_changes();
    });
    draw();
    model.on("change:document", draw);
    return () => model.off("change:document", draw);
  },
};
