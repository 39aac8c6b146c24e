#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks a DOM that headless Chromium dumped of soakctl report --html
against the run's dump (soakctl dump --format json):

  report_dom.py DOM DUMP_JSON WORKLOADS [--extras] [--js]

  - the verdict (#verdict, data-verdict PASS or FAIL, shown);
  - per workload a section with its panels: for every op a latency, a
    throughput and a spectrum chart (role=img, a title and desc), each
    series a path with points;
  - the table's numbers (td[data-k]) against the dump's: count, errors and
    missed exactly, p50/p99/p99.9/max latency to the printed precision;
  - with --extras, the hand-made fields of report_extra.py: every nonzero
    verify class, the host panels, the drift alarm;
  - with --kernel (the run's log has block-layer series), the kernel
    chart beside every read op's latency;
  - with --tcp WORKLOAD (the log has TCP series), the kernel's smoothed
    RTT beside every op of that workload;
  - with --js, the button the optional script adds; without, none (the
    page was loaded with JavaScript off)."""
import json
import sys
from html.parser import HTMLParser


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements = []      # (tag, attrs)
        self.data_k = {}        # data-k -> text
        self.text = []
        self._open_k = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.elements.append((tag, a))
        if "data-k" in a:
            self._open_k = a["data-k"]
            self.data_k[self._open_k] = ""

    def handle_endtag(self, tag):
        if tag in ("td", "span"):
            self._open_k = None

    def handle_data(self, data):
        self.text.append(data)
        if self._open_k:
            self.data_k[self._open_k] += data


dom_path, dump_path, workloads = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
extras, js, kernel = "--extras" in sys.argv, "--js" in sys.argv, "--kernel" in sys.argv
tcp = sys.argv[sys.argv.index("--tcp") + 1] if "--tcp" in sys.argv else None
dom = Dom()
dom.feed(open(dom_path, encoding="utf-8").read())
dump = json.load(open(dump_path))
text = " ".join(dom.text)
problems = []

verdict = [a for t, a in dom.elements if a.get("id") == "verdict"]
if not verdict or verdict[0].get("data-verdict") not in ("PASS", "FAIL", "INCONCLUSIVE"):
    problems.append(f"no verdict section: {verdict}")
elif verdict[0]["data-verdict"] not in text:
    problems.append("the verdict word is not shown")

ids = {a.get("id"): (t, a) for t, a in dom.elements if a.get("id")}
paths = {a.get("data-series"): a.get("d", "") for t, a in dom.elements if t == "path"}
checked = 0
for w in dump["workloads"]:
    name = w["name"]
    if name not in workloads:
        continue
    if not any(t == "section" and a.get("data-workload") == name for t, a in dom.elements):
        problems.append(f"no section for workload {name}")
    for op, o in w["ops"].items():
        if not (o.get("count") or o.get("errors") or o.get("missed") or o.get("rate_target")):
            # Never scheduled (not in the mix): no row, no panels.
            if any(k.startswith(f"{name}/{op}/") for k in dom.data_k) or f"lat-{name}-{op}" in ids:
                problems.append(f"{name}/{op} was never scheduled but has a row or panels")
            continue
        for chart in ("lat", "rate", "spec"):
            cid = f"{chart}-{name}-{op}"
            t, a = ids.get(cid, (None, {}))
            if t != "svg" or a.get("role") != "img" or not a.get("aria-labelledby"):
                problems.append(f"chart {cid} missing or without role/aria-labelledby")
        # An op of one interval (prefill, cleanup) is a point: one tick.
        for s in ("p50", "p99", "p999", "max", "ops_per_s", "spectrum"):
            d = paths.get(f"{name}/{op}/{s}", "")
            if d.count("L") < (2 if o.get("count", 0) > 1000 else 1) and o.get("count"):
                problems.append(f"series {name}/{op}/{s} has no line: {d[:60]!r}")
        for key in ("count", "errors", "missed"):
            got = dom.data_k.get(f"{name}/{op}/{key}")
            if got is None or int(got) != int(o.get(key, 0)):
                problems.append(f"{name}/{op}/{key}: table {got}, dump {o.get(key, 0)}")
            checked += 1
        for key, dk in (("p50", "p50_us"), ("p99", "p99_us"), ("p999", "p999_us"), ("max", "max_us")):
            got = dom.data_k.get(f"{name}/{op}/{dk}")
            want = o["latency_us"][key]
            if got is None or abs(float(got) - want) > 0.0015:
                problems.append(f"{name}/{op}/{dk}: table {got}, dump {want}")
            checked += 1
        if kernel and "read" in op:
            d = paths.get(f"{name}/{op}/kernel.blk.read.p99", "")
            if ids.get(f"kern-{name}-{op}", (None,))[0] != "svg" or d.count("L") < 2:
                problems.append(f"{name}/{op}: no kernel block series beside it ({d[:40]!r})")
        if tcp == name:
            d = paths.get(f"{name}/{op}/kernel.tcp.srtt.p99", "")
            if d.count("L") < 2:
                problems.append(f"{name}/{op}: no TCP series beside it ({d[:40]!r})")
        if dom.data_k.get(f"{name}/{op}/verdict") not in ("PASS", "FAIL", "not judged"):
            problems.append(f"{name}/{op}: no verdict cell")

if extras:
    for w in workloads:
        first = next(iter(next(x for x in dump["workloads"] if x["name"] == w)["ops"]))
        for cls, n in (("corrupt", 2), ("misdirected", 1), ("uncertain", 3), ("list_extra", 4)):
            got = dom.data_k.get(f"{w}/{first}/verify.{cls}")
            if got != str(n):
                problems.append(f"{w}/{first}: verify {cls} shows {got}, wanted {n}")
        if dom.data_k.get(f"{w}/{first}/verify.stale") is not None:
            problems.append(f"{w}/{first}: a zero verify class is shown")
    for cid in ("host-cpu", "host-psi", "host-mem", "host-util", "host-queue", "host-rx", "host-tcp"):
        if ids.get(cid, (None,))[0] != "svg":
            problems.append(f"no host panel {cid}")
    if paths.get("host/cpu.iowait", "").count("L") < 2:
        problems.append("host/cpu.iowait has no line")
    if "p99 rose 40% over the first hour's" not in text or "drift of p99" not in text:
        problems.append("the drift alarm is not shown as a drift of p99")
    if "hunter2" in open(dom_path, encoding="utf-8").read():
        problems.append("a secret of the configuration is shown")

has_button = "js-tools" in ids
if js != has_button:
    problems.append(f"JavaScript {'on' if js else 'off'} but the script's button is "
                    f"{'there' if has_button else 'absent'}")
print(f"# DOM {dom_path}: verdict {verdict[0].get('data-verdict') if verdict else None}, "
      f"{checked} numbers checked against the dump")
if problems:
    sys.exit("\n".join(problems))
