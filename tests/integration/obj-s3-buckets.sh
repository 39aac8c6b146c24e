#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "buckets": N against a real MinIO (issue 17, section 2): the buckets
# BUCKET-0 .. BUCKET-(N-1) are created, objects are spread over all of
# them, reads verify, listings of each bucket agree with the ledger, and
# the cleanup empties every bucket.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"

cat >"$WORK/b.json" <<END
{
  "run": {"name": "buckets", "duration": "6s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "w", "type": "object", "protocol": "s3", "credentials": {"file": "$CREDS"},
     "endpoint": "$EP", "bucket": "spread", "buckets": 4, "create_bucket": true,
     "size": "4KiB", "concurrency": 4, "objects": 64, "rate": 150,
     "mix": {"put": 25, "get": 40, "stat": 10, "delete": 10, "list": 15}}
  ]
}
END
"$SOAKD" --check-config "$WORK/b.json" | grep -q '"buckets": 4' || fail "the plan does not show buckets"
start_soakd --config "$WORK/b.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
prefilled() { (($(op_field w prefill count) >= 64)); }
wait_until 20 "the prefill" prefilled
# Listed one bucket after the other with soakd frozen: while its PUTs and
# DELETEs went on, a name deleted from a bucket already listed and its
# slot's new name put into one listed after were both counted, as often as
# that happened (69 once).  Frozen, only the ops in flight ("concurrency")
# can still move a name.
kill -STOP "$SOAKD_PID"
total=0 counts=()
for i in 0 1 2 3; do
	n=$(s3_list "spread-$i" soakd-w/ | wc -l)
	counts+=("$n")
	total=$((total + n))
done
kill -CONT "$SOAKD_PID"
for i in 0 1 2 3; do
	((counts[i] > 0)) || fail "bucket spread-$i holds none of the objects"
	note "spread-$i: ${counts[i]} objects"
done
((total >= 60 && total <= 68)) || fail "$total objects over the 4 buckets, expected about 64"
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 2000 "$WORK/dump.json")"
import json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
for name, op in ops.items():
    assert op["errors"] == 0 and op["corrupt"] == 0, f"{name}: {op['errors']} errors"
    v = op.get("verify", {})
    for k in ("lost", "stale", "resurrected", "list_missing", "list_extra"):
        assert v.get(k, 0) == 0, f"{name}: {k} = {v[k]}"
assert ops["list"]["count"] > 0 and ops["get"]["verify"]["checked"] > 0
print("# lists:", ops["list"]["count"], "gets checked:", ops["get"]["verify"]["checked"])
PY
for i in 0 1 2 3; do
	left=$(s3_list "spread-$i" "" | wc -l)
	((left == 0)) || fail "the cleanup left $left objects in spread-$i"
done
note "64 objects over 4 buckets, listed and cleaned up in each"
