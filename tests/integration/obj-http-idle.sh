#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Keep-alive connections that the server closes while they are idle: at a
# slow rate every connection waits longer than nginx's keepalive_timeout
# (200 ms) between its requests, so nginx closes each one while soakd holds
# it.  soakd keeps an idle connection's socket in its epoll set for the
# connection's next request (obj_wait.c); the close must take it out, not
# wake the thread over and over.  Every op succeeds (curl reconnects), and
# soakd's CPU time while it waits between ops stays small: a thread woken
# by a closed socket it no longer watches spins at a whole core.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

PORT=$(free_port)
NGINX_HTTP_EXTRA="keepalive_timeout 200ms;" start_nginx "$WORK/nginx" "$PORT"

cat >"$WORK/idle.json" <<EOF
{"run": {"name": "idle", "duration": "10s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "slow", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/idle/", "concurrency": 4,
                "objects": 8, "size": "4KiB", "rate": 2, "verify": true,
                "mix": {"get": 80, "put": 20}}]}
EOF
start_soakd --config "$WORK/idle.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the workload to run" workload_is slow running

# CPU time (user + system, clock ticks) of the whole soakd process.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$SOAKD_PID/stat"; }
sleep 2
before=$(cpu_ticks)
sleep 5
after=$(cpu_ticks)
used=$(((after - before) * 1000 / $(getconf CLK_TCK)))
note "soakd used $used ms of CPU in 5 s at 2 ops/s"
# One busy thread would use about 5000 ms; a waiting soakd uses a few.
((used < 1500)) || fail "soakd used $used ms of CPU in 5 s at 2 ops/s: a wait that does not sleep"

wait_until 30 "the workload to finish" workload_is slow finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "dump: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
total = 0
for op in ("get", "put"):
    o = ops[op]
    assert o["errors"] == 0 and o["corrupt"] == 0, f"{op}: {o}"
    total += o["count"]
# 10 s at 2 ops/s.
assert 17 <= total <= 21, f"{total} ops in 10 s at 2/s"
print(f"# {ops['get']['count']} GETs and {ops['put']['count']} PUTs, no errors")
PY
note "ok"
