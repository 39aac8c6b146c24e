#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Writes that fail, again and again on the same blocks, and reads of them:
# a failed write may or may not have landed, so a block whose writes all
# failed holds any generation back to the last one that succeeded, and
# reading one of those is uncertain, never stale (a lost write).  Every
# failed write marked its blocks one write back only, so a block whose
# two last writes failed and did not land read as stale: a false report of
# data loss from a device that had said each write failed.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

faultdev_start 16M
faultdev_loop

CFG="$WORK/failed.json"
cat >"$CFG" <<JSON
{"run": {"name": "failed", "duration": "60s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "f", "type": "device", "model": "pattern",
                "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "access": "random", "queue_depth": 1, "rate": 2000,
                "verify": true, "fill": true, "flush_interval": "200ms",
                "schedule": [{"scale": 1, "for": "6s"}]}]}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 60 "workload f to run" workload_is f running
# Writes to the first 4 MiB (1024 blocks) fail from now on: many of
# those blocks get two failed writes or more, and reads meanwhile.
faultdev_cmd errors write range 0 4M
sleep 3
faultdev_cmd errors off
wait_until 15 "workload f to finish" workload_is f finished
ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"

python3 - "$WORK/dump.json" <<'EOF' || fail "a block whose writes failed was not read as uncertain"
import json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
w, r = ops["write"], ops["read"]
v = r["verify"]
print(f"# writes: {w['count']} served, {w['errors']} failed; reads: {r['count']}, "
      f"verify {json.dumps(v)}")
if w["errors"] < 100:
    sys.exit(f"only {w['errors']} writes failed: the test did not do what it meant to")
if v.get("uncertain", 0) < 10:
    sys.exit(f"only {v.get('uncertain', 0)} blocks read as uncertain")
bad = {k: v.get(k, 0) for k in ("corrupt", "stale", "misdirected", "torn", "foreign") if v.get(k, 0)}
if bad:
    sys.exit(f"failed writes reported as data loss: {bad}")
EOF
note "ok"
