#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device data verification across crashes (issue 15): soakd runs a fast
# mix of reads and writes with "verify" on a loop device, and is killed
# with SIGKILL mid-run, many times over, each restart resuming the run
# (its generation map and flush epochs from the run directory, the blocks
# written after the last completed flush checked first: "touched").
# Nothing was damaged, so over all of it (at least 10^5 blocks read back
# and checked) no block may be reported corrupt, stale, misdirected, torn
# or foreign: writes in flight or unflushed at a kill are uncertain, never
# failures.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

KILLS=${VERIFY_CRASH_KILLS:-12}
new_loop 8M
LOOP=$NEW_LOOP
CFG="$WORK/crash.json"
cat >"$CFG" <<EOF
{"run": {"name": "crash", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "c", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 60,
                "block_size": [{"size": "4KiB", "weight": 3}, {"size": "16KiB", "weight": 1}], "queue_depth": 16,
                "verify": true, "fill": true, "flush_interval": "100ms"}]}
EOF

# "checked failures uncertain" over the run so far (replayed and live).
totals() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
s = lambda *ks: sum(x.get(k, 0) for x in v for k in ks)
print(s("checked"), s("corrupt", "stale", "misdirected", "torn", "foreign"), s("uncertain"))'
}
CHECKED=0
progressed() {
	local c f u
	read -r c f u < <(totals) || return 1
	((c >= CHECKED + 15000))
}

for ((i = 0; i <= KILLS; i++)); do
	SOAKD_LOG="$WORK/soakd.$i.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 60 "the control socket (start $i)" ctl_answers
	# A kill mid-I/O, once this instance has checked enough on its own.
	wait_until 60 "15000 more blocks checked (start $i)" progressed
	read -r CHECKED f u < <(totals)
	((i == KILLS)) && break
	kill -KILL "$SOAKD_PID"
	# Reaped: every thread gone, the socket and the files closed.
	wait_soakd_exit 10
done
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

resumes=$(grep -l "resuming run crash" "$WORK"/soakd.*.log | wc -l)
((resumes == KILLS)) || fail "$resumes of $KILLS restarts resumed the run"
if grep -h "verify: .* block at offset" "$WORK"/soakd.*.log >"$WORK/false.txt"; then
	fail "false positives after kills: $(head -5 "$WORK/false.txt")"
fi
python3 - "$WORK/dump.json" <<'PY' || fail "the run's verify counts are wrong"
import json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
v = {}
for op in ops.values():
    for k, n in op.get("verify", {}).items():
        v[k] = v.get(k, 0) + n
fails = {k: v.get(k, 0) for k in ("corrupt", "stale", "misdirected", "torn", "foreign")}
print(f"# over all starts: {v}")
if any(fails.values()):
    sys.exit(f"false positives: {fails}")
if v.get("checked", 0) < 100000:
    sys.exit(f"only {v.get('checked', 0)} blocks checked in the run's records")
PY
n=$(grep -h "blocks were written after the last completed flush" "$WORK"/soakd.*.log | wc -l)
note "$KILLS kills, $n restarts found unflushed writes, no false positive"
