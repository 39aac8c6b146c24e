#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd's memory with 64 workloads after 10^5 intervals (issue 16: under
# 32 MiB).  A real run of 10^5 one-second intervals takes 28 hours, so the
# run is fast-forwarded as the resume tests do: soakd runs the 64 workloads
# (device, pattern, 4 KiB random I/O at a low rate on a small file each) for
# a few intervals and is stopped; tests/integration/gen_runlog.py appends
# BENCH_INTERVALS further intervals of every workload to the run's log, in
# soakd's own format, as if the run had gone on that long; soakd is started
# again on the same state directory, resumes the run at that point (reading
# the whole log, as after a reboot), runs BENCH_SECONDS more, and its VmRSS
# and VmHWM (peak) are read from /proc.  What this does not exercise: 10^5
# intervals of live accumulation in memory (anything that grows per
# interval without being written to the log); the live phase before the
# stop and after the resume shows the growth per interval, printed as RSS
# samples.  See bench/README.md.
#
# The generated intervals' histograms are BENCH_VARY (64) variants of each
# workload's fullest live one, drawn at random per record (gen_runlog.py
# --vary): the totals and slices fill as many buckets as a real run's,
# where copies of one interval would fill only its own.
#
# BENCH_KIND=object runs object workloads instead: plain HTTP against an
# nginx on 127.0.0.1 (installed when missing), each with BENCH_CONC (4)
# connections, a PUT/GET/STAT/DELETE mix of 4 KiB objects, verification on.
#
# Needs root (O_DIRECT files under /var/tmp).  Environment: BENCH_WORKLOADS
# (64), BENCH_KIND (device or object), BENCH_INTERVALS (100000),
# BENCH_SECONDS (30), BENCH_RATE (100, ops/s per workload), BENCH_CONC (4),
# BENCH_VARY (64), BENCH_PORT (18091), BENCH_BUILD_DIR, BENCH_NO_BUILD=1,
# BENCH_KEEP=1.
set -euo pipefail

NW=${BENCH_WORKLOADS:-64}
NI=${BENCH_INTERVALS:-100000}
SECS=${BENCH_SECONDS:-30}
RATE=${BENCH_RATE:-100}
VARY=${BENCH_VARY:-64}
KIND=${BENCH_KIND:-device}
CONC=${BENCH_CONC:-4}
PORT=${BENCH_PORT:-18091}
BENCH_NAME=rss-64
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

whole_numbers NW NI SECS RATE VARY CONC PORT
[[ $KIND == device || $KIND == object ]] || die "BENCH_KIND must be device or object, not '$KIND'"
[[ $KIND == object ]] && need_packages nginx:nginx curl:curl
build_soakd

WORK=$(mktemp -d /var/tmp/rss-64.XXXXXX)
PID=
NGINX_PID=
cleanup() {
	local rc=$?
	[[ -n $NGINX_PID ]] && kill -TERM "$NGINX_PID" 2>/dev/null
	[[ -n $PID ]] && kill -TERM "$PID" 2>/dev/null && sleep 1 && kill -KILL "$PID" 2>/dev/null
	if [[ -n ${BENCH_KEEP:-} ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

{
	printf '{"run": {"name": "rss", "duration": "%ss", "interval": "1s", "on_finish": "idle"},\n "workloads": [' \
		$((NI * 2))
	for ((i = 0; i < NW; i++)); do
		((i)) && printf ',\n'
		if [[ $KIND == object ]]; then
			printf '  {"name": "w%d", "type": "object", "protocol": "http",
   "endpoint": "http://127.0.0.1:%d/w%d/", "concurrency": %d, "objects": 100,
   "size": "4KiB", "rate": %d, "mix": {"put": 30, "get": 50, "stat": 10, "delete": 10},
   "verify": true}' "$i" "$PORT" "$i" "$CONC" "$RATE"
		else
			printf '  {"name": "w%d", "type": "device", "model": "pattern", "targets": ["%s/w%d.dat"],
   "file_size": "4MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
   "queue_depth": 4, "rate": %d}' "$i" "$WORK" "$i" "$RATE"
		fi
	done
	printf ']}\n'
} >"$WORK/rss.json"
[[ $KIND == object ]] && start_nginx "$WORK/nginx" "$PORT"
"$SOAKD" --check-config "$WORK/rss.json" >"$WORK/plan.txt" || die "check-config: $(cat "$WORK/plan.txt")"

rss() { awk '/^VmRSS|^VmHWM/ { printf "%s %s KiB  ", $1, $2 }' "/proc/$1/status"; }
start() {
	"$SOAKD" --config "$WORK/rss.json" --socket "$WORK/soakd.sock" --no-table \
		--state-dir "$WORK/state" 2>>"$WORK/soakd.log" &
	PID=$!
	local i
	for ((i = 0; i < 600; i++)); do
		"$SOAKCTL" --socket "$WORK/soakd.sock" status >/dev/null 2>&1 && return 0
		kill -0 "$PID" 2>/dev/null || { tail "$WORK/soakd.log" >&2; die "soakd exited"; }
		sleep 0.5
	done
	die "soakd did not answer"
}
stop() { kill -TERM "$PID"; wait "$PID" || true; PID=; }

LA_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "$NW $KIND workloads, $NI intervals fast-forwarded, then ${SECS}s live; load average $LA_START"
start
for t in 2 4 6 8 10; do sleep 2; echo "live, ${t}s: $(rss "$PID")"; done
stop
LOG=$WORK/state/rss/intervals.log
[[ -f $LOG ]] || die "no interval log at $LOG"
# Each record is a few KiB (histograms): 64 workloads x 10^5 intervals is
# tens of GiB of log.  Check the room first.
per=$(( $(stat -c %s "$LOG") / $(wc -l <"$LOG") ))
need_mb=$(( per * NW * NI >> 20 ))
avail_mb=$(( $(df --output=avail -k "$WORK" | tail -1) >> 10 ))
echo "the log will grow by about $need_mb MiB ($per bytes a record); $avail_mb MiB free in $WORK"
((need_mb < avail_mb * 9 / 10)) || die "not enough room in $WORK for the log: lower BENCH_INTERVALS"
t0=$SECONDS
n=$(python3 "$REPO/tests/integration/gen_runlog.py" --vary "$VARY" "$LOG" "$NI") || die "gen_runlog.py failed"
echo "appended $n records ($NI intervals x $NW workloads) in $((SECONDS - t0)) s: $(($(stat -c %s "$LOG") >> 20)) MiB of log"
t0=$SECONDS
start
echo "resumed after $((SECONDS - t0)) s: $(rss "$PID")"
for ((t = 5; t <= SECS; t += 5)); do sleep 5; echo "resumed, +${t}s: $(rss "$PID")"; done
final=$(awk '/^VmRSS/ { print $2 }' "/proc/$PID/status")
peak=$(awk '/^VmHWM/ { print $2 }' "/proc/$PID/status")
stop
echo "RSS after $NI intervals x $NW workloads: $((final / 1024)) MiB (peak $((peak / 1024)) MiB); goal: under 32 MiB: $( ((final < 32768)) && echo met || echo NOT met)"
echo "load average $LA_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end ($(nproc) CPUs)"
