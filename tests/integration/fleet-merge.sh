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
        # Whole intervals inside the time both hosts ran, and no others.
        if rec["wall_start_ns"] >= window[0] and rec["wall_end_ns"] <= window[1]:
            count += rec["ops"]["read"]["count"]
read = merged["workloads"][0]["ops"]["read"]
if read["count"] != count:
    sys.exit(f"merged count {read['count']}, the overlapping intervals hold {count}")
# Two hosts at 800 reads/s each: 1600/s together.
if abs(read["rate_achieved"] - 1600) > 16:
    sys.exit(f"merged rate {read['rate_achieved']}/s, expected 1600/s")
print(f"merged {read['count']} reads over {overlap:.2f} s of overlap: {read['rate_achieved']:.1f}/s")
EOF
head -1 "$WORK/merged.csv" | grep -q '^workload,op,start_s' || fail "merge --format csv: no header"
rc=0
"$SOAKCTL" merge "$WORK/state-a/fleet" "$WORK/nonexistent" >/dev/null 2>"$WORK/err.txt" || rc=$?
((rc != 0)) && grep -q 'cannot read' "$WORK/err.txt" || fail "merge of a missing run: rc $rc, $(cat "$WORK/err.txt")"
note "ok"
