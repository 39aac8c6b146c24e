#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Long run logs: how long soakd takes to resume them and to dump them, and
# whether its main loop stalls meanwhile (issue 12, item 3).
#
#   bench/dump-log.sh BUILD_DIR [SPANS...]
#
# For each span (default: 1d 4d 30d) a run of one device workload at
# 1000 ops/s (about 3.3 KB per interval record, as such runs write) gets
# that many seconds of 1 s intervals (tests/integration/gen_runlog.py),
# then soakd resumes it under a stand-in systemd notification socket
# (WATCHDOG_USEC=30 s, as soakd.service) and the script measures:
#   resume      start to READY=1, and the longest gap between WATCHDOG=1
#               pings from start to READY=1 (soakd pings every quarter of
#               WatchdogSec, 7.5 s, so only gaps above that are stalls)
#   dump csv    a full CSV dump (MiB, s), the slowest of the status requests
#               sent every 0.2 s while it streams, and the longest gap
#               between watchdog pings meanwhile
#   --since     a CSV dump of the last 10 s of the log
#   again       soakd stopped and started again: start to READY=1, from the
#               checkpoint it wrote when it stopped
# Logs live in /dev/shm (30 days is about 9 GB); set BENCH_DIR to move them.
# Not part of the test suite.
set -euo pipefail

BUILD=${1:?usage: bench/dump-log.sh BUILD_DIR [SPANS...]}
shift
SPANS=("$@")
((${#SPANS[@]})) || SPANS=(1d 4d 30d)
SRC=$(cd "$(dirname "$0")/.." && pwd)
SOAKD="$BUILD/daemon/soakd"
SOAKCTL="$BUILD/ctl/soakctl"
DIR=$(mktemp -d "${BENCH_DIR:-/dev/shm}/soakd-bench-dump.XXXXXX")
SOCK="$DIR/soakd.sock"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$DIR"
}
trap cleanup EXIT

now_ms() { echo $(($(date +%s%N) / 1000000)); }
seconds_of() {
	case $1 in
	*d) echo $((${1%d} * 86400)) ;;
	*h) echo $((${1%h} * 3600)) ;;
	*) echo "$1" ;;
	esac
}

cat >"$DIR/run.json" <<EOF
{"run": {"name": "bench", "duration": "60d", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern",
   "targets": ["$DIR/w.dat"], "file_size": "64MiB", "read_pct": 70,
   "block_size": "4KiB", "access": "random", "queue_depth": 8, "rate": 1000,
   "schedule": [{"scale": 1, "for": "60d"}]}]}
EOF

# The longest gap between WATCHDOG=1 pings in [from, to] (listener time).
max_gap() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
pings = [r["t"] for r in map(json.loads, open(sys.argv[1]))
         if "WATCHDOG=1" in r["msg"].split("\n")]
lo, hi = float(sys.argv[2]), float(sys.argv[3])
inside = [lo] + [t for t in pings if lo < t < hi] + [hi]
print(f"{max(b - a for a, b in zip(inside, inside[1:])):.2f}")
PY
}
listener_now() { python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1])['t'])" "$1"; }

printf '%-5s %9s %10s %10s %9s %10s %9s %10s %9s %9s\n' span "log MiB" "resume s" "wd gap s" \
	"csv MiB" "dump s" "status ms" "wd gap s" "since ms" "again s"
for span in "${SPANS[@]}"; do
	secs=$(seconds_of "$span")
	state="$DIR/state-$span"
	rm -f "$SOCK"
	"$SOAKD" --config "$DIR/run.json" --socket "$SOCK" --state-dir "$state" --no-table \
		>"$DIR/soakd.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	until grep -qs '"type":"interval"' "$state/bench/intervals.log" &&
		(($(grep -c '"type":"interval"' "$state/bench/intervals.log") >= 3)); do
		sleep 0.2
	done
	kill "$pid"
	wait "$pid" || true
	python3 "$SRC/tests/integration/gen_runlog.py" "$state/bench/intervals.log" "$secs" >/dev/null
	log_mib=$(($(stat -c %s "$state/bench/intervals.log") >> 20))

	rm -f "$DIR/notify.sock" "$DIR/notify.jsonl"
	python3 "$SRC/tests/integration/notify_listen.py" "$DIR/notify.sock" "$DIR/notify.jsonl" &
	PIDS+=($!)
	listener=$!
	until [[ -S $DIR/notify.sock ]]; do sleep 0.05; done
	t0=$(now_ms)
	env -u WATCHDOG_PID NOTIFY_SOCKET="$DIR/notify.sock" WATCHDOG_USEC=30000000 \
		"$SOAKD" --config "$DIR/run.json" --socket "$SOCK" --state-dir "$state" --no-table \
		>"$DIR/soakd.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	until grep -qs 'READY=1' "$DIR/notify.jsonl"; do sleep 0.05; done
	resume_s=$(python3 -c "print(f'{($(now_ms) - $t0) / 1000:.1f}')")
	ready_t=$(listener_now "$DIR/notify.jsonl")
	resume_gap=$(max_gap "$DIR/notify.jsonl" 0 "$ready_t")

	sleep 2
	d0=$(listener_now "$DIR/notify.jsonl")
	d0_ms=$(now_ms)
	t0=$(now_ms)
	"$SOAKCTL" --socket "$SOCK" --timeout 120 dump --format csv >"$DIR/dump.csv" &
	dump=$!
	worst=0
	while kill -0 "$dump" 2>/dev/null; do
		s=$(now_ms)
		"$SOAKCTL" --socket "$SOCK" --timeout 120 status >/dev/null
		ms=$(($(now_ms) - s))
		((ms > worst)) && worst=$ms
		sleep 0.2
	done
	wait "$dump"
	dump_s=$(python3 -c "print(f'{($(now_ms) - $t0) / 1000:.1f}')")
	sleep 1
	# Up to now, in the listener's time (the last ping may be long ago).
	dump_gap=$(max_gap "$DIR/notify.jsonl" "$d0" \
		"$(python3 -c "print($d0 + ($(now_ms) - $d0_ms) / 1000)")")
	csv_mib=$(($(stat -c %s "$DIR/dump.csv") >> 20))
	rm -f "$DIR/dump.csv"

	t0=$(now_ms)
	"$SOAKCTL" --socket "$SOCK" dump --format csv --since "$((secs - 10))s" >/dev/null
	since_ms=$(($(now_ms) - t0))

	kill "$pid" "$listener"
	wait "$pid" "$listener" 2>/dev/null || true

	# Again, as after systemctl restart: from the checkpoint, if any.
	rm -f "$SOCK"
	t0=$(now_ms)
	"$SOAKD" --config "$DIR/run.json" --socket "$SOCK" --state-dir "$state" --no-table \
		>"$DIR/soakd.log" 2>&1 &
	pid=$!
	PIDS+=("$pid")
	until "$SOAKCTL" --socket "$SOCK" status >/dev/null 2>&1; do sleep 0.02; done
	again_s=$(python3 -c "print(f'{($(now_ms) - $t0) / 1000:.2f}')")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	rm -rf "$state"
	printf '%-5s %9s %10s %10s %9s %10s %9s %10s %9s %9s\n' "$span" "$log_mib" "$resume_s" \
		"$resume_gap" "$csv_mib" "$dump_s" "$worst" "$dump_gap" "$since_ms" "$again_s"
done
echo "# $(nproc) CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
