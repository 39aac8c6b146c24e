#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# S3 credentials, against a real MinIO: from a file next to the config or a
# systemd credential ($CREDENTIALS_DIRECTORY/NAME); --check-config catches a
# missing file or profile where the config names it; a wrong secret or key
# stops soakd at start with the server's own reason; and the secret never
# appears in the plan, the log, the status or the dump.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
EP="http://127.0.0.1:$PORT"
# Exports too: a Prometheus textfile and StatsD lines, searched for the
# secret like the rest.
spawn "$WORK/statsd-listen.log" python3 "$SRCDIR/tests/integration/statsd_listen.py" \
	"$WORK/statsd.port" "$WORK/statsd.jsonl"
wait_until 10 "the StatsD listener" test -s "$WORK/statsd.port"
STATSD="127.0.0.1:$(cat "$WORK/statsd.port")"

# config NAME CREDENTIALS_JSON: a short put/get workload.
config() {
	cat >"$WORK/$1.json" <<EOF
{
  "run": {"name": "$1", "duration": "3s", "interval": "1s", "on_finish": "idle",
          "exports": {"prometheus": {"textfile": "$WORK/$1.prom"},
                      "statsd": {"address": "$STATSD"}}},
  "workloads": [
    {"name": "$1", "type": "object", "protocol": "s3", "endpoint": "$EP",
     "bucket": "creds", "create_bucket": true,
     "credentials": $2,
     "concurrency": 2, "objects": 8, "size": "4KiB", "rate": 50,
     "mix": {"put": 50, "get": 50}}
  ]
}
EOF
}

# 1. A file next to the config, named relative to it.
mkdir -p "$WORK/etc"
write_creds "$WORK/etc/s3.credentials"
config file '{"file": "s3.credentials", "profile": "default"}'
mv "$WORK/file.json" "$WORK/etc/file.json"
(cd / && "$SOAKD" --check-config "$WORK/etc/file.json") >"$WORK/file.plan" 2>&1 ||
	fail "check-config: $(cat "$WORK/file.plan")"
grep -q "\"file\": \"$WORK/etc/s3.credentials\"" "$WORK/file.plan" ||
	fail "the plan does not say where the credentials are: $(cat "$WORK/file.plan")"
start_soakd --config "$WORK/etc/file.json" --socket "$SOCK" --state-dir "$WORK/state-file" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "workload file to finish" workload_is file finished
ctl status --json >"$WORK/file.status"
dump_json "$WORK/file.dump"
[[ $(op_field file get errors) == 0 && $(op_field file get count) -gt 0 ]] ||
	fail "GETs with file credentials: $(op_field file get count) ops, $(op_field file get errors) errors"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
[[ -s $WORK/file.prom && -s $WORK/statsd.jsonl ]] || fail "no Prometheus textfile or StatsD lines"
mapfile -t run_files < <(find "$WORK/state-file" -type f)
((${#run_files[@]} >= 2)) || fail "the run directory holds ${#run_files[@]} files"
secret_absent "$SOAKD_LOG" "$WORK/file.plan" "$WORK/file.status" "$WORK/file.dump" \
	"$WORK/file.prom" "$WORK/statsd.jsonl" "${run_files[@]}"
note "credentials file: ok, and the secret is in no output (log, plan, status, dump," \
	"exports, ${#run_files[@]} files of the run directory)"

# 2. --check-config: a missing file and a missing profile, located.
config missing "{\"file\": \"$WORK/absent.credentials\"}"
rc=0
"$SOAKD" --check-config "$WORK/missing.json" >"$WORK/missing.out" 2>&1 || rc=$?
((rc == 1)) || fail "check-config of a missing credentials file exited $rc"
line=$(grep -n '"credentials"' "$WORK/missing.json" | cut -d: -f1)
grep -q "^$WORK/missing.json:$line:[0-9]*: cannot open credentials file $WORK/absent.credentials" \
	"$WORK/missing.out" || fail "missing file: $(cat "$WORK/missing.out")"
config noprofile "{\"file\": \"$WORK/etc/s3.credentials\", \"profile\": \"prod\"}"
rc=0
"$SOAKD" --check-config "$WORK/noprofile.json" >"$WORK/noprofile.out" 2>&1 || rc=$?
((rc == 1)) && grep -q 'has no profile "prod" (it has: default)' "$WORK/noprofile.out" ||
	fail "missing profile: $(cat "$WORK/noprofile.out")"
note "check-config: $(head -n1 "$WORK/missing.out")"

# 3. Wrong secret, unknown key: soakd refuses to start, with MinIO's reason.
WRONG="wrong-secret-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
write_creds "$WORK/wrong.credentials" "$WRONG"
config wrong "{\"file\": \"$WORK/wrong.credentials\"}"
rc=0
timeout 30 "$SOAKD" --config "$WORK/wrong.json" --socket "$SOCK" --state-dir "$WORK/state-wrong" \
	--no-table >"$WORK/wrong.log" 2>&1 || rc=$?
((rc == 1)) || fail "a wrong secret: soakd exited $rc: $(cat "$WORK/wrong.log")"
grep -q "refused the credentials from credentials file $WORK/wrong.credentials, profile \"default\": HTTP 403 SignatureDoesNotMatch" \
	"$WORK/wrong.log" || fail "a wrong secret: $(cat "$WORK/wrong.log")"
grep -qF -- "$WRONG" "$WORK/wrong.log" && fail "the wrong secret was logged"
note "wrong secret: $(grep -o 'refused the credentials.*' "$WORK/wrong.log" | cut -c1-120)"
(
	umask 077
	printf '[default]\naws_access_key_id = nobody\naws_secret_access_key = %s\n' "$WRONG" \
		>"$WORK/unknown.credentials"
)
config unknown "{\"file\": \"$WORK/unknown.credentials\"}"
refused_at_start unknown "HTTP 403 InvalidAccessKeyId" "an unknown key"

# 4. A systemd credential: LoadCredential=s3:... gives $CREDENTIALS_DIRECTORY/s3.
mkdir -p "$WORK/credentials"
write_creds "$WORK/credentials/s3"
config systemd '{"systemd": "s3"}'
"$SOAKD" --check-config "$WORK/systemd.json" >"$WORK/systemd.plan" 2>&1 ||
	fail "check-config without \$CREDENTIALS_DIRECTORY: $(cat "$WORK/systemd.plan")"
rc=0
timeout 30 "$SOAKD" --config "$WORK/systemd.json" --socket "$SOCK" --state-dir "$WORK/state-nocred" \
	--no-table >"$WORK/nocred.log" 2>&1 || rc=$?
((rc == 1)) && grep -q 'LoadCredential=s3:' "$WORK/nocred.log" ||
	fail "no \$CREDENTIALS_DIRECTORY: soakd exited $rc: $(cat "$WORK/nocred.log")"
SOAKD_ENV=("CREDENTIALS_DIRECTORY=$WORK/credentials")
SOAKD_LOG="$WORK/systemd.log"
start_soakd --config "$WORK/systemd.json" --socket "$SOCK" --state-dir "$WORK/state-systemd" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "workload systemd to finish" workload_is systemd finished
dump_json "$WORK/systemd.dump"
[[ $(op_field systemd put errors) == 0 && $(op_field systemd put count) -gt 0 ]] ||
	fail "PUTs with a systemd credential: $(op_field systemd put count) ops, $(op_field systemd put errors) errors"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
mapfile -t run_files < <(find "$WORK/state-systemd" -type f)
secret_absent "$SOAKD_LOG" "$WORK/systemd.dump" "$WORK/systemd.plan" "$WORK/nocred.log" \
	"$WORK/systemd.prom" "$WORK/statsd.jsonl" "${run_files[@]}"
note "ok"
