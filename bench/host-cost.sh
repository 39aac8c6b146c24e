#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What sampling the host costs (issue 18, section 4: under 0.5% of a core):
# bench/host_cost (built with -Dtests=true) takes BENCH_SAMPLES samples of
# this machine's /proc and /sys, watching every loop device attached (as a
# run's targets would be), and prints the CPU time of one and its share of
# a core at soakd's default 1 s interval.  Three runs; compare within one
# invocation.  BUILDDIR defaults to build-test.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILDDIR=${BUILDDIR:-build-test}
BENCH_SAMPLES=${BENCH_SAMPLES:-2000}
devs=()
for d in /sys/block/loop*; do
	[[ -s $d/size && $(cat "$d/size") != 0 ]] || continue
	devs+=("$(cat "$d/dev"):$(basename "$d")")
	((${#devs[@]} < 8)) || break
done
echo "# watching ${#devs[@]} device(s): ${devs[*]}"
for run in 1 2 3; do
	"$BUILDDIR/bench/host_cost" "$BENCH_SAMPLES" "${devs[@]}"
done
