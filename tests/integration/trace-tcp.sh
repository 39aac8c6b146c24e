#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# TCP probes against loopback servers:
# - an HTTP object workload's endpoints, a pool of two nginx servers with
#   WebDAV over one directory (issue 17: TCP probes follow every endpoint),
#   are watched by themselves: each one's connections' smoothed RTT and
#   connect latency appear under kernel.tcp, attributed to the workload,
#   both carry connections, and the kernel counts as many connects over the
#   two as libcurl made;
# - a "tcp_endpoints" entry is watched for whatever connects to it (curl
#   here), IPv4 and IPv6, while another server on another port, with the
#   same traffic, does not show at all;
# - connections made while tcp is off are never counted.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"
source "$(dirname "$0")/objlib.sh"

need_root "BPF"
need_cmd curl python3

# serve ADDRESS PORTFILE: a plain HTTP server on an ephemeral port.
serve() {
	spawn "$WORK/http-$2.log" python3 -c '
import http.server, os, socket, sys
class Server(http.server.ThreadingHTTPServer):
    address_family = socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
server = Server((sys.argv[1], 0), Quiet)
open(sys.argv[2] + ".tmp", "w").write(str(server.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
server.serve_forever()' "$1" "$WORK/$2"
	wait_until 10 "an HTTP server on $1" test -s "$WORK/$2"
}

serve 127.0.0.1 watched.port
serve 127.0.0.1 other.port
WATCHED=$(cat "$WORK/watched.port")
OTHER=$(cat "$WORK/other.port")
endpoints="\"127.0.0.1:$WATCHED\""
V6=
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
	serve ::1 v6.port
	V6=$(cat "$WORK/v6.port")
	endpoints+=", \"[::1]:$V6\""
fi
NGINX_PORT=$(free_port)
start_nginx "$WORK/nginx" "$NGINX_PORT"
# The pool's second gateway: another nginx serving the same directory.
mkdir -p "$WORK/nginx2"
ln -s "$WORK/nginx/dav" "$WORK/nginx2/dav"
NGINX2_PORT=$(free_port)
start_nginx "$WORK/nginx2" "$NGINX2_PORT"

cat >"$WORK/tcp.json" <<EOF
{"run": {"name": "trace-tcp", "duration": "60s", "interval": "500ms", "on_finish": "idle",
         "trace": {"blk": false, "tcp": true, "tcp_endpoints": [$endpoints]}},
 "workloads": [
   {"name": "web", "type": "object", "protocol": "http",
    "endpoints": ["http://127.0.0.1:$NGINX_PORT/soak", "http://127.0.0.1:$NGINX2_PORT/soak"],
    "concurrency": 4, "objects": 32,
    "size": "4KiB", "mix": {"put": 50, "get": 50}, "rate": 400,
    "schedule": [{"scale": 1, "for": "3s"}]},
   {"name": "web2", "type": "object", "protocol": "http",
    "endpoint": "http://127.0.0.1:$NGINX2_PORT/soak2",
    "concurrency": 1, "objects": 8,
    "size": "4KiB", "mix": {"put": 50, "get": 50}, "rate": 50,
    "schedule": [{"scale": 1, "for": "3s"}]}]}
EOF
start_soakd --config "$WORK/tcp.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
require_probes tcp

# get N URL: N requests, each on a connection of its own.
get() {
	local i
	for ((i = 0; i < $1; i++)); do
		curl -gsf -o /dev/null "$2" || fail "curl $2 failed"
	done
}
get 20 "http://127.0.0.1:$WATCHED/"
get 20 "http://127.0.0.1:$OTHER/"
[[ -n $V6 ]] && get 5 "http://[::1]:$V6/"
wait_until 30 "the object workload to finish" workload_is web finished
wait_until 30 "the second object workload to finish" workload_is web2 finished

cat >"$WORK/check.py" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
watched, other, nginx, nginx2, v6, verbose = sys.argv[2:8]
tcp = dump["kernel"]["tcp"]
problems = []
if verbose:
    for k, v in tcp.items():
        print(f"# {k}: {v['connects']} connects, {v['srtt_samples']} srtt samples, srtt p50 "
              f"{v['srtt_us']['p50']} us, connect p50 {v['connect_us']['p50']} us")

def check(key, connects, workload=None):
    e = tcp.get(key)
    if not e:
        problems.append(f"{key} is not in kernel.tcp: {sorted(tcp)}")
        return
    if connects is None:
        if not e["connects"]:
            problems.append(f"{key}: no connects")
    elif e["connects"] != connects:
        problems.append(f"{key}: {e['connects']} connects, expected {connects}")
    if not e["srtt_samples"] or not 0 < e["srtt_us"]["p50"] <= e["srtt_us"]["max"]:
        problems.append(f"{key}: no smoothed RTT: {e}")
    if not 0 < e["connect_us"]["p50"] <= e["connect_us"]["max"]:
        problems.append(f"{key}: no connect latency: {e}")
    if e.get("workload") != workload:
        problems.append(f"{key} attributed to {e.get('workload')}, expected {workload}")

check(f"127.0.0.1:{watched}", 20)
if v6:
    check(f"[::1]:{v6}", 5)
# web2 shares the pool's second gateway: its connections are both
# workloads' (as a device's I/O is each workload's on it), named first by web.
app_connects = sum(op.get("connections", 0) for w in dump["workloads"]
                   if w["name"] in ("web", "web2") for op in w["ops"].values())
pool = [f"127.0.0.1:{nginx}", f"127.0.0.1:{nginx2}"]
for key in pool:
    check(key, None, "web")
if pool[1] in tcp and tcp[pool[1]].get("workloads") != ["web", "web2"]:
    problems.append(f"{pool[1]} is shared by web and web2: {tcp[pool[1]].get('workloads')}")
kernel_connects = sum(tcp[key]["connects"] for key in pool if key in tcp)
if kernel_connects != app_connects:
    problems.append(f"the pool's endpoints: {kernel_connects} connects, libcurl made {app_connects}")
if verbose:
    print(f"# web: libcurl made {app_connects} connections over the pool of two")
if any(k.endswith(f":{other}") for k in tcp):
    problems.append(f"the unwatched server on port {other} shows in kernel.tcp")
if problems:
    sys.exit("\n".join(problems))
PY
# tcp_checks_pass [VERBOSE]: the kernel has read every request made so far.
tcp_checks_pass() {
	dump_json "$WORK/dump.json"
	python3 "$WORK/check.py" "$WORK/dump.json" "$WATCHED" "$OTHER" "$NGINX_PORT" "$NGINX2_PORT" "$V6" \
		"${1:-}" >"$WORK/check.out" 2>&1
}
# Polled: the last connections are read at the next tick.
for ((i = 0; i < 50; i++)); do
	tcp_checks_pass && break
	sleep 0.1
done
tcp_checks_pass verbose || fail "$(cat "$WORK/check.out")"
cat "$WORK/check.out"
# The shared gateway's connections are in web2's interval records too.
python3 - "$WORK/state/trace-tcp/intervals.log" <<'PY' || fail "web2's records lack kernel.tcp"
import json, sys
n = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    r = json.loads(line.split(" ", 1)[1])
    if r.get("type") == "interval" and r.get("workload") == "web2":
        n += "tcp" in r.get("kernel", {})
print(f"# {n} interval records of web2 carry kernel.tcp")
assert n >= 2, n
PY

# tcp_connects KEY: from a fresh dump.
tcp_connects() {
	dump_json "$WORK/live.json"
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["kernel"]["tcp"][sys.argv[2]]["connects"])' \
		"$WORK/live.json" "$1"
}
# Connections made while tcp is off are never counted: after 5 with it
# off and 5 with it on again, the count is 25, not 30.
ctl trace off tcp >/dev/null || fail "trace off tcp failed"
get 5 "http://127.0.0.1:$WATCHED/"
ctl trace on tcp >/dev/null || fail "trace on tcp failed"
get 5 "http://127.0.0.1:$WATCHED/"
wait_until 5 "connects with tcp on again" eval '(( $(tcp_connects "127.0.0.1:$WATCHED") >= 25 ))'
n=$(tcp_connects "127.0.0.1:$WATCHED")
((n == 25)) || fail "5 connects with tcp off and 5 with it on took the count from 20 to $n"
note "tcp off then on: connects went from 20 to 25 for 5 + 5 requests"

ctl status --json | python3 -c '
import json, sys
status = json.load(sys.stdin)
assert status["trace"]["tcp"] == {"state": "on"}, status["trace"]
assert "tcp" in status["kernel"], status["kernel"]' || fail "status --json: $(ctl status --json)"

stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
