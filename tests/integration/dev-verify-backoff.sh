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
ctl report >"$WORK/live-report.txt" && fail "the live report passed a device failing its flushes"
# Failing again at the stop: the last flush, at the workload's end, fails
# too, and is counted with the others.
failing_flushes
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
f2=$(faultdev_stat flush_errors)

# Every failed flush is counted, on the write op, in the dump, the CSV and
# the report (which fails: the writes may not be durable), not only logged
# five times.
RUN="$WORK/state/backoff"
"$SOAKCTL" dump --format json --run-dir "$RUN" >"$WORK/dump.json" || fail "dump --run-dir failed"
n=$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["workloads"][0]["ops"]["write"]["verify"].get("flush_failed", 0))' \
	"$WORK/dump.json") || fail "no verify counts in the dump: $(head -c 2000 "$WORK/dump.json")"
((n == f2)) ||
	fail "the dump counts $n failed flushes; faultdev failed $f2 (of soakd's: nothing else flushes it)"
"$SOAKCTL" dump --format csv --run-dir "$RUN" >"$WORK/dump.csv" || fail "dump --format csv failed"
python3 - "$WORK/dump.csv" "$n" <<'EOF' || fail "the CSV's flush_failed column"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["op"] == "write"]
total = sum(int(r["flush_failed"]) for r in rows)
if total != int(sys.argv[2]):
    sys.exit(f"the CSV's flush_failed adds up to {total}, the dump says {sys.argv[2]}")
EOF
"$SOAKCTL" report --run-dir "$RUN" >"$WORK/report.txt" 2>&1 && fail "report --run-dir passed: $(cat "$WORK/report.txt")"
grep -q "^b: FAIL ($n failed cache flush" "$WORK/report.txt" ||
	fail "the report does not fail the failed flushes: $(cat "$WORK/report.txt")"
grep -q "failed cache flush" "$WORK/live-report.txt" ||
	fail "the live report does not show the failed flushes: $(cat "$WORK/live-report.txt")"
note "$n failed flushes counted ($f2 failed at faultdev)"
note "ok"
