#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A PUT answered 504 whose write the server carries out a second later,
# after the PUTs sent after it were acknowledged (fault_server.py
# "put-late": a gateway that gave up while its backend went on).  Reading
# back what that unanswered PUT left is not the server's fault: the reads
# count it uncertain, never stale or corrupt, and take it as what the
# object holds from then on.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_fault_server put-late:5:1
cat >"$WORK/late.json" <<JSON
{"run": {"name": "late", "duration": "8s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 2,
                "objects": 2, "rate": 40, "mix": {"put": 40, "get": 40, "stat": 20},
                "size": {"dist": "uniform", "min": "1KiB", "max": "8KiB"},
                "timeout": "2s", "cleanup": false}]}
JSON
start_soakd --config "$WORK/late.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump.json"
landed=$(grep -c '^put-late ' "$WORK/server.log" || true)
python3 - "$WORK/dump.json" "$landed" <<'PY' || fail "reads after late PUTs: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
def v(op, k):
    return ops[op].get("verify", {}).get(k, 0)
print(f"# {sys.argv[2]} PUTs landed late; put errors {ops['put']['errors']}; "
      f"get verify {ops['get'].get('verify')}; stat verify {ops['stat'].get('verify')}")
assert int(sys.argv[2]) >= 5, "too few late PUTs"
assert ops["put"]["errors"] >= 5, "the 504s are not counted as errors"
for op in ("get", "stat"):
    for k in ("stale", "corrupt", "lost"):
        assert v(op, k) == 0 and ops[op].get("corrupt", 0) == 0, f"{op}: {k}"
assert v("get", "uncertain") + v("stat", "uncertain") >= 1, "no read met a late PUT"
assert v("get", "checked") > 50, "too few GETs checked"
PY
grep -q "STALE\|CORRUPT" "$SOAKD_LOG" && fail "a late PUT was reported: $(grep -m3 "STALE\|CORRUPT" "$SOAKD_LOG")"

# 2. What lands late is the unanswered PUT's header and zeros (a backend
# that crashed mid-write): a read of it is corrupt, not uncertain (the
# header alone passed: the check stopped at its first difference).
echo "put-late-torn:5:1" >"$MODE"
SOAKD_LOG="$WORK/soakd.torn.log"
start_soakd --config "$WORK/late.json" --socket "$SOCK" --state-dir "$WORK/state-torn" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump-torn.json"
python3 - "$WORK/dump-torn.json" <<'PY' || fail "reads of torn late PUTs: $(head -c 3000 "$WORK/dump-torn.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
g = ops["get"]
print(f"# torn late PUTs: get corrupt {g.get('corrupt')}, verify {g.get('verify')}")
assert g.get("corrupt", 0) >= 1, "no read of a torn late PUT was counted corrupt"
PY
grep -q "CORRUPT: GET .*begins as version [0-9]* of this object (a write that had no answer)" \
	"$SOAKD_LOG" || fail "no CORRUPT line for a torn late PUT: $(grep -m3 "CORRUPT\|STALE" "$SOAKD_LOG")"
note "ok"
