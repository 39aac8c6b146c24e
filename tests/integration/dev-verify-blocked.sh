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

# 64 Ki blocks of 4 KiB in the ring: 255 writes of 1 MiB, none flushed (the
# ring keeps room for one more op than it takes).
fill_verify_ring blocked
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
