#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd under valgrind on a small file workload: it runs a few intervals,
# answers soakctl (status, dumps, report, stop and start; soakctl itself
# under valgrind too), and on SIGTERM exits 0 with no memory errors and no
# definite or indirect leaks.
#
# valgrind cannot run a program built with AddressSanitizer, which is how
# tools/test builds SOAKD; it builds soakd once more without sanitizers
# (build-plain/) and passes it in PLAIN_SOAKD and PLAIN_SOAKCTL.  Without
# them this test uses SOAKD when that is not sanitized, and skips otherwise.
#
# Two things about valgrind 3.19 (Debian 12) shape the run:
#  - it runs one thread at a time under a lock, and it does not count
#    io_uring_enter as a call that may block (3.23 does: KDE bug 428364), so
#    a device thread waiting in the kernel for its I/O keeps the lock, and
#    soakd's event loop waits as long.  The event loop needs the lock back
#    after each of its blocking calls (epoll_wait, accept, recv, send,
#    write...), and with the default lock, a pipe, the device thread mostly
#    takes it back at the end of its time slice before a woken one can: on
#    the shared disk, under load, soakctl then got no reply for minutes
#    (native soakd answers in milliseconds there).  So the data file is in
#    RAM (tmpfs takes O_DIRECT from Linux 6.6), where an I/O waits
#    microseconds, the workload is closed-loop (a rate-paced one would wait
#    in io_uring_enter for its next due time), and soakd runs with
#    --fair-sched=yes, a queue lock that hands the lock to the threads
#    waiting for it at the end of each time slice;
#  - it needs about 90 s to parse the kernel's BTF when soakd loads its BPF
#    probes, so soakd runs without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN
#    and reports the probes unavailable.  VALGRIND_BPF=1 keeps them (the
#    probes then load, and their teardown is checked too).
source "$(dirname "$0")/lib.sh"

need_cmd valgrind python3 setpriv

sanitized() { grep -aq -e __asan_init -e __tsan_init -e __msan_init "$1"; }
soakd_bin=${PLAIN_SOAKD:-$SOAKD}
soakctl_bin=${PLAIN_SOAKCTL:-$SOAKCTL}
for bin in "$soakd_bin" "$soakctl_bin"; do
	[[ -x $bin ]] || fail "$bin is not an executable"
	if sanitized "$bin"; then
		skip_unless_strict "$bin is built with a sanitizer, which valgrind cannot run;" \
			"set PLAIN_SOAKD and PLAIN_SOAKCTL to a plain build (tools/test does)"
	fi
done
SOAKCTL=$soakctl_bin
note "$(valgrind --version) on $soakd_bin"

# Leaks of the kinds that are bugs fail; "still reachable" (libraries'
# one-time allocations) and "possibly lost" do not.  The suppressions are
# valgrind misreading libbpf's bpf() calls, not soakd's memory.
VALGRIND=(valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect
	--show-leak-kinds=definite,indirect --error-exitcode=99 --track-origins=yes
	--num-callers=30 --suppressions="$SRCDIR/tests/integration/valgrind.supp")
NO_BPF=()
if [[ ${VALGRIND_BPF:-0} != 1 ]]; then
	NO_BPF=(setpriv --inh-caps=-bpf,-perfmon,-sys_admin --bounding-set=-bpf,-perfmon,-sys_admin)
fi

# The data file in RAM where tmpfs takes O_DIRECT (see above), else in the
# work directory.
ram_file DATA small.dat

CFG="$WORK/valgrind.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "vg", "duration": "10m", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "small", "type": "device", "model": "pattern", "targets": ["$DATA"],
     "file_size": "4MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
     "queue_depth": 2, "rate": 0}
  ]
}
EOF

spawn "$SOAKD_LOG" ${NO_BPF[@]+"${NO_BPF[@]}"} "${VALGRIND[@]}" --fair-sched=yes \
	--log-file="$WORK/valgrind-soakd.txt" \
	"$soakd_bin" --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
SOAKD_PID=$SPAWNED
note "soakd under valgrind (pid $SOAKD_PID)"
# valgrind makes soakd some 20-50 times slower to start (and the BPF
# probes, when loaded, take about 90 s more).
wait_until 180 "the control socket" ctl_answers

# soakctl, bounded, with time for a slow soakd.
ctl() { timeout 90 "$SOAKCTL" --socket "$SOCK" --timeout 60 "$@"; }

# A few intervals recorded, so that the dumps have rows and histograms;
# read from the run's log, as dumps are slow under valgrind.
has_intervals() {
	(($(grep -c '"type":"interval"' "$WORK/state/vg/intervals.log" 2>/dev/null) >= 2))
}
# A loaded machine slows valgrind a lot: wait generously.
wait_until 180 "two intervals of workload small" has_intervals

# soakctl under valgrind as well, for its own leaks.
vg_ctl() {
	local name=$1 rc=0
	shift
	timeout 120 "${VALGRIND[@]}" --log-file="$WORK/valgrind-soakctl-$name.txt" \
		"$SOAKCTL" --socket "$SOCK" --timeout 60 "$@" >"$WORK/ctl-$name.out" 2>&1 || rc=$?
	((rc != 99)) || fail "soakctl $* under valgrind: $(cat "$WORK/valgrind-soakctl-$name.txt")"
	return "$rc"
}
vg_ctl status status || fail "soakctl status failed: $(cat "$WORK/ctl-status.out")"
vg_ctl status-json status --json || fail "soakctl status --json failed"
# Stopped, the workload's thread leaves valgrind's lock to the event loop
# and the dumps stay a few intervals long: under valgrind each row costs
# a good fraction of a second.
vg_ctl stop stop small || fail "soakctl stop failed: $(cat "$WORK/ctl-stop.out")"
wait_until 120 "workload small to stop" workload_is small stopped
vg_ctl csv dump --format csv || fail "soakctl dump --format csv failed: $(cat "$WORK/ctl-csv.out")"
grep -q '^small,' "$WORK/ctl-csv.out" || fail "dump csv has no row of workload small"
vg_ctl json dump --format json || fail "soakctl dump --format json failed"
vg_ctl hdr dump --format hdr --slice 2s || fail "soakctl dump --format hdr failed"
# report exits 3 on a FAIL verdict, which a loaded machine may give.
vg_ctl report report || (($? == 3)) || fail "soakctl report failed: $(cat "$WORK/ctl-report.out")"
# The HTML report (from the run directory soakd names) and cmp of the run
# with itself read the log in soakctl: their own allocations checked too.
vg_ctl html report --html "$WORK/report.html" || (($? == 3)) ||
	fail "soakctl report --html failed: $(cat "$WORK/ctl-html.out")"
grep -q 'id="verdict"' "$WORK/report.html" || fail "report --html wrote no verdict"
run_dir=$(ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["run_dir"])')
vg_ctl cmp cmp --html "$WORK/cmp.html" "$run_dir" "$run_dir" ||
	fail "soakctl cmp of a run with itself failed: $(cat "$WORK/ctl-cmp.out")"
# Running again, so that SIGTERM stops a busy workload.
vg_ctl start start small || fail "soakctl start failed: $(cat "$WORK/ctl-start.out")"
wait_until 120 "workload small to run again" workload_is small running
# A refused request: the error paths free what they parsed.
vg_ctl refused dump --format xml && fail "soakctl dump --format xml succeeded"

stop_soakd 120
((SOAKD_RC != 99)) || fail "valgrind found errors or leaks in soakd (exit 99)"
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"

# Each report's summary, for the log and as a second check.
for report in "$WORK"/valgrind-*.txt; do
	grep -q "ERROR SUMMARY: 0 errors" "$report" ||
		fail "$(basename "$report"): $(grep -E "ERROR SUMMARY|lost:" "$report")"
	if grep -Eq "(definitely|indirectly) lost: [1-9]" "$report"; then
		fail "$(basename "$report"): $(grep -E "lost:" "$report")"
	fi
done
note "soakd: $(grep -E "in use at exit|definitely lost|ERROR SUMMARY" "$WORK/valgrind-soakd.txt" |
	sed 's/^==[0-9]*== *//' | paste -sd ';')"
note "ok"
