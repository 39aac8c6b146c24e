#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Resuming after a reboot: CLOCK_MONOTONIC restarts near 0 at boot, so a
# run resumed after one began before the new boot.  soakd is SIGKILLed
# mid-run and resumed inside a time namespace whose monotonic and boot
# clocks are behind the run's elapsed time, which is how the restart looks
# after a reboot.  The run goes on from the run time of its last record:
# intervals go on being recorded with consecutive numbers, the downtime is
# one "gap" record, status says running, and the run ends at its duration.
# A run with start_at resumes the same way, and one killed while it waited
# for start_at still starts at that wall-clock time.
source "$(dirname "$0")/lib.sh"
need_cmd python3 unshare
unshare --time --monotonic -1 --boottime -1 --fork true 2>/dev/null ||
	skip "this kernel or unshare cannot make a time namespace (unshare --time failed)"

STATE="$WORK/state"
INNER_PID="$WORK/inner.pid"
# lib.sh stops unshare, not the soakd inside it: a test that fails while
# it runs leaves it to this.
on_exit "p=\$(cat '$INNER_PID' 2>/dev/null) && [[ \$(cat /proc/\$p/comm 2>/dev/null) == soakd ]] &&
	kill -KILL \$p"
NS_UPTIME="$WORK/ns-uptime"

# start_rebooted ARGS...: soakd in a new time namespace whose monotonic
# and boot clocks read about 1 s, as just after a boot.  SOAKD_PID is
# unshare's (it exits with soakd's status); soakd's own is in $INNER_PID.
start_rebooted() {
	local up back
	up=$(cut -d. -f1 /proc/uptime)
	back=$((1 - up))
	rm -f "$INNER_PID" "$NS_UPTIME"
	spawn "$SOAKD_LOG" unshare --time --monotonic "$back" --boottime "$back" --fork \
		sh -c 'echo $$ >"$1"; cut -d" " -f1 /proc/uptime >"$2"; shift 2; exec "$@"' \
		sh "$INNER_PID" "$NS_UPTIME" "$SOAKD" "$@"
	SOAKD_PID=$SPAWNED
	wait_until 5 "the namespaced soakd's pid" test -s "$INNER_PID"
	note "soakd $* in a time namespace $back s behind (uptime there: $(cat "$NS_UPTIME") s)"
}
# unshare waits for soakd and exits with its status; signals go to soakd.
kill_rebooted() {
	kill "-$1" "$(cat "$INNER_PID")"
	wait_soakd_exit 10
}

records() { grep -c "\"type\":\"$2\"" "$1" 2>/dev/null || true; }
has_intervals() { (($(records "$LOG" interval) >= $1)); }
run_state_is() {
	[[ $(ctl status --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])') == "$1" ]]
}
# The run time recorded so far, in whole seconds (the last interval's end).
recorded_s() {
	python3 - "$LOG" <<'EOF'
import json, sys
end = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    try:
        r = json.loads(line.split(" ", 1)[1])
    except Exception:
        continue
    if r.get("type") == "interval":
        end = max(end, r["end_ns"])
print(end // 10**9)
EOF
}
assert_behind() {
	local ns_up run_s
	ns_up=$(cut -d. -f1 "$NS_UPTIME")
	run_s=$(recorded_s)
	((ns_up < run_s)) || fail "the namespace's uptime ($ns_up s) is not behind the run time ($run_s s)"
}

# check_log LOG DURATION_S KILLS: the records across the resumes.
check_log() {
	python3 - "$@" <<'EOF' || fail "the log after the resume: see above"
import json, sys, time
path, duration, kills = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
recs = []
for line in open(path).read().splitlines()[1:]:
    try:
        recs.append(json.loads(line.split(" ", 1)[1]))
    except Exception:
        pass  # a line torn by the kill
problems = []
ivs = [r for r in recs if r["type"] == "interval"]
gaps = [r for r in recs if r["type"] == "gap"]
if len(gaps) != kills:
    problems.append(f"{len(gaps)} gap records, expected {kills}")
for g in gaps:
    if g.get("down_ns", 0) <= 0:
        problems.append(f"gap record without downtime: {g}")
# Interval k ends at k s of run time: after a resume the numbering goes on
# from the last record (the interval cut by the kill is not back-filled,
# the downtime is not run time).
numbers = [round(r["end_ns"] / 1e9) for r in ivs]
if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
    problems.append(f"interval numbers are not consecutive: {numbers} {[(r['start_ns'], r['end_ns'], r.get('scheduled_ns')) for r in ivs[-3:]]}")
ends = [r["end_ns"] for r in ivs]
if ends != sorted(ends) or any(r["end_ns"] <= r["start_ns"] for r in ivs):
    problems.append("run time went backwards")
if not duration - 1.5 <= ends[-1] / 1e9 <= duration + 0.5:
    problems.append(f"the run ended at {ends[-1] / 1e9:.2f} s of run time, expected {duration} s")
# After each gap: wall times of this boot, the schedule's position going
# on (not 0), ops due and counted.
now = time.time_ns()
for g in gaps:
    after = [r for r in ivs if r["wall_start_ns"] >= g["wall_ns"] - 10**9]
    before = [r for r in ivs if r["end_ns"] <= g["run_ns"]]
    if len(after) < 2:
        problems.append(f"{len(after)} intervals recorded after the gap at {g['run_ns'] / 1e9} s")
        continue
    if abs(after[0]["start_ns"] - g["run_ns"]) > 0.5e9:
        problems.append(f"the first interval after the gap starts at {after[0]['start_ns'] / 1e9} s, the gap at {g['run_ns'] / 1e9} s")
    for r in after:
        if not g["wall_ns"] - 10**9 <= r["wall_start_ns"] < r["wall_end_ns"] <= now:
            problems.append(f"wall times {r['wall_start_ns']}..{r['wall_end_ns']} outside the resumed run")
        if before and r["sched_ns"] <= before[-1]["sched_ns"]:
            problems.append(f"schedule position {r['sched_ns']} after the gap, {before[-1]['sched_ns']} before")
    # Ops due go on being issued and counted.  Per interval an op due
    # near a boundary may be counted on either side of it on a loaded
    # machine: the sum over the intervals after the gap is what must hold.
    done_sum = target_sum = 0
    for r in after[1:-1]:
        done = sum(o["count"] + o["errors"] + o.get("missed", 0) for o in r["ops"].values())
        if r["target_ops"] < 100 or abs(done - r["target_ops"]) > 0.25 * r["target_ops"]:
            problems.append(f"interval {round(r['end_ns'] / 1e9)}: {done} ops for target {r['target_ops']}")
        done_sum += done
        target_sum += r["target_ops"]
    if abs(done_sum - target_sum) > 0.03 * target_sum + 2:
        problems.append(f"{done_sum} ops after the gap at {g['run_ns'] / 1e9} s, for a target of {target_sum:.0f}")
for p in problems:
    print(p)
print(f"{len(ivs)} intervals, numbered {numbers[0]}..{numbers[-1]}; {len(gaps)} gap(s)")
sys.exit(1 if problems else 0)
EOF
}

# 1. A running run, SIGKILLed after 5 s, resumed "after a reboot".
CFG="$WORK/reboot.json"
write_file_config "$CFG" reboot w 12s idle 200
LOG="$STATE/reboot/intervals.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "5 intervals in the log" has_intervals 5
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
note "SIGKILLed at $(recorded_s) s of run time"

start_rebooted --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
assert_behind
wait_until 15 "the control socket" ctl_answers
grep -q 'resuming run reboot at' "$SOAKD_LOG" || fail "soakd did not say it resumed"
run_state_is running || fail "after the reboot the run is not running: $(ctl status --json)"
grep -q 'waits for start_at' "$SOAKD_LOG" && fail "the resumed run waits for a start_at it does not have"
n=$(records "$LOG" interval)
wait_until 10 "intervals recorded after the reboot" has_intervals $((n + 2))
wait_until 20 "the resumed workload to finish" workload_is w finished
kill_rebooted TERM
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
check_log "$LOG" 12 1

# 2. start_at: killed while waiting, resumed "after a reboot", it still
# starts at start_at; killed again while running, resumed after another.
START_NS=$(( ($(now_ns) / 1000000000 + 5) * 1000000000 ))
START_AT=$(date -u -d "@$((START_NS / 1000000000))" +%Y-%m-%dT%H:%M:%SZ)
CFG="$WORK/startat.json"
write_file_config "$CFG" startat w 9s idle 200
python3 - "$CFG" "$START_AT" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["run"]["start_at"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"), indent=2)
EOF
LOG="$STATE/startat/intervals.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
run_state_is waiting || fail "the start_at run is not waiting: $(ctl status --json)"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5

start_rebooted --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
ctl status --json >"$WORK/waiting.json"
python3 - "$WORK/waiting.json" "$START_AT" "$START_NS" <<'EOF' || fail "status while waiting after the reboot: $(cat "$WORK/waiting.json")"
import json, sys, time
s = json.load(open(sys.argv[1]))
left = (int(sys.argv[3]) - time.time_ns()) / 1e9
if s["state"] != "waiting" or s.get("start_at") != sys.argv[2]:
    sys.exit(f"state {s['state']}, start_at {s.get('start_at')}")
if not 0 < s["starts_in_s"] <= left + 0.5:
    sys.exit(f"starts in {s['starts_in_s']} s, start_at is {left:.1f} s away")
EOF
wait_until 15 "the start_at run to start" run_state_is running
wait_until 15 "4 intervals of the start_at run" has_intervals 4
kill_rebooted KILL
note "SIGKILLed the start_at run at $(recorded_s) s of run time"

start_rebooted --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
assert_behind
wait_until 15 "the control socket" ctl_answers
run_state_is running || fail "the resumed start_at run is not running: $(ctl status --json)"
wait_until 20 "the resumed start_at workload to finish" workload_is w finished
kill_rebooted TERM
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
# Two gaps: the kill while waiting (at run time 0) and the one while running.
check_log "$LOG" 9 2
python3 - "$LOG" "$START_NS" <<'EOF' || fail "the start_at run did not start at start_at"
import json, sys
for line in open(sys.argv[1]).read().splitlines()[1:]:
    try:
        r = json.loads(line.split(" ", 1)[1])
    except Exception:
        continue
    if r.get("type") == "interval":
        late = (r["wall_start_ns"] - int(sys.argv[2])) / 1e9
        if not -0.05 <= late <= 0.3:
            sys.exit(f"the first interval started {late:.3f} s after start_at")
        break
EOF
note "ok"
