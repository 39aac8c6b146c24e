#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A dump that lacks records says so (issue 12, item 5): while the state
# disk is full the newest intervals wait in soakd's memory, not in the log
# a dump reads.  Such a dump still prints what the log holds, but its reply
# says "incomplete": true and why, and soakctl says so and exits 1.  Once
# the disk has room again, the same dump is complete.
source "$(dirname "$0")/lib.sh"
need_root "mounting a tmpfs"
need_cmd python3 mount umount

STATE="$WORK/state"
mkdir -p "$STATE"
mount -t tmpfs -o size=256k,mode=0755 soakd-test "$STATE" ||
	skip "cannot mount a tmpfs on $STATE"
on_exit umount -l "$STATE"

CFG="$WORK/full.json"
cat >"$CFG" <<JSON
{"run": {"name": "full", "interval": "250ms", "on_finish": "idle"},
 "workloads": [{"name": "d", "type": "device", "model": "pattern",
                "targets": ["$WORK/d.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 1000}]}
JSON
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/full/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
at_least() { (($(intervals) >= $1)); }
wait_until 15 "4 intervals on disk" at_least 4

results_error() {
	ctl status --json | python3 -c '
import json, sys
print(json.load(sys.stdin).get("results", {}).get("error", ""))'
}
has_error() { [[ -n $(results_error) ]]; }
no_error() { [[ -z $(results_error) ]]; }

dd if=/dev/zero of="$STATE/filler" bs=4k 2>/dev/null || true
wait_until 15 "status to report the full disk" has_error
sleep 1 # intervals pile up in memory

rc=0
ctl dump --format csv >"$WORK/full.csv" 2>"$WORK/full.err" || rc=$?
note "soakctl dump while the disk is full: exit $rc: $(cat "$WORK/full.err")"
((rc == 1)) || fail "dump exited $rc while the disk was full, expected 1"
grep -q 'this dump is incomplete: .*could not be written.*No space left' "$WORK/full.err" ||
	fail "soakctl did not say why the dump is incomplete"
# What the log holds is printed (how much depends on what was synced
# before the disk filled).
head -1 "$WORK/full.csv" | grep -q '^workload,op,start_s' || fail "the incomplete dump printed nothing"

# The reply itself says so, for scripts that read JSON.
rc=0
ctl dump --format json --op read >"$WORK/full.json" 2>/dev/null || rc=$?
((rc == 1)) || fail "dump --format json --op read exited $rc while the disk was full"
python3 - "$WORK/full.json" <<'PY' || fail "the JSON reply does not say it is incomplete"
import json, sys
reply = json.load(open(sys.argv[1]))
assert reply.get("incomplete") is True, reply.keys()
assert "No space left" in reply["incomplete_reason"], reply["incomplete_reason"]
print(f"# incomplete_reason: {reply['incomplete_reason']}")
PY

rm -f "$STATE/filler"
wait_until 15 "writing to resume" no_error
ctl dump --format csv >"$WORK/after.csv" 2>"$WORK/after.err" ||
	fail "the dump after space returned failed: $(cat "$WORK/after.err")"
! grep -q incomplete "$WORK/after.err" || fail "a complete dump was called incomplete"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
