#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Disk trouble: the state directory on a small tmpfs fills up, then turns
# read-only.  soakd says so once (log and status), its workload keeps its
# rate, the records wait in memory, and when space returns they are all
# written: no interval is missing from the log in the end.
source "$(dirname "$0")/lib.sh"
need_root "mounting a tmpfs"
need_cmd python3 mount umount

STATE="$WORK/state"
mkdir -p "$STATE"
mount -t tmpfs -o size=256k,mode=0755 soakd-test "$STATE" ||
	skip_unless_strict "cannot mount a tmpfs on $STATE"
on_exit umount -l "$STATE"

CFG="$WORK/disk.json"
cat >"$CFG" <<EOF
{"run": {"name": "disk", "interval": "250ms", "on_finish": "idle"},
 "workloads": [{"name": "d", "type": "device", "model": "pattern",
                "targets": ["$WORK/d.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 1000}]}
EOF
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/disk/intervals.log"
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
rate_holds() {
	ctl status --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"][0]
rate = sum(op["rate_achieved"] for op in w["ops"].values())
sys.exit(0 if w["state"] == "running" and abs(rate - 1000) < 30 else 1)'
}

# Full.
dd if=/dev/zero of="$STATE/filler" bs=4k 2>/dev/null || true
wait_until 15 "status to report the full disk" has_error
note "status: $(results_error)"
results_error | grep -q 'No space left' || fail "the error does not say the disk is full"
sleep 2 # let several intervals pass while the disk is full
rate_holds || fail "the workload's rate did not hold while the disk was full"
[[ $(grep -c 'results cannot be written' "$SOAKD_LOG") == 1 ]] ||
	fail "the full disk was not logged exactly once: $(grep 'results cannot' "$SOAKD_LOG")"

# Space returns: everything waiting is written.
rm -f "$STATE/filler"
wait_until 15 "writing to resume" no_error
grep -q 'results are written to' "$SOAKD_LOG" || fail "no message that writing resumed"

n=$(intervals)
wait_until 10 "two more intervals" at_least $((n + 2))
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

check_no_gaps() {
	python3 - "$1" <<'PY' || fail "intervals were lost"
import json, sys
ivs = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec["type"] == "interval":
        ivs.append((rec["start_ns"], rec["end_ns"]))
for (s0, e0), (s1, e1) in zip(ivs, ivs[1:]):
    if s1 != e0:
        sys.exit(f"gap between intervals: one ends at {e0}, the next starts at {s1}")
print(f"{len(ivs)} intervals, none missing")
PY
}
check_no_gaps "$LOG"

# Read-only from the start (a mount cannot turn read-only under an open
# log): the run directory cannot even be created; once the mount is
# writable, it appears with every interval since the start.
umount "$STATE"
mount -t tmpfs -o size=256k,mode=0755,ro soakd-test "$STATE"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "status to report the read-only disk" has_error
results_error | grep -q 'Read-only' || fail "the error does not say read-only: $(results_error)"
sleep 1
rate_holds || fail "the workload's rate did not hold while the disk was read-only"
mount -o remount,rw "$STATE"
wait_until 15 "writing to begin once the disk is writable" no_error
n=$(intervals)
((n >= 4)) || fail "only $n intervals written after the disk became writable"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
check_no_gaps "$LOG"
note "ok"
