#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Multipart upload against a real MinIO (issue 17, section 2): objects above
# "multipart_threshold" go up in "multipart_part_size" parts (MinIO's ETag
# says how many), read back and verified as a whole; smaller ones in one
# PUT; no upload is left incomplete on the server.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"

cat >"$WORK/m.json" <<END
{
  "run": {"name": "multipart", "duration": "6s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "w", "type": "object", "protocol": "s3", "credentials": {"file": "$CREDS"},
     "endpoint": "$EP", "bucket": "parts", "create_bucket": true, "checksum": "md5",
     "size": {"dist": "uniform", "min": "1MiB", "max": "16MiB"},
     "multipart_threshold": "6MiB", "multipart_part_size": "5MiB", "multipart_parallel": 3,
     "concurrency": 2, "objects": 8, "rate": 8, "cleanup": false,
     "mix": {"put": 50, "get": 40, "stat": 10}},
    {"name": "seq", "type": "object", "protocol": "s3", "credentials": {"file": "$CREDS"},
     "endpoint": "$EP", "bucket": "parts", "create_bucket": true,
     "size": {"dist": "uniform", "min": "1MiB", "max": "12MiB"},
     "multipart_threshold": "6MiB", "multipart_part_size": "5MiB", "multipart_parallel": 1,
     "concurrency": 1, "objects": 4, "rate": 4, "cleanup": false,
     "mix": {"put": 50, "get": 50}}
  ]
}
END
"$SOAKD" --check-config "$WORK/m.json" | grep -q '"multipart_part_size": "5MiB"' ||
	fail "the plan does not show multipart"
start_soakd --config "$WORK/m.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 60 "workload w to finish" workload_is w finished
wait_until 60 "workload seq to finish" workload_is seq finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 2000 "$WORK/dump.json")"
import json, sys
for w in json.load(open(sys.argv[1]))["workloads"]:
    ops = w["ops"]
    for name, op in ops.items():
        assert op["errors"] == 0 and op["corrupt"] == 0, \
            f"{w['name']} {name}: {op['errors']} errors, {op['corrupt']} corrupt"
        for k in ("lost", "stale"):
            assert op.get("verify", {}).get(k, 0) == 0, f"{name}: {k}"
    assert ops["get"]["verify"]["checked"] > 0, "no GET verified"
    print("#", w["name"], "put:", ops["put"]["count"], "bytes", ops["put"]["bytes"],
          "gets checked", ops["get"]["verify"]["checked"])
PY

# Objects above the threshold have a multipart ETag ("...-N", N parts of
# 5 MiB), the others a plain one.
parts=0 whole=0
while read -r key size; do
	etag=$(s3 -sI "$EP/parts/$key" | tr -d '\r"' | awk 'tolower($1) == "etag:" { print $2 }')
	want=$(((size + 5242880 - 1) / 5242880))
	if ((size > 6291456)); then
		[[ $etag == *-"$want" ]] || fail "$key ($size bytes): ETag $etag, expected $want parts"
		parts=$((parts + 1))
	else
		[[ $etag != *-* ]] || fail "$key ($size bytes) went up in parts: ETag $etag"
		whole=$((whole + 1))
	fi
done < <(s3_list parts soakd-)
((parts > 0)) || fail "no object went up in parts"
s3 -sf "$EP/parts/?uploads=" >"$WORK/uploads.xml" || fail "cannot list multipart uploads"
grep -q "ListMultipartUploadsResult" "$WORK/uploads.xml" || fail "not a listing: $(cat "$WORK/uploads.xml")"
uploads=$(grep -o "<Upload>" "$WORK/uploads.xml" | wc -l || true)
((uploads == 0)) || fail "$uploads multipart uploads left incomplete"
note "$parts objects uploaded in parts, $whole in one PUT, none left incomplete"

# SIGKILLed in the middle of an upload: its parts stay on the server as an
# incomplete upload, until the resumed run's cleanup aborts it.
cat >"$WORK/k.json" <<END
{
  "run": {"name": "mpkill", "duration": "8s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "k", "type": "object", "protocol": "s3", "credentials": {"file": "$CREDS"},
     "endpoint": "$EP", "bucket": "killed", "create_bucket": true,
     "size": "16MiB", "multipart_threshold": "6MiB", "multipart_part_size": "5MiB",
     "multipart_parallel": 1, "concurrency": 2, "objects": 4, "rate": 4,
     "mix": {"put": 100}}
  ]
}
END
uploads_in() {
	s3 -sf "$EP/$1/?uploads=" >"$WORK/uploads.xml" || fail "cannot list multipart uploads"
	{ grep -o "<Upload>" "$WORK/uploads.xml" || true; } | wc -l
}
upload_open() { (($(uploads_in killed) > 0)); }
# (The upload seen may complete before the kill lands: then again.)
left=0
for ((try = 0; try < 5 && left == 0; try++)); do
	start_soakd --config "$WORK/k.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 20 "the control socket" ctl_answers
	wait_until 30 "an upload in progress" upload_open
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 5
	left=$(uploads_in killed)
done
((left > 0)) || fail "no incomplete upload left by five kills"
start_soakd --config "$WORK/k.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 60 "workload k to finish" workload_is k finished
n=$(uploads_in killed)
((n == 0)) || fail "$n multipart uploads left incomplete after the resumed run's cleanup: $(cat "$WORK/uploads.xml")"
grep -q "incomplete multipart uploads of the run's names" "$SOAKD_LOG" ||
	fail "the sweep of incomplete uploads did not say what it did"
stop_soakd 20
note "$left incomplete upload(s) left by SIGKILL, aborted by the resumed run's cleanup"
