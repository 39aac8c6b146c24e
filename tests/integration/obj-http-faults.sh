#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An object endpoint that answers 503, answers too slowly, and resets
# connections, in turn, then behaves again: soakd lives through all of it,
# counts each fault in its class (http_5xx, timeout, transfer/connect) and
# recovers by itself, with nothing recorded lost.
#
# Then an S3 error whose <Message> forges a soakd log line, carries
# terminal escapes and 100 KB (issue 12): logged on one line, without
# control bytes and bounded, both during the run and when the probe at
# start is refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"
need_cmd python3

start_fault_server

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
for m in 503 slow reset put-body ok; do
	note "server mode: $m"
	echo "$m" >"$MODE"
	sleep 3
done
sleep 3 # recovery
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "dump csv failed"
ctl status --json >/dev/null || fail "soakd does not answer after the faults"
stop_soakd 10
# Time to first byte is of completed ops, as latency: an interval whose
# ops all failed (the 503s come back at once) has none.
python3 - "$WORK/state/faults/intervals.log" <<'EOF' || fail "ttfb of failed ops"
import json, sys
failed_only = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec.get("type") != "interval":
        continue
    for name, op in rec["ops"].items():
        if op.get("count", 0) == 0 and op.get("errors", 0) > 0:
            failed_only += 1
            if "ttfb" in op:
                sys.exit(f"{name} at {rec['start_ns'] / 1e9:.0f} s: no op completed, "
                         f"{op['errors']} failed, and ttfb holds their answers")
print(f"# {failed_only} op intervals with only failures, none with a ttfb")
if not failed_only:
    sys.exit("no interval where every op failed: the 503s did not take")
EOF
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
# A PUT moved its object, whatever body came back with its answer.
put = ops["put"]
if put["bytes"] != 4096 * put["count"]:
    sys.exit(f"{put['count']} PUTs of 4 KiB moved {put['bytes']} bytes")
EOF
grep -q 'SlowDown\|Please reduce' "$SOAKD_LOG" || note "the server's 503 message was not logged (only counted)"

# A hostile S3 error message, mid-run and at start.
echo ok >"$MODE"
write_creds "$WORK/s3.creds"
cat >"$WORK/forge.json" <<EOF
{"run": {"name": "forge", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "s", "type": "object", "protocol": "s3",
                "endpoint": "http://127.0.0.1:$PORT", "bucket": "forge",
                "credentials": {"file": "$WORK/s3.creds"}, "concurrency": 2,
                "objects": 10, "rate": 20, "mix": {"put": 100}, "size": "1KiB",
                "timeout": "2s", "connect_timeout": "1s"}]}
EOF
SOAKD_LOG="$WORK/forge-run.log"
start_soakd --config "$WORK/forge.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the S3 workload to run" workload_is s running
echo forge >"$MODE"
wait_until 20 "403s to be counted" op_at_least s put errors_by_class.http_4xx 5
stop_soakd 10
SOAKD_LOG="$WORK/forge-start.log"
start_soakd --config "$WORK/forge.json" --socket "$SOCK" --state-dir "$WORK/state2" --no-table
wait_soakd_exit 20
((SOAKD_RC != 0)) || fail "soakd started although the endpoint refused its credentials"
controls=$'[\x01-\x08\x0b-\x1f\x7f]'
for log in "$WORK/forge-run.log" "$WORK/forge-start.log"; do
	grep -q "AccessDenied: Access Denied" "$log" || fail "$log: the 403 was not logged: $(cat "$log")"
	! grep -q "^ *soakd: control socket: stop from uid 0" "$log" ||
		fail "$log: the server forged a log line: $(grep -n "^ *soakd: control socket: stop" "$log" | cat -v | head -c 600)"
	! LC_ALL=C grep -q "$controls" "$log" ||
		fail "$log: control bytes reached the log: $(LC_ALL=C grep -n "$controls" "$log" | cat -v | head -c 600)"
	longest=$(LC_ALL=C awk '{ if (length($0) > n) n = length($0) } END { print n + 0 }' "$log")
	((longest < 1024)) || fail "$log: a line of $longest bytes: the server's message is not bounded"
	note "$(basename "$log"): the forged message is one line of at most $longest bytes, no control bytes"
done
note "ok"
