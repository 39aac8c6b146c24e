#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Object workloads lag as device workloads do (issue 14, issue 12):
#  - an endpoint down at start (a closed port): the workload's ops show as
#    errors of class connect and as lag growing from the first due op,
#    not as "running" with 0 ops, 0 errors and 0 lag;
#  - a server that takes 0.5 s per PUT, at rate 20 with 2 transfers (at
#    most 4 PUT/s): lag and lag_max_ms grow past 1 s, and "max_lag": "1s"
#    stops the workload, soakd exiting 3.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"
need_cmd python3

# status_lag_ms NAME: the workload's lag_ms from "status --json".
status_lag_ms() {
	ctl status --json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == sys.argv[1])
print(int(w.get("lag_ms", 0)))' "$1"
}
lag_at_least() {
	local v
	v=$(status_lag_ms "$1" 2>/dev/null) || return 1
	((v >= $2))
}

# 1. Nothing listens on the endpoint's port.
CLOSED=$(free_port)
cat >"$WORK/down.json" <<EOF
{"run": {"name": "down", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "d", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$CLOSED/soak/", "concurrency": 2,
                "objects": 10, "rate": 20, "mix": {"put": 100}, "size": "1KiB",
                "timeout": "2s", "connect_timeout": "1s"}]}
EOF
start_soakd --config "$WORK/down.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 10 "connect errors of the unreachable endpoint" op_at_least d put errors_by_class.connect 1
wait_until 10 "lag of at least 2 s" lag_at_least d 2000
first=$(status_lag_ms d)
wait_until 10 "the lag to grow" lag_at_least d $((first + 1000))
[[ $(workload_state d) == running ]] || fail "d is $(workload_state d)"
note "endpoint down: $(op_field d put errors_by_class.connect) connect errors, lag $(status_lag_ms d) ms and growing"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# 2. A server slower than the schedule.
start_fault_server putsleep:0.5
slow_config() {
	cat >"$WORK/$1.json" <<EOF
{"run": {"name": "$1", "interval": "1s", "duration": "60s", "on_finish": "exit",
         "exports": {"prometheus": {"textfile": "$WORK/$1.prom"}}},
 "workloads": [{"name": "s", "type": "object", "protocol": "http",
                "endpoint": "http://127.0.0.1:$PORT/soak/", "concurrency": 2,
                "objects": 100, "rate": 20, "mix": {"put": 100}, "size": "1KiB",
                "timeout": "5s", "connect_timeout": "1s"$2}]}
EOF
}
slow_config slow ""
start_soakd --config "$WORK/slow.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 15 "lag of at least 1.5 s in status" lag_at_least s 1500
lag_max_ms() {
	ctl dump --format json | python3 -c '
import json, sys
print(int(next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "s")["lag_max_ms"]))'
}
lag_max_at_least() { (($(lag_max_ms 2>/dev/null || echo 0) >= $1)); }
wait_until 10 "lag_max_ms past 1000 in the dump" lag_max_at_least 1000
prom_lag_past_1s() {
	python3 - "$WORK/slow.prom" <<'PY'
import re, sys
m = re.search(r'^soakd_lag_seconds\{[^}]*workload="s"[^}]*\} (\S+)$', open(sys.argv[1]).read(), re.M)
sys.exit(0 if m and float(m.group(1)) > 1 else 1)
PY
}
wait_until 10 "soakd_lag_seconds past 1 in the Prometheus textfile" prom_lag_past_1s
note "slow server: lag $(status_lag_ms s) ms, lag_max_ms $(lag_max_ms), $(grep '^soakd_lag_seconds' "$WORK/slow.prom")"
stop_soakd 10

slow_config limited ', "max_lag": "1s"'
start_soakd --config "$WORK/limited.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_soakd_exit 30
((SOAKD_RC == 3)) || fail "with max_lag 1s soakd exited $SOAKD_RC, expected 3"
grep -q "max_lag 1s exceeded" "$SOAKD_LOG" || fail "the reason was not logged: $(tail -5 "$SOAKD_LOG")"
note "max_lag 1s: soakd exited 3"
note "ok"
