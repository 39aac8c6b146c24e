#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A verified workload whose target changes within a run: its verify state
# (one generation per block) describes the old target's blocks, and read
# against another target every block would be reported damaged (a
# reload did just that, with .block evidence of every one).  A reload that
# moves it to another file of the same size is refused, naming why, and the
# workload goes on on its old target, undamaged; a restart with the new
# file starts a new run, which takes it.
source "$(dirname "$0")/lib.sh"
need_cmd python3

config() {
	cat >"$WORK/v.json" <<JSON
{"run": {"name": "v", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/$1.dat"],
   "file_size": "16MiB", "read_pct": 50, "block_size": "4KiB", "access": "random",
   "queue_depth": 4, "rate": 200, "verify": true, "fill": true, "pre_read": false}]}
JSON
}
config t1
start_soakd --config "$WORK/v.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "w to run" workload_is w running
sleep 1

# 1. A reload to t2: refused, w runs on t1.
config t2
rc=0
ctl reload >"$WORK/reload.out" 2>&1 || rc=$?
((rc == 1)) || fail "the reload to another target exited $rc: $(cat "$WORK/reload.out")"
grep -q "verify state verify-w-0 was made for another target" "$WORK/reload.out" ||
	fail "the refusal does not say why: $(cat "$WORK/reload.out")"
workload_is w running || fail "w does not run on after the refused reload"
sleep 2
grep -q "foreign block\|no soakd header" "$SOAKD_LOG" &&
	fail "blocks were reported foreign after the refused reload: $(grep -m3 'foreign\|header' "$SOAKD_LOG")"
[[ -d $WORK/state/v ]] || fail "no run directory"
ls "$WORK/state/v" | grep -q '\.block$' && fail "evidence of damaged blocks was dumped: $(ls "$WORK/state/v")"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after the refused reload: $(tail -n 5 "$SOAKD_LOG")"

# 2. A restart on t2: a changed configuration starts a new run (the old
# one kept beside it), which fills t2 afresh and checks it clean.
SOAKD_LOG="$WORK/soakd.restart.log"
start_soakd --config "$WORK/v.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "w to run on t2" workload_is w running
grep -q "starting a new run" "$SOAKD_LOG" || fail "the restart on t2 did not start a new run: $(tail -n 5 "$SOAKD_LOG")"
grep -q "t2.dat: verify fill: 100.0%" "$SOAKD_LOG" || fail "t2 was not filled for the new run"
sleep 2
stop_soakd 20
((SOAKD_RC == 0)) || fail "the new run exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
grep -q "foreign block\|no soakd header" "$SOAKD_LOG" && fail "the new run reported foreign blocks"
note "a verified workload's target change: the reload refused, a restart starts a new run"
note "ok"
