#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A reload refused where the replaced workload cannot go back to its old
# definition either: w's target directory is moved away while it runs (its
# file stays open, not deleted), and a reload changes w's rate.  The
# replacement cannot lay out its file, nor can the old definition be
# prepared again, so w fails, its targets let go.  Then soakctl start w is
# refused with a reason, and a plain soakctl start leaves it out: soakd
# does not start a workload it holds no targets for (it crashed doing
# so).  A reload that defines it again where it can run brings it back.
source "$(dirname "$0")/lib.sh"
need_cmd python3

mkdir "$WORK/d"
config() {
	cat >"$WORK/r.json" <<JSON
{"run": {"name": "r", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/$1/w.dat"],
   "file_size": "8MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
   "queue_depth": 4, "rate": $2},
  {"name": "k", "type": "device", "model": "pattern", "targets": ["$WORK/k.dat"],
   "file_size": "8MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
   "queue_depth": 4, "rate": 100}]}
JSON
}
config d 100
start_soakd --config "$WORK/r.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "w to run" workload_is w running
mv "$WORK/d" "$WORK/moved"
config d 150
rc=0
ctl reload >"$WORK/reload.out" 2>&1 || rc=$?
((rc == 1)) || fail "the reload exited $rc: $(cat "$WORK/reload.out")"
grep -q "could not go on under its old definition either and failed" "$WORK/reload.out" ||
	fail "the refusal does not say w failed: $(cat "$WORK/reload.out")"
workload_is w failed || fail "w is $(ctl status --json | grep -o '"state": *"[a-z]*"' | head -1) after the refusal"
workload_is k running || fail "k stopped with the refused reload"

# Started by name: refused, with the reason.
rc=0
ctl start w >"$WORK/start.out" 2>&1 || rc=$?
is_alive "$SOAKD_PID" || fail "soakd died on soakctl start w: $(tail -n 5 "$SOAKD_LOG")"
((rc == 1)) || fail "soakctl start w exited $rc: $(cat "$WORK/start.out")"
grep -q "cannot start w: .*let go of its targets" "$WORK/start.out" ||
	fail "soakctl start w said: $(cat "$WORK/start.out")"
# Everything: w is left out, the rest answers as usual.
ctl stop k >/dev/null || fail "soakctl stop k failed"
wait_until 10 "k to stop" workload_is k stopped
ctl start >"$WORK/start-all.out" 2>&1 || fail "soakctl start (all) failed: $(cat "$WORK/start-all.out")"
is_alive "$SOAKD_PID" || fail "soakd died on soakctl start: $(tail -n 5 "$SOAKD_LOG")"
wait_until 10 "k to run again" workload_is k running
workload_is w failed || fail "soakctl start changed w"

# A definition it can run under: the reload replaces it, and it runs.
config moved 150
ctl reload >"$WORK/reload2.out" 2>&1 || fail "the reload to moved/ failed: $(cat "$WORK/reload2.out")"
wait_until 10 "w to run again" workload_is w running
stop_soakd 20
note "w failed with the refused reload, soakctl start refused it, a later reload restored it"
note "ok"
