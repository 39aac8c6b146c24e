#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Many devices at ACT's storage load (issue 16): BENCH_DEVICES RAM-backed
# loop devices (losetup --direct-io=on over files in /dev/shm) under one
# act-storage workload at BENCH_LOAD (ACT's 30x by default, act-storage's
# other defaults), for BENCH_SECONDS.  Then, from the recorded run's CSV:
# every op's achieved rate in every whole interval against its target (the
# goal: within 0.5%), and soakd's total CPU (wait4 rusage, all threads) per
# op and as % of one core.  ACT itself is not packaged, so there is no peer:
# the figure is the rate held and the CPU it took.  See bench/README.md.
#
# Needs root.  Environment: BENCH_DEVICES (8), BENCH_LOAD (30x),
# BENCH_SECONDS (60), BENCH_INTERVAL (1, seconds), BENCH_DEV_SIZE_MB (256),
# BENCH_TOLERANCE_PCT (0.5), BENCH_BUILD_DIR (default <repo>/build-bench,
# release), BENCH_NO_BUILD=1, BENCH_KEEP=1 (keep the working directory).
set -euo pipefail

NDEV=${BENCH_DEVICES:-8}
LOAD=${BENCH_LOAD:-30x}
SECS=${BENCH_SECONDS:-60}
IVL=${BENCH_INTERVAL:-1}
SIZE=${BENCH_DEV_SIZE_MB:-256}
TOL=${BENCH_TOLERANCE_PCT:-0.5}
BENCH_NAME=act-many
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

whole_numbers NDEV SECS IVL SIZE
[[ $LOAD =~ ^[0-9]+(\.[0-9]+)?x$ ]] || die "BENCH_LOAD must look like 30x, not '$LOAD'"
[[ $(id -u) == 0 ]] || die "needs root (it sets up loop devices); run it with sudo"
command -v jq >/dev/null || { say "installing jq"; DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends jq >&2; }

build_soakd

WORK=$(mktemp -d /tmp/act-many.XXXXXX)
LOOPS=()
IMGS=()
cleanup() {
	local rc=$? l i
	for l in "${LOOPS[@]}"; do losetup -d "$l" 2>/dev/null || true; done
	for i in "${IMGS[@]}"; do rm -f "$i"; done
	if [[ -n ${BENCH_KEEP:-} ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

devices=
for ((i = 0; i < NDEV; i++)); do
	img=$(mktemp /dev/shm/act-many.XXXXXX.img)
	IMGS+=("$img")
	truncate -s "${SIZE}M" "$img"
	loop=$(losetup --direct-io=on -f --show "$img")
	LOOPS+=("$loop")
	devices+="${devices:+, }{\"path\": \"$loop\", \"destroy_data\": true}"
done

cat >"$WORK/act.json" <<EOF
{"run": {"name": "act", "duration": "${SECS}s", "interval": "${IVL}s", "on_finish": "exit"},
 "workloads": [{"name": "storage", "type": "device", "model": "act-storage",
                "devices": [$devices], "load": "$LOAD", "max_lag": "0s"}]}
EOF
"$SOAKD" --check-config "$WORK/act.json" >"$WORK/plan.txt" || die "check-config: $(cat "$WORK/plan.txt")"

LA_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "$NDEV devices x ${SIZE} MiB, act-storage at $LOAD, ${SECS}s; load average $LA_START"
rc=0
"$REPO/bench/rusage.py" "$WORK/rusage" "$WORK/pid" "$SOAKD" --config "$WORK/act.json" \
	--socket "$WORK/soakd.sock" --no-table --state-dir "$WORK/state" 2>"$WORK/soakd.log" || rc=$?
((rc == 0)) || { tail -20 "$WORK/soakd.log" >&2; die "soakd exited with $rc"; }
"$SOAKCTL" dump --format csv --run-dir "$WORK/state/act" >"$WORK/act.csv"
read -r user sys nvcsw nivcsw maxrss <"$WORK/rusage"

awk -F, -v tol="$TOL" -v ivl="$IVL" -v u="$user" -v s="$sys" -v vcs="$nvcsw" -v secs="$SECS" '
NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next }
{
	op = $h["op"]; len = $h["end_s"] - $h["start_s"]
	ops += $h["count"]
	if (len < ivl * 0.999 || $h["rate_target"] + 0 <= 0) next
	dev = ($h["rate_achieved"] - $h["rate_target"]) / $h["rate_target"] * 100
	n[op]++
	if (dev < 0) dev = -dev
	if (dev > worst[op]) worst[op] = dev
	if (dev > tol) over[op]++
	target[op] = $h["rate_target"]
}
END {
	printf "%-20s %12s %10s %14s %12s\n", "op", "target/s", "intervals", "worst dev %", "over " tol "%"
	bad = 0
	for (op in n) {
		printf "%-20s %12.1f %10d %14.3f %12d\n", op, target[op], n[op], worst[op], over[op]
		bad += over[op]
	}
	printf "\nops completed %d; soakd CPU %.2f s (user %.2f, sys %.2f) = %.2f us/op, %.1f%% of one core; wake-ups %.3f/op\n",
		ops, u + s, u, s, (u + s) / ops * 1e6, (u + s) / secs * 100, vcs / ops
	printf "rate held within %s%% in every whole interval: %s\n", tol, bad ? "NO (" bad " interval rows over)" : "yes"
}' "$WORK/act.csv"
echo "max RSS ${maxrss} KiB; load average $LA_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end ($(nproc) CPUs)"
