#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd against wrk (issue 16: requests per second at least 0.8x wrk's):
# plain HTTP GETs of 4 KiB objects from the same nginx on 127.0.0.1,
# keep-alive, the same number of connections, closed loop.  soakd: an
# object workload ("protocol": "http", "mix": {"get": 100}, "verify": true:
# every body checked against what soakd wrote in its prefill); wrk: GETs of
# one 4 KiB static file (wrk reads each body and checks nothing).  Rounds
# interleave the tools (soakd first in odd rounds, wrk first in even ones);
# each prints requests/s, CPU per request of the whole process (wait4
# rusage, bench/rusage.py) and the load average; then medians and the
# median of the per-round soakd/wrk ratios.  See bench/README.md.
#
# Installs nginx and wrk (Debian packages, bench-only) when missing.
# Environment: BENCH_ROUNDS (3), BENCH_SECONDS (10), BENCH_CONNS (32),
# BENCH_THREADS (2: wrk's -t and soakd's "threads"), BENCH_PORT (18089),
# BENCH_BUILD_DIR, BENCH_NO_BUILD=1, BENCH_KEEP=1.
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-3}
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-32}
THREADS=${BENCH_THREADS:-2}
PORT=${BENCH_PORT:-18089}
BENCH_NAME=http-vs-wrk
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

whole_numbers ROUNDS SECS CONNS THREADS PORT
need_packages wrk:wrk nginx:nginx jq:jq curl:curl
build_soakd

WORK=$(mktemp -d /var/tmp/http-vs-wrk.XXXXXX)
NGINX_PID=
cleanup() {
	local rc=$?
	[[ -n $NGINX_PID ]] && kill -TERM "$NGINX_PID" 2>/dev/null
	if [[ -n ${BENCH_KEEP:-} ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
	exit "$rc"
}
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say terminated; exit 143' TERM

start_nginx "$WORK" "$PORT"
mkdir -p "$WORK/dav/wrk"
head -c 4096 /dev/urandom >"$WORK/dav/wrk/obj"
curl -sf -o /dev/null "http://127.0.0.1:$PORT/wrk/obj" || die "nginx does not answer on port $PORT"

# Prints: requests/s requests cpu_s elapsed_s
run_soakd() { # TAG
	local tag=$1 cfg=$WORK/$1.json rc=0
	cat >"$cfg" <<-EOF
	{"run": {"name": "$tag", "duration": "${SECS}s", "interval": "1s", "on_finish": "exit"},
	 "workloads": [{"name": "get", "type": "object", "protocol": "http",
	                "endpoint": "http://127.0.0.1:$PORT/soakd-$tag/", "concurrency": $CONNS,
	                "threads": $THREADS, "objects": $CONNS, "size": "4KiB",
	                "mix": {"get": 100}, "verify": true, "cleanup": false}]}
	EOF
	"$REPO/bench/rusage.py" "$WORK/$tag.ru" "$WORK/$tag.pid" "$SOAKD" --config "$cfg" \
		--socket "$WORK/$tag.sock" --state-dir "$WORK/state-$tag" --no-table 2>"$WORK/$tag.log" || rc=$?
	((rc == 0)) || { tail "$WORK/$tag.log" >&2; die "soakd exited with $rc"; }
	"$SOAKCTL" dump --format json --run-dir "$WORK/state-$tag/$tag" >"$WORK/$tag.dump.json"
	local u s v rest
	read -r u s v rest <"$WORK/$tag.ru"
	jq -r --arg c "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" '
		.workloads[0] as $w | $w.ops.get as $g |
		if ($g.errors // 0) > 0 or ($g.corrupt // 0) > 0 then
			error("soakd: \($g.errors) errors, \($g.corrupt) corrupt") else . end |
		[$g.rate_achieved, $g.count, ($c | tonumber), $w.active_s] | @tsv' "$WORK/$tag.dump.json"
}

run_wrk() { # TAG
	local tag=$1 rc=0
	"$REPO/bench/rusage.py" "$WORK/$tag.ru" "$WORK/$tag.pid" wrk -t "$THREADS" -c "$CONNS" \
		-d "${SECS}s" "http://127.0.0.1:$PORT/wrk/obj" >"$WORK/$tag.out" 2>&1 || rc=$?
	((rc == 0)) || { cat "$WORK/$tag.out" >&2; die "wrk exited with $rc"; }
	grep -q 'Non-2xx\|Socket errors' "$WORK/$tag.out" && { cat "$WORK/$tag.out" >&2; die "wrk saw errors"; }
	local u s v rest
	read -r u s v rest <"$WORK/$tag.ru"
	awk -v u="$u" -v s="$s" -v secs="$SECS" '
		/requests in/ { n = $1 } /^Requests\/sec:/ { r = $2 }
		END { printf "%s\t%s\t%s\t%s\n", r, n, u + s, secs }' "$WORK/$tag.out"
}

LA_START=$(cut -d' ' -f1-3 /proc/loadavg)
echo "soakd vs wrk: 4 KiB GETs from nginx on 127.0.0.1:$PORT, $CONNS connections, $THREADS threads, ${SECS}s x $ROUNDS rounds"
echo "load average at start $LA_START ($(nproc) CPUs)"
printf '\n%5s %-5s %10s %10s %8s %12s  %s\n' round tool req/s requests cpu-s cpu-us/req load-avg
: >"$WORK/results.tsv"
for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then order="soakd wrk"; else order="wrk soakd"; fi
	for t in $order; do
		"run_$t" "$t$r" >"$WORK/row"
		IFS=$'\t' read -r rps n cpu el <"$WORK/row"
		la=$(cut -d' ' -f1-3 /proc/loadavg)
		printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$t" "$rps" "$n" "$cpu" >>"$WORK/results.tsv"
		awk -v r="$r" -v t="$t" -v rps="$rps" -v n="$n" -v c="$cpu" -v la="$la" \
			'BEGIN { printf "%5d %-5s %10.0f %10d %8.2f %12.2f  %s\n", r, t, rps, n, c, c / n * 1e6, la }'
	done
done
awk -F'\t' '
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ rps[$2, $1] = $3; cpu[$2, $1] = $5 / $4 * 1e6; if ($1 > R) R = $1 }
END {
	for (r = 1; r <= R; r++) {
		q[r] = rps["soakd", r] / rps["wrk", r]; c[r] = cpu["soakd", r] / cpu["wrk", r]
		a[r] = rps["soakd", r]; b[r] = rps["wrk", r]
	}
	printf "\nmedians: soakd %.0f req/s, wrk %.0f req/s; soakd/wrk req/s %.2f (goal >= 0.8); CPU per request soakd/wrk %.2f\n",
		median(a, R), median(b, R), median(q, R), median(c, R)
}' "$WORK/results.tsv"
echo "load average $LA_START at start, $(cut -d' ' -f1-3 /proc/loadavg) at end; soakd checks every body (verify), wrk checks none"
