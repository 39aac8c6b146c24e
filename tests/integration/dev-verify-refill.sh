#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A resumed run whose verify state of a target is gone (its first fill
# never finished, or the file was removed) fills that target again.  A
# workload that only reads opened it read-only, so the fill's writes
# failed (EBADF) and the workload could not start: whether a target is
# opened for writing is now decided by whether it will be filled.
source "$(dirname "$0")/lib.sh"

cat >"$WORK/r.json" <<JSON
{"run": {"name": "r", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/t.dat"],
   "file_size": "16MiB", "read_pct": 100, "block_size": "4KiB", "access": "random",
   "queue_depth": 4, "rate": 200, "verify": true, "fill": true}]}
JSON
start_soakd --config "$WORK/r.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "w to run" workload_is w running
sleep 1
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
ls "$WORK/state/r" | grep -q '^verify-w-0' || fail "no verify state: $(ls "$WORK/state/r")"
rm -f "$WORK/state/r"/verify-w-0*

SOAKD_LOG="$WORK/soakd.resume.log"
start_soakd --config "$WORK/r.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
grep -q "resumed run r\|resuming run r" "$SOAKD_LOG" || note "(log: $(grep -m1 'run r' "$SOAKD_LOG"))"
wait_until 30 "w to run again" workload_is w running
grep -q "no verify state of this run: filling (again)" "$SOAKD_LOG" ||
	fail "the target was not filled again: $(tail -n 5 "$SOAKD_LOG")"
sleep 2
stop_soakd 20
((SOAKD_RC == 0)) || fail "the resumed run exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
grep -q "foreign block\|no soakd header\|failed" "$SOAKD_LOG" &&
	fail "the refilled target reported failures: $(grep -m3 'foreign\|header\|failed' "$SOAKD_LOG")"
note "ok"
