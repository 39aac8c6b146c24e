#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A device workload that fails on max_lag while its device, held to 100
# reads a second (a block cgroup), still completes some: the pass that
# crosses max_lag has just prepared ops for the slots those completions
# freed, which go out with the last drain.  Their service time is timed
# from their submit: it was timed from the clock's 0 (the host's uptime,
# hours) into service_us.  The workload fails, soakd exits 3, and no
# op's service time or latency is longer than the run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

blk_cgroup
new_loop 64M
LOOP=$NEW_LOOP
cat >"$WORK/lag.json" <<JSON
{"run": {"name": "lag", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "w", "type": "device", "model": "pattern",
   "targets": [{"path": "$LOOP", "destroy_data": true}],
   "read_pct": 100, "block_size": "4KiB", "access": "random", "queue_depth": 8,
   "rate": 2000, "max_lag": "2s"}]}
JSON
blk_limit "$LOOP" riops=100
start_soakd --config "$WORK/lag.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
blk_join "$SOAKD_PID"
t0=$(now_ns)
wait_until 30 "the control socket" ctl_answers
wait_until 30 "w to fail on max_lag" workload_is w failed
ran_us=$((($(now_ns) - t0) / 1000))
grep -q "max_lag" "$SOAKD_LOG" || fail "w failed, but not on max_lag: $(tail -n 5 "$SOAKD_LOG")"
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
stop_soakd 20
((SOAKD_RC == 3)) || fail "soakd exited $SOAKD_RC, expected 3 (a workload failed)"
blk_limit "$LOOP" riops=0
python3 - "$WORK/dump.json" "$ran_us" <<'PY' || fail "the failed workload's times"
import json, sys
w = json.load(open(sys.argv[1]))["workloads"][0]
ran_us = int(sys.argv[2])
read = w["ops"]["read"]
svc, lat = read["service_us"]["max"], read["latency_us"]["max"]
print(f"# {read['count']} reads in {ran_us / 1e6:.1f} s, service max {svc / 1e3:.1f} ms, "
      f"latency max {lat / 1e3:.1f} ms; reason: {w.get('reason')}")
if read["count"] == 0:
    sys.exit("no read completed: the device was not throttled as meant")
if svc > ran_us or lat > ran_us:
    sys.exit(f"a time longer than the whole run ({ran_us} us): service {svc}, latency {lat}")
PY
note "ok"
