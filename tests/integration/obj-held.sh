#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An object workload whose mix cannot start: the endpoint is down at start
# (a closed port), or the server refuses the prefill's PUTs (fault_server.py
# answering 503, then 507).  Whatever the server does:
#  - a run with a duration ends at its end (it ran on for ever: the wait
#    for the endpoint and the prefill never looked at the schedule's end);
#  - every op the schedule made due is counted once, as an error (a failed
#    probe stands for one) or missed, in the interval it was due in
#    (acct_check.py: count + errors + missed = scheduled per interval and
#    in total), not dropped (endpoint wait) nor lumped into the last
#    interval (prefill);
#  - the lag grows in every interval of the wait (the prefill showed 0),
#    and "max_lag" ends the workload;
#  - a prefill pass whose every PUT is refused for good (507) ends the
#    workload with the status in its reason, instead of pass after pass.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"
need_cmd python3

start_fault_server
CLOSED=$(free_port)
RATE=20

# config NAME ENDPOINT_PORT DURATION MIX [EXTRA]: one workload "w".
config() {
	cat >"$WORK/$1.json" <<EOF
{"run": {"name": "$1", "interval": "1s", "duration": "$3", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$2/soak/", "concurrency": 2,
                "objects": 10, "rate": $RATE, "mix": {"$4": 100}, "size": "1KiB",
                "timeout": "2s", "connect_timeout": "1s"${5:-}}]}
EOF
}

# running_or NAME STATE: the workload runs, or is already in STATE.
running_or() {
	local s
	s=$(workload_state "$1" 2>/dev/null) || return 1
	[[ $s == running || $s == "$2" ]]
}

# run_case NAME STATE LIMIT: soakd on $WORK/NAME.json; the workload must
# reach STATE (finished, failed) within LIMIT seconds of running; its
# dumps in $WORK/NAME.json.dump and .csv; soakd stopped, exiting RC.
run_case() {
	local name=$1 state=$2 limit=$3 started took_ms rc
	start_soakd --config "$WORK/$name.json" --socket "$SOCK" --state-dir "$WORK/state-$name" \
		--no-table
	wait_until 20 "the control socket" ctl_answers
	wait_until 10 "workload w to run" running_or w "$state"
	started=$(now_ns)
	wait_until $((limit + 30)) "workload w to be $state" workload_is w "$state"
	took_ms=$((($(now_ns) - started) / 1000000))
	note "$name: the workload was $state ${took_ms} ms after it started"
	((took_ms <= limit * 1000)) || fail "$name: the workload took ${took_ms} ms (at most ${limit}s)"
	ctl dump --format json >"$WORK/$name.dump" || fail "soakctl dump --format json failed"
	ctl dump --format csv >"$WORK/$name.csv" || fail "soakctl dump --format csv failed"
	cp "$SOAKD_LOG" "$WORK/$name-soakd.txt"
	stop_soakd 20
	rc=$([[ $state == failed ]] && echo 3 || echo 0)
	((SOAKD_RC == rc)) || fail "$name: soakd exited $SOAKD_RC, expected $rc"
}

# check NAME OP SCHEDULED: every op accounted for (acct_check.py); with
# SCHEDULED "-", a workload ended early by a failure: the ops due until
# then, from the intervals' targets (they end where the stream cut its
# schedule; stop-cut.sh checks that with a cleanup after it).  Then, in
# every interval, the lag
# since the mix should have started: at least the interval's end less
# LAG_SLACK_S, and ops counted (errors, missed) in every full interval.
check() {
	local name=$1 op=$2 scheduled=$3
	if [[ $scheduled == - ]]; then
		scheduled=$(python3 - "$WORK/$name.dump" "$WORK/$name.csv" "$op" 2>&1 <<'PY'
import csv, json, sys
o = json.load(open(sys.argv[1]))["workloads"][0]["ops"][sys.argv[3]]
total = o["count"] + o["errors"] + o["missed"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["op"] == sys.argv[3]]
due = sum(float(r["rate_target"]) * (float(r["end_s"]) - float(r["start_s"])) for r in rows)
if abs(total - due) > 1.5:
    sys.exit(f"count + errors + missed = {total}, {due:.1f} ops were due until the end")
print(total)
PY
		) || fail "$name: $scheduled"
	fi
	# The run's own clock: its last interval ends with the workload.
	if [[ -n ${DURATION_S:-} ]]; then
		python3 - "$WORK/$name.csv" "$DURATION_S" <<'PY' || fail "$name: $(cat "$WORK/$name.csv")"
import csv, sys
end = max(float(r["end_s"]) for r in csv.DictReader(open(sys.argv[1])))
print(f"# the last interval ends at {end} s")
if end > float(sys.argv[2]) + 1:
    sys.exit(f"the workload ran until {end} s of a {sys.argv[2]} s run")
PY
	fi
	python3 "$(dirname "$0")/acct_check.py" "$WORK/$name.dump" "$WORK/$name.csv" w \
		"$scheduled" --rate $RATE ||
		fail "$name: not every scheduled op is accounted for: $(cat "$WORK/$name.csv")"
	python3 - "$WORK/$name.csv" "$op" "$LAG_SLACK_S" "$RATE" "${DURATION_S:-0}" <<'PY' || fail "$name: $(cat "$WORK/$name.csv")"
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["op"] == sys.argv[2]]
slack, rate, duration = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
problems = []
for r in rows:
    start, end = float(r["start_s"]), float(r["end_s"])
    lag = float(r["lag_max_ms"])
    done = int(r["count"]) + int(r["errors"]) + int(r["missed"])
    print(f"# {start:.1f}..{end:.1f}: count {r['count']} errors {r['errors']} "
          f"missed {r['missed']} lag_max {lag:.0f} ms")
    # After the run's end nothing is due: the wait is over, and whether
    # the lag sampled at the schedule's end lands in the interval before
    # or in this one is a matter of microseconds.
    if duration and start >= duration and done == 0:
        continue
    if lag < (end - slack) * 1000 or lag <= 0:
        problems.append(f"interval {start}..{end}: lag_max {lag:.0f} ms, at least "
                        f"{max(0, (end - slack) * 1000):.0f} expected")
    if end - start >= 0.99 and done < 0.75 * rate * (end - start):
        problems.append(f"interval {start}..{end}: only {done} ops counted")
if problems:
    sys.exit("\n".join(problems))
PY
}

# 1. The endpoint is down for the whole run: it ends at 6 s.
LAG_SLACK_S=0.5
config down "$CLOSED" 6s put
run_case down finished 9
DURATION_S=6 check down put $((RATE * 6))
grep -q "the schedule ended before http://127.0.0.1:$CLOSED/soak was reachable" \
	"$WORK/down-soakd.txt" || fail "the end of the wait was not logged"

# 2. ... and with max_lag 2s the workload fails about 2 s in.
config down-lag "$CLOSED" 60s put ', "max_lag": "2s", "cleanup": false'
run_case down-lag failed 6
DURATION_S=3 check down-lag put -
grep -q "max_lag 2s exceeded" "$WORK/down-lag-soakd.txt" || fail "the reason was not logged"

# 3. Every PUT answered 503 Slow Down (a refusal that may pass): the
# prefill goes on, pass after pass, until the run's end at 4 s.  The
# GETs due meanwhile are missed in their intervals, the lag growing.
echo put:503 >"$MODE"
LAG_SLACK_S=1
config prefill "$PORT" 4s get
run_case prefill finished 7
DURATION_S=4 check prefill get $((RATE * 4))
grep -q "the schedule ended before the pool was prefilled" "$WORK/prefill-soakd.txt" ||
	fail "the end of the prefill was not logged"

# 4. ... and with max_lag 2s the workload fails about 2 s in.
config prefill-lag "$PORT" 60s get ', "max_lag": "2s", "cleanup": false'
run_case prefill-lag failed 6
DURATION_S=3 check prefill-lag get -
grep -q "max_lag 2s exceeded" "$WORK/prefill-lag-soakd.txt" || fail "the reason was not logged"

# 5. Every PUT answered 507 Insufficient Storage: refused for good.  The
# first pass fails the workload, saying so, with no max_lag to end it.
echo put:507 >"$MODE"
LAG_SLACK_S=1.5
config refused "$PORT" 60s get ', "cleanup": false'
run_case refused failed 10
check refused get -
grep -q "workload w failed: http://127.0.0.1:$PORT/soak: prefill: all 10 PUTs of a pass refused with HTTP 507" \
	"$WORK/refused-soakd.txt" || fail "the refusal was not the reason: $(cat "$WORK/refused-soakd.txt")"
note "ok"
