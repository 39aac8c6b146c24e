#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Listings a server answers badly (fault_server.py, which lists its objects
# path-style as S3 does): a 200 with an empty body is a failed LIST, not a
# success read from the last page's text left in soakd's buffer; one cut
# short where the server closed the connection (no length given, so
# libcurl calls it done) is a failed LIST, not a page whose missing keys
# are reported missing from the bucket.
# While the server lists properly, every listing agrees with the ledger.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_fault_server ok
write_creds "$WORK/s3.creds"
cat >"$WORK/list.json" <<JSON
{"run": {"name": "list", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "s", "type": "object", "protocol": "s3",
                "endpoint": "http://127.0.0.1:$PORT", "bucket": "lst",
                "credentials": {"file": "$WORK/s3.creds"}, "concurrency": 2,
                "objects": 20, "rate": 30, "mix": {"put": 60, "get": 20, "list": 20},
                "size": "1KiB", "timeout": "2s", "connect_timeout": "1s"}]}
JSON
start_soakd --config "$WORK/list.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the S3 workload to run" workload_is s running
wait_until 20 "listings to succeed" op_at_least s list count 5
echo list-empty >"$MODE"
wait_until 20 "empty listings to be counted as failed" op_at_least s list errors_by_class.transfer 5
n=$(op_field s list errors_by_class.transfer)
echo list-cut >"$MODE"
wait_until 20 "listings cut short to be counted as failed" \
	op_at_least s list errors_by_class.transfer $((n + 3))
echo ok >"$MODE"
n=$(op_field s list count)
wait_until 20 "listings to succeed again" op_at_least s list count $((n + 3))
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "listings counted wrong: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "s")["ops"]
lst = ops["list"]
v = lst.get("verify", {})
print(f"# list: {lst['count']} ok, {lst['errors']} failed; verify {v}")
for key in ("list_missing", "list_extra", "resurrected"):
    assert v.get(key, 0) == 0, f"{key} {v.get(key)}: the listings agree with the objects"
assert lst["errors_by_class"]["transfer"] >= 8, "the empty or cut listings were not failures"
PY
grep -q "the response is not a ListObjectsV2 result" "$SOAKD_LOG" ||
	fail "the empty listing was not logged: $(grep -i list "$SOAKD_LOG" | head -5)"
note "ok"
