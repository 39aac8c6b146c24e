#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A gateway that stops answering SYNs (a node powered off, a firewall that
# drops): its listen queue full, a new connection times out in connect,
# before libcurl sends a byte.  Such a PUT is a connect error, and it did
# not happen: neither counted a timeout nor kept as a write that may have
# landed (both were: every PUT of an outage turned uncertain, and real
# stale reads and 404s of those names with it).  The request that was
# sent on the kept-alive connection when the gateway stopped is a timeout,
# and may have landed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

need_cmd python3
start_fault_server ok
FWD=$(free_port)
spawn "$WORK/forward.log" python3 "$SRCDIR/tests/integration/tcp_forward.py" "$FWD" "$PORT"
FORWARDER=$SPAWNED
wait_until 10 "the forwarder" python3 -c "import socket; socket.create_connection(('127.0.0.1', $FWD), 1).close()"

cat >"$WORK/cto.json" <<JSON
{"run": {"name": "cto", "duration": "12s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$FWD/soak/", "concurrency": 1,
                "objects": 20, "rate": 10, "mix": {"put": 100},
                "size": "1KiB", "timeout": "2s", "connect_timeout": "1s"}]}
JSON
start_soakd --config "$WORK/cto.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the workload to run" workload_is w running
sleep 2
# The gateway stops; its listen queue fills (300 connects held open), so
# the kernel drops further SYNs.  For 5 s, then it comes back.
kill -STOP "$FORWARDER"
python3 - "$FWD" <<'PY' &
import socket, sys, time
held = []
for _ in range(300):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", int(sys.argv[1])))
    except BlockingIOError:
        pass
    held.append(s)
time.sleep(5)
PY
FILLER=$!
wait "$FILLER"
kill -CONT "$FORWARDER"
wait_until 30 "the workload to finish" workload_is w finished
dump_and_stop "$WORK/dump.json"
python3 - "$WORK/dump.json" <<'PY' || fail "connect timeouts counted wrong: $(head -c 3000 "$WORK/dump.json")"
import json, sys
ops = next(w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"] == "w")["ops"]
p = ops["put"]
c = p["errors_by_class"]
print(f"# put: {p['count']} done, {p['errors']} failed {c}, verify {p.get('verify')}")
if c["connect"] == 0:
    sys.exit("no PUT counted a connect error: connects that timed out were called timeouts")
maybe = c["timeout"] + c["transfer"] + c["http_5xx"]
if p["verify"]["uncertain"] > maybe:
    sys.exit(f"{p['verify']['uncertain']} PUTs kept uncertain, but only {maybe} were sent "
             "and failed: ones never sent count as writes that may have landed")
PY
note "ok"
