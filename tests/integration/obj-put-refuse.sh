#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A PUT the server carried out whose answer never came: the server stores
# the object, stops listening and resets the kept-alive connection
# (fault_server.py "put-refuse"); libcurl sends the PUT again on a new
# connection, which is refused, and reports "could not connect".  The PUT
# was sent, so it may have happened: the ledger keeps it uncertain.  Taken
# as certainly not done, the ledger held the version before it, and after
# a restart the audit read the newer object back as corrupt.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_fault_server put-refuse
cat >"$WORK/refuse.json" <<JSON
{"run": {"name": "refuse", "duration": "14s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 1,
                "objects": 1, "rate": 20, "mix": {"put": 100},
                "size": "1KiB", "timeout": "2s", "max_lag": "60s"}]}
JSON
start_soakd --config "$WORK/refuse.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
# Killed while the server refuses, after its second kept, unanswered
# PUT: that PUT is the last one the object saw.
refused_twice() { (($(grep -c '^put-refuse ' "$WORK/server.log") >= 2)); }
wait_until 20 "two PUTs the server kept unanswered" refused_twice
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
echo ok >"$MODE"
# Resumed: the ledger's objects are audited before the mix goes on.
start_soakd --config "$WORK/refuse.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" "$WORK/state/refuse/intervals.log" <<'PY' || fail "the audit after refused resends: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
connect = 0
for line in open(sys.argv[2]).read().splitlines()[1:]:
    r = json.loads(line.split(" ", 1)[1])
    if r.get("type") == "interval" and r.get("workload") == "w":
        connect += r["ops"].get("put", {}).get("errors_by_class", {}).get("connect", 0)
audit = ops.get("audit", {})
print(f"# {connect} PUTs met a refused resend or connect; audit: {audit.get('count')} read, "
      f"verify {audit.get('verify')}")
assert connect >= 3, "too few refused connects to have met the case"
assert audit.get("count", 0) >= 1, "the resumed run audited too few objects"
bad = {k: v for k, v in audit.get("verify", {}).items()
       if k in ("corrupt", "stale", "lost", "resurrected") and v}
assert not bad, f"the audit judged objects of refused resends: {bad}"
PY
grep -q "resumes 0 objects .*(1 uncertain" "$SOAKD_LOG" ||
	fail "the ledger did not keep the unanswered PUT uncertain: $(grep resumes "$SOAKD_LOG")"
note "ok"
