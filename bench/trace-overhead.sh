#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What block tracing costs: closed-loop 4 KiB random-read IOPS of a
# RAM-backed loop device (losetup --direct-io=on over /dev/shm) with soakd's
# block probes off and on, the two interleaved several times in one run.
# Prints the IOPS of every phase, the medians of each state and the on/off
# ratio (target: under 3% lower with tracing on).  See bench/README.md.
#
#   soakd  one soakd run, closed loop at queue depth 32 on the device;
#          soakctl switches "trace blk" off and on every phase, and each
#          phase's IOPS come from the interval records that lie wholly
#          inside it.  With BENCH_MAP=1, a second run does the same with
#          "blk_timestamps": "map" (the per-request map, the fallback for
#          queues the block layer does not stamp).
#   fio    fio (io_uring, iodepth 32) is the load; a soakd with
#          "all_devices" traces it, switched off and on between fio runs.
#   cost   the probe's own CPU time, which no neighbour's load disturbs:
#          with kernel.bpf_stats_enabled, soakd's soak_blk_complete's
#          run_time_ns / run_cnt under the closed loop, and that cost as a
#          share of the CPU time each request takes.
#
# Needs root.  Environment (all optional):
#   BENCH_PAIRS=15         off/on pairs per section
#   BENCH_PHASE=2          seconds per phase (short phases, many pairs: a
#                          neighbour's load then weighs on both states alike)
#   BENCH_INTERVAL_MS=250  soakd's interval (phases are measured in whole ones)
#   BENCH_QD=32            queue depth
#   BENCH_DEV_SIZE_MB=1024 size of the loop device's backing file in /dev/shm
#   BENCH_SECTIONS="soakd fio cost"
#   BENCH_MAP=1            also measure the per-request map (soakd section)
#   BENCH_BUILD_DIR=...    soakd build directory (default: <repo>/build-bench)
#   BENCH_NO_BUILD=1       use the binaries in BENCH_BUILD_DIR as they are
#   BENCH_KEEP=1           keep the working directory (configs, logs, records)
set -euo pipefail

PAIRS=${BENCH_PAIRS:-15}
PHASE=${BENCH_PHASE:-2}
INTERVAL_MS=${BENCH_INTERVAL_MS:-250}
QD=${BENCH_QD:-32}
DEV_SIZE_MB=${BENCH_DEV_SIZE_MB:-1024}
SECTIONS=${BENCH_SECTIONS:-soakd fio cost}
BENCH_NAME=trace-overhead
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"


for v in PAIRS PHASE QD DEV_SIZE_MB INTERVAL_MS; do
	[[ ${!v} =~ ^[0-9]+$ && ${!v} -ge 1 ]] || die "$v must be a whole number >= 1, not '${!v}'"
done
((INTERVAL_MS >= 10 && PHASE * 1000 >= 4 * INTERVAL_MS)) ||
	die "a phase must hold at least 4 intervals of at least 10 ms"
for s in $SECTIONS; do
	[[ $s == soakd || $s == fio || $s == cost ]] ||
		die "unknown section '$s' in BENCH_SECTIONS (soakd, fio, cost)"
done
[[ $(id -u) == 0 ]] || die "needs root (loop devices, BPF); run it with sudo"

if [[ " $SECTIONS " == *" fio "* ]] && ! command -v fio >/dev/null; then
	say "installing fio"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends fio >&2 ||
		die "cannot install fio (or leave it out: BENCH_SECTIONS=soakd)"
fi
build_soakd

WORK=$(mktemp -d /tmp/trace-overhead.XXXXXX)
IMG=
LOOP=
SOAKD_PID=
stop_soakd() {
	[[ -n $SOAKD_PID ]] || return 0
	kill -TERM "$SOAKD_PID" 2>/dev/null || true
	wait "$SOAKD_PID" 2>/dev/null || true
	SOAKD_PID=
}
cleanup() {
	local rc=$?
	stop_soakd
	[[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null
	[[ -n $IMG ]] && rm -f "$IMG"
	if [[ -n ${BENCH_KEEP:-} ]]; then
		say "kept $WORK"
	else
		rm -rf "$WORK"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

IMG=$(mktemp /dev/shm/trace-overhead.XXXXXX.img)
say "filling $IMG with $DEV_SIZE_MB MiB of random data"
dd if=/dev/urandom of="$IMG" bs=1M count="$DEV_SIZE_MB" status=none
LOOP=$(losetup --direct-io=on -f --show "$IMG")
SOCK=$WORK/soakd.sock
ctl() { "$SOAKCTL" --socket "$SOCK" "$@"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# start_soakd NAME WORKLOAD_EXTRA TRACE: soakd in the background, its
# workload running until soakd is stopped.
start_soakd() {
	rm -f "$SOCK"
	cat >"$WORK/$1.json" <<-EOF
	{"run": {"name": "$1", "interval": "${INTERVAL_MS}ms", "trace": $3},
	 "workloads": [{"name": "reads", "type": "device", "model": "pattern",
	                "targets": ["$LOOP"], "read_pct": 100, "block_size": "4KiB",
	                "access": "random", "queue_depth": $QD $2}]}
	EOF
	"$SOAKD" --config "$WORK/$1.json" --socket "$SOCK" --state-dir "$WORK/state-$1" \
		--no-table >"$WORK/$1.log" 2>&1 &
	SOAKD_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		ctl status >/dev/null 2>&1 && break
		kill -0 "$SOAKD_PID" 2>/dev/null || die "soakd exited: $(cat "$WORK/$1.log")"
		sleep 0.1
	done
	local blk
	blk=$(ctl trace | grep '^blk:') || die "soakctl trace failed"
	[[ $blk == "blk: unavailable"* ]] && die "block probes cannot load here: $blk"
	return 0
}

# phase_state I: off or on for phase I; off first in even pairs, on first
# in odd ones, so that neither state always follows the other.
phase_state() {
	if (((($1 / 2) + $1) % 2 == 0)); then echo off; else echo on; fi
}

# run_elapsed: soakd's run time now, seconds.
run_elapsed() { ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["elapsed_s"])'; }

# summarize LABEL FILE: FILE holds "pair state iops" lines; prints them,
# the medians of each state and their ratio, and the median of the on/off
# ratios within pairs.
summarize() {
	python3 - "$1" "$2" <<'EOF'
import statistics, sys
label, path = sys.argv[1:3]
phases = [line.split() for line in open(path) if line.strip()]
by = {"off": [], "on": []}
pair = {}
for k, state, iops in phases:
    by[state].append(float(iops))
    pair.setdefault(k, {})[state] = float(iops)
off, on = statistics.median(by["off"]), statistics.median(by["on"])
pairs = [p["on"] / p["off"] for p in pair.values() if len(p) == 2]
print(f"{label}: phases off " + " ".join(f"{v:.0f}" for v in by["off"]))
print(f"{label}: phases on  " + " ".join(f"{v:.0f}" for v in by["on"]))
print(f"{label}: median IOPS off {off:.0f}, on {on:.0f}: on/off {on / off:.4f} "
      f"({(on / off - 1) * 100:+.2f}% IOPS with tracing on); median of the per-pair "
      f"on/off ratios {statistics.median(pairs):.4f}")
EOF
}

# --- soakd as the load ------------------------------------------------------------

soakd_section() {
	local label=$1 trace=$2 marks=$WORK/$1.marks
	say "$label: soakd closed loop, QD $QD, $PAIRS off/on pairs of ${PHASE}s (load $(loadavg))"
	start_soakd "$label" "" "$trace"
	: >"$marks"
	sleep 1    # the workload settles
	local i state start
	for ((i = 0; i < 2 * PAIRS; i++)); do
		state=$(phase_state "$i")
		ctl trace "$state" blk >/dev/null || die "soakctl trace $state blk failed"
		start=$(run_elapsed)
		sleep "$PHASE"
		echo "$((i / 2)) $state $start $(run_elapsed)" >>"$marks"
	done
	stop_soakd
	# Each phase: the interval records wholly inside it.
	python3 - "$marks" "$WORK"/state-"$label"/*/intervals.log >"$WORK/$label.phases" <<'EOF'
import json, sys
marks = [line.split() for line in open(sys.argv[1])]   # pair state start end
intervals = []
for line in open(sys.argv[2]):
    record = json.loads(line.split(" ", 1)[-1])
    if isinstance(record, dict) and record.get("type") == "interval":
        intervals.append((record["start_ns"] / 1e9, record["end_ns"] / 1e9,
                          record["ops"]["read"]["count"]))
for pair, state, start, end in marks:
    start, end = float(start), float(end)
    inside = [(b - a, n) for a, b, n in intervals if a >= start and b <= end]
    seconds = sum(s for s, _ in inside)
    if seconds > 0:
        print(pair, state, sum(n for _, n in inside) / seconds)
EOF
	summarize "$label" "$WORK/$label.phases"
}

# --- fio as the load ----------------------------------------------------------------

fio_section() {
	say "fio: io_uring randread QD $QD, $PAIRS off/on pairs of ${PHASE}s runs, traced by soakd with all_devices (load $(loadavg))"
	# soakd only traces here: its workload on the device never starts.
	start_soakd fio ', "autostart": false' '{"blk": false, "all_devices": true}'
	: >"$WORK/fio.phases"
	local i state iops
	for ((i = 0; i < 2 * PAIRS; i++)); do
		state=$(phase_state "$i")
		ctl trace "$state" blk >/dev/null || die "soakctl trace $state blk failed"
		fio --name=trace --filename="$LOOP" --ioengine=io_uring --direct=1 --rw=randread \
			--bs=4k --iodepth="$QD" --fixedbufs=1 --registerfiles=1 --norandommap \
			--randrepeat=0 --time_based --runtime="$PHASE" --ramp_time=1 \
			--output-format=json >"$WORK/fio-$i.json" 2>"$WORK/fio-$i.err" ||
			die "fio failed: $(cat "$WORK/fio-$i.err")"
		iops=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["iops"])' \
			"$WORK/fio-$i.json")
		echo "$((i / 2)) $state $iops" >>"$WORK/fio.phases"
	done
	# The probes saw fio's reads while on.
	ctl dump --format json >"$WORK/fio-dump.json"
	python3 -c '
import json, sys
blk = json.load(open(sys.argv[1]))["kernel"]["blk"].get(sys.argv[2], {})
print("fio: soakd traced %d reads on %s" % (blk.get("ops", {}).get("read", {}).get("count", 0), sys.argv[2]))' \
		"$WORK/fio-dump.json" "${LOOP#/dev/}"
	stop_soakd
	summarize fio "$WORK/fio.phases"
}

# --- the probe's own cost -------------------------------------------------------------

# cpu_busy_s: CPU seconds spent (not idle, not iowait) on all CPUs so far.
cpu_busy_s() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / { print ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}

# proc_cpu_s PID: the process's user+system CPU seconds so far.
proc_cpu_s() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/^.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"
}

# read_count: soakd's reads so far (as of its last interval).
read_count() {
	ctl status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["workloads"][0]["ops"]["read"]["count_total"])'
}

# prog_stats PID NAME: "run_time_ns run_cnt recursion_misses" of soakd PID's program NAME
# (found through the program fds it holds: other soakd instances on the
# machine load programs of the same name).
prog_stats() {
	local id
	for id in $(grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u); do
		bpftool prog show id "$id" --json 2>/dev/null
		echo
	done | python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        p = json.loads(line)
        if p.get("name") == sys.argv[1]:
            print(p.get("run_time_ns", 0), p.get("run_cnt", 0), p.get("recursion_misses", 0))
            break' "$2"
}

cost_section() {
	command -v bpftool >/dev/null || { say "cost: no bpftool; skipped"; return 0; }
	local before s0 c0 m0 s1 c1 m1 busy0 busy1 own0 own1 n0 n1 t0 t1
	local window=$((PHASE > 5 ? PHASE : 5))
	say "cost: soakd closed loop, QD $QD, ${window}s with block tracing on and kernel.bpf_stats_enabled (load $(loadavg))"
	before=$(sysctl -n kernel.bpf_stats_enabled)
	start_soakd cost "" '{"blk": true}'
	sysctl -qw kernel.bpf_stats_enabled=1
	sleep 1
	read -r s0 c0 m0 < <(prog_stats "$SOAKD_PID" soak_blk_complete)
	busy0=$(cpu_busy_s) own0=$(proc_cpu_s "$SOAKD_PID") n0=$(read_count) t0=$(run_elapsed)
	sleep "$window"
	read -r s1 c1 m1 < <(prog_stats "$SOAKD_PID" soak_blk_complete)
	busy1=$(cpu_busy_s) own1=$(proc_cpu_s "$SOAKD_PID") n1=$(read_count) t1=$(run_elapsed)
	sysctl -qw kernel.bpf_stats_enabled="$before"
	stop_soakd
	python3 - "$s0" "$c0" "$s1" "$c1" "$busy0" "$busy1" "$n0" "$n1" "$t0" "$t1" "$own0" "$own1" \
		"$m0" "$m1" <<'EOF'
import sys
s0, c0, s1, c1 = (int(float(v)) for v in sys.argv[1:5])
busy0, busy1, n0, n1, t0, t1, own0, own1 = (float(v) for v in sys.argv[5:13])
misses = int(float(sys.argv[14])) - int(float(sys.argv[13]))
calls, ns = c1 - c0, s1 - s0
if calls <= 0 or n1 <= n0:
    sys.exit("cost: no calls counted (kernel.bpf_stats_enabled not honoured?)")
per_call = ns / calls
requests = n1 - n0
# The probe's time against the CPU time a request takes: every CPU's busy
# time over the requests (soakd, the loop device's workers, interrupts, and
# whatever else the machine runs, so the share is if anything low; soakd's
# own CPU time is shown too, but the probe runs in the completing context,
# not soakd's).  Calls include the completions of other devices, where the
# probe returns at its first map lookup.
own = (own1 - own0) * 1e9 / requests
machine = (busy1 - busy0) * 1e9 / requests
probe = ns / requests
print(f"cost: {requests / (t1 - t0):.0f} IOPS; soak_blk_complete ran {calls / (t1 - t0):.0f} "
      f"times/s, {per_call:.0f} ns per call (bpf_stats' own clock reads included), "
      f"{probe:.0f} ns per request; {misses} runs skipped by the kernel's recursion guard")
print(f"cost: CPU time per request: whole machine {machine:.0f} ns (soakd's own {own:.0f} ns): "
      f"the probe is {probe / machine * 100:.2f}% of it")
EOF
}

say "$LOOP over $IMG; $(nproc) CPUs; kernel $(uname -r)"
for s in $SECTIONS; do
	case $s in
	soakd)
		soakd_section soakd '{"blk": false}'
		[[ -n ${BENCH_MAP:-} ]] && soakd_section soakd-map '{"blk": false, "blk_timestamps": "map"}'
		;;
	fio) fio_section ;;
	cost) cost_section ;;
	esac
done
say "done (load $(loadavg))"
