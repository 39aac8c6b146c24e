#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A certification's last step is judged with its drain.  Every op of a
# faultdev device waits 400 ms (FUSE runs some 12 at once: 30 ops/s), so
# when the step's schedule ends about 8 of its reads are still in flight;
# they complete in the interval after, and they are the step's own (the
# slowest, at a saturated drive).  The step's verdict counts every read of
# the run, not only those done when its schedule ended.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device 16M
faultdev_cmd delay 400ms
CFG="$WORK/drain.json"
cat >"$CFG" <<JSON
{"run": {"name": "drain", "interval": "1s", "on_finish": "idle",
  "certify": {"steps": ["1x"], "hold": "3s", "thresholds": ["100ms", "10s"], "limits": "100,1"}},
 "workloads": [
  {"name": "d", "type": "device", "model": "pattern",
   "targets": [{"path": "$FAULTDEV_LOOP", "destroy_data": true}], "read_pct": 100,
   "block_size": "4KiB", "access": "random", "queue_depth": 64, "rate": 20, "max_lag": "30s"}]}
JSON
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
LOG="$WORK/state/drain/intervals.log"
answered() { grep -q '"answer"' "$LOG" 2>/dev/null; }
wait_until 40 "the certification's answer" answered
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

python3 - "$LOG" <<'PY' || fail "the last step's verdict"
import json, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
steps = [r for r in recs if r["type"] == "certify" and "step" in r]
assert len(steps) == 1, steps
reads = steps[0]["workloads"][0]["ops"]["read"]
done = sum(r["ops"]["read"]["count"] for r in recs
           if r["type"] == "interval" and r.get("workload") == "d")
print(f"# step 1: {reads['count']} reads judged of {done} done in the run "
      f"(60 scheduled): {steps[0]['verdict']}: {steps[0]['why']}")
assert done >= 57, done
assert reads["count"] == done, (reads["count"], done)
PY
note "ok"
