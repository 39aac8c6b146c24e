#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An object workload's thread woken late at the end of its schedule: soakd
# is SIGSTOPped a second before a fixed-rate run ends and continued half a
# second after.  The ops due in that last second were due before the end,
# and free transfers can take them: they go out, late (the lateness is
# soakd's own, in issue_delay_us), and none is counted missed.  Only ops
# no transfer can take are missed; none is issued for a time past the end.
# Every op the schedule made due is counted once.  (65781ee; before it,
# every op not yet started at the end was missed.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

PORT=$(free_port)
start_nginx "$WORK/nginx" "$PORT"

cat >"$WORK/end.json" <<EOF
{"run": {"name": "end", "duration": "5s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/end/", "concurrency": 128,
                "objects": 16, "size": "4KiB", "rate": 100, "max_lag": "0s",
                "mix": {"get": 100}}]}
EOF
start_soakd --config "$WORK/end.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the workload to run" workload_is w running

# Stopped 4 s into the run (1 s before its end), continued at 5.5 s: one
# process reads the run's age, sleeps and stops soakd, so a loaded machine
# (python's start, soakctl's) does not push the stop past the end.
on_exit kill -CONT "$SOAKD_PID"
stopped_at=$(timeout 20 python3 - "$SOAKCTL" "$SOCK" "$SOAKD_PID" <<'PY'
import json, os, signal, subprocess, sys, time
ctl, sock, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
status = subprocess.run([ctl, "--socket", sock, "status", "--json"], capture_output=True, check=True)
got, elapsed = time.monotonic(), json.loads(status.stdout)["elapsed_s"]
if elapsed > 3.5:
    sys.exit(f"the run was {elapsed}s old before the test could look at it")
time.sleep(max(0.0, 4.0 - elapsed - (time.monotonic() - got)))
os.kill(pid, signal.SIGSTOP)
print(round(elapsed + time.monotonic() - got, 2))
PY
) || fail "could not stop soakd in time: $stopped_at"
sleep 1.5
kill -CONT "$SOAKD_PID"
note "soakd stopped from $stopped_at s to 1.5 s later"

wait_until 30 "the workload to finish" workload_is w finished
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" "$WORK/dump.csv" <<'PY' || fail "dump: $(cat "$WORK/dump.csv")"
import csv, json, sys
g = json.load(open(sys.argv[1]))["workloads"][0]["ops"]["get"]
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["op"] == "get"]
print(f"# {g['count']} GETs, {g['errors']} errors, {g.get('missed', 0)} missed, "
      f"issue_delay_us max {g.get('issue_delay_us', {}).get('max')}")
# 5 s at 100/s: every op due counted once.
assert g["count"] + g["errors"] + g.get("missed", 0) == 500, "ops due are not 500"
assert g["errors"] == 0, "errors"
# 128 transfers were free for the 100 or so due while soakd was stopped:
# none of the last second's is missed.  (The op due at 0 s, while the
# pool was prefilled, is, by design, and is logged as such.)
last = [r for r in rows if float(r["start_s"]) >= 4.0]
missed = sum(int(r["missed"]) for r in last)
assert missed == 0, f"{missed} ops due in the last second were missed, with transfers free"
# They went out after the stop, late by soakd's own doing, and completed
# after the schedule's end.
after = sum(int(r["count"]) for r in rows if float(r["start_s"]) >= 5.0)
assert after > 0, "no op completed after the end: none went out late"
assert g["issue_delay_us"]["max"] >= 400000, "no op was issued late"
print(f"# {after} ops issued late after the stop, none of the last second missed")
PY
note "ok"
