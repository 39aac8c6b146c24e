#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The verify map's ring (65536 block writes not yet flushed) never runs
# past its end.  Flushes fail, so it fills; with "pre_read" each write is
# first a read of the old blocks that turns into the write when it
# completes, so the room for every pre-read in flight must be kept when an
# op is issued.  soakd then dies (SIGKILL) and starts again on its state:
# a ring that had overrun (its oldest unflushed entries overwritten) made
# the map state unreadable ("not one this soakd wrote") and the workload
# could not resume.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device
failing_flushes 200ms

CFG="$WORK/ring.json"
cat >"$CFG" <<JSON
{"run": {"name": "ring", "duration": "120s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "b", "type": "device", "model": "pattern",
                "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 0,
                "block_size": "1MiB", "access": "random", "queue_depth": 8, "rate": 300,
                "verify": true, "pre_read": true, "fill": false, "flush_interval": "1h"}]}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload b to run" workload_is b running
# 64 Ki blocks of 4 KiB in the ring: 256 writes of 1 MiB, none flushed.
full() { (($(written) >= 240 && $(faultdev_stat flush_errors) >= 2)); }
wait_until 30 "the verify ring to fill" full
sleep 1
note "$(written) writes of 1 MiB, $(faultdev_stat flush_errors) flushes failed"

kill -KILL "$SOAKD_PID"
wait "$SOAKD_PID" 2>/dev/null || true
SOAKD_PID=
healthy_flushes
: >"$SOAKD_LOG"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
resumed() { workload_is b running || workload_is b failed; }
wait_until 30 "workload b to resume or fail" resumed
if grep -q "not one this soakd wrote" "$SOAKD_LOG" || ! workload_is b running; then
	fail "the verify state could not be resumed after the ring filled: $(tail -n 20 "$SOAKD_LOG")"
fi
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
