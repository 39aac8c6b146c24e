# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the integration tests; sourced, never run.  It gives each test a
# private work directory, a cleanup stack that runs however the test ends
# (success, failure, meson's timeout), bounded polling instead of sleeps,
# and helpers to run soakd and soakctl.
#
# meson runs each test with SOAKD, SOAKCTL, SRCDIR and BUILDDIR set.  A test
# that cannot run here exits 77 (meson: SKIP) after saying why.

set -euo pipefail

TEST_NAME=$(basename "$0" .sh)

note() { echo "# $*"; }
skip() {
	echo "SKIP $TEST_NAME: $*"
	exit 77
}
fail() {
	echo "FAIL $TEST_NAME: $*" >&2
	show_logs
	exit 1
}

for _var in SOAKD SOAKCTL SRCDIR BUILDDIR; do
	if [[ -z ${!_var:-} ]]; then
		echo "$TEST_NAME: $_var is not set; run me through meson test" >&2
		exit 99
	fi
done
unset _var

# skip_unless_strict REASON: skip for a reason that cannot hold where
# SOAKD_TEST_STRICT=1 (tools/test sets it when it runs as root on a kernel
# with BTF: this machine can run every test), where the skip would hide a
# broken soakd or test, so it fails instead.  Skips for things genuinely
# absent here (a package setup-deps cannot install) use skip.
skip_unless_strict() {
	if [[ ${SOAKD_TEST_STRICT:-0} == 1 ]]; then
		fail "would skip, but SOAKD_TEST_STRICT=1 (root, kernel with BTF): $*"
	fi
	skip "$@"
}

need_root() { [[ $(id -u) == 0 ]] || skip "needs root ($1)"; }
need_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null 2>&1 ||
			skip_unless_strict "needs $c, which is not installed (tools/setup-deps installs it)"
	done
}

# test_python: the interpreter of BUILDDIR's virtualenv, which holds the
# pinned Python packages the tests decode soakd's output with (made by
# tools/setup-pyvenv when missing; a test that needs them fails without).
test_python() {
	"$SRCDIR/tools/setup-pyvenv" "$BUILDDIR" >"$WORK/pyvenv.out" 2>&1 ||
		fail "tools/setup-pyvenv $BUILDDIR failed: $(tail -n 5 "$WORK/pyvenv.out")"
	echo "$BUILDDIR/pyvenv/bin/python3"
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/soakd-$TEST_NAME.XXXXXX")
SOCK="$WORK/soakd.sock"

# Cleanup stack: strings eval'd last-in first-out when the script exits.
_cleanups=()
on_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local rc=$? i
	set +e
	trap - EXIT
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do
		eval "${_cleanups[i]}"
	done
	rm -rf "$WORK"
	exit "$rc"
}
trap _run_cleanups EXIT
# meson sends SIGTERM on timeout: still detach loop devices and kill soakd.
trap 'exit 143' TERM
trap 'exit 130' INT

now_ns() { date +%s%N; }

# ram_file VAR NAME: VAR names a data file NAME in RAM (in a private
# directory under /dev/shm, removed at exit) when tmpfs takes O_DIRECT
# (Linux 6.6 and later), else in the work directory.  For tests the shared
# disk's latency would disturb.  Not /dev/shm itself: soakd refuses a
# target in a directory anyone may write to.
ram_file() {
	local -n _ram_file=$1
	local probe="/dev/shm/soakd-$TEST_NAME.$$.probe" dir
	_ram_file="$WORK/$2"
	if [[ -d /dev/shm ]] && dd if=/dev/zero of="$probe" bs=4096 count=1 oflag=direct \
		status=none 2>/dev/null; then
		dir=$(mktemp -d "/dev/shm/soakd-$TEST_NAME.XXXXXX")
		on_exit rm -rf "$dir"
		_ram_file="$dir/$2"
	fi
	rm -f "$probe"
}

# True while pid runs; a zombie (our child, exited, not yet reaped) is not
# running.  Field 3 of /proc/PID/stat, after the ")" closing the name.
is_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[[ ${stat%% *} != [ZX] ]]
}
not_alive() { ! is_alive "$1"; }

# wait_until SECONDS WHAT COMMAND...: poll COMMAND until it succeeds; fail
# after SECONDS, or as soon as soakd (when one is running) has died.
wait_until() {
	local limit=$1 what=$2
	shift 2
	local deadline=$(($(now_ns) + limit * 1000000000))
	until "$@"; do
		if [[ -n ${SOAKD_PID:-} ]] && ! is_alive "$SOAKD_PID"; then
			fail "soakd exited while waiting for $what"
		fi
		(($(now_ns) < deadline)) || fail "timed out after ${limit}s waiting for $what"
		sleep 0.1
	done
}

# Background processes, killed at exit if still there.
_kill_bg() {
	local pid=$1 i
	is_alive "$pid" || {
		wait "$pid" 2>/dev/null
		return 0
	}
	kill -TERM "$pid" 2>/dev/null
	for ((i = 0; i < 50; i++)); do
		is_alive "$pid" || break
		sleep 0.1
	done
	is_alive "$pid" && kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# spawn LOG COMMAND...: start COMMAND in the background with stdout and
# stderr in LOG; its pid is in SPAWNED.
spawn() {
	local log=$1
	shift
	"$@" >"$log" 2>&1 &
	SPAWNED=$!
	on_exit _kill_bg "$SPAWNED"
}

SOAKD_LOG="$WORK/soakd.log"
SOAKD_PID=
# Arguments for env(1) in front of soakd: "-u NAME" or "NAME=VALUE".
SOAKD_ENV=()

start_soakd() {
	spawn "$SOAKD_LOG" env ${SOAKD_ENV[@]+"${SOAKD_ENV[@]}"} "$SOAKD" "$@"
	SOAKD_PID=$SPAWNED
	note "soakd $* (pid $SOAKD_PID)"
}

# wait_soakd_exit SECONDS: wait for soakd to exit by itself; its exit
# status in SOAKD_RC.
wait_soakd_exit() {
	local pid=$SOAKD_PID
	SOAKD_PID=
	wait_until "$1" "soakd (pid $pid) to exit" not_alive "$pid"
	SOAKD_RC=0
	wait "$pid" || SOAKD_RC=$?
}

# stop_soakd SECONDS: SIGTERM, then as wait_soakd_exit.
stop_soakd() {
	kill -TERM "$SOAKD_PID"
	wait_soakd_exit "$1"
}

show_logs() {
	local log
	for log in "$WORK"/*.log; do
		[[ -s $log ]] || continue
		echo "--- last lines of $(basename "$log") ---" >&2
		tail -n 60 "$log" >&2
	done
	return 0
}

# soakctl against this test's socket, bounded in time.
ctl() { timeout 20 "$SOAKCTL" --socket "$SOCK" "$@"; }

# passed_or_starved RC FILE: a soakctl report (exit RC, text in FILE)
# passed, or would have but for soakd's own lateness: a loaded test machine
# can starve soakd for some ms, and the verdict then says INCONCLUSIVE for
# that reason alone.  A FAIL is never excused.
passed_or_starved() {
	{ (($1 == 0)) && grep -q '^verdict: PASS' "$2"; } ||
		{ (($1 == 3)) && grep -q '^verdict: INCONCLUSIVE (soakd itself was late in' "$2"; }
}
# The run answers: soakd is no longer preparing its workloads (a layout, a
# verify fill, an endpoint's probe), when status answers but most commands
# are refused and stop ends soakd.
ctl_answers() {
	local s
	s=$(ctl status --json 2>/dev/null) && ! grep -q '"state": *"preparing"' <<<"$s"
}

# workload_state NAME: its state from "status --json", or "absent".
workload_state() {
	ctl status --json | python3 -c '
import json, sys
status = json.load(sys.stdin)
print(next((w.get("state") for w in status.get("workloads", [])
            if w.get("name") == sys.argv[1]), "absent"))' "$1"
}

# workload_is NAME STATE: for wait_until; fails at once if the workload
# failed while we wait for something else.
workload_is() {
	local state
	state=$(workload_state "$1" 2>/dev/null) || return 1
	if [[ $state == failed && $2 != failed ]]; then
		fail "workload $1 failed: $(ctl status --json 2>&1)"
	fi
	[[ $state == "$2" ]]
}

# write_file_config FILE RUN WORKLOAD DURATION ON_FINISH RATE: a small
# rate-scheduled workload on a regular file in the work directory.
write_file_config() {
	cat >"$1" <<EOF
{
  "run": {"name": "$2", "duration": "$4", "interval": "1s", "on_finish": "$5"},
  "workloads": [
    {
      "name": "$3",
      "type": "device",
      "model": "pattern",
      "targets": ["$WORK/$3.dat"],
      "file_size": "16MiB",
      "read_pct": 70,
      "block_size": "4KiB",
      "access": "random",
      "queue_depth": 8,
      "rate": $6,
      "schedule": [{"scale": 1, "for": "$4"}]
    }
  ]
}
EOF
}

# --- soakd late on a host that steals its CPU -------------------------------
# A certification or search step in which soakd itself was late
# (generator_late) is refused, rightly; on a virtual machine the
# hypervisor can take a share of the CPU (steal, in /proc/stat) for
# minutes at a time, so a test repeats such a run, after waiting for the
# host to be quiet.  After three spoiled runs it fails, unless each of them
# lost at least 3% of the CPU to steal: then it skips, since a host that
# takes the CPU away is outside soakd.  A soakd late on a quiet host fails.

# keep_cpus_awake: a busy loop at the lowest priority (SCHED_IDLE) on
# each CPU until the test ends.  A halted virtual CPU waits for the
# hypervisor to run it again when an interrupt or a timer wakes it, which
# the guest counts as steal; when the host is busy those waits make soakd
# late.  Any task that wakes takes the CPU from these loops at once, so
# they change nothing else: a soakd late on its own is still late.
keep_cpus_awake() {
	local i n
	n=$(nproc)
	for ((i = 0; i < n; i++)); do
		spawn /dev/null chrt --idle 0 nice -n 19 bash -c 'while :; do :; done'
	done
}

# _cpu_ticks: "STEAL TOTAL" in clock ticks of all CPUs.
_cpu_ticks() { awk '/^cpu /{t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t; exit}' /proc/stat; }
# steal_mark: the counters the next steal_pct starts from.
steal_mark() { STEAL_MARK=$(_cpu_ticks); }
# steal_pct: the share of the CPU stolen since steal_mark, in whole percent.
steal_pct() {
	local now
	now=$(_cpu_ticks)
	awk -v a="$STEAL_MARK" -v b="$now" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		print (y[2] > x[2]) ? int(100 * (y[1] - x[1]) / (y[2] - x[2]) + 0.5) : 0 }'
}
# wait_quiet_host: up to 60 s for 2 s in which less than 2% was stolen.
wait_quiet_host() {
	local i pct
	for ((i = 0; i < 30; i++)); do
		steal_mark
		sleep 2
		pct=$(steal_pct)
		((pct < 2)) && return 0
	done
	note "the host still steals $pct% of the CPU after 60 s; going on"
}
# late_attempts_begin: before the first of a test's repeated runs; the
# CPUs are kept awake from then on.
late_attempts_begin() {
	[[ -n ${_CPUS_AWAKE:-} ]] || keep_cpus_awake
	_CPUS_AWAKE=1
	LATE_STEAL=()
	steal_mark
}
# late_retry WHAT ATTEMPT: run ATTEMPT (1-3) of WHAT was spoiled by soakd's
# lateness.  Returns for another run (the host quiet, steal_mark set), or
# fails or skips after the third (above).
late_retry() {
	local what=$1 attempt=$2 pct p
	pct=$(steal_pct)
	LATE_STEAL+=("$pct")
	note "$what: run $attempt spoiled by soakd's own lateness (CPU stolen meanwhile: $pct%)"
	if ((attempt < 3)); then
		wait_quiet_host
		steal_mark
		return 0
	fi
	local all
	all=$(printf '%s%%, ' "${LATE_STEAL[@]}")
	all=${all%, }
	for p in "${LATE_STEAL[@]}"; do
		((p >= 3)) || fail "$what: soakd was late (generator_late) in 3 runs, one of them" \
			"with $p% of the CPU stolen (in all: $all)"
	done
	skip "$what: soakd was late in 3 runs while the hypervisor took $all of the CPU" \
		"(steal): this host cannot time it now"
}
