#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What device data verification costs (issue 15): closed-loop 4 KiB random
# reads at queue depth 32 on a RAM-backed loop device (losetup --direct-io=on
# over a file in /dev/shm), with "verify" off and on, interleaved over
# several rounds (off first in odd rounds, on first in even ones).  The
# verify runs fill the device first ("fill": true, before the measured
# schedule starts), so every block read is checked in full (CRC-32C of
# 4 KiB, the header, the generation map).  It prints each run's IOPS and
# p99, then the median IOPS of each and the median over rounds of the
# on/off ratio of the same round.  The issue's goal: a ratio of at least 0.90.
#
# Needs root (loop devices).  Builds soakd in build-bench/ (release, no
# tests) if needed.
#
# Environment (all optional):
#   BENCH_ROUNDS=3          rounds (each: off and on)
#   BENCH_SECONDS=10        length of each measured run, seconds
#   BENCH_QD=32             queue depth
#   BENCH_DEV_SIZE_MB=1024  the loop device's backing file in /dev/shm
#   BENCH_BUILD_DIR=...     soakd build directory (default: <repo>/build-bench)
#   BENCH_NO_BUILD=1        use the binaries in BENCH_BUILD_DIR as they are
#   BENCH_KEEP=1            keep the working directory
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_RUN=${BENCH_SECONDS:-10}
QD=${BENCH_QD:-32}
DEV_SIZE_MB=${BENCH_DEV_SIZE_MB:-1024}
BENCH_NAME=verify-cost
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"


whole_numbers ROUNDS SECONDS_RUN QD DEV_SIZE_MB
[[ $(id -u) == 0 ]] || die "needs root (it sets up a loop device); run it with sudo"
command -v python3 >/dev/null || die "needs python3"

build_soakd

WORK=$(mktemp -d /tmp/verify-cost.XXXXXX)
IMG=
LOOP=
SOAKD_PID=
cleanup() {
	local rc=$?
	if [[ -n $SOAKD_PID ]] && kill -0 "$SOAKD_PID" 2>/dev/null; then
		kill -KILL "$SOAKD_PID" 2>/dev/null || true
		wait "$SOAKD_PID" 2>/dev/null || true
	fi
	[[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null
	[[ -n $IMG ]] && rm -f "$IMG"
	if [[ -n ${BENCH_KEEP:-} ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

IMG=$(mktemp /dev/shm/verify-cost.XXXXXX.img)
# Every page of the image written: a hole in tmpfs reads as a zero page,
# far cheaper for the loop device's worker than a real page, so a sparse
# image would flatter the verify-off runs (the verify runs fill it first).
dd if=/dev/zero of="$IMG" bs=1M count="$DEV_SIZE_MB" status=none
LOOP=$(losetup --direct-io=on -f --show "$IMG")
say "$LOOP over $IMG ($DEV_SIZE_MB MiB); load average $(cut -d' ' -f1-3 /proc/loadavg)"

config() { # NAME VERIFY
	local verify=
	[[ $2 == on ]] && verify=', "verify": true, "fill": true'
	cat <<-EOF
	{"run": {"name": "$1", "duration": "${SECONDS_RUN}s", "interval": "1s", "on_finish": "idle"},
	 "workloads": [{"name": "bench", "type": "device", "model": "pattern",
	                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 100,
	                "block_size": "4KiB", "access": "random", "queue_depth": $QD$verify}]}
	EOF
}

ctl() { timeout 20 "$SOAKCTL" --socket "$1" "${@:2}"; }

# Prints: iops p99_us checked failures
run() { # TAG VERIFY
	local tag=$1 cfg=$WORK/$1.json sock=$WORK/$1.sock
	config "$tag" "$2" >"$cfg"
	"$SOAKD" --config "$cfg" --socket "$sock" --state-dir "$WORK/state-$tag" --no-table \
		2>"$WORK/$tag.log" &
	SOAKD_PID=$!
	local deadline=$((SECONDS + SECONDS_RUN + 120)) state=
	# Not polled while it runs: a python3 started every half second is a
	# tenth of a core on a small machine, taken from whichever run it hits.
	sleep "$SECONDS_RUN"
	until [[ $state == finished ]]; do
		((SECONDS < deadline)) || die "$tag: did not finish; see $WORK/$tag.log"
		kill -0 "$SOAKD_PID" 2>/dev/null || { cat "$WORK/$tag.log" >&2; die "$tag: soakd exited"; }
		sleep 0.5
		state=$(ctl "$sock" status --json 2>/dev/null |
			python3 -c 'import json,sys; print(json.load(sys.stdin)["workloads"][0]["state"])' 2>/dev/null || true)
	done
	ctl "$sock" dump --format json >"$WORK/$tag.dump.json" || die "$tag: dump failed"
	kill -TERM "$SOAKD_PID"
	wait "$SOAKD_PID" || true
	SOAKD_PID=
	python3 - "$WORK/$tag.dump.json" <<-'PY'
	import json, sys
	op = json.load(open(sys.argv[1]))["workloads"][0]["ops"]["read"]
	v = op.get("verify", {})
	fails = sum(v.get(k, 0) for k in ("corrupt", "stale", "misdirected", "torn", "foreign"))
	print(f'{op["rate_achieved"]:.0f} {op["latency_us"]["p99"]:.1f} {v.get("checked", 0)} {fails}')
	PY
}

results=()
for ((round = 1; round <= ROUNDS; round++)); do
	order=(off on)
	((round % 2 == 0)) && order=(on off)
	for mode in "${order[@]}"; do
		read -r iops p99 checked fails < <(run "r$round-$mode" "$mode")
		say "round $round verify $mode: $iops IOPS, p99 $p99 us, $checked blocks checked, $fails failures"
		[[ $mode == on ]] && ((checked == 0 || fails > 0)) &&
			die "round $round: verify on checked $checked blocks with $fails failures"
		results+=("$round $mode $iops")
	done
done
printf '%s\n' "${results[@]}" | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    r, mode, iops = line.split()
    runs.setdefault(int(r), {})[mode] = float(iops)
off = [x["off"] for x in runs.values()]
on = [x["on"] for x in runs.values()]
ratios = [x["on"] / x["off"] for x in runs.values()]
print(f"verify off: median {statistics.median(off):.0f} IOPS; verify on: median {statistics.median(on):.0f} IOPS")
each = ", ".join("%.3f" % r for r in ratios)
print(f"on/off: median {statistics.median(ratios):.3f} over {len(ratios)} rounds ({each}); goal >= 0.90")
'
say "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
