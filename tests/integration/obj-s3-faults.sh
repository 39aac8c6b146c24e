#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Object workloads when the S3 server misbehaves, on a real MinIO:
#  - not running when soakd starts: soakd starts anyway, says so, and the
#    workloads begin by themselves once MinIO is up;
#  - killed mid-run and restarted: the errors are counted by class, soakd
#    keeps running, and the load recovers by itself;
#  - an object deleted behind soakd's back: a 404, counted as HTTP 4xx with
#    S3's reason, and that name is not read again;
#  - objects changed behind soakd's back (same size, other bytes; or
#    the right bytes, truncated): every GET of them is counted as corrupt, not as an error,
#    and the first ones are logged with what differs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"

common="\"type\": \"object\", \"protocol\": \"s3\", \"credentials\": {\"file\": \"$CREDS\"},
     \"endpoint\": \"$EP\", \"bucket\": \"faults\", \"create_bucket\": true,
     \"connect_timeout\": \"1s\", \"timeout\": \"5s\", \"size\": \"4KiB\""
cat >"$WORK/faults.json" <<EOF
{
  "run": {"name": "faults", "duration": "120s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "recover", $common, "concurrency": 4, "objects": 20, "rate": 100,
     "mix": {"get": 70, "put": 30}, "prefix": "recover/"},
    {"name": "victim", $common, "concurrency": 2, "objects": 10, "rate": 50,
     "mix": {"get": 100}, "prefix": "victim/"},
    {"name": "lost", $common, "concurrency": 1, "objects": 5, "rate": 20,
     "mix": {"get": 100}, "prefix": "lost/"}
  ]
}
EOF

# 1. MinIO is not there yet.
start_soakd --config "$WORK/faults.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 10 "the unreachable endpoint to be reported" \
	grep -q "cannot be reached now" "$SOAKD_LOG"
[[ $(workload_state recover) == running ]] || fail "workload recover is $(workload_state recover)"
note "soakd runs without its endpoint"

start_minio "$WORK/minio" "$PORT"
wait_until 60 "the workloads to start by themselves" grep -q "is reachable; starting" "$SOAKD_LOG"
wait_until 60 "GETs after the endpoint came up" op_at_least recover get count 100
wait_until 30 "the victim's prefill" op_at_least victim prefill count 10
note "the workloads started by themselves once MinIO was up"

# 2. An object deleted behind soakd's back: GET says 404, counted as an
# HTTP 4xx error with S3's reason, and the object is not asked for again.
wait_until 30 "lost's prefill" op_at_least lost prefill count 5
s3_list faults lost/ >"$WORK/lost.txt"
key=$(head -n1 "$WORK/lost.txt" | cut -d' ' -f1)
s3 -f -X DELETE "$EP/faults/$key" >/dev/null || fail "cannot delete $key"
wait_until 30 "a 404 to be counted" op_at_least lost get errors_by_class.http_4xx 1
grep -q "lost: GET $key failed (HTTP 4xx): HTTP 404 NoSuchKey" "$SOAKD_LOG" ||
	fail "the 404 was not logged with S3's reason"
lost_4xx=$(op_field lost get errors_by_class.http_4xx)
wait_until 30 "40 more GETs" op_at_least lost get count $(($(op_field lost get count) + 40))
[[ $(op_field lost get errors_by_class.http_4xx) == "$lost_4xx" ]] ||
	fail "the lost object was asked for again"
note "a lost object: $lost_4xx GET answered 404 NoSuchKey, then no more"

# 3. Kill MinIO mid-run, then bring it back on the same data.
before=$(op_field recover get errors)
kill -KILL "$MINIO_PID"
wait_until 30 "connect errors to be counted" op_at_least recover get errors_by_class.connect 5
[[ $(workload_state recover) == running ]] || fail "recover is $(workload_state recover) with MinIO down"
note "MinIO killed: $(op_field recover get errors) GET errors, workloads still running"
sleep_until=$(($(now_ns) + 2000000000))
while (($(now_ns) < sleep_until)); do ctl_answers || fail "soakd stopped answering"; done
start_minio "$WORK/minio" "$PORT"
wait_until 60 "the load to recover" grep -q "recover: $EP answers again after" "$SOAKD_LOG"
# MinIO may still answer "503 not initialized" for a moment: let it settle,
# then the next 100 GETs must all succeed.
wait_until 30 "GETs to flow again" op_at_least recover get count $(($(op_field recover get count) + 50))
errors_after=$(op_field recover get errors)
wait_until 30 "100 more GETs" op_at_least recover get count $(($(op_field recover get count) + 100))
[[ $(op_field recover get errors) == "$errors_after" ]] ||
	fail "errors kept growing after MinIO came back: $errors_after -> $(op_field recover get errors)"
note "MinIO restarted: $((errors_after - before)) GET errors while it was away, none since"

# 4. Corrupt the victim's objects behind soakd's back.
victim_errors=$(op_field victim get errors)
s3_list faults victim/ >"$WORK/victim.txt"
(($(wc -l <"$WORK/victim.txt") == 10)) || fail "victim has $(wc -l <"$WORK/victim.txt") objects"
n=0
while read -r key size; do
	if ((n++ % 2)); then
		head -c "$size" /dev/urandom >"$WORK/other" # same size, other bytes
	else
		# truncated: the right first half, nothing after it
		s3 -f "$EP/faults/$key" | head -c $((size / 2)) >"$WORK/other" ||
			fail "cannot read $key"
	fi
	s3 -f -T "$WORK/other" "$EP/faults/$key" >/dev/null || fail "cannot overwrite $key"
done <"$WORK/victim.txt"
wait_until 30 "corrupt GETs to be counted" op_at_least victim get corrupt 20
[[ $(op_field victim get errors) == "$victim_errors" ]] || fail "corrupt data was counted as errors"
grep -q "CORRUPT: GET victim/.*differs from what was written at byte" "$SOAKD_LOG" ||
	fail "no corrupt GET was logged with where it differs"
grep -q "CORRUPT: GET victim/.* bytes came back where 4096 were written" "$SOAKD_LOG" ||
	fail "no truncated GET was logged"
note "corrupt: $(op_field victim get corrupt) GETs, no errors"

dump_json "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 2000 "$WORK/dump.json")"
import json, sys
d = {w["name"]: w for w in json.load(open(sys.argv[1]))["workloads"]}
r = d["recover"]["ops"]
classes = {k: r["get"]["errors_by_class"][k] + r["put"]["errors_by_class"][k]
           for k in r["get"]["errors_by_class"]}
print(f"# recover: errors by class {classes}; get corrupt {r['get']['corrupt']}")
assert classes["connect"] > 0
assert r["get"]["corrupt"] == 0 and r["put"]["corrupt"] == 0, "false corruption after the restart"
assert all(w["state"] == "running" for w in d.values())
PY

# Stopping the workloads ends them: each cleans up, doubtful objects (PUTs
# cut by the kill) too.  (soakd stopping alone keeps them for the resumed
# run: see obj-ledger.sh.)
ctl stop >/dev/null || fail "soakctl stop failed"
for w in recover victim lost; do
	wait_until 60 "workload $w to stop" workload_is "$w" stopped
done
stop_soakd 60
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
secret_absent "$SOAKD_LOG" "$WORK/dump.json"
left=$(s3_list faults "")
[[ -z $left ]] || fail "objects left after cleanup: $left"
note "ok"
