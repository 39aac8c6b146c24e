#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An object endpoint that answers 503, answers too slowly, and resets
# connections, in turn, then behaves again: soakd lives through all of it,
# counts each fault in its class (http_5xx, timeout, transfer/connect) and
# recovers by itself, with nothing recorded lost.
source "$(dirname "$0")/lib.sh"
need_cmd python3

MODE="$WORK/mode"
echo ok >"$MODE"
spawn "$WORK/server.log" python3 "$(dirname "$0")/fault_server.py" 0 "$MODE"
port_known() { [[ -s $WORK/server.log ]]; }
wait_until 10 "the fault server" port_known
PORT=$(head -1 "$WORK/server.log")

CFG="$WORK/faults.json"
cat >"$CFG" <<EOF
{"run": {"name": "faults", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "f", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 4,
                "objects": 20, "rate": 40, "mix": {"put": 50, "get": 50},
                "size": "4KiB", "timeout": "1s", "connect_timeout": "1s"}]}
EOF
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the workload to run" workload_is f running
sleep 2
for m in 503 slow reset ok; do
	note "server mode: $m"
	echo "$m" >"$MODE"
	sleep 3
done
sleep 3 # recovery
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "dump csv failed"
ctl status --json >/dev/null || fail "soakd does not answer after the faults"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
python3 - "$WORK/dump.json" "$WORK/dump.csv" <<'EOF' || fail "faults not counted where they belong"
import csv, json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
classes = {}
for op in ops.values():
    for k, v in op.get("errors_by_class", {}).items():
        classes[k] = classes.get(k, 0) + v
print("errors by class:", classes)
if classes.get("http_5xx", 0) == 0:
    sys.exit("503 answers were not counted as http_5xx")
if classes.get("timeout", 0) == 0:
    sys.exit("slow answers were not counted as timeouts")
if classes.get("transfer", 0) + classes.get("connect", 0) == 0:
    sys.exit("connection resets were not counted")
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["op"] in ("put", "get")]
last = max(float(r["end_s"]) for r in rows)
tail = [r for r in rows if float(r["end_s"]) > last - 2]
if sum(int(r["errors"]) for r in tail) or not sum(int(r["count"]) for r in tail):
    sys.exit(f"no recovery: the last intervals still fail or are empty: {tail}")
EOF
grep -q 'SlowDown\|Please reduce' "$SOAKD_LOG" || note "the server's 503 message was not logged (only counted)"
note "ok"
