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

# 64 Ki blocks of 4 KiB in the ring: 256 writes of 1 MiB, none flushed.
fill_verify_ring ring '"pre_read": true,'
sleep 1
note "$(written) writes of 1 MiB, $(faultdev_stat flush_errors) flushes failed"

kill -KILL "$SOAKD_PID"
wait "$SOAKD_PID" 2>/dev/null || true
SOAKD_PID=
healthy_flushes
: >"$SOAKD_LOG"
start_soakd --config "$WORK/ring.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
resumed() { workload_is b running || workload_is b failed; }
wait_until 30 "workload b to resume or fail" resumed
if grep -q "not one this soakd wrote" "$SOAKD_LOG" || ! workload_is b running; then
	fail "the verify state could not be resumed after the ring filled: $(tail -n 20 "$SOAKD_LOG")"
fi
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
