#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "start_at": a run whose configuration names an absolute start time is
# ready at once but starts its workloads at that wall-clock time; status
# says it is waiting, soakctl start is refused until then, and the run's
# time (interval boundaries, duration) counts from start_at.  A malformed
# start_at is reported as FILE:LINE:COLUMN.
source "$(dirname "$0")/lib.sh"

need_cmd python3

# Malformed times, located.
cat >"$WORK/bad.json" <<'EOF'
{
  "run": {"name": "bad",
          "start_at": "2030-01-01 12:00"},
  "workloads": [{"name": "w", "type": "device", "targets": ["x.dat"]}]
}
EOF
rc=0
out=$(cd "$WORK" && "$SOAKD" --check-config bad.json 2>&1) || rc=$?
((rc == 1)) || fail "--check-config of a bad start_at exited $rc: $out"
[[ $out == *'bad.json:3:23: "start_at" must be an RFC 3339 time such as "2025-06-01T12:00:00Z": the time must read HH:MM:SS'* ]] ||
	fail "unexpected error for a bad start_at: $out"
sed -i 's/"2030-01-01 12:00"/"2030-01-01T12:00:00"/' "$WORK/bad.json"
out=$(cd "$WORK" && "$SOAKD" --check-config bad.json 2>&1) && fail "a start_at without a time zone was accepted"
[[ $out == *'bad.json:3:23:'*'time zone'* ]] || fail "unexpected error for a start_at without zone: $out"
note "bad start_at: $out"

# A start 3 s ahead, to the millisecond.
START_NS=$(( ($(now_ns) / 1000000 + 3000) * 1000000 ))
START_AT=$(date -u -d "@$((START_NS / 1000000000)).$(printf %03d $((START_NS / 1000000 % 1000)))" +%Y-%m-%dT%H:%M:%S.%3NZ)
CFG="$WORK/start-at.json"
write_file_config "$CFG" startat w 3s idle 500
python3 - "$CFG" "$START_AT" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["run"]["start_at"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"), indent=2)
EOF
"$SOAKD" --check-config "$CFG" | grep -q "\"start_at\": \"$START_AT\"" || fail "the plan does not show start_at $START_AT"

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
ctl status --json >"$WORK/waiting.json"
python3 - "$WORK/waiting.json" "$START_AT" <<'EOF' || fail "status while waiting: $(cat "$WORK/waiting.json")"
import json, sys
s = json.load(open(sys.argv[1]))
problems = []
if s["state"] != "waiting":
    problems.append(f"run state {s['state']}, expected waiting")
if s.get("start_at") != sys.argv[2]:
    problems.append(f"start_at {s.get('start_at')}, expected {sys.argv[2]}")
if not 0.5 < s.get("starts_in_s", 0) <= 3.0:
    problems.append(f"starts_in_s {s.get('starts_in_s')}")
if s["elapsed_s"] != 0:
    problems.append(f"elapsed_s {s['elapsed_s']} before the start")
if any(w["state"] != "idle" for w in s["workloads"]):
    problems.append("a workload is not idle before start_at")
if problems:
    sys.exit("\n".join(problems))
EOF
ctl status | grep -q "^run startat: waiting for start_at $START_AT (in [0-9]s)$" ||
	fail "soakctl status while waiting: $(ctl status)"
rc=0
out=$(ctl start 2>&1) || rc=$?
((rc == 1)) && [[ $out == *"waits for its start_at, $START_AT"* ]] ||
	fail "soakctl start before start_at: exit $rc: $out"

# The workload starts at start_at: not before, and promptly.
running_ns=
until [[ -n $running_ns ]]; do
	state=$(workload_state w)
	if [[ $state == running ]]; then
		running_ns=$(now_ns)
	elif [[ $state != idle ]]; then
		fail "workload state $state while waiting for start_at"
	fi
	(($(now_ns) < START_NS + 3000000000)) || fail "the workload had not started 3 s after start_at"
	sleep 0.02
done
# Polled through soakctl, so seen late but never before its time.
((running_ns >= START_NS - 30000000)) ||
	fail "the workload ran $(((START_NS - running_ns) / 1000000)) ms before start_at"

# The run's 3 s count from start_at: intervals start at run time 0.
wait_until 15 "the workload to finish" workload_is w finished
ctl dump --format csv >"$WORK/dump.csv" || fail "dump failed"
python3 - "$WORK/dump.csv" <<'EOF' || fail "intervals: $(cat "$WORK/dump.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
starts = sorted({float(r["start_s"]) for r in rows})
if not rows or starts[0] > 0.05:
    sys.exit(f"the first interval starts at {starts[:1]} s of run time, not at start_at")
ends = sorted({float(r["end_s"]) for r in rows})
if abs(ends[-1] - 3.0) > 0.1:
    sys.exit(f"the run ends at {ends[-1]} s, expected 3 s after start_at")
EOF
# To the millisecond: the run's log has the first interval's wall-clock start.
python3 - "$WORK/state/startat/intervals.log" "$START_NS" <<'EOF' || fail "the first interval's start"
import json, sys
start_ns = int(sys.argv[2])
records = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    try:
        records.append(json.loads(line.split(" ", 1)[1]))
    except (IndexError, ValueError):
        pass
first = min(r["wall_start_ns"] for r in records if r.get("type") == "interval")
late_ms = (first - start_ns) / 1e6
print(f"# the first interval began {late_ms:.1f} ms after start_at")
if not -5 <= late_ms <= 100:
    sys.exit(f"the first interval began {late_ms:.1f} ms after start_at")
EOF
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
grep -q "run startat waits for start_at $START_AT" "$SOAKD_LOG" || fail "soakd did not log the wait"
note "ok"
