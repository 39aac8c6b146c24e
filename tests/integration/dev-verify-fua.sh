#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device data verification with "fua": true (issue 15): a FUA write
# (RWF_DSYNC) is durable once it completes, so a SIGKILL leaves uncertain
# only the writes still in flight at the kill, not every write since the
# last flush.  Flushes are an hour apart here: without that rule, every
# write of the run would be uncertain after each kill.  The loop device
# does not claim FUA (queue/fua 0): the block layer then writes and
# flushes, which is as durable on completion.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

KILLS=3
QD=4
new_loop 8M
LOOP=$NEW_LOOP
note "$LOOP: queue/fua=$(cat "/sys/block/${LOOP#/dev/}/queue/fua" 2>/dev/null || echo ?)"
CFG="$WORK/fua.json"
cat >"$CFG" <<EOF2
{"run": {"name": "fua", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "f", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "queue_depth": $QD,
                "verify": true, "fill": true, "fua": true, "flush_interval": "1h"}]}
EOF2

written() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
print(ops.get("write", {}).get("count_total", ops.get("write", {}).get("count", 0)))'
}
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
	((c >= CHECKED + 2000))
}

for ((i = 0; i <= KILLS; i++)); do
	SOAKD_LOG="$WORK/soakd.$i.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 60 "the control socket (start $i)" ctl_answers
	if ((i > 0)); then
		# Only the writes in flight at the kill (at most one per slot) may be uncertain.
		n=$(sed -n 's/.*: \([0-9]*\) blocks were written after the last completed flush.*/\1/p' \
			"$SOAKD_LOG" | tail -1)
		note "start $i: ${n:-0} blocks uncertain after the kill"
		((${n:-0} <= QD)) ||
			fail "$n blocks uncertain after a kill, though every completed write was FUA (at most $QD in flight)"
	fi
	wait_until 60 "2000 more blocks checked (start $i)" progressed
	read -r CHECKED f u < <(totals)
	((i == KILLS)) && break
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 10
done
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
resumes=$(grep -l "resuming run fua" "$WORK"/soakd.*.log | wc -l)
((resumes == KILLS)) || fail "$resumes of $KILLS restarts resumed the run"
if grep -h "verify: .* block at offset" "$WORK"/soakd.*.log >"$WORK/false.txt"; then
	fail "false positives after kills: $(head -5 "$WORK/false.txt")"
fi
note "ok"
