#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A frozen soakd leaves a hole, not a long record (issue 12, item 3): soakd
# is SIGSTOPped for several intervals and let go on.  Every interval of the
# run has a record of its own, none longer than an interval, one after the
# other without a gap; those nobody measured are empty, and the ones soakd
# had to fill in itself are marked "stalled".
source "$(dirname "$0")/lib.sh"
need_cmd python3

CFG="$WORK/stalled.json"
STATE="$WORK/state"
write_file_config "$CFG" stalled w 60s idle 500
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/stalled/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
at_least() { (($(intervals) >= $1)); }
wait_until 15 "3 intervals on disk" at_least 3

kill -STOP "$SOAKD_PID"
on_exit kill -CONT "$SOAKD_PID"
sleep 5.5 # soakd is frozen: nothing in it can be polled
kill -CONT "$SOAKD_PID"
n=$(intervals)
wait_until 20 "intervals after the freeze" at_least $((n + 9))
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

python3 - "$LOG" <<'PY' || fail "the frozen intervals were merged or lost"
import json, sys
ivs = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec["type"] == "interval":
        ivs.append(rec)
problems = []
for a, b in zip(ivs, ivs[1:]):
    if b["start_ns"] != a["end_ns"]:
        problems.append(f"gap or overlap: {a['end_ns']/1e9:.3f} s -> {b['start_ns']/1e9:.3f} s")
for r in ivs:
    span = (r["end_ns"] - r["start_ns"]) / 1e9
    if span > 1.001:
        problems.append(f"a record of {span:.3f} s at {r['start_ns']/1e9:.3f} s "
                        f"(stalled={r.get('stalled')}, intervals={r.get('intervals')})")
empty = [r for r in ivs if not any(op["count"] for op in r["ops"].values())]
stalled = [r for r in ivs if r.get("stalled")]
print(f"# {len(ivs)} interval records, {len(empty)} empty, {len(stalled)} marked stalled")
if len(empty) < 4:
    problems.append(f"only {len(empty)} empty records for a 5.5 s freeze")
if any(any(op["count"] for op in r["ops"].values()) for r in stalled):
    problems.append("a record marked stalled has ops but spans one interval")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
