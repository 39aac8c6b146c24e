#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A regular-file target deleted behind soakd's back (issue 12): noticed on
# the held descriptor within two intervals, logged with its path, and the
# workload fails with that reason (soakd exits 3), instead of writing on
# to an orphaned inode unnoticed.  (on_finish idle keeps soakd up to ask.)
source "$(dirname "$0")/lib.sh"
need_cmd python3

write_file_config "$WORK/del.json" del w 60s idle 200
start_soakd --config "$WORK/del.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to run" workload_is w running
sleep_until=$(($(now_ns) + 1500000000))
while (($(now_ns) < sleep_until)); do ctl_answers || fail "soakd stopped answering"; done
deleted_at=$(now_ns)
rm "$WORK/w.dat"
wait_until 5 "the deletion to be noticed" workload_is w failed
noticed_ms=$((($(now_ns) - deleted_at) / 1000000))
((noticed_ms <= 2500)) || fail "the deletion was noticed after $noticed_ms ms, more than 2 intervals"
ctl status --json | grep -q "target $WORK/w.dat was deleted" ||
	fail "status does not say the target was deleted: $(ctl status --json)"
ctl dump --format json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"][0]
assert w["state"] == "failed" and "was deleted" in w.get("reason", ""), w.get("reason")' ||
	fail "the dump does not mark the workload: $(ctl dump --format json | head -c 1000)"
zcat -f "$WORK/state/del/intervals.log" | grep -q '"state": *"failed".*was deleted' ||
	fail "the run's intervals.log does not record the failure: $(zcat -f "$WORK/state/del/intervals.log" | tail -c 800)"
stop_soakd 20
((SOAKD_RC == 3)) || fail "soakd exited $SOAKD_RC, expected 3 (a workload failed)"
grep -q "w: target $WORK/w.dat was deleted (its link count is 0)" "$SOAKD_LOG" ||
	fail "the deletion was not logged with the path: $(tail -5 "$SOAKD_LOG")"
note "deleted target noticed after $noticed_ms ms; workload failed, soakd exited 3"
note "ok"
