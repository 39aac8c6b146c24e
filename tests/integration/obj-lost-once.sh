#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A server that acknowledges every PUT and keeps nothing (fault_server.py
# "forget"), audited every second ("audit": "interval:1s"): each object is
# reported lost once, by the audit pass or GET that finds it gone, never
# again by the next passes or GETs: the pool holds its name as deleted, as
# the ledger does.  Lost objects can never outnumber the acknowledged PUTs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_fault_server forget

cat >"$WORK/lost.json" <<JSON
{"run": {"name": "lost", "duration": "6s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 2,
                "objects": 100, "rate": 8, "audit": "interval:1s",
                "mix": {"put": 70, "get": 30}, "size": "1KiB"}]}
JSON
start_soakd --config "$WORK/lost.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
dump_json "$WORK/dump.json"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
python3 - "$WORK/dump.json" <<'PY' || fail "lost objects counted more than once: $(head -c 2000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
lost = {op: o.get("verify", {}).get("lost", 0) for op, o in ops.items()}
put = sum(ops[op]["count"] for op in ("put", "prefill") if op in ops)
print(f"# {put} PUTs acknowledged; lost {lost}; audit reads {ops['audit']['count']}")
assert sum(lost.values()) > 0, "no object was found lost"
assert sum(lost.values()) <= put, "more objects lost than were ever acknowledged"
for op, o in ops.items():
    assert o.get("verify", {}).get("resurrected", 0) == 0, f"{op}: resurrected"
PY
n=$(grep -c "LOST" "$SOAKD_LOG" || true)
note "$n LOST lines logged (the first ones)"
