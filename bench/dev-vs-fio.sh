#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd against fio on the same 4 KiB random-read loads, one after the other
# on the same RAM-backed loop device, A and B interleaved over several rounds:
#
#   closed  closed loop at queue depth 32 (soakd: no rate; fio: iodepth=32)
#   rate    20000 IOPS with queue depth 32 (soakd: rate; fio: rate_iops)
#   qd1     closed loop at queue depth 1 (both tools)
#
# For each run it records IOPS, p99 latency and CPU per I/O of the load
# generator, and prints medians over the rounds and the soakd/fio ratios
# (the median of the per-round ratios). See bench/README.md.
#
# Needs root (loop devices). Installs fio (and jq) with apt-get if missing,
# builds soakd in build-bench/ (release, no tests) if needed.
#
# Environment (all optional):
#   BENCH_ROUNDS=3        rounds (each: both loads, both tools)
#   BENCH_SECONDS=10      length of each measured run, seconds
#   BENCH_WARMUP=2        warm-up run of the same tool before each measured
#                         run, seconds (0: none)
#   BENCH_RATE=20000      target IOPS of the rate-limited load
#   BENCH_QD=32           queue depth of both loads
#   BENCH_LOADS="closed rate qd1"
#   BENCH_DEV_SIZE_MB=1024  size of the loop device's backing file in /dev/shm
#   BENCH_BUILD_DIR=...   soakd build directory (default: <repo>/build-bench)
#   BENCH_NO_BUILD=1      use the binaries in BENCH_BUILD_DIR as they are
#   BENCH_FIO_EXTRA="..." extra fio options, appended (e.g. "--fixedbufs=0")
#   BENCH_KEEP=1          keep the working directory (configs, JSON, logs)
#   BENCH_TRACE=off       soakd's kernel probes: off, as issue 16's goals were
#                         measured (fio has none); "on", soakd's default, adds
#                         the block probes' cost (see trace-overhead.sh)
set -euo pipefail

ROUNDS=${BENCH_ROUNDS:-3}
SECONDS_RUN=${BENCH_SECONDS:-10}
WARMUP=${BENCH_WARMUP:-2}
RATE=${BENCH_RATE:-20000}
QD=${BENCH_QD:-32}
LOADS=${BENCH_LOADS:-closed rate qd1}
DEV_SIZE_MB=${BENCH_DEV_SIZE_MB:-1024}
TRACE=${BENCH_TRACE:-off}
BENCH_NAME=dev-vs-fio
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
[[ $TRACE == on || $TRACE == off ]] || die "BENCH_TRACE is '$TRACE', not on or off"


for v in ROUNDS SECONDS_RUN WARMUP RATE QD DEV_SIZE_MB; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not '${!v}'"
done
((ROUNDS >= 1 && SECONDS_RUN >= 1 && QD >= 1 && RATE >= 1)) || die "rounds, seconds, rate and queue depth must be at least 1"
for l in $LOADS; do
	[[ $l == closed || $l == rate || $l == qd1 ]] || die "unknown load '$l' in BENCH_LOADS (closed, rate, qd1)"
done
[[ $(id -u) == 0 ]] || die "needs root (it sets up a loop device); run it with sudo"

# --- tools -------------------------------------------------------------------

apt_updated=
apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	# Try the package lists already on the machine first; update only if that fails.
	if ! apt-get install -y --no-install-recommends "$@" >&2; then
		[[ -z $apt_updated ]] || die "cannot install $*"
		apt_updated=1
		apt-get update >&2
		apt-get install -y --no-install-recommends "$@" >&2 || die "cannot install $*"
	fi
}
missing=()
command -v fio >/dev/null || missing+=(fio)
command -v jq >/dev/null || missing+=(jq)
command -v losetup >/dev/null || missing+=(util-linux)
((${#missing[@]} == 0)) || { say "installing ${missing[*]}"; apt_install "${missing[@]}"; }

build_soakd

# --- the device and the working directory --------------------------------------

WORK=$(mktemp -d /tmp/dev-vs-fio.XXXXXX)
IMG=
LOOP=
SOAKD_PID=
cleanup() {
	local rc=$?
	if [[ -n $SOAKD_PID ]] && kill -0 "$SOAKD_PID" 2>/dev/null; then
		kill -TERM "$SOAKD_PID" 2>/dev/null || true
		sleep 0.5
		kill -KILL "$SOAKD_PID" 2>/dev/null || true
	fi
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

IMG=$(mktemp /dev/shm/dev-vs-fio.XXXXXX.img)
say "filling $IMG with $DEV_SIZE_MB MiB of random data"
dd if=/dev/urandom of="$IMG" bs=1M count="$DEV_SIZE_MB" status=none
LOOP=$(losetup --direct-io=on -f --show "$IMG")
dio=$(cat "/sys/block/${LOOP#/dev/}/loop/dio" 2>/dev/null || echo '?')
[[ $dio == 1 ]] || say "warning: $LOOP does not report direct I/O (loop/dio=$dio)"

# --- helpers -------------------------------------------------------------------

# "user_s sys_s nvcsw" from a file of bench/rusage.py.
RUSAGE=$REPO/bench/rusage.py
rusage_of() { local u s v rest; read -r u s v rest <"$1"; echo "$u $s $v"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Every soakd gets a state directory of its own, so that none resumes an
# earlier run (a warm-up, or a run stopped from outside) instead of starting.
HAVE_STATE_DIR=
"$SOAKD" --help 2>&1 | grep -q -- --state-dir && HAVE_STATE_DIR=1
state_opt() {
	STATE_OPT=()
	[[ -n $HAVE_STATE_DIR ]] && STATE_OPT=(--state-dir "$(mktemp -d "$WORK/state.XXXXXX")")
	return 0
}

qd_of() { if [[ $1 == qd1 ]]; then echo 1; else echo "$QD"; fi; }

soakd_config() { # NAME SECONDS LOAD ON_FINISH
	local rate= qd
	qd=$(qd_of "$3")
	[[ $3 == rate ]] && rate=", \"rate\": $RATE, \"max_lag\": \"0s\""
	cat <<-EOF
	{"run": {"name": "$1", "duration": "${2}s", "interval": "1s", "on_finish": "$4",
	         "trace": $([[ $TRACE == on ]] && echo true || echo false)},
	 "workloads": [{"name": "bench", "type": "device", "model": "pattern",
	                "targets": ["$LOOP"], "read_pct": 100, "block_size": "4KiB",
	                "access": "random", "queue_depth": $qd$rate}]}
	EOF
}

# Starts soakd on CONFIG in the background under bench/rusage.py, which
# records its rusage (CPU, context switches of all its threads, also those
# that have exited) once it has been waited for. Sets SOAKD_PID and WRAP_PID.
soakd_start() { # CONFIG SOCKET TIMES LOG
	rm -f "$2" "$3" "$3.pid"
	state_opt
	"$RUSAGE" "$3" "$3.pid" "$SOAKD" --config "$1" --socket "$2" --no-table "${STATE_OPT[@]}" 2>"$4" &
	WRAP_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		[[ -s $3.pid ]] && break
		sleep 0.05
	done
	SOAKD_PID=$(cat "$3.pid")
}

soakd_warmup() {
	local cfg=$WORK/soakd-warmup.json rc=0
	soakd_config warmup "$WARMUP" "$1" exit >"$cfg"
	state_opt
	"$SOAKD" --config "$cfg" --socket "$WORK/warmup.sock" --no-table "${STATE_OPT[@]}" \
		2>"$WORK/soakd-warmup.log" || rc=$?
	((rc == 0)) || { cat "$WORK/soakd-warmup.log" >&2; die "soakd warm-up failed (exit $rc)"; }
}

# Prints: iops p99_submit_us p99_other_us ios cpu_s elapsed_s extra_cpu_s
#         issue_delay_p99_us voluntary_ctxsw (soakd only; fio: nan)
# On a shared machine a soakd may be stopped by someone else's cleanup (a
# broad pkill): that run is repeated, at most twice, and says so on stderr.
run_soakd() { # LOAD TAG
	local rc
	for _ in 1 2 3; do
		rc=0
		run_soakd_once "$@" || rc=$?
		((rc == 75)) || return "$rc"
		say "$2: soakd was stopped by a signal this script did not send; running it again"
	done
	die "$2: soakd was stopped from outside three times"
}

run_soakd_once() { # LOAD TAG
	local load=$1 tag=$2 cfg=$WORK/$2.json sock=$WORK/$2.sock log=$WORK/$2.log
	((WARMUP > 0)) && soakd_warmup "$load"
	soakd_config "$tag" "$SECONDS_RUN" "$load" idle >"$cfg"
	soakd_start "$cfg" "$sock" "$WORK/$tag.times" "$log"
	local deadline=$((SECONDS + SECONDS_RUN + 60)) state=
	# In the background, so that a signal to the script is handled at once.
	sleep "$SECONDS_RUN" &
	wait $!
	while :; do
		state=$("$SOAKCTL" --socket "$sock" status --json 2>/dev/null | jq -r .state) || state=
		[[ $state == finished ]] && break
		if ! kill -0 "$SOAKD_PID" 2>/dev/null; then
			wait "$WRAP_PID" || true
			SOAKD_PID=
			grep -Eq 'SIG(TERM|INT): stopping' "$log" && return 75
			cat "$log" >&2
			die "soakd exited early"
		fi
		((SECONDS < deadline)) || die "soakd did not finish its ${SECONDS_RUN}s run (state '$state')"
		sleep 0.1
	done
	"$SOAKCTL" --socket "$sock" dump --format json >"$WORK/$tag.dump.json"
	# utime+stime from /proc before it exits: a cross-check of the rusage.
	local tck stat_cpu
	tck=$(getconf CLK_TCK)
	stat_cpu=$(sed 's/.*) //' "/proc/$SOAKD_PID/stat" | awk -v t="$tck" '{ printf "%.2f", ($12 + $13) / t }')
	kill -TERM "$SOAKD_PID"
	local rc=0
	wait "$WRAP_PID" || rc=$?
	SOAKD_PID=
	((rc == 0)) || { cat "$log" >&2; die "soakd exited with $rc"; }
	# issue_delay_us p99 over the whole run: one slice as long as the run,
	# from the recorded run (a live dump over the socket gives no slices).
	local issue_p99=nan
	if [[ -n $HAVE_STATE_DIR ]]; then
		issue_p99=$("$SOAKCTL" dump --format csv --op read --run-dir "${STATE_OPT[1]}/$tag" \
			--slice "$((SECONDS_RUN + 60))s" | awk -F, '
			NR == 1 { for (i = 1; i <= NF; i++) if ($i == "issue_delay_p99_us") c = i; next }
			c && $2 == "read" { v = $c } END { print v == "" ? "nan" : v }')
	fi
	local w
	w=$(jq -c '.workloads[0]' "$WORK/$tag.dump.json")
	[[ $(jq -r .state <<<"$w") == finished ]] || { cat "$log" >&2; die "soakd workload ended as $(jq -r '.state + " " + (.reason // "")' <<<"$w")"; }
	# Wake-ups: voluntary context switches of all of soakd's threads (a
	# sleep in io_uring_enter or on a futex is one), from its rusage.
	local u s vcsw
	read -r u s vcsw < <(rusage_of "$WORK/$tag.times")
	jq -r --arg u "$u" --arg s "$s" --arg st "$stat_cpu" --arg ip "$issue_p99" --arg cs "$vcsw" '
		.ops.read as $r |
		[$r.rate_achieved, $r.service_us.p99, $r.latency_us.p99, $r.count,
		 (($u | tonumber) + ($s | tonumber)), .active_s, ($st | tonumber),
		 $ip, ($cs | tonumber)] | @tsv' <<<"$w"
}

FIO_ARGS=(--ioengine=io_uring --direct=1 --rw=randread --bs=4k --iodepth="$QD"
	--norandommap --randrepeat=0 --fixedbufs=1 --registerfiles=1
	--lat_percentiles=1 --clat_percentiles=1 --percentile_list=50:99:99.9
	--time_based --group_reporting)
# shellcheck disable=SC2206
FIO_ARGS+=(${BENCH_FIO_EXTRA:-})

fio_args() { # LOAD SECONDS
	local a=(--name=bench --filename="$LOOP" "${FIO_ARGS[@]}" --runtime="$2" --iodepth="$(qd_of "$1")")
	[[ $1 == rate ]] && a+=(--rate_iops="$RATE")
	printf '%s\n' "${a[@]}"
}

run_fio() { # LOAD TAG
	local load=$1 tag=$2 args rc=0
	if ((WARMUP > 0)); then
		mapfile -t args < <(fio_args "$load" "$WARMUP")
		fio "${args[@]}" --output=/dev/null >/dev/null 2>"$WORK/fio-warmup.log" ||
			{ cat "$WORK/fio-warmup.log" >&2; die "fio warm-up failed"; }
	fi
	mapfile -t args < <(fio_args "$load" "$SECONDS_RUN")
	"$RUSAGE" "$WORK/$tag.times" "$WORK/$tag.pid" fio "${args[@]}" --output-format=json \
		--output="$WORK/$tag.fio.json" >/dev/null 2>"$WORK/$tag.log" || rc=$?
	((rc == 0)) || { cat "$WORK/$tag.log" >&2; die "fio exited with $rc"; }
	local u s vcsw
	read -r u s vcsw < <(rusage_of "$WORK/$tag.times")
	jq -r --arg u "$u" --arg s "$s" --arg cs "$vcsw" '
		.jobs[0] as $j | $j.read as $r |
		[$r.iops,
		 (($r.lat_ns.percentile["99.000000"] // null) | if . == null then "nan" else . / 1000 end),
		 $r.clat_ns.percentile["99.000000"] / 1000,
		 $r.total_ios, (($u | tonumber) + ($s | tonumber)), $j.job_runtime / 1000,
		 ($j.usr_cpu + $j.sys_cpu) / 100 * $j.job_runtime / 1000,
		 "nan", ($cs | tonumber)] | @tsv' "$WORK/$tag.fio.json"
}

# --- the runs ------------------------------------------------------------------

RESULTS=$WORK/results.tsv
: >"$RESULTS"
LOAD_START=$(loadavg)
cat <<EOF
soakd vs fio: 4 KiB random reads, queue depth $QD, on $LOOP (loop, direct-io=$dio, ${DEV_SIZE_MB} MiB in /dev/shm)
  loads: $LOADS (rate = $RATE IOPS); $ROUNDS rounds; ${SECONDS_RUN}s per run after a ${WARMUP}s warm-up run; soakd's kernel probes $TRACE
  soakd: $("$SOAKD" --version 2>&1 | head -1) ($BUILD, $(meson introspect "$BUILD" --buildoptions 2>/dev/null | jq -r '.[] | select(.name == "buildtype") | .value' 2>/dev/null || echo '?'))
  repo:  $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo '?')$(GIT_OPTIONAL_LOCKS=0 git -C "$REPO" diff --quiet HEAD -- 2>/dev/null || echo ' + uncommitted changes')
  fio:   $(fio --version) ${FIO_ARGS[*]}
  host:  $(uname -r), $(nproc) CPUs, load average at start $LOAD_START

round load   tool    IOPS  p99-submit-us  p99-other-us       I/Os  cpu-s  cpu-us/IO  cpu% issue-p99  ctxsw/IO  load-avg
EOF
for ((round = 1; round <= ROUNDS; round++)); do
	# ABBA: soakd first in odd rounds, fio first in even rounds.
	if ((round % 2)); then tools="soakd fio"; else tools="fio soakd"; fi
	for load in $LOADS; do
		for tool in $tools; do
			tag=$tool-$load-$round
			# Not in $(...): soakd's pid must stay visible to the cleanup trap.
			"run_$tool" "$load" "$tag" >"$WORK/$tag.row"
			IFS=$'\t' read -r iops p99s p99o ios cpu el extra ip99 csw <"$WORK/$tag.row"
			la=$(loadavg)
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$load" "$tool" \
				"$iops" "$p99s" "$p99o" "$ios" "$cpu" "$el" "$extra" "$la" "$ip99" "$csw" >>"$RESULTS"
			awk -v r="$round" -v l="$load" -v t="$tool" -v iops="$iops" -v p="$p99s" \
				-v o="$p99o" -v n="$ios" -v c="$cpu" -v e="$el" -v la="$la" \
				-v ip="$ip99" -v cs="$csw" 'BEGIN {
				printf "%5d %-6s %-5s %8.0f %14.1f %13.1f %10d %6.2f %10.3f %5.0f %9s %9s  %s\n",
					r, l, t, iops, p, o, n, c, c / n * 1e6, c / e * 100, ip,
					cs == "nan" ? "nan" : sprintf("%.3f", cs / n), la }'
		done
	done
done

# --- the summary ---------------------------------------------------------------

cat <<EOF

Medians over $ROUNDS rounds (ratio = median over rounds of soakd/fio in the same round):
EOF
awk -F'\t' -v loads="$LOADS" -v rate="$RATE" -v qd="$QD" '
function median(arr, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && arr[j - 1] > arr[j]; j--) { t = arr[j]; arr[j] = arr[j - 1]; arr[j - 1] = t }
	return n % 2 ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2
}
{
	# metric values per (load, tool, round)
	v[$2, $3, $1, "iops"] = $4
	v[$2, $3, $1, "p99s"] = $5
	v[$2, $3, $1, "p99o"] = $6
	v[$2, $3, $1, "cpuio"] = $8 / $7 * 1e6
	v[$2, $3, $1, "cpupct"] = $8 / $9 * 100
	v[$2, $3, $1, "jobcpuio"] = $10 / $7 * 1e6
	if ($12 != "nan" && $12 != "") v[$2, $3, $1, "issue"] = $12
	if ($13 != "nan" && $13 != "") v[$2, $3, $1, "csw"] = $13 / $7
	if ($1 > rounds) rounds = $1
}
function row(load, label, ks, kf, fmt,    r, a, b, q, na, nb, nq, ms, mf, mq) {
	na = nb = nq = 0
	for (r = 1; r <= rounds; r++) {
		if ((load, "soakd", r, ks) in v) a[++na] = v[load, "soakd", r, ks]
		if ((load, "fio", r, kf) in v) b[++nb] = v[load, "fio", r, kf]
		if ((load, "soakd", r, ks) in v && (load, "fio", r, kf) in v && v[load, "fio", r, kf] + 0 > 0)
			q[++nq] = v[load, "soakd", r, ks] / v[load, "fio", r, kf]
	}
	ms = ks == "" ? "-" : sprintf(fmt, median(a, na))
	mf = kf == "" ? "-" : sprintf(fmt, median(b, nb))
	mq = nq ? sprintf("%.2f", median(q, nq)) : "-"
	printf "%-22s %-42s %12s %12s %9s\n", "", label, ms, mf, mq
}
END {
	printf "%-22s %-42s %12s %12s %9s\n", "load", "metric", "soakd", "fio", "soakd/fio"
	n = split(loads, L, " ")
	for (i = 1; i <= n; i++) {
		if (L[i] == "closed") printf "closed loop, QD%d\n", qd
		else if (L[i] == "qd1") printf "closed loop, QD1\n"
		else printf "rate %d IOPS, QD%d\n", rate, qd
		row(L[i], "IOPS", "iops", "iops", "%.0f")
		row(L[i], "p99 from submit, us (svc / fio lat)", "p99s", "p99s", "%.1f")
		row(L[i], "CPU per I/O, us (whole process)", "cpuio", "cpuio", "%.3f")
		row(L[i], "CPU, % of one core", "cpupct", "cpupct", "%.1f")
		row(L[i], "p99 from intended time, us (soakd only)", "p99o", "", "%.1f")
		row(L[i], "p99 fio clat (after submit), us", "", "p99o", "%.1f")
		row(L[i], "CPU per I/O, us (soakd /proc stat; fio job)", "jobcpuio", "jobcpuio", "%.3f")
		row(L[i], "issue_delay_us p99 (soakd only)", "issue", "", "%.1f")
		row(L[i], "voluntary context switches (wake-ups) per I/O", "csw", "csw", "%.3f")
	}
}' "$RESULTS"
cat <<EOF

p99 like with like: soakd service_us (from just before io_uring submit) against fio lat_ns (slat+clat,
from before fio queues the I/O); fio clat_ns starts after the submit call returns; soakd latency_us
starts at the op's intended time (coordinated omission corrected), which fio does not measure.
CPU: user+sys of the whole load generator process (all threads and children, getrusage at exit)
over its whole run including start-up, divided by the I/Os it completed.
Load average: $LOAD_START at start, $(loadavg) at end ($(nproc) CPUs; the machine may be shared).
EOF
