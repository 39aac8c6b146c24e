#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Bounded memory: a compressed-time soak of 2 ms intervals, so that 30,000
# intervals (what a 1 s interval gives in 8 hours) pass in about a minute.
# Intervals are folded into slices in memory and kept in full only on
# disk, so soakd's RSS must stay flat: it may grow by at most 6 MiB between
# the 5,000th and the 30,000th interval (under ASan, whose allocator adds
# its own slack; without it the growth measured here is under 0.2 MiB).
source "$(dirname "$0")/lib.sh"
need_cmd python3

CFG="$WORK/memory.json"
cat >"$CFG" <<EOF
{"run": {"name": "memory", "interval": "2ms", "slice": "1s", "on_finish": "idle"},
 "workloads": [{"name": "m", "type": "device", "model": "pattern",
                "targets": ["$WORK/m.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 2000}]}
EOF
# ASan's quarantine would hold freed memory and grow RSS by itself.
SOAKD_ENV=("ASAN_OPTIONS=quarantine_size_mb=1:detect_leaks=0")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$WORK/state/memory/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$SOAKD_PID/status"; }
at_least() { (($(intervals) >= $1)); }

wait_until 60 "5000 intervals" at_least 5000
rss_start=$(rss_kib)
wait_until 150 "30000 intervals" at_least 30000
rss_end=$(rss_kib)
n=$(intervals)
growth=$((rss_end - rss_start))
note "RSS ${rss_start} KiB at 5000 intervals, ${rss_end} KiB at $n: growth ${growth} KiB"
((growth < 6 * 1024)) || fail "RSS grew by ${growth} KiB over $((n - 5000)) intervals (bound 6144 KiB)"
# The totals in memory and the log on disk agree exactly on what was
# measured, and it is what the workload was asked for.  Stopped first, so
# no interval closes between the dump and the end of the log.
ctl stop m >/dev/null || fail "soakctl stop m failed"
wait_until 10 "workload m to stop" workload_is m stopped
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
stop_soakd 10
python3 - "$WORK/dump.json" "$LOG" <<'EOF' || fail "totals: $(head -c 3000 "$WORK/dump.json")"
import json, sys
totals = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
logged = {}
for line in open(sys.argv[2]).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec["type"] == "interval":
        for op, v in rec["ops"].items():
            logged[op] = logged.get(op, 0) + v["count"]
problems = []
for op, share in (("read", 0.7), ("write", 0.3)):
    live = totals.get(op, {})
    count, target = live.get("count", 0), live.get("rate_target", 0)
    achieved = live.get("rate_achieved", 0)
    print(f"# {op}: {count} in the totals, {logged.get(op, 0)} in the log; "
          f"rate_target {target:.1f}/s, rate_achieved {achieved:.1f}/s")
    if count == 0 or count != logged.get(op, 0):
        problems.append(f"{op}: {count} ops in the totals, {logged.get(op, 0)} in the log")
    if abs(target - share * 2000) > 0.01 * share * 2000:
        problems.append(f"{op}: rate_target {target:.1f}/s, expected {share * 2000:.0f}/s")
    if abs(achieved - target) > 0.05 * share * 2000:
        problems.append(f"{op}: rate_achieved {achieved:.1f}/s, rate_target {target:.1f}/s")
if problems:
    sys.exit("\n".join(problems))
EOF
note "ok"
