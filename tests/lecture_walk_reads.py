"""What the lecture walk (tests/browser/test_browser_lecture_walk.py) reads in its pages: JS snippets, each a function
page.evaluate runs, for the projector, a follower's phone and both."""

# every figure's text as drawn: [where, text, px]. SVG text is scaled by its drawing's viewBox (the map, the line
# charts); plotly draws at 1:1; the heatmaps' words are DOM text inside their components' shadow roots.
FIGURE_TEXT = """() => {
  const out = [];
  const visible = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; };
  for (const t of document.querySelectorAll('.js-plotly-plot .main-svg text')) {
    if (!t.textContent.trim() || t.closest('.hoverlayer, .modebar') || !visible(t)) continue;
    out.push(['plotly', t.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(t).fontSize)]);
  }
  for (const svg of document.querySelectorAll('.av-tmap svg, .av-line svg')) {
    const box = svg.viewBox.baseVal, scale = box && box.width ? svg.getBoundingClientRect().width / box.width : 1;
    for (const t of svg.querySelectorAll('text')) if (t.textContent.trim() && visible(t))
      out.push(['svg', t.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(t).fontSize) * scale]);
  }
  const tables = '[class*="st-key-figure_"] :is([data-testid="stMarkdownContainer"], [data-testid="stTable"]) :is(td, th, code)';
  for (const e of document.querySelectorAll(tables))  // a table's words (a written one, a plain one), a figure's code
    if (e.textContent.trim() && visible(e) && !e.querySelector('code'))
      out.push(['table or code', e.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(e).fontSize)]);
  const words = '.st-key-lecture_class :is(table.tally th, table.tally td, table.tally caption, .chart-words)';
  for (const e of document.querySelectorAll(words))
    if (e.textContent.trim() && visible(e))  // the class's answers beside the figure: the Reveal's own words
      out.push(['class answers', e.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(e).fontSize)]);
  for (const [key, h] of Object.entries(window.attnvizHeatmaps || {}))  // numbers printed in cells (0: none)
    if (h.valuesPx && h.valuesPx()) out.push(['cell numbers', key, h.valuesPx()]);
  for (const host of document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')) {
    if (!host.shadowRoot) continue;
    for (const e of host.shadowRoot.querySelectorAll('.avhm-lab, .avhm-title')) if (e.textContent.trim() && visible(e))
      out.push(['heatmap', e.textContent.trim().slice(0, 40), parseFloat(getComputedStyle(e).fontSize)]);
  }
  return out;
}"""
# the focus figure's box on the screen, and how many tokens its heatmaps skip a label of (their label step > 1)
FOCUS_BOX = """(id) => {
  const box = document.querySelector('.st-key-figure_' + id);
  if (!box) return null;
  const r = box.getBoundingClientRect();
  const steps = [...box.querySelectorAll('[data-testid="stBidiComponentIsolated"]')].filter(h => h.shadowRoot)
    .flatMap(h => [...h.shadowRoot.querySelectorAll('[data-label-step]')])
    .map(e => [Number(e.dataset.labelStep), e.querySelectorAll('.avhm-row').length]);
  return {top: r.top, bottom: r.bottom, height: r.height, labelSteps: steps};
}"""
AT_TOP = """([id, limit]) => { const b = document.querySelector('.st-key-figure_' + id);
  const r = b && b.getBoundingClientRect(); return !!r && r.height > 0 && r.top >= 0 && r.top < limit; }"""
# what is clipped: a table that scrolls, a heatmap title cut, a chart title under a toolbar (the bar: BAR)
CLIPPED = """() => {
  const out = [];
  for (const t of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    // a table of up to 16 rows shows them all (a longer list, such as Find the head's ranking, scrolls by design)
    const s = t.querySelector('.dvn-scroller'), rows = s && s.scrollHeight / (35 * 19 / 16) - 1;
    if (s && s.getBoundingClientRect().height > 0 && s.scrollHeight > s.clientHeight + 2 && rows <= 16.5)
      out.push('table scrolls: ' + s.scrollHeight + ' > ' + s.clientHeight);
  }
  for (const [key, h] of Object.entries(window.attnvizHeatmaps || {}))  // a heatmap title cut mid-word by CSS
    for (const t of (h.titles ? h.titles() : [])) if (t.cut) out.push(`heatmap title cut: ${key}: ${t.full}`);
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const bar = gd.querySelector('.modebar'), title = gd.querySelector('.g-gtitle');
    if (!bar || !title || getComputedStyle(bar).display === 'none' || !bar.getBoundingClientRect().width) continue;
    const a = bar.getBoundingClientRect(), b = title.getBoundingClientRect();
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) out.push('toolbar over a title');
  }
  return out;
}"""
# the question before Reveal: the px of its text (the question, what it refers to, the options), its options' words,
# and whether any of its lines lies below the screen
QUESTION = """() => {
  const parts = [...document.querySelectorAll('.st-key-lecture_question .lq p, .st-key-lecture_question .lq li')];
  return {sizes: parts.map(e => parseFloat(getComputedStyle(e).fontSize)),
          options: [...document.querySelectorAll('.st-key-lecture_question .lq li')].map(e => e.innerText.trim()),
          offScreen: parts.some(e => e.getBoundingClientRect().bottom > window.innerHeight + 1)};
}"""
# the class's answers after Reveal: whether they sit in the focus figure, and their chart's top and bottom on the screen
# (a plotly chart or the projector's tally; a heatmap's labels are FIGURE_LABELS_OFF_SCREEN's, in the focus figure's
# box)
CLASS_PANEL = """(focus) => {
  const panel = document.querySelector('.st-key-lecture_class');
  if (!panel) return null;
  const chart = panel.querySelector('[data-testid="stPlotlyChart"] .main-svg, table.tally');
  const r = chart && chart.getBoundingClientRect();
  const box = focus && panel.closest('.st-key-figure_' + focus);
  const header = document.querySelector('[data-testid="stHeader"]').getBoundingClientRect().bottom;
  return {inFocus: !!box, chart: r ? [r.top, r.bottom] : null, header};
}"""
STATE = """() => ({url: location.href, running: !!document.querySelector('[data-testid="stStatusWidget"]'),
  reveal: document.querySelectorAll('.st-key-lecture_reveal button').length, focus: window.__attnvizFocus || null,
  heatmaps: Object.entries(window.attnvizHeatmaps || {}).map(([k, h]) => [k, !!h.drawn]),
  plots: [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].map(c => !!c.querySelector('.main-svg')),
  exceptions: document.querySelectorAll('[data-testid="stException"]').length})"""
# the step drawn: its bar, no run going, no predict-first question waiting (a question that only takes answers keeps
# its Reveal, which closes the answers, above the figures), every heatmap and plotly chart drawn, the focus figure
# brought up and held (ui/focus.py); true for 250 ms in a row
SETTLED = """([number, total, focus, gated]) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const ok = !!main && main.innerText.includes(`Step ${number} of ${total}`)
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && !(gated && document.querySelector('.st-key-lecture_reveal'))
    && Object.values(window.attnvizHeatmaps || {}).every(h => h.drawn)
    && [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')].every(h => h.shadowRoot
         && h.shadowRoot.childElementCount
         && (!h.shadowRoot.querySelector('.avhm') || h.shadowRoot.querySelector('.avhm[data-draws]')))
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'))
    && (!focus || (window.__attnvizFocus || {})[focus] === 'done');
  const now = performance.now();
  if (!ok) { window.__walkSettled = null; return false; }
  window.__walkSettled = window.__walkSettled || now;
  return now - window.__walkSettled >= 250;
}"""


# the lecture bar: its parts cut ("…", or wider than their box) and each part's top in the page (not the scrolled
# view) against the bottom edge of Streamlit's header: on the page's first screen, nothing of the bar is under it
BAR = """() => {
  const bar = document.querySelector('.attnviz-lecture-bar');
  if (!bar) return null;
  const header = document.querySelector('[data-testid="stHeader"]');
  const scrolled = (document.querySelector('[data-testid="stMain"]')?.scrollTop || 0) + window.scrollY;
  const students = [...document.querySelectorAll('[data-testid="stPopover"] button')]
    .find(b => b.innerText.includes('Students'));
  const parts = [bar, ...bar.children, ...(students ? [students] : [])].filter(e => e.getClientRects().length);
  return {header: header ? header.getBoundingClientRect().bottom : 0,
          tops: parts.map(e => [e === students ? 'Students' : (e.className || e.tagName).slice(0, 40),
                                e.getBoundingClientRect().top + scrolled]),
          cut: [...bar.querySelectorAll('a, span')].filter(e => e.scrollWidth > e.clientWidth + 1
                 || e.textContent.includes('\u2026')).map(e => e.textContent.trim())};
}"""
# a follower's page before Reveal, as a student could read it: its address, every link's, all of its text (hidden too:
# textContent), and whether any figure of the step is on it
STUDENT_VIEW = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  return {href: location.href, links: [...document.querySelectorAll('a[href]')].map(a => a.href),
    text: document.body.textContent.replace(/\\s+/g, ' '),
    shown: (main ? main.innerText : '').replace(/\\s+/g, ' '),
    figures: [...(main ? main.querySelectorAll('[class*="st-key-figure_"], .js-plotly-plot, [data-testid="stImage"]')
                : [])].length
      + [...document.querySelectorAll('[data-testid="stBidiComponentIsolated"]')]
          .filter(h => h.shadowRoot && h.shadowRoot.querySelector('.avhm')).length};
}"""
# the class's answers at Reveal, as drawn: their words, the projector's tally (its rows marked right), and each plotly
# chart's title, bars (their words and hatching), dashed lines and drawn words
CLASS_ANSWERS = """() => {
  const panel = document.querySelector('.st-key-lecture_class');
  if (!panel) return null;
  return {text: panel.innerText.replace(/\\s+/g, ' '),
    tally: [...panel.querySelectorAll('table.tally tr')].map(r => [r.innerText.replace(/\\s+/g, ' ').trim(),
                                                                   r.classList.contains('right')]),
    tallyCaption: panel.querySelector('table.tally caption')?.innerText || '',
    plots: [...panel.querySelectorAll('.js-plotly-plot')].map(gd => ({
      title: (gd._fullLayout && gd._fullLayout.title && gd._fullLayout.title.text) || '',
      bars: (gd._fullData || []).filter(t => t.type === 'bar').map(t => ({x: [...t.x], text: [...(t.text || [])],
        hatch: [...((t.marker && t.marker.pattern && t.marker.pattern.shape) || [])]})),
      dashed: ((gd._fullLayout && gd._fullLayout.shapes) || []).filter(s => s.line && s.line.dash === 'dash')
        .map(s => s.x0),
      words: [...gd.querySelectorAll('.main-svg text')].map(t => t.textContent)}))};
}"""
# the focus figure on a phone: its box on the screen, the header's bottom edge, and the focus script's state
IN_VIEW = """(id) => {
  const box = document.querySelector('.st-key-figure_' + id);
  const header = document.querySelector('[data-testid="stHeader"]');
  const r = box && box.getBoundingClientRect();
  return {top: r ? r.top : null, height: r ? r.height : 0, screen: window.innerHeight,
          header: header ? header.getBoundingClientRect().bottom : 0, focus: (window.__attnvizFocus || {})[id] || null};
}"""
# a follower's step drawn: its bar's step, no run going, every heatmap and plotly chart drawn; quiet for 250 ms
FOLLOWER_DRAWN = """(step) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const ok = !!main && main.innerText.includes(step)
    && document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state') === 'notRunning'
    && !document.querySelector('[data-testid="stStatusWidget"]')
    && Object.values(window.attnvizHeatmaps || {}).every(h => h.drawn)
    && [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].every(c => c.querySelector('.main-svg'));
  const now = performance.now();
  if (!ok) { window.__phoneQuiet = null; return false; }
  window.__phoneQuiet = window.__phoneQuiet || now;
  return now - window.__phoneQuiet >= 250;
}"""
