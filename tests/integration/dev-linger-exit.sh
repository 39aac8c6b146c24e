#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A device that stops answering, and a SIGTERM while its workload runs: the
# stream drains (a bounded wait), gives up the ops still in flight and
# ends, and its thread stays to take their completions back whenever they
# come (so a later start cannot reuse their buffers).  That wait may never
# end, so the shutdown must not wait for the thread: soakd ends, its
# results flushed, while the device still stalls (it hung in pthread_join).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device

CFG="$WORK/linger.json"
cat >"$CFG" <<JSON
{"run": {"name": "linger", "duration": "60s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "l", "type": "device", "model": "pattern",
                "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "access": "random", "queue_depth": 4, "rate": 200,
                "schedule": [{"scale": 1, "for": "30s"}]}]}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload l to run" workload_is l running
sleep 0.5
on_exit faultdev_cmd unstall
faultdev_cmd stall
sleep 0.5 # the ops in flight and due meanwhile are stuck
kill -TERM "$SOAKD_PID"
t0=$(now_ns)
# The main thread must not wait for the stream's thread: soakd ends while
# the device still stalls, its results flushed.
wait_soakd_exit 15
note "soakd exited $(( ($(now_ns) - t0) / 1000000 )) ms after SIGTERM, the device still stalled"
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
grep -q "run's records are synced" "$SOAKD_LOG" || fail "soakd did not sync its results at exit"
grep -q "ops still in flight .* were given up" "$SOAKD_LOG" ||
	fail "no ops were given up: $(tail -n 20 "$SOAKD_LOG")"
note "ok"
