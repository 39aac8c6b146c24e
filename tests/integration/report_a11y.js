// SPDX-License-Identifier: GPL-2.0-only
// Evaluated in the loaded HTML report by cdp_page.py --eval (report_a11y.py
// judges what it returns): for every piece of visible text its colour, the
// background it is drawn on (the nearest ancestor with an opaque one) and
// whether it is large; for every SVG its text fills against the chart's
// background, its series' strokes against the plot's fill, and its text
// alternative.  Colours as Chromium computes them, so the CSS cascade,
// var() and classes are the browser's, not a guess.
(() => {
  const rgb = (s) => {
    const m = /rgba?\(([^)]*)\)/.exec(s || "");
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter((x) => x).map(parseFloat);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const background = (el) => {
    for (; el; el = el.parentElement) {
      const c = rgb(getComputedStyle(el).backgroundColor);
      if (c && c.a > 0) return c;
    }
    return { r: 255, g: 255, b: 255, a: 1 };   // the canvas
  };
  const large = (st) => {
    const px = parseFloat(st.fontSize), bold = parseInt(st.fontWeight, 10) >= 700;
    return px >= 24 || (bold && px >= 18.66);
  };
  const where = (el) => {
    const parts = [];
    for (let e = el; e && parts.length < 4; e = e.parentElement)
      parts.unshift(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
                    (e.getAttribute("class") ? "." + e.getAttribute("class").split(" ").join(".") : ""));
    return parts.join(" > ");
  };
  const text = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.data.trim() || !el || el.closest("svg, script, style, title, desc")) continue;
    if (!el.getClientRects().length) continue;   // not shown
    const st = getComputedStyle(el);
    text.push({ where: where(el), text: n.data.trim().slice(0, 40), fg: rgb(st.color),
                bg: background(el), large: large(st) });
  }
  const svgs = [];
  for (const svg of document.querySelectorAll("svg")) {
    const plot = svg.querySelector("rect.plot");
    const plotFill = plot ? rgb(getComputedStyle(plot).fill) : background(svg);
    const bg = background(svg);
    const item = { where: where(svg), id: svg.id, chart: svg.classList.contains("chart"),
                   title: (svg.querySelector(":scope > title") || {}).textContent || "",
                   label: svg.getAttribute("aria-label") || "",
                   labelledby: svg.getAttribute("aria-labelledby") || "",
                   desc: (svg.querySelector(":scope > desc") || {}).textContent || "",
                   plot: plotFill, bg: bg, text: [], strokes: [] };
    item.labelled = item.labelledby.split(/\s+/).filter((x) => x)
      .map((id) => (document.getElementById(id) || {}).textContent || "").join(" ");
    for (const t of svg.querySelectorAll("text")) {
      const st = getComputedStyle(t);
      item.text.push({ text: t.textContent.slice(0, 40), fg: rgb(st.fill), large: large(st) });
    }
    for (const p of svg.querySelectorAll("path.series, line[stroke]")) {
      item.strokes.push({ what: p.getAttribute("data-series") || "legend or mark",
                          stroke: rgb(getComputedStyle(p).stroke) });
    }
    svgs.push(item);
  }
  return { text, svgs };
})()
