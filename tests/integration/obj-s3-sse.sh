#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "sse": "s3" against a real MinIO with a KMS key (issue 17, section 2):
# every PUT asks for SSE-S3, signed with the rest of the request, the
# objects are stored encrypted (HEAD says so), reads verify as usual; a
# workload without it stores them in the clear.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
# A static KMS key: MinIO's SSE-S3 needs one.
start_minio "$WORK/minio" "$PORT" "MINIO_KMS_SECRET_KEY=soak-key:$(head -c 32 /dev/urandom | base64)"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"

common="\"type\": \"object\", \"protocol\": \"s3\", \"credentials\": {\"file\": \"$CREDS\"},
        \"endpoint\": \"$EP\", \"bucket\": \"soak\", \"create_bucket\": true, \"size\": \"16KiB\",
        \"concurrency\": 2, \"objects\": 10, \"rate\": 40, \"cleanup\": false,
        \"mix\": {\"put\": 30, \"get\": 60, \"stat\": 10}"
cat >"$WORK/sse.json" <<END
{
  "run": {"name": "sse", "duration": "4s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "enc", $common, "sse": "s3"},
    {"name": "clear", $common}
  ]
}
END
"$SOAKD" --check-config "$WORK/sse.json" | grep -q '"sse": "s3"' || fail "the plan does not show sse"
start_soakd --config "$WORK/sse.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
for w in enc clear; do
	wait_until 30 "workload $w to finish" workload_is "$w" finished
done
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 2000 "$WORK/dump.json")"
import json, sys
for w in json.load(open(sys.argv[1]))["workloads"]:
    for name, op in w["ops"].items():
        assert op["errors"] == 0 and op["corrupt"] == 0, f'{w["name"]} {name}: {op["errors"]} errors'
    assert w["ops"]["get"]["verify"]["checked"] > 0, f'{w["name"]}: no verified GET'
PY
! grep -q "did not confirm SSE-S3" "$SOAKD_LOG" || fail "soakd says the server did not confirm SSE"

encryption() {
	s3 -sI "$EP/soak/$1" | tr -d '\r' |
		awk 'tolower($1) == "x-amz-server-side-encryption:" { print $2 }'
}
n=0
while read -r key _; do
	[[ $(encryption "$key") == AES256 ]] || fail "$key is not stored with SSE-S3"
	n=$((n + 1))
done < <(s3_list soak soakd-enc/)
((n == 10)) || fail "$n objects of enc, expected 10"
while read -r key _; do
	[[ -z $(encryption "$key") ]] || fail "$key of the workload without sse is encrypted"
done < <(s3_list soak soakd-clear/)
note "10 objects stored with SSE-S3, the others in the clear"
