#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A verified device whose flushes fail, slowly: no epoch is ever flushed,
# so the verify ring fills and no op may be issued until a flush succeeds.
# The stream then waits for the flush it retries, not spinning on the ops
# that are due: soakd's CPU stays low while it is blocked (it spun, a core
# at 100%, when a due op with no slot to take it meant a wake-up at once).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device
failing_flushes 500ms

CFG="$WORK/blocked.json"
cat >"$CFG" <<JSON
{"run": {"name": "blocked", "duration": "120s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "b", "type": "device", "model": "pattern",
                "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 0,
                "block_size": "1MiB", "access": "random", "queue_depth": 8, "rate": 300,
                "verify": true, "fill": false, "flush_interval": "1h"}]}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload b to run" workload_is b running
# 64 Ki blocks of 4 KiB in the ring: 255 writes of 1 MiB, none flushed (the
# ring keeps room for one more op than it takes).
full() { (($(written) >= 240 && $(faultdev_stat flush_errors) >= 2)); }
wait_until 30 "the verify ring to fill" full
sleep 1
w0=$(written)
t0=$(now_ns)
cpu0=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
sleep 3
cpu1=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
wall_ms=$(( ($(now_ns) - t0) / 1000000 ))
w1=$(written)
cpu_ms=$(( (cpu1 - cpu0) * 1000 / $(getconf CLK_TCK) ))
note "blocked: $((w1 - w0)) writes, $(faultdev_stat flush_errors) flushes failed, soakd used ${cpu_ms} ms of CPU in ${wall_ms} ms"
((w1 - w0 <= 8)) || fail "the stream was not blocked: $((w1 - w0)) writes completed with the verify ring full"
((cpu_ms * 5 < wall_ms)) || fail "soakd used ${cpu_ms} ms of CPU in ${wall_ms} ms while blocked (a spin)"
workload_is b running || fail "the workload ended while blocked"

healthy_flushes
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
