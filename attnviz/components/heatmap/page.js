// The standalone page's host (attnviz.save_html): the document sits in the page as base64 text, so the file opens
// with no network and no server.
import { startViewer } from "./viewer.js";

function embedded() {  // the page's document bytes
  const text = document.getElementById("attnviz-document").textContent.trim();
  const binary = atob(text), u8 = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) u8[i] = binary.charCodeAt(i);
  return u8;
}

const started = performance.now();
startViewer(document.getElementById("attnviz-root"), embedded(), null);
window.attnvizPage = { startedAt: started, readMs: performance.now() - started };
