#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An S3 secret given as a systemd credential (issue 8, point 3): a drop-in
# with LoadCredential=s3:FILE, as soakd.service's comments tell users to
# write, hands soakd $CREDENTIALS_DIRECTORY/s3; the object workload signs
# with it against a real MinIO on 127.0.0.1 (the container shares this
# machine's network); and the secret appears nowhere in the journal
# (journalctl -o export, every field of every entry), the unit's
# properties, soakd's environment, its status or its dump.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"
source "$(dirname "$0")/systemd-lib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
note "MinIO on 127.0.0.1:$PORT"

ct_prepare
CREDS=/etc/soakd/s3.credentials
mkdir -p "$CT_ROOT/etc/soakd"
write_creds "$CT_ROOT$CREDS"
ct_dropin credentials "[Service]
LoadCredential=s3:$CREDS"
ct_config "$(cat <<EOF
{
  "run": {"name": "creds", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "s3w", "type": "object", "protocol": "s3", "endpoint": "http://127.0.0.1:$PORT",
     "bucket": "systemd-creds", "create_bucket": true,
     "credentials": {"systemd": "s3", "profile": "default"},
     "concurrency": 2, "objects": 8, "size": "4KiB", "rate": 40, "verify": true,
     "mix": {"put": 50, "get": 50}, "schedule": [{"scale": 1, "for": "1h"}]}
  ]
}
EOF
)"
ct_boot
ct_wait_running 60

ct_systemctl start soakd.socket soakd.service >"$WORK/start.log" 2>&1 ||
	fail "soakd.service does not start: $(cat "$WORK/start.log")"
MAIN=$(ct_main_pid)
INVOCATION=$(ct_invocation)
note "soakd.service active, main pid $MAIN, invocation $INVOCATION"

# soakd was given the credential, on the private directory systemd made.
in_ct cat "/proc/$MAIN/environ" | tr '\0' '\n' >"$WORK/environ"
grep -qx 'CREDENTIALS_DIRECTORY=/run/credentials/soakd.service' "$WORK/environ" ||
	fail "soakd has no CREDENTIALS_DIRECTORY: $(grep -v SECRET "$WORK/environ")"
in_ct test -s /run/credentials/soakd.service/s3 ||
	fail "the credential s3 is empty or missing in /run/credentials/soakd.service"

# The workload signs with it: PUTs and verified GETs, no errors.
ops_done() {
	local put get
	put=$(ct_soakctl dump --format json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "s3w")
print(w["ops"]["put"]["count"], w["ops"]["get"]["count"])') || return 1
	read -r put get <<<"$put"
	((put >= 20 && get >= 20))
}
wait_until 30 "20 PUTs and 20 GETs signed with the credential" ops_done
ct_soakctl dump --format json >"$WORK/dump.json" || fail "soakctl dump failed"
python3 - "$WORK/dump.json" <<'PY' || fail "object workload: $(head -c 2000 "$WORK/dump.json")"
import json, sys
w = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "s3w")
ops = w["ops"]
print("# s3w: " + ", ".join(f"{op} {o['count']} ({o['errors']} errors)" for op, o in ops.items()))
bad = {op: o["errors"] for op, o in ops.items() if o["errors"]}
if bad:
    sys.exit(f"errors: {bad}")
PY
objects=$(s3_list systemd-creds "" | wc -l)
((objects > 0)) || fail "MinIO holds no object in bucket systemd-creds"
note "MinIO holds $objects objects written by soakd.service"
ct_soakctl status --json >"$WORK/status.json" || fail "soakctl status failed"

# Stop it, so that its last entries (and systemd's about it) are in.
ct_systemctl stop soakd.service || fail "systemctl stop soakd.service"

# Nowhere: every field of every journal entry of this boot, the unit's
# properties, soakd's environment, status and dump.
ct_journal -o export >"$WORK/journal.export" 2>&1 || fail "journalctl -o export failed"
entries=$(grep -c '^__CURSOR=' "$WORK/journal.export" || true)
soak_entries=$(grep -c '^SOAK_WORKLOAD=s3w$' "$WORK/journal.export" || true)
((soak_entries > 0)) || fail "the journal has no entry of workload s3w ($entries entries in all)"
ct_systemctl show soakd.service >"$WORK/show.txt" 2>&1
grep -q "^DropInPaths=.*credentials.conf" "$WORK/show.txt" ||
	fail "the credentials drop-in is not loaded: $(grep DropIn "$WORK/show.txt")"
ct_systemctl cat soakd.service >"$WORK/cat.txt" 2>&1
# The journal in binary form too: the secret may not be there in any encoding
# journalctl would print, nor in the files' bytes.
in_ct sh -c 'cat /run/log/journal/*/*.journal /var/log/journal/*/*.journal 2>/dev/null; true' >"$WORK/journal.raw"
[[ -s $WORK/journal.raw ]] || fail "no journal files found in the container"
secret_absent "$WORK/journal.export" "$WORK/journal.raw" "$WORK/show.txt" "$WORK/cat.txt" "$WORK/environ" \
	"$WORK/status.json" "$WORK/dump.json" "$WORK/systemd.log"
note "the secret is in none of $entries journal entries ($soak_entries of workload s3w)," \
	"the unit's properties, the environment, status or dump"

# LoadCredentialEncrypted= works the same (SECURITY.md): the file
# encrypted with this host's key by systemd-creds, the plain one gone;
# systemd decrypts it into $CREDENTIALS_DIRECTORY/s3 and the workload
# signs with it again.
SEALED=/etc/soakd/s3.cred
in_ct systemd-creds encrypt --with-key=host --name=s3 "$CREDS" "$SEALED" >"$WORK/encrypt.txt" 2>&1 ||
	fail "systemd-creds encrypt: $(cat "$WORK/encrypt.txt")"
rm -f "$CT_ROOT$CREDS"
secret_absent "$CT_ROOT$SEALED"
ct_dropin credentials "[Service]
LoadCredentialEncrypted=s3:$SEALED"
ct_systemctl daemon-reload || fail "daemon-reload"
ct_systemctl start soakd.service >"$WORK/start2.log" 2>&1 ||
	fail "soakd.service does not start with LoadCredentialEncrypted=: $(cat "$WORK/start2.log")"
# (systemd 252's "show" prints this property as [unprintable]: "cat" it.)
ct_systemctl cat soakd.service >"$WORK/sealed-cat.txt" 2>&1
grep -qx "LoadCredentialEncrypted=s3:$SEALED" "$WORK/sealed-cat.txt" &&
	! grep -q '^LoadCredential=' "$WORK/sealed-cat.txt" ||
	fail "soakd.service does not load s3 with LoadCredentialEncrypted= alone: $(cat "$WORK/sealed-cat.txt")"
in_ct test -s /run/credentials/soakd.service/s3 ||
	fail "the encrypted credential s3 was not decrypted into /run/credentials/soakd.service"
puts_now() {
	ct_soakctl dump --format json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "s3w")
print(w["ops"]["put"]["count"], sum(o["errors"] for o in w["ops"].values()))'
}
read -r puts0 errors0 <<<"$(puts_now)" || fail "soakctl dump failed"
more_puts() {
	local puts errors
	read -r puts errors <<<"$(puts_now)" || return 1
	((errors == errors0)) || fail "object errors with the encrypted credential: $errors"
	((puts >= puts0 + 20))
}
wait_until 30 "20 more PUTs signed with the encrypted credential" more_puts
ct_systemctl stop soakd.service || fail "systemctl stop soakd.service"
note "LoadCredentialEncrypted=: the workload signed with the decrypted key"
note "ok"
