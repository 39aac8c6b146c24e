#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A fleet of two: two soakd instances with their own state directories run
# the same workload side by side, the second started a little later, and
# `soakctl merge` combines their runs exactly: counts add, histograms merge,
# and only the time both were running counts.
source "$(dirname "$0")/lib.sh"
need_cmd python3

for host in a b; do
	cat >"$WORK/$host.json" <<EOF
{"run": {"name": "fleet", "duration": "6s", "interval": "500ms", "on_finish": "idle",
         "socket": "$WORK/$host.sock"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern",
                "targets": ["$WORK/$host.dat"], "file_size": "16MiB", "read_pct": 100,
                "block_size": "4KiB", "queue_depth": 8, "rate": 800}]}
EOF
done
spawn "$WORK/a.log" "$SOAKD" --config "$WORK/a.json" --state-dir "$WORK/state-a" --no-table
a_answers() { "$SOAKCTL" --socket "$WORK/a.sock" status --json >/dev/null 2>&1; }
wait_until 15 "host a" a_answers
sleep 1.2 # host b starts later: the runs overlap for about 4.8 of their 6 s
spawn "$WORK/b.log" "$SOAKD" --config "$WORK/b.json" --state-dir "$WORK/state-b" --no-table
b_answers() { "$SOAKCTL" --socket "$WORK/b.sock" status --json >/dev/null 2>&1; }
wait_until 15 "host b" b_answers
finished() {
	"$SOAKCTL" --socket "$WORK/$1.sock" status --json | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["workloads"][0]["state"] == "finished" else 1)'
}
wait_until 20 "host a to finish" finished a
wait_until 20 "host b to finish" finished b

"$SOAKCTL" merge "$WORK/state-a/fleet" "$WORK/state-b/fleet" >"$WORK/merged.json" ||
	fail "merge failed"
"$SOAKCTL" merge --format csv "$WORK/state-a/fleet" "$WORK/state-b/fleet" >"$WORK/merged.csv" ||
	fail "merge --format csv failed"
python3 - "$WORK/merged.json" "$WORK/state-a/fleet/intervals.log" "$WORK/state-b/fleet/intervals.log" <<'EOF' || fail "merge"
import json, sys
merged = json.load(open(sys.argv[1]))
window = (merged["merged"]["wall_start_ns"], merged["merged"]["wall_end_ns"])
overlap = merged["merged"]["overlap_s"]
if not 3.5 <= overlap <= 5.5:
    sys.exit(f"overlap {overlap} s, expected about 4.8 s")
count = 0
for path in sys.argv[2:]:
    for line in open(path).read().splitlines()[1:]:
        rec = json.loads(line.split(" ", 1)[1])
        if rec["type"] != "interval":
            continue
        # Whole intervals inside the time both hosts ran (but for a quarter
        # of an interval: hosts' ticks differ by ms), and no others.
        slack = (rec["wall_end_ns"] - rec["wall_start_ns"]) // 4
        if rec["wall_start_ns"] + slack >= window[0] and rec["wall_end_ns"] - slack <= window[1]:
            count += rec["ops"]["read"]["count"]
read = merged["workloads"][0]["ops"]["read"]
if read["count"] != count:
    sys.exit(f"merged count {read['count']}, the overlapping intervals hold {count}")
# Two hosts at 800 reads/s each: 1600/s together.
if abs(read["rate_achieved"] - 1600) > 16:
    sys.exit(f"merged rate {read['rate_achieved']}/s, expected 1600/s")
print(f"merged {read['count']} reads over {overlap:.2f} s of overlap: {read['rate_achieved']:.1f}/s")
EOF

# The merged latency histograms are the union of the hosts' overlapping
# intervals, bucket for bucket, and its percentiles are that union's
# (README: the value of rank ceil(p/100 * count), its bucket's midpoint
# clamped to the recorded min and max).  Decoded here, not by soakd.
python3 - "$WORK/merged.json" "$WORK/state-a/fleet/intervals.log" "$WORK/state-b/fleet/intervals.log" <<'EOF' || fail "merged histograms"
import base64, json, math, sys

def decode(text):
    """soakd's histogram: version 1, LEB128 count, sum, min, max, clamped,
    then (gap, count) for each non-empty bucket (common/hist.h)."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    assert raw[0] == 1, f"histogram format version {raw[0]}"
    pos, values = 1, []
    while pos < len(raw):
        value = shift = 0
        while True:
            byte = raw[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        values.append(value)
    count, total, low, high, clamped = values[:5]
    buckets, b = {}, 0
    for gap, n in zip(values[5::2], values[6::2]):
        b += gap
        buckets[b] = n
        b += 1
    return {"count": count, "sum": total, "min": low, "max": high, "clamped": clamped,
            "buckets": buckets}

def union(hists):
    out = {"count": 0, "sum": 0, "min": 2**64 - 1, "max": 0, "clamped": 0, "buckets": {}}
    for h in hists:
        for k in ("count", "sum", "clamped"):
            out[k] += h[k]
        out["min"], out["max"] = min(out["min"], h["min"]), max(out["max"], h["max"])
        for b, n in h["buckets"].items():
            out["buckets"][b] = out["buckets"].get(b, 0) + n
    return out

def bucket_range(b):
    if b < 256:
        return b, b
    shift = b // 128 - 1
    low = (b % 128 + 128) << shift
    return low, low + (1 << shift) - 1

def percentile(h, p):
    if p >= 100:
        return h["max"]
    rank = max(1, min(h["count"], math.ceil(p / 100 * h["count"] * (1 - 1e-12))))
    seen = 0
    for b in sorted(h["buckets"]):
        seen += h["buckets"][b]
        if seen >= rank:
            break
    low, high = bucket_range(b)
    return min(max(low + (high - low) // 2, h["min"]), h["max"])

merged = json.load(open(sys.argv[1]))
window = (merged["merged"]["wall_start_ns"], merged["merged"]["wall_end_ns"])
hosts = {"latency": [], "service": []}
for path in sys.argv[2:]:
    for line in open(path).read().splitlines()[1:]:
        rec = json.loads(line.split(" ", 1)[1])
        slack = (rec.get("wall_end_ns", 0) - rec.get("wall_start_ns", 0)) // 4
        if rec["type"] == "interval" and rec["wall_start_ns"] + slack >= window[0] and \
                rec["wall_end_ns"] - slack <= window[1]:
            for kind in hosts:
                if kind in rec["ops"]["read"]:
                    hosts[kind].append(decode(rec["ops"]["read"][kind]))
read = merged["workloads"][0]["ops"]["read"]
want = union(hosts["latency"])
if "latency_hist" not in read:
    sys.exit(f"the merged read op has no latency_hist: {sorted(read)}")
got = decode(read["latency_hist"])
if got != want:
    diff = {k: (got[k], want[k]) for k in got if k != "buckets" and got[k] != want[k]}
    wrong = sum(1 for b in set(got["buckets"]) | set(want["buckets"])
                if got["buckets"].get(b) != want["buckets"].get(b))
    sys.exit(f"merged latency histogram is not the union of {len(hosts['latency'])} "
             f"intervals: {diff}, {wrong} buckets differ")
problems = []
for kind, hists in (("latency_us", want), ("service_us", union(hosts["service"]))):
    for name, p in (("p50", 50), ("p90", 90), ("p99", 99), ("p999", 99.9), ("max", 100)):
        expect = percentile(hists, p) / 1e3
        if abs(read[kind][name] - expect) > 1e-6 * max(expect, 1):
            problems.append(f"{kind}.{name} {read[kind][name]}, the union's is {expect}")
if problems:
    sys.exit("\n".join(problems))
print(f"merged latency: {want['count']} values in {len(want['buckets'])} buckets, the union of "
      f"{len(hosts['latency'])} intervals; p99 {read['latency_us']['p99']} us")
EOF
# Hosts started by start_at tick a few ms apart: their intervals line up
# all the same.  Host a's log with every wall time 3 ms later is such a
# host; merged with a, every interval of a counts twice, edges included.
python3 - "$WORK/state-a/fleet/intervals.log" "$WORK/shifted.log" <<'EOF' || fail "shifted copy"
import json, sys, zlib
src, dst = open(sys.argv[1], "rb").read().splitlines(), []
for line in src[1:]:
    rec = json.loads(line.split(b" ", 1)[1])
    for key in ("wall_start_ns", "wall_end_ns", "wall_ns"):
        if key in rec:
            rec[key] += 3000000
    text = json.dumps(rec, separators=(",", ":")).encode()
    dst.append(b"%08x %s" % (zlib.crc32(text), text))
open(sys.argv[2], "wb").write(b"\n".join([src[0]] + dst) + b"\n")
EOF
"$SOAKCTL" merge "$WORK/state-a/fleet" "$WORK/shifted.log" >"$WORK/shifted.json" ||
	fail "merge with a shifted copy failed"
python3 - "$WORK/shifted.json" "$WORK/state-a/fleet/intervals.log" <<'EOF' || fail "merge of hosts ms apart"
import json, sys
merged = json.load(open(sys.argv[1]))
count = 0
for line in open(sys.argv[2]).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec["type"] == "interval":
        count += rec["ops"]["read"]["count"]
got = merged["workloads"][0]["ops"]["read"]["count"]
if got != 2 * count:
    sys.exit(f"merged {got} reads of two hosts 3 ms apart, each ran {count}: edge intervals dropped")
EOF
# The same run twice (or a copy of its directory) is refused: it would
# count twice.
cp -r "$WORK/state-a/fleet" "$WORK/copy-of-a"
for second in "$WORK/state-a/fleet" "$WORK/copy-of-a"; do
	"$SOAKCTL" merge "$WORK/state-a/fleet" "$second" >"$WORK/twice.json" 2>"$WORK/twice.err" &&
		fail "merge took $second beside the same run"
	grep -q "are the same run" "$WORK/twice.err" ||
		fail "merge of a run with $second said: $(cat "$WORK/twice.err")"
done
head -1 "$WORK/merged.csv" | grep -q '^workload,op,start_s' || fail "merge --format csv: no header"
# The CSV's rows are the fleet's: one a second of the overlap, in time
# order, each the hosts' intervals merged (their counts add up to the
# merged total); they were each host's rows, one host's after the other's.
python3 - "$WORK/merged.csv" "$WORK/merged.json" <<'EOF' || fail "merge --format csv: not the fleet's rows"
import csv, json, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["op"] == "read"]
merged = json.load(open(sys.argv[2]))
want = merged["workloads"][0]["ops"]["read"]["count"]
starts = [float(r["start_s"]) for r in rows]
if starts != sorted(set(starts)):
    sys.exit(f"rows not one a slice in time order: {starts}")
got = sum(int(r["count"]) for r in rows)
if got != want:
    sys.exit(f"the rows hold {got} reads, the merged total is {want}")
rates = [float(r["rate_achieved"]) for r in rows]
print(f"# merged CSV: {len(rows)} rows, {got} reads, rates {min(rates):.0f}-{max(rates):.0f}/s")
if min(rates) < 1400:
    sys.exit(f"a row's rate is one host's, not the fleet's 1600/s: {rates}")
EOF
rc=0
"$SOAKCTL" merge "$WORK/state-a/fleet" "$WORK/nonexistent" >/dev/null 2>"$WORK/err.txt" || rc=$?
((rc != 0)) && grep -q 'cannot read' "$WORK/err.txt" || fail "merge of a missing run: rc $rc, $(cat "$WORK/err.txt")"
note "ok"
