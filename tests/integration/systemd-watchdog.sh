#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The watchdog (issue 8, point 4): with WatchdogSec=4s in a drop-in,
# "soakctl debug stall 12s" (compiled in with -Dtest_hooks=true) blocks
# soakd's main loop, so its WATCHDOG=1 pings stop; systemd kills it with
# Result=watchdog well before the stall would have ended, restarts it
# (Restart=on-failure), and the new soakd resumes the run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/systemd-lib.sh"

WATCHDOG_S=4
STALL_S=12

ct_loop LOOP 64M
ct_prepare
ct_config "$(run_config watchdog "$(dev_workload dev "$LOOP" 200)")"
ct_dropin watchdog "[Service]
WatchdogSec=${WATCHDOG_S}s
RestartSec=1"
ct_boot
ct_wait_running 60

ct_systemctl start soakd.socket soakd.service || fail "soakd.service does not start"
[[ $(ct_prop WatchdogUSec) == "${WATCHDOG_S}s" ]] || fail "WatchdogUSec=$(ct_prop WatchdogUSec)"
FIRST_PID=$(ct_main_pid)
LOG="$CT_ROOT/var/lib/soakd/watchdog/intervals.log"
intervals() { ct_intervals "$LOG"; }
at_least() { (($(intervals) >= $1)); }
# Longer than the watchdog period: soakd pings as it should meanwhile.
wait_until 20 "$((WATCHDOG_S + 2)) intervals" at_least $((WATCHDOG_S + 2))
[[ $(ct_main_pid) == "$FIRST_PID" && $(ct_prop NRestarts) == 0 ]] ||
	fail "soakd was restarted before any stall (NRestarts=$(ct_prop NRestarts))"

rc=0
ct_soakctl debug stall "${STALL_S}s" >"$WORK/stall.txt" 2>&1 || rc=$?
if ((rc != 0)); then
	grep -qi 'unknown command\|test_hooks' "$WORK/stall.txt" &&
		skip_unless_strict "PLAIN_BUILD=$PLAIN_BUILD has no test hooks (configure it with -Dtest_hooks=true):" \
			"$(cat "$WORK/stall.txt")"
	fail "soakctl debug stall failed: $(cat "$WORK/stall.txt")"
fi
t0=$(now_ns)
note "$(cat "$WORK/stall.txt")"

# systemd's verdict is visible while the restart waits for RestartSec.
SEEN_RESULT=
watchdog_fired() {
	local result
	result=$(ct_prop Result 2>/dev/null) || return 1
	[[ $result == watchdog ]] && SEEN_RESULT=$result
	[[ $(ct_prop NRestarts 2>/dev/null) -ge 1 ]]
}
wait_until $((STALL_S + 10)) "systemd to kill and restart the stalled soakd" watchdog_fired
killed_ms=$((($(now_ns) - t0) / 1000000))
wait_until 20 "soakd.service to be active again" ct_active_is active
NEW_PID=$(ct_main_pid)
[[ $NEW_PID != "$FIRST_PID" ]] || fail "soakd's pid did not change: it was not restarted"
[[ $(ct_prop NRestarts) == 1 ]] || fail "NRestarts=$(ct_prop NRestarts), expected 1"
note "restarted ${killed_ms} ms after the stall began (pid $FIRST_PID -> $NEW_PID)," \
	"Result seen: ${SEEN_RESULT:-not caught in the RestartSec window}"
# Killed by systemd, not woken up by the stall's end.
((killed_ms < STALL_S * 1000)) ||
	fail "the restart came ${killed_ms} ms after a ${STALL_S} s stall: the watchdog did not fire"

ct_journal -o cat -u soakd.service >"$WORK/unit.journal"
grep -q "soakd.service: Watchdog timeout (limit ${WATCHDOG_S}s)!" "$WORK/unit.journal" ||
	fail "the journal has no watchdog timeout"
grep -q "soakd.service: Failed with result 'watchdog'." "$WORK/unit.journal" ||
	fail "the journal has no Result=watchdog"
grep -q "Main process exited, code=\(dumped\|killed\), status=6/ABRT" "$WORK/unit.journal" ||
	fail "soakd was not killed with SIGABRT (WatchdogSignal=)"
ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$(ct_invocation)" >"$WORK/resumed.journal"
grep -q '^resuming run watchdog at' "$WORK/resumed.journal" ||
	fail "the restarted soakd did not resume run watchdog: $(head -n 20 "$WORK/resumed.journal")"
note "$(grep -m1 'Watchdog timeout' "$WORK/unit.journal"); $(grep -m1 '^resuming run' "$WORK/resumed.journal")"

# The resumed run goes on, and pings the watchdog again.
n=$(intervals)
wait_until 20 "intervals after the restart" at_least $((n + WATCHDOG_S + 2))
[[ $(ct_main_pid) == "$NEW_PID" && $(ct_prop NRestarts) == 1 ]] ||
	fail "the restarted soakd did not stay up (NRestarts=$(ct_prop NRestarts))"
note "ok"
