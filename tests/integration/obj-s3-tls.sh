#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# S3 over TLS, against a real MinIO serving HTTPS with a self-signed
# certificate: verified with "ca_file" (HTTP/2 when MinIO offers it),
# unverified with "tls_verify": false, and refused at start, with what to
# set, when the certificate cannot be verified; also when the certificate
# refused is that of a pool's second gateway ("endpoints"), named.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
make_cert "$WORK/certs"
PORT=$(free_port)
MINIO_SCHEME=https
MINIO_ARGS=(--certs-dir "$WORK/certs")
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"

common="\"type\": \"object\", \"protocol\": \"s3\", \"credentials\": {\"file\": \"$CREDS\"},
     \"bucket\": \"tls\", \"create_bucket\": true, \"concurrency\": 2, \"objects\": 8,
     \"size\": \"16KiB\", \"mix\": {\"put\": 40, \"get\": 40, \"list\": 20}"
cat >"$WORK/tls.json" <<EOF
{
  "run": {"name": "tls", "duration": "3s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "verified", $common, "endpoint": "https://localhost:$PORT",
     "ca_file": "$WORK/certs/public.crt", "prefix": "verified/"},
    {"name": "unverified", $common, "endpoint": "https://127.0.0.1:$PORT",
     "tls_verify": false, "prefix": "unverified/"}
  ]
}
EOF
start_soakd --config "$WORK/tls.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
for w in verified unverified; do
	wait_until 30 "workload $w to finish" workload_is "$w" finished
done
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 3000 "$WORK/dump.json")"
import json, sys
w = {x["name"]: x["ops"] for x in json.load(open(sys.argv[1]))["workloads"]}
for name, ops in w.items():
    for op in ("put", "get", "list"):
        o = ops[op]
        assert o["count"] > 0 and o["errors"] == 0 and o["corrupt"] == 0, f"{name} {op}: {o}"
    opened = [o for o in ops.values() if o.get("connections", 0) > 0]
    assert opened and all(o["connect_us"]["p50"] > 0 for o in opened), f"{name}: no TLS setup time"
    print(f"# {name}: " + ", ".join(f"{op} {ops[op]['count']}" for op in ("put", "get", "list")))
PY
version=$(grep -o "verified: https://localhost:$PORT answers over HTTP/[0-9.]*" "$SOAKD_LOG") ||
	fail "no HTTP version logged for the verified workload"
note "$version"
secret_absent "$SOAKD_LOG" "$WORK/dump.json"

cat >"$WORK/untrusted.json" <<EOF
{
  "run": {"name": "untrusted", "duration": "3s"},
  "workloads": [{"name": "untrusted", $common, "endpoint": "https://localhost:$PORT"}]
}
EOF
refused_at_start untrusted "untrusted: https://localhost:$PORT: SSL certificate problem.*ca_file" \
	"an unverifiable certificate"
# A pool whose second gateway shows another certificate than the CA
# given: the workload fails at start, naming that gateway.
make_cert "$WORK/other-certs"
PORT2=$(free_port)
cat >"$WORK/tls_listen.py" <<'PY'
import socket, ssl, sys
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2] + "/public.crt", sys.argv[2] + "/private.key")
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
while True:
    c, _ = s.accept()
    try:
        ctx.wrap_socket(c, server_side=True).close()
    except (OSError, ssl.SSLError):
        c.close()
PY
spawn "$WORK/tls_listen.log" python3 "$WORK/tls_listen.py" "$PORT2" "$WORK/other-certs"
listening() { python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT2), 1)" 2>/dev/null; }
wait_until 10 "the second gateway's TLS listener" listening
cat >"$WORK/pool.json" <<EOF
{
  "run": {"name": "pool", "duration": "3s"},
  "workloads": [{"name": "pool", $common, "ca_file": "$WORK/certs/public.crt",
                 "endpoints": ["https://localhost:$PORT", "https://localhost:$PORT2"]}]
}
EOF
refused_at_start pool "pool: endpoint https://localhost:$PORT2: SSL certificate problem" \
	"a pool gateway's refused certificate"
note "a pool's second gateway with a refused certificate: refused at start, named"
note "ok"
