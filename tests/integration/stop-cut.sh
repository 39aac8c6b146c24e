#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A workload stopped in the middle of its schedule: the ops the schedule
# would have made due after the stop are no op of the run.  The intervals
# that close while the workload drains, cleans up or gives up its ops in
# flight carry no target for them, so count + errors + missed equals the
# ops due, in total and per interval (acct_check.py), and rate_target over
# the scheduled time stays the configured rate.
#  1. an object workload whose cleanup is slow (DELETEs answered after
#     0.5 s by fault_server.py): the stop comes seconds before the end;
#  2. a device workload writing to a frozen file system, with intervals of
#     10 s: the stop is seen at once, though every slot is held and the next
#     boundary is seconds away, and the writes in flight get the drain's
#     5 s before they are given up;
#  3. the same with intervals of 100 ms, so that the stop lands between
#     boundaries that a thread whose slots are all held wakes at: the
#     boundary after the stop, closed before the thread sees the stop,
#     counts no op due after the stop as pending.
# Before each stream recorded where its schedule was cut, those intervals
# kept the schedule's rate as their target: ops due that nobody counted;
# and a device thread whose slots were all held saw the stop only at the
# next interval boundary.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/objlib.sh"
need_cmd python3 fsfreeze

# check NAME OP RATE SLACK: the dumps in $WORK/NAME.json and .csv account
# for every op due until the stop, and no interval that starts more than
# SLACK seconds after STOP_S (the stop's position in the run) has a target.
check() {
	local name=$1 op=$2 rate=$3 slack=$4 due
	due=$(python3 - "$WORK/$name.json" "$WORK/$name.csv" "$op" "$STOP_S" "$slack" <<'PY'
import csv, json, sys
o = json.load(open(sys.argv[1]))["workloads"][0]["ops"][sys.argv[3]]
total = o["count"] + o["errors"] + o["missed"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["op"] == sys.argv[3]]
stop, slack = float(sys.argv[4]), float(sys.argv[5])
due = sum(float(r["rate_target"]) * (float(r["end_s"]) - float(r["start_s"])) for r in rows)
problems = []
for r in rows:
    print(f"# {r['start_s']}..{r['end_s']}: count {r['count']} errors {r['errors']} "
          f"missed {r['missed']} pending {r['pending']} rate_target {r['rate_target']}",
          file=sys.stderr)
    if float(r["start_s"]) > stop + slack and float(r["rate_target"]) != 0:
        problems.append(f"interval {r['start_s']}..{r['end_s']}, after the stop at "
                        f"{stop:.2f} s, has rate_target {r['rate_target']}")
if abs(total - due) > 1.5:
    problems.append(f"count + errors + missed = {total}, the intervals' targets say "
                    f"{due:.1f} ops were due")
if problems:
    sys.exit("\n".join(problems))
print(total)
PY
	) || fail "$name: $due"
	python3 "$(dirname "$0")/acct_check.py" "$WORK/$name.json" "$WORK/$name.csv" w \
		"$due" --rate "$rate" ||
		fail "$name: not every scheduled op is accounted for: $(cat "$WORK/$name.csv")"
}

# stop_now NAME LIMIT: soakctl stop w, which must end within LIMIT
# seconds; STOP_S is where the run was then, TOOK_MS how long it took; the
# dumps go to $WORK/NAME.json and .csv.
stop_now() {
	local name=$1 limit=$2 t0
	STOP_S=$(ctl status --json | python3 -c '
import json, sys
print(json.load(sys.stdin)["elapsed_s"])') || fail "$name: soakctl status failed"
	t0=$(now_ns)
	ctl stop w >/dev/null || fail "$name: soakctl stop failed"
	wait_until "$limit" "workload w to stop" workload_is w stopped
	TOOK_MS=$((($(now_ns) - t0) / 1000000))
	note "$name: stopped at ${STOP_S} s into the run, ended ${TOOK_MS} ms later"
	ctl dump --format json >"$WORK/$name.json" || fail "soakctl dump --format json failed"
	ctl dump --format csv >"$WORK/$name.csv" || fail "soakctl dump --format csv failed"
}

# run_w NAME: soakd on $WORK/NAME.cfg (its log soakd-NAME.log), until its
# workload w runs.
run_w() {
	SOAKD_LOG="$WORK/soakd-$1.log"
	start_soakd --config "$WORK/$1.cfg" --socket "$SOCK" --state-dir "$WORK/state-$1" --no-table
	wait_until 20 "the control socket" ctl_answers
	wait_until 10 "workload w to run" workload_is w running
}

# 1. Objects, a cleanup of 20 objects at 2 at a time, 0.5 s each.
start_fault_server
cat >"$WORK/obj.cfg" <<EOF
{"run": {"name": "obj-stop", "interval": "1s", "duration": "60s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 2,
                "objects": 20, "rate": 20, "mix": {"put": 100}, "size": "1KiB",
                "timeout": "5s"}]}
EOF
run_w obj
puts_done() {
	ctl status --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"][0]
sys.exit(0 if w["ops"]["put"]["count_total"] >= int(sys.argv[1]) else 1)' "$1"
}
wait_until 15 "60 PUTs" puts_done 60
echo deletesleep:0.5 >"$MODE"
stop_now obj 20
((TOOK_MS >= 3000)) || fail "obj: the cleanup took ${TOOK_MS} ms, not the seconds this test needs"
check obj put 20 0.5
stop_soakd 20
((SOAKD_RC == 0)) || fail "obj: soakd exited $SOAKD_RC after SIGTERM"

# 2. A device, its writes held by a frozen file system when it is stopped.
freezable_fs 128M
cat >"$WORK/dev.cfg" <<EOF
{"run": {"name": "dev-stop", "interval": "10s", "duration": "60s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern",
                "targets": ["$MNT/w.dat"], "file_size": "16MiB", "read_pct": 0,
                "block_size": "4KiB", "access": "random", "queue_depth": 8,
                "rate": 1000}]}
EOF
run_w dev
# Counts reach status as intervals close: here the run's clock tells.
elapsed_past() {
	ctl status --json | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["elapsed_s"] >= float(sys.argv[1]) else 1)' "$1"
}
wait_until 10 "2 s of writes" elapsed_past 2
# Thawed before soakd is killed (cleanups run last first, and this one is
# after start_soakd's): a process cannot exit while its writes wait on a
# frozen file system.
on_exit thaw
freeze
sleep 0.5 # no sleep-to-wait: ops must pile up behind the freeze
stop_now dev 15
((TOOK_MS >= 4500)) || fail "dev: the stop took ${TOOK_MS} ms: no drain of the frozen writes"
# Seen at once, the stop ends after the 5 s drain and the polls around it
# (7.7 s under a parallel suite); seen at the boundary, 10 s into the run,
# it took 12 s and more.
((TOOK_MS <= 10000)) ||
	fail "dev: the stop took ${TOOK_MS} ms, the drain 5 s: the thread did not see it at once"
thaw
check dev write 1000 0.5
grep -q "ops still in flight .* were given up" "$SOAKD_LOG" ||
	fail "dev: no warning that ops in flight were given up"
stop_soakd 20
((SOAKD_RC == 0)) || fail "dev: soakd exited $SOAKD_RC after SIGTERM"

# 3. The same with intervals of 100 ms: every slot held, the thread wakes
# at each boundary, so the first boundary after the stop is closed before
# the thread sees the stop.  The ops its schedule would have made due
# between the stop and that boundary are no op of the run: not pending.
thaw
sed 's/"interval": "10s"/"interval": "100ms"/; s/"dev-stop"/"dev-stop-short"/' "$WORK/dev.cfg" \
	>"$WORK/devshort.cfg"
run_w devshort
wait_until 10 "2 s of writes" elapsed_past 2
freeze
sleep 0.5 # no sleep-to-wait: ops must pile up behind the freeze
stop_now devshort 15
thaw
check devshort write 1000 0.2
stop_soakd 20
((SOAKD_RC == 0)) || fail "devshort: soakd exited $SOAKD_RC after SIGTERM"
note "ok"
