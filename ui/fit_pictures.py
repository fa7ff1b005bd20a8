"""Figures of pictures drawn without their empty bottom: a figure whose layout carries attnviz.draw.plotting's
PICTURES_AT_TOP holds pictures that keep their shape, each from the top of its room, at a fixed height. On a phone
they are far narrower than on a desk, so far shorter, and most of that height was blank: 140 px between Attention as
a layer's five pictures and their caption at 390 px. Once plotly has drawn such a figure (and again at each redraw, a
new width among them), its chart is cut just under its lowest picture (a data attribute and a rule for its height:
Streamlit sets the chart's own style attribute again when it draws); on a desk, where the pictures fill the height,
nothing changes. Plotly's own numbers are read (each y axis's offset and length in pixels), not the page's layout.
"""

from __future__ import annotations

import json

from attnviz.draw.plotting import PICTURES_AT_TOP

FIT_PICTURES = """<script>
(() => {
  const doc = window.parent ? window.parent.document : document;
  const win = doc.defaultView;
  if (win.__attnvizFitPictures) return;
  win.__attnvizFitPictures = true;
  const MARK = MARK_JSON;
  // a rule per height in a style of its own, not the chart's style attribute: Streamlit (React) sets that again
  const style = doc.head.appendChild(doc.createElement('style')), heights = new Set();
  const marked = (gd) => { const m = gd.layout && gd.layout.meta;
    return !!m && Object.keys(MARK).every(k => m[k] === MARK[k]); };
  const fit = (gd) => {
    const chart = gd.closest('[data-testid="stPlotlyChart"]'), layout = gd._fullLayout;
    if (!chart || !layout || !marked(gd)) return;
    const bottoms = Object.keys(layout).filter(k => /^yaxis\\d*$/.test(k))
      .map(k => layout[k]._offset + layout[k]._length).filter(Number.isFinite);
    const used = Math.ceil(Math.max(...bottoms)) + 4;  // the lowest picture's bottom edge, and its border
    const width = String(Math.round(layout.width));
    if (chart.dataset.attnvizCut && chart.dataset.attnvizWidth !== width) {  // a new width: drawn whole, then cut
      delete chart.dataset.attnvizCut;
      return;
    }
    // Streamlit draws a chart to the height of the element around it: once cut, the chart is drawn at the cut height
    // (its pictures then fill it) and stays cut; a chart whose pictures fill its height is not cut
    if (!bottoms.length || used >= layout.height) return;
    chart.dataset.attnvizCut = used;
    chart.dataset.attnvizWidth = width;
    if (!heights.has(used)) {
      heights.add(used);
      style.textContent += `[data-testid="stElementContainer"]:has(> [data-testid="stFullScreenFrame"] > `
        + `[data-attnviz-cut="${used}"]) { height: ${used}px !important; flex: 0 0 ${used}px !important;`
        + ` overflow: hidden; }\n`;
    }
  };
  const watched = new WeakSet();
  const look = () => {
    for (const gd of doc.querySelectorAll('.js-plotly-plot')) {
      if (watched.has(gd) || !gd.on) continue;
      watched.add(gd);
      gd.on('plotly_afterplot', () => fit(gd));
      fit(gd);
    }
  };
  let pending = false;
  new win.MutationObserver(() => { if (!pending) { pending = true;
    win.requestAnimationFrame(() => { pending = false; look(); }); } }).observe(doc.body, {childList: true, subtree: true});
  look();
})();
</script>""".replace("MARK_JSON", json.dumps(PICTURES_AT_TOP))
