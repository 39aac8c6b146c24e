#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Judges what report_a11y.js found in a loaded report by WCAG 2.x:
text at least 4.5:1 against its background (3:1 when large: 24 px, or
18.66 px bold), SVG text likewise against the chart's background and the
plot's fill, every series line at least 3:1 against the plot (a graphical
object, WCAG 1.4.11), every SVG named (a <title> or aria-label) and every
chart with a text alternative that holds its numbers.

  report_a11y.py FOUND.json [--no-charts]   (a page without SVG: cmp's)"""
import json
import re
import sys


def lum(c):
    def f(v):
        v /= 255
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * f(c["r"]) + 0.7152 * f(c["g"]) + 0.0722 * f(c["b"])


def ratio(a, b):
    x, y = lum(a), lum(b)
    return (max(x, y) + 0.05) / (min(x, y) + 0.05)


def hexc(c):
    return "#%02x%02x%02x" % (round(c["r"]), round(c["g"]), round(c["b"]))


found = json.load(open(sys.argv[1]))
bad = []
if len(found["text"]) < 20 or (not found["svgs"] and "--no-charts" not in sys.argv):
    sys.exit(f"too little found to judge: {len(found['text'])} texts, {len(found['svgs'])} SVGs")
for t in found["text"]:
    need = 3 if t["large"] else 4.5
    r = ratio(t["fg"], t["bg"])
    if r < need:
        bad.append(f"text {t['text']!r} at {t['where']}: {hexc(t['fg'])} on {hexc(t['bg'])} "
                   f"is {r:.2f}:1, under {need}:1")
charts = 0
for s in found["svgs"]:
    name = s["title"].strip() or s["label"].strip()
    if not name:
        bad.append(f"SVG {s['where']}: no <title> and no aria-label")
    if s["chart"]:
        charts += 1
        alt = s["desc"] + " " + s["labelled"]
        if not s["desc"].strip() or s["desc"].strip() not in s["labelled"]:
            bad.append(f"chart {s['id']}: its <desc> is not its accessible description")
        if not re.search(r"\d", s["desc"].split(".", 1)[-1]):
            bad.append(f"chart {s['id']}: its description has no numbers: {s['desc']!r}")
    for t in s["text"]:
        need = 3 if t["large"] else 4.5
        for under in (s["bg"], s["plot"]):
            r = ratio(t["fg"], under)
            if r < need:
                bad.append(f"SVG {s['id']} text {t['text']!r}: {hexc(t['fg'])} on {hexc(under)} "
                           f"is {r:.2f}:1, under {need}:1")
    for p in s["strokes"]:
        if not p["stroke"]:
            continue
        r = ratio(p["stroke"], s["plot"])
        if r < 3:
            bad.append(f"SVG {s['id']} line {p['what']}: {hexc(p['stroke'])} on {hexc(s['plot'])} "
                       f"is {r:.2f}:1, under 3:1")
if bad:
    # Each fault once: the same colours repeat in every chart.
    seen = []
    for b in bad:
        key = re.sub(r"SVG \S+ |text '[^']*' at ", "", b)
        if key not in seen:
            seen.append(key)
            print(b, file=sys.stderr)
    sys.exit(f"{len(bad)} accessibility faults ({len(seen)} distinct)")
print(f"# accessible: {len(found['text'])} texts, {len(found['svgs'])} SVGs ({charts} charts), "
      f"every contrast within WCAG's ratios")
