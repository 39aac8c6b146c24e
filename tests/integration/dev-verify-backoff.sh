#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A verified device whose flushes fail at once, every one: the verify ring
# fills and the stream waits for a flush to succeed.  A failed flush is
# tried again after a backoff that doubles up to a second, so the device
# sees a handful of fsyncs a second, not one after another in a loop (it
# was asked again the moment the last failed: thousands a second, soakd's
# thread at 100%).  Completions are reaped meanwhile, and once flushes
# succeed again the ring drains and the writes go on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device
failing_flushes

fill_verify_ring backoff
# The backoff reaches its second after 8 failures, about 1 s.
sleep 1.5
f0=$(faultdev_stat flush_errors)
t0=$(now_ns)
cpu0=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
sleep 3
cpu1=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
f1=$(faultdev_stat flush_errors)
wall_ms=$(( ($(now_ns) - t0) / 1000000 ))
cpu_ms=$(( (cpu1 - cpu0) * 1000 / $(getconf CLK_TCK) ))
note "blocked: $((f1 - f0)) flushes failed in ${wall_ms} ms ($f1 in all), soakd used ${cpu_ms} ms of CPU"
# A second between tries: 3 or 4 in 3 s; 8 leaves room for a slow start.
((f1 - f0 <= 8)) || fail "$((f1 - f0)) flushes failed in ${wall_ms} ms: the device is hammered, no backoff"
((f1 - f0 >= 1)) || fail "no flush was tried again in ${wall_ms} ms while the ring was full"
((cpu_ms * 5 < wall_ms)) || fail "soakd used ${cpu_ms} ms of CPU in ${wall_ms} ms while blocked (a spin)"
grep -q "flush failed: .*tried again in 4 ms" "$SOAKD_LOG" ||
	fail "the first failed flush does not say when it is tried again: $(grep 'flush failed' "$SOAKD_LOG" | head -3)"
workload_is b running || fail "the workload ended while blocked"

# Flushes succeed again: the next try (within the backoff's second) empties
# the ring, and the writes go on.
healthy_flushes
w0=$(written)
more() { (($(written) >= w0 + 100)); }
wait_until 10 "the writes to go on after a flush succeeds" more
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
