#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A clean stop (issue 8, point 6): "systemctl stop soakd" mid-interval.
# soakd tells systemd STOPPING=1, flushes the interval in progress into
# intervals.log, logs one SOAK_EVENT=summary entry per workload and op
# covering the whole run, and exits 0 well within TimeoutStopSec.  Started
# again, it resumes the run; stopped again, its summary covers both parts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/systemd-lib.sh"

ct_loop LOOP 64M
ct_prepare
ct_config "$(run_config stop "$(dev_workload dev "$LOOP" 200)")"
ct_boot
ct_wait_running 60
LOG="$CT_ROOT/var/lib/soakd/stop/intervals.log"
intervals() { ct_intervals "$LOG"; }
at_least() { (($(intervals) >= $1)); }

# stop_and_check NAME: systemctl stop mid-interval, then the checks; the
# invocation's journal in NAME.journal.json.
stop_and_check() {
	local name=$1 inv pid timeout_us t0 stop_ms
	inv=$(ct_invocation)
	pid=$(ct_main_pid)
	timeout_us=$(ct_prop TimeoutStopUSec)
	# STOPPING=1 shows in PID 1's debug log only.
	ct_systemctl log-level debug || fail "systemctl log-level debug"
	t0=$(now_ns)
	ct_systemctl stop soakd.service 2>"$WORK/stop.err" || fail "systemctl stop: $(cat "$WORK/stop.err")"
	stop_ms=$((($(now_ns) - t0) / 1000000))
	ct_systemctl log-level info
	[[ $(ct_prop ActiveState) == inactive ]] || fail "soakd.service is $(ct_prop ActiveState) after stop"
	[[ $(ct_prop Result) == success && $(ct_prop ExecMainCode) == 1 && $(ct_prop ExecMainStatus) == 0 ]] ||
		fail "after stop: Result=$(ct_prop Result) ExecMainCode=$(ct_prop ExecMainCode)" \
			"ExecMainStatus=$(ct_prop ExecMainStatus), expected success, exited, 0"
	# Deactivation, from SIGTERM to the end, as systemd timed it (µs).
	local exit_us inactive_us
	exit_us=$(ct_prop ActiveExitTimestampMonotonic)
	inactive_us=$(ct_prop InactiveEnterTimestampMonotonic)
	note "$name: systemctl stop took $stop_ms ms; soakd.service deactivated in" \
		"$(((inactive_us - exit_us) / 1000)) ms (TimeoutStopSec=$timeout_us)"
	# TimeoutStopSec=60s; soakd should need a small part of it.
	((inactive_us - exit_us < 10000000)) ||
		fail "deactivating took $(((inactive_us - exit_us) / 1000)) ms"
	ct_journal -o json "_SYSTEMD_INVOCATION_ID=$inv" >"$WORK/$name.journal.json"
	ct_journal -o cat -u soakd.service --since "@$((t0 / 1000000000 - 1))" >"$WORK/$name.unit.txt"
	grep -q "soakd.service: Got notification message from PID $pid (STOPPING=1)" "$WORK/$name.unit.txt" ||
		fail "systemd got no STOPPING=1 from soakd (pid $pid): $(grep -i notification "$WORK/$name.unit.txt")"
	grep -q "soakd.service: Main process exited, code=exited, status=0/SUCCESS" "$WORK/$name.unit.txt" ||
		fail "the journal does not show soakd exiting 0"
	grep -q "Stopping soakd.service" "$WORK/$name.unit.txt" || fail "the journal has no 'Stopping soakd.service'"
	grep -q "Timed out\|SIGKILL" "$WORK/$name.unit.txt" && fail "systemd had to kill soakd"
	return 0
}

# check_run NAME: the records tile the run with a last, partial interval
# flushed at the stop, and NAME's summary entries cover all of them.
check_run() {
	python3 - "$LOG" "$WORK/$1.journal.json" <<'PY' || fail "$1: records and summary"
import json, sys
recs = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    recs.append(json.loads(line.split(" ", 1)[1]))
intervals = [r for r in recs if r["type"] == "interval" and r["workload"] == "dev"]
problems, prev, gap = [], None, False
for r in recs:
    if r["type"] == "gap":
        gap = True
    if r["type"] != "interval":
        continue
    if prev is not None and not 0 <= r["start_ns"] - prev <= (500_000_000 if gap else 0):
        problems.append(f"interval {r['start_ns']}..{r['end_ns']} after one ending at {prev}")
    prev, gap = r["end_ns"], False
last = intervals[-1]
# The interval in progress at the stop is flushed: a partial one, ending
# between two ticks of run time.
if last["end_ns"] % 1_000_000_000 == 0:
    problems.append(f"the last interval ends on a tick ({last['end_ns']}): the one in progress was not flushed")
logged = {}
for r in intervals:
    for op, o in r["ops"].items():
        logged[op] = logged.get(op, 0) + o["count"]

entries = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
soak = [e for e in entries if "SOAK_WORKLOAD" in e and "SOAK_OPS" in e]
events = {e.get("SOAK_EVENT") for e in soak}
if not events <= {"interval", "summary"}:
    problems.append(f"SOAK_EVENT values {events}")
summary = [e for e in soak if e.get("SOAK_EVENT") == "summary"]
by_op = {e["SOAK_OP"]: e for e in summary}
if len(summary) != len(by_op):
    problems.append(f"more than one summary entry for an op: {sorted(e['SOAK_OP'] for e in summary)}")
for op, n in logged.items():
    e = by_op.get(op)
    if e is None:
        problems.append(f"no summary entry for op {op}")
        continue
    if int(e["SOAK_OPS"]) != n:
        problems.append(f"summary of {op}: SOAK_OPS={e['SOAK_OPS']}, the interval records count {n}")
    if e.get("SOAK_RUN") != "stop" or e.get("_SYSTEMD_UNIT") != "soakd.service":
        problems.append(f"summary of {op}: SOAK_RUN={e.get('SOAK_RUN')} _SYSTEMD_UNIT={e.get('_SYSTEMD_UNIT')}")
    if "SOAK_INTERVALS" in e and int(e["SOAK_INTERVALS"]) != len(intervals):
        problems.append(f"summary of {op}: SOAK_INTERVALS={e['SOAK_INTERVALS']}, {len(intervals)} records")
# The summary is soakd's last word: after every interval entry.
last_interval = max((int(e["__MONOTONIC_TIMESTAMP"]) for e in soak if e.get("SOAK_EVENT") == "interval"), default=0)
if summary and min(int(e["__MONOTONIC_TIMESTAMP"]) for e in summary) < last_interval:
    problems.append("an interval entry came after the summary")
if problems:
    sys.exit("\n".join(problems))
print(f"# {len(intervals)} intervals up to {last['end_ns'] / 1e9:.3f} s of run time;"
      f" summary: " + ", ".join(f"{op} {by_op[op]['SOAK_OPS']} ops" for op in sorted(by_op))
      + f" — {by_op[sorted(by_op)[0]]['MESSAGE']!r}")
PY
}

ct_systemctl start soakd.socket soakd.service || fail "soakd.service does not start"
wait_until 20 "3 intervals" at_least 3
sleep 0.5
stop_and_check first
check_run first

# Again: the run resumes, and the second summary covers the whole run.
ct_systemctl start soakd.service || fail "soakd.service does not start again"
n=$(intervals)
wait_until 20 "2 intervals after the restart" at_least $((n + 2))
sleep 0.3
stop_and_check second
grep -q '"type":"gap"' "$LOG" || fail "no gap record: the second start did not resume the run"
check_run second
note "ok"
