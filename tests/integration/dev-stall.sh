#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Issue 14, section 1: a device that stops answering.  1000 writes/s for 5 s
# to a file on an ext4 on a loop device, frozen with fsfreeze 2 s in and
# left frozen past the end.  Every op scheduled is completed, failed or
# missed (in total and per interval, with pending), latency p99 shows the
# stall (seconds, not the milliseconds of the ops that did complete), the
# interval in which the freeze began shows its lag, and the workload ends
# at its duration (plus a drain of at most an interval) although the device
# never answers.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
need_cmd fsfreeze

freezable_fs 128M

DURATION=5
CFG="$WORK/stall.json"
cat >"$CFG" <<JSON
{
  "run": {"name": "dev-stall", "duration": "${DURATION}s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {
      "name": "stall",
      "type": "device",
      "model": "pattern",
      "targets": ["$MNT/stall.dat"],
      "file_size": "16MiB",
      "read_pct": 0,
      "block_size": "4KiB",
      "access": "random",
      "queue_depth": 8,
      "rate": 1000,
      "schedule": [{"scale": 1, "for": "${DURATION}s"}]
    }
  ]
}
JSON

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state"
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload stall to run" workload_is stall running
started=$(now_ns)
ops_done() {
	ctl status --json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "stall")
sys.exit(0 if w["ops"]["write"]["count_total"] >= int(sys.argv[1]) else 1)' "$1"
}
# Two seconds of writes (the first interval may be short), then the freeze.
wait_until 10 "1500 writes" ops_done 1500
# Thawed before soakd is killed (cleanups run last first): a process
# cannot exit while its writes wait on a frozen file system.
on_exit thaw
freeze
note "froze $MNT after $(( ($(now_ns) - started) / 1000000 )) ms"

# The device stays frozen: the workload must end by itself, at its duration
# plus a drain of an interval (and a tick of slack).
wait_until $((DURATION + 4)) "workload stall to finish (at its duration) while the device is frozen" \
	workload_is stall finished
took_ms=$(( ($(now_ns) - started) / 1000000 ))
note "the workload ended ${took_ms} ms after it started, device still frozen"
((took_ms <= (DURATION + 3) * 1000)) || fail "the workload took ${took_ms} ms for ${DURATION}s"
thaw

ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 "$(dirname "$0")/acct_check.py" "$WORK/dump.json" "$WORK/dump.csv" stall \
	$((1000 * DURATION)) --rate 1000 --p99-min-ms 1000 --freeze-lag ||
	fail "not every scheduled op is accounted for: $(cat "$WORK/dump.csv")"
grep -q "ops still in flight .* were given up" "$SOAKD_LOG" ||
	fail "no warning that ops in flight were given up"

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
