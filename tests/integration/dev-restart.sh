#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A device workload started again after its last run gave up ops in flight
# (the run goes on: its schedule is shorter than the run).  1000 writes/s at queue depth 8 for 3 s to a file on an ext4 on a loop
# device, frozen with fsfreeze 1.5 s in: the run ends at its duration and
# gives up the 8 ops the device holds.  While they are still in flight,
# "soakctl start" is refused, naming the device and the 8 ops (the slots,
# buffers and ring are still the kernel's); once the device is thawed and
# they are back, the start is taken, the second run completes its ops like
# the first, every op scheduled over both runs is counted exactly once
# (the late completions are not counted again), and the thread does not
# spin.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
need_cmd fsfreeze mkfs.ext4

freezable_fs 128M

DURATION=3
TARGET="$MNT/restart.dat"
CFG="$WORK/restart.json"
cat >"$CFG" <<JSON
{
  "run": {"name": "dev-restart", "duration": "60s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {
      "name": "restart",
      "type": "device",
      "model": "pattern",
      "targets": ["$TARGET"],
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
wait_until 15 "workload restart to run" workload_is restart running
# write: count errors missed, over every run so far.
totals() {
	ctl status --json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "restart")
o = w["ops"]["write"]
print(o["count_total"], o.get("errors_total", 0), o.get("missed_total", 0))'
}
ops_done() { local c; read -r c _ < <(totals); ((c >= $1)); }
wait_until 10 "1200 writes" ops_done 1200
# Thawed before soakd is killed (cleanups run last first).
on_exit thaw
freeze
wait_until $((DURATION + 5)) "workload restart to finish while the device is frozen" \
	workload_is restart finished
grep -q "8 ops still in flight .* were given up" "$SOAKD_LOG" ||
	fail "no warning that the 8 ops in flight were given up: $(tail -n 20 "$SOAKD_LOG")"

# Still frozen: the start is refused, saying why, and changes nothing.
if ctl start restart >"$WORK/start1.out" 2>&1; then
	fail "soakctl start was taken with 8 ops still in flight: $(cat "$WORK/start1.out")"
fi
note "refused: $(cat "$WORK/start1.out")"
grep -q "$TARGET still has 8 ops of the last run in flight" "$WORK/start1.out" ||
	fail "the refusal does not name the device and its 8 ops: $(cat "$WORK/start1.out")"
sleep 0.5
workload_is restart finished || fail "a refused start changed the workload's state"
read -r c1 e1 m1 < <(totals)
note "run 1: count $c1 errors $e1 missed $m1"
((c1 + e1 + m1 == 1000 * DURATION)) ||
	fail "run 1: count $c1 + errors $e1 + missed $m1 != $((1000 * DURATION))"

thaw
wait_until 10 "the given-up ops to come back" \
	grep -q "ops given up in flight have completed" "$SOAKD_LOG"
ctl start restart >"$WORK/start2.out" 2>&1 ||
	fail "soakctl start after the device answered failed: $(cat "$WORK/start2.out")"
started=$(now_ns)
cpu0=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
wait_until $((DURATION + 5)) "workload restart to run again" workload_is restart finished
cpu1=$(awk '{print $14 + $15}' "/proc/$SOAKD_PID/stat")
wall_ms=$(( ($(now_ns) - started) / 1000000 ))
cpu_ms=$(( (cpu1 - cpu0) * 1000 / $(getconf CLK_TCK) ))
note "run 2: soakd used ${cpu_ms} ms of CPU in ${wall_ms} ms"

read -r c2 e2 m2 < <(totals)
note "run 2: count $((c2 - c1)) errors $((e2 - e1)) missed $((m2 - m1))"
((c2 + e2 + m2 == 2000 * DURATION)) ||
	fail "count $c2 + errors $e2 + missed $m2 over both runs != $((2000 * DURATION)) scheduled"
((c2 - c1 >= 1000 * DURATION * 9 / 10)) ||
	fail "run 2 on the answering device completed only $((c2 - c1)) of $((1000 * DURATION)) writes"
((m2 == m1)) || fail "run 2 missed $((m2 - m1)) ops on a device that answers"
((cpu_ms * 2 < wall_ms)) || fail "soakd used ${cpu_ms} ms of CPU in ${wall_ms} ms (a spin)"

ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 "$(dirname "$0")/acct_check.py" "$WORK/dump.json" "$WORK/dump.csv" restart \
	$((2000 * DURATION)) ||
	fail "not every scheduled op is accounted for: $(cat "$WORK/dump.csv")"

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
