#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Plain HTTP object workloads against a real nginx with WebDAV (PUT, GET,
# HEAD, DELETE under a URL prefix) on 127.0.0.1: every op verified, ranged
# GETs, keep-alive, TLS with a CA file (HTTP/2 when offered), without
# verification, and refused when the certificate cannot be verified; files
# corrupted on nginx's disk behind soakd's back are counted as corrupt;
# cleanup deletes what soakd wrote and nothing else; and a server that never
# answers gives timeouts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

PORT=$(free_port)
TLS_PORT=$(free_port)
make_cert "$WORK/certs"
start_nginx "$WORK/nginx" "$PORT" "$TLS_PORT" "$WORK/certs"
DAV="$WORK/nginx/dav"
mkdir -p "$DAV/web"
echo other >"$DAV/other.txt"
echo foreign >"$DAV/web/foreign.txt"

EP="http://127.0.0.1:$PORT"
cat >"$WORK/http.json" <<EOF
{
  "run": {"name": "http", "duration": "8s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "web", "type": "object", "protocol": "http", "endpoint": "$EP/web/",
     "concurrency": 4, "objects": 32, "checksum": "md5", "names": "sequential",
     "prefixes": 4, "size": {"dist": "uniform", "min": "1KiB", "max": "32KiB"},
     "mix": {"put": 30, "get": 40, "stat": 20, "delete": 10}},
    {"name": "range", "type": "object", "protocol": "http", "endpoint": "$EP/range",
     "concurrency": 2, "objects": 8, "size": "8KiB", "read_offset": 100, "read_length": 1000,
     "mix": {"get": 100}},
    {"name": "victim", "type": "object", "protocol": "http", "endpoint": "$EP/victim",
     "concurrency": 1, "objects": 8, "size": "16KiB", "rate": 40, "mix": {"get": 100}},
    {"name": "tls-ca", "type": "object", "protocol": "http",
     "endpoint": "https://localhost:$TLS_PORT/tls", "ca_file": "$WORK/certs/public.crt",
     "concurrency": 2, "objects": 8, "size": "4KiB", "mix": {"put": 50, "get": 50}},
    {"name": "tls-insecure", "type": "object", "protocol": "http",
     "endpoint": "https://127.0.0.1:$TLS_PORT/insecure", "tls_verify": false,
     "concurrency": 2, "objects": 8, "size": "4KiB", "mix": {"put": 50, "get": 50}}
  ]
}
EOF
start_soakd --config "$WORK/http.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers

# Corrupt the victim's files on nginx's disk once they are written.
wait_until 20 "the victim's prefill" op_at_least victim prefill count 8
python3 - "$DAV/victim" <<'PY' || fail "cannot corrupt the victim's files"
import os, sys
files = [os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs]
assert len(files) == 8, files
for path in files:
    with open(path, "r+b") as f:
        f.seek(5000)
        byte = f.read(1)
        f.seek(5000)
        f.write(bytes([byte[0] ^ 0x01]))
PY
wait_until 20 "corrupt GETs" op_at_least victim get corrupt 8
grep -q "CORRUPT: GET soakd-victim/.*differs from what was written at byte 5000" "$SOAKD_LOG" ||
	fail "the corrupt byte was not logged at its offset"

for w in web range victim tls-ca tls-insecure; do
	wait_until 30 "workload $w to finish" workload_is "$w" finished
done
dump_and_stop "$WORK/dump.json"

python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 3000 "$WORK/dump.json")"
import json, sys
w = {x["name"]: x["ops"] for x in json.load(open(sys.argv[1]))["workloads"]}
web = w["web"]
for op in ("put", "get", "stat", "delete"):
    o = web[op]
    assert o["count"] > 0 and o["errors"] == 0 and o["corrupt"] == 0, f"web {op}: {o}"
print("# web: " + ", ".join(f"{op} {web[op]['count']}" for op in ("put", "get", "stat", "delete")))
assert "list" in web and web["list"]["count"] == 0
conns = sum(o.get("connections", 0) for o in web.values())
ops = sum(o["count"] for o in web.values())
print(f"# web: {conns} connections for {ops} requests")
assert conns <= 8, f"{conns} connections for 4 transfers"
r = w["range"]["get"]
assert r["count"] > 0 and r["errors"] == 0 and r["corrupt"] == 0 and r["bytes"] == 1000 * r["count"], r
v = w["victim"]["get"]
assert v["corrupt"] >= 8 and v["errors"] == 0, v
for name in ("tls-ca", "tls-insecure"):
    for op in ("put", "get"):
        o = w[name][op]
        assert o["count"] > 0 and o["errors"] == 0 and o["corrupt"] == 0, f"{name} {op}: {o}"
    opened = [o for o in w[name].values() if o.get("connections", 0) > 0]
    assert opened and all(o["connect_us"]["p50"] > 0 for o in opened), f"{name}: no TLS connect time"
print(f"# victim: {v['corrupt']} corrupt GETs; TLS: {w['tls-ca']['get']['count']} verified GETs")
PY
grep -q "tls-ca: https://localhost:$TLS_PORT/tls answers over HTTP/2" "$SOAKD_LOG" ||
	fail "HTTP/2 was not used over TLS: $(grep answers "$SOAKD_LOG")"
grep -q "web: $EP/web answers over HTTP/1.1" "$SOAKD_LOG" || fail "plain HTTP was not HTTP/1.1"

# Names spread over "prefixes": 4 directories on nginx's side.
subdirs=$(find "$DAV/web/soakd-web" -mindepth 2 -maxdepth 2 -type d -name 'p[0-9]' | wc -l)
((subdirs == 4)) || fail "names of web are in $subdirs sub-prefixes, not 4"

# Cleanup: soakd's files are gone, the others are there.
left=$(cd "$DAV" && find . -type f | sort | tr '\n' ' ')
[[ $left == "./other.txt ./web/foreign.txt " ]] || fail "after cleanup, nginx holds: $left"
note "cleanup: only other.txt and web/foreign.txt are left"

# A certificate soakd cannot verify: refused at start, with what to do.
cat >"$WORK/untrusted.json" <<EOF
{
  "run": {"name": "untrusted", "duration": "3s"},
  "workloads": [
    {"name": "untrusted", "type": "object", "protocol": "http",
     "endpoint": "https://127.0.0.1:$TLS_PORT/x", "mix": {"put": 1}}
  ]
}
EOF
refused_at_start untrusted "untrusted: https://127.0.0.1:$TLS_PORT/x: SSL certificate problem.*ca_file" \
	"an unverifiable certificate"

# A server that takes requests and never answers them: timeouts, counted
# by class, and the workload runs to its end.
HANG_PORT=$(free_port)
spawn "$WORK/hang.log" python3 -c '
import http.server, sys, time
class Hang(http.server.BaseHTTPRequestHandler):
    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def do_PUT(self):
        time.sleep(3600)
    def log_message(self, *args):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Hang).serve_forever()' "$HANG_PORT"
wait_until 10 "the hanging server" curl -sfI -o /dev/null "http://127.0.0.1:$HANG_PORT/"
cat >"$WORK/hang.json" <<EOF
{
  "run": {"name": "hang", "duration": "3s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "hang", "type": "object", "protocol": "http", "endpoint": "http://127.0.0.1:$HANG_PORT",
     "concurrency": 2, "timeout": "500ms", "cleanup": false, "mix": {"put": 1}}
  ]
}
EOF
SOAKD_LOG="$WORK/hang-soakd.log"
start_soakd --config "$WORK/hang.json" --socket "$SOCK" --state-dir "$WORK/state-hang" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "workload hang to finish" workload_is hang finished
timeouts=$(op_field hang put errors_by_class.timeout)
((timeouts >= 2)) || fail "$timeouts timeouts counted"
[[ $(op_field hang put errors) == "$timeouts" ]] || fail "timeouts counted in another class"
grep -q "hang: PUT .* failed (timeout): Operation timed out after 5.. milliseconds" "$SOAKD_LOG" ||
	fail "the timeout was not logged"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "a server that never answers: $timeouts PUTs timed out"
note "ok"
