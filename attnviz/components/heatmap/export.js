// "Download PNG": the heatmap as drawn, with its titles, labels and legend, at twice the screen's size.
import { SWATCHES, cssColour } from "./scales.js";

export function downloadPng(s) {
  const { meta } = s.model, lay = s.lay, scale = 2;
  const out = document.createElement("canvas");
  // two lines: the bar with its ticks and swatches, and the title where they leave no room; then the settings the
  // weights were computed with, where the page gave them (the file leaves its controls behind)
  const caption = meta.caption ? (meta.titles.length > 1 && meta.label ? `${meta.label} · ` : "") + meta.caption : "";
  const legendH = 56 + (caption ? 20 : 0);
  out.width = lay.width * scale; out.height = (lay.height + legendH) * scale;
  const ctx = out.getContext("2d");
  ctx.scale(scale, scale);
  ctx.fillStyle = "#ffffff"; ctx.fillRect(0, 0, lay.width, lay.height + legendH);
  ctx.drawImage(s.canvas, 0, 0, lay.width, lay.height);
  ctx.fillStyle = "#222"; ctx.font = "11px sans-serif"; ctx.textBaseline = "middle";
  for (const d of s.labels.children) {  // the DOM labels, redrawn as canvas text where the page shows them
    const x = parseFloat(d.style.left || "0"), y = parseFloat(d.style.top || "0");
    if (d.classList.contains("avhm-title")) { ctx.textAlign = "center"; ctx.fillText(d.textContent, x + parseFloat(d.style.width) / 2, y + 9); }
    else if (d.classList.contains("avhm-row")) { ctx.textAlign = "right"; ctx.fillText(d.textContent, lay.rowLabW - 6, y, lay.rowLabW - 6); }
    else { ctx.save(); ctx.translate(x, y); ctx.rotate(-Math.PI / 2); ctx.textAlign = "right"; ctx.fillText(d.textContent, 0, 0, lay.colLabH - 6); ctx.restore(); }
  }
  legendOnto(ctx, s, 0, lay.height + 6, lay.width);
  if (caption) { ctx.fillStyle = "#222"; ctx.textAlign = "left"; ctx.fillText(caption, 0, lay.height + 66, lay.width); }
  out.toBlob((blob) => {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = (meta.titles.length === 1 ? meta.titles[0] : meta.label || "heatmap").replace(/[^\w.-]+/g, "_")
      .slice(0, 60) + ".png";
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }, "image/png");
}

function legendOnto(ctx, s, x, y, width) {  // the legend as the page shows it: bar (where the kind has one), swatches, title
  const { ticks, swatches, title } = s.model.meta.legend;
  ctx.textAlign = "left";
  if (ticks.length) {
    ctx.drawImage(s.legend.querySelector("canvas"), x, y, 200, 10);
    ticks.forEach((t, i) => { ctx.textAlign = ["left", "center", "right"][Math.min(i, 2)]; ctx.fillText(t, x + i * 100, y + 18); });
    x += 210;
  }
  ctx.textAlign = "left";
  for (const [name, text] of swatches) {
    ctx.fillStyle = cssColour(SWATCHES[name]); ctx.fillRect(x, y, 10, 10);
    ctx.fillStyle = "#222"; ctx.fillText(text, x + 14, y + 5);
    x += 22 + ctx.measureText(text).width;
  }
  if (x + ctx.measureText(title).width > width) { x = 0; y += 34; }  // below the ticks, not cut off at the edge
  ctx.fillText(title, x, y + 5);
}
