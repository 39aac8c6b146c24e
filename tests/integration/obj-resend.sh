#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A DELETE on a reused keep-alive connection that the server carries out,
# then drops the connection unanswered (fault_server.py "delete-drop"):
# libcurl sends it again, unasked, on a new connection, and that answer
# is 404, the object being gone.  The DELETE did what it asked: it is
# counted as done, never as an object lost by the server (a reviewer saw
# 59 "LOST" objects and 59 HTTP 4xx errors where none was lost); whether
# the object was there before it is not known: verify.uncertain.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_fault_server delete-drop
cat >"$WORK/resend.json" <<JSON
{"run": {"name": "resend", "duration": "5s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 1,
                "objects": 10, "rate": 20, "mix": {"put": 50, "delete": 50},
                "size": "1KiB", "timeout": "2s"}]}
JSON
start_soakd --config "$WORK/resend.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "resent DELETEs counted wrong: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
d = ops["delete"]
print(f"# delete: {d['count']} done, {d['errors']} failed {d.get('errors_by_class')}, "
      f"verify {d.get('verify')}")
assert d.get("verify", {}).get("lost", 0) == 0, "objects reported lost"
assert d["errors_by_class"]["http_4xx"] == 0, "resent DELETEs counted as 4xx errors"
assert d["count"] >= 20, "too few DELETEs done to have met resends"
assert d["verify"]["uncertain"] >= 10, "the resent DELETEs' 404s are not counted uncertain"
PY
grep -q "LOST" "$SOAKD_LOG" && fail "a LOST line was logged: $(grep -m2 LOST "$SOAKD_LOG")"
note "ok"
