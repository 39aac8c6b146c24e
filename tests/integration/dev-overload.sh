#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 14, section 1: a plain overload.  60,000 reads/s at queue depth 1
# for 3 s on a RAM-backed loop device, more than one slot can serve here
# (fio manages about 46k/s at QD1).  Every op scheduled is completed,
# failed or missed, in total and per interval (with pending), and the
# workload ends at its duration.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

new_loop 64M
DURATION=3
RATE=60000
CFG="$WORK/overload.json"
cat >"$CFG" <<JSON
{
  "run": {"name": "dev-overload", "duration": "${DURATION}s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {
      "name": "overload",
      "type": "device",
      "model": "pattern",
      "targets": [{"path": "$NEW_LOOP", "destroy_data": true}],
      "read_pct": 100,
      "block_size": "4KiB",
      "access": "random",
      "queue_depth": 1,
      "rate": $RATE,
      "schedule": [{"scale": 1, "for": "${DURATION}s"}]
    }
  ]
}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state"
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload overload to run" workload_is overload running
started=$(now_ns)
wait_until $((DURATION + 4)) "workload overload to finish" workload_is overload finished
took_ms=$(( ($(now_ns) - started) / 1000000 ))
note "the workload ended ${took_ms} ms after it started"
((took_ms <= (DURATION + 2) * 1000)) || fail "the workload took ${took_ms} ms for ${DURATION}s"

ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 "$(dirname "$0")/acct_check.py" "$WORK/dump.json" "$WORK/dump.csv" overload \
	$((RATE * DURATION)) --rate $RATE ||
	fail "not every scheduled op is accounted for: $(cat "$WORK/dump.csv")"

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
