#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The issue's example, scaled down, on a RAM-backed loop device with direct
# I/O: 70% reads of 4 KiB at random offsets, 2000 ops/s for 3 s then 4000
# ops/s for 3 s.  Checks the op count (exact), the read/write mix (exactly 70
# in every 100, as the README promises), each op's rate_target and rate_achieved,
# the latency percentiles and both dump formats; then that stop and SIGTERM
# leave soakd answering and exiting cleanly.
source "$(dirname "$0")/lib.sh"

need_root "loop devices"
need_cmd losetup python3
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

# Loop devices left behind by a run that was SIGKILLed (backing file gone).
while read -r dev back; do
	[[ $back == /dev/shm/soakd-loopdev.* || $back == /var/tmp/soakd-loopdev.* ]] || continue
	[[ -e $back ]] || losetup -d "$dev" 2>/dev/null || true
done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | sed 's/ (deleted)$//')

backing_dir=/dev/shm
if (($(df -Pk /dev/shm 2>/dev/null | awk 'NR==2 {print $4}' || echo 0) < 300 * 1024)); then
	backing_dir=/var/tmp
fi
BACKING=$(mktemp "$backing_dir/soakd-loopdev.XXXXXX")
on_exit rm -f "$BACKING"
truncate -s 256M "$BACKING"
LOOP=$(losetup --direct-io=on -f --show "$BACKING" 2>"$WORK/losetup.err") ||
	skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
on_exit losetup -d "$LOOP"
note "loop device $LOOP over $BACKING"

CFG="$WORK/loopdev.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "loopdev", "duration": "6s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {
      "name": "rand4k",
      "type": "device",
      "model": "pattern",
      "targets": [{"path": "$LOOP", "destroy_data": true}],
      "read_pct": 70,
      "block_size": "4KiB",
      "access": "random",
      "queue_depth": 32,
      "rate": 2000,
      "schedule": [{"scale": 1, "for": "3s"}, {"scale": 2, "for": "3s"}]
    }
  ]
}
EOF

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state"
wait_until 15 "the control socket" ctl_answers
wait_until 30 "workload rand4k to finish" workload_is rand4k finished

ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
python3 - "$WORK/dump.json" <<'EOF' || fail "dump --format json: $(cat "$WORK/dump.json")"
import json, sys

expected_ops = 2000 * 3 + 4000 * 3
expected_rate = expected_ops / 6.0

dump = json.load(open(sys.argv[1]))
problems = []
workload = next((w for w in dump.get("workloads", []) if w.get("name") == "rand4k"), None)
if workload is None:
    sys.exit("workload rand4k is not in the dump")
ops = workload.get("ops", {})
for op in ("read", "write"):
    if op not in ops:
        sys.exit(f"no '{op}' in ops: {sorted(ops)}")

# Every op due is completed, failed or missed (missed: once soakd counts it).
def scheduled(op):
    return ops[op]["count"] + ops[op]["errors"] + ops[op].get("missed", 0)

reads, writes = ops["read"]["count"], ops["write"]["count"]
total = scheduled("read") + scheduled("write")
print(f"# reads {reads}, writes {writes}, scheduled {total} (expected {expected_ops})")
if total != expected_ops:
    problems.append(f"{total} ops scheduled (count + errors + missed), expected {expected_ops}")
# README: "Each block of 100 ops holds exactly read_pct reads": of N ops,
# 70 per whole block of 100, and of the last, partial block as many as it
# can hold (between its size less 30 and 70).
blocks, rest = divmod(total, 100)
low, high = 70 * blocks + max(0, rest - 30), 70 * blocks + min(70, rest)
if not low <= scheduled("read") <= high:
    problems.append(f"{scheduled('read')} reads of {total} ops, expected exactly 70 in every "
                    f"100 ({low}..{high})")

# rate_target is each op's share of the schedule's mean rate: 70% and 30%
# of (2000 * 3 + 4000 * 3) / 6 ops/s; rate_achieved what was completed.
for op, share in (("read", 0.7), ("write", 0.3)):
    target, achieved = ops[op]["rate_target"], ops[op]["rate_achieved"]
    print(f"# {op}: rate_target {target:.2f} ops/s, rate_achieved {achieved:.2f} ops/s")
    if abs(target - share * expected_rate) > 0.005 * share * expected_rate:
        problems.append(f"{op}: rate_target {target:.2f} ops/s, expected "
                        f"{share * expected_rate:.0f} within 0.5%")
    if abs(achieved - share * expected_rate) > 0.01 * share * expected_rate:
        problems.append(f"{op}: rate_achieved {achieved:.2f} ops/s, expected "
                        f"{share * expected_rate:.0f} within 1%")

for op in ("read", "write"):
    entry = ops[op]
    if entry.get("errors") != 0:
        problems.append(f"{op}: errors {entry.get('errors')}")
    if entry.get("bytes") != entry["count"] * 4096:
        problems.append(f"{op}: {entry.get('bytes')} bytes for {entry['count']} 4 KiB ops")
    for kind in ("latency_us", "service_us"):
        lat = entry.get(kind)
        if lat is None:
            problems.append(f"{op}: no {kind}")
            continue
        order = [lat[k] for k in ("p50", "p90", "p99", "p999", "max")]
        print(f"# {op} {kind}: p50 {order[0]} p90 {order[1]} p99 {order[2]} p999 {order[3]} max {order[4]}")
        if not 0 < order[0] <= order[1] <= order[2] <= order[3] <= order[4]:
            problems.append(f"{op}: {kind} not 0 < p50 <= p90 <= p99 <= p999 <= max: {lat}")
    # Latency from the intended time includes the service time.
    if "latency_us" in entry and "service_us" in entry:
        if entry["service_us"]["p50"] > entry["latency_us"]["p50"] * 1.02 + 1:
            problems.append(f"{op}: service p50 above latency p50: {entry}")

kernel = dump.get("kernel")
if not isinstance(kernel, dict) or "blk" not in kernel or "tcp" not in kernel:
    problems.append(f"kernel section missing or incomplete: {kernel!r}")

if problems:
    sys.exit("\n".join(problems))
EOF

ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 - "$WORK/dump.csv" <<'EOF' || fail "dump --format csv: $(head -c 2000 "$WORK/dump.csv")"
import csv, sys

rows = list(csv.reader(open(sys.argv[1])))
if len(rows) < 2:
    sys.exit(f"expected a header and rows, got {len(rows)} line(s)")
header = rows[0]
if len(header) < 3 or any(field.replace(".", "").isdigit() for field in header):
    sys.exit(f"first line is not a header: {header}")
if not any("rand4k" in row for row in rows[1:]):
    sys.exit("no row names workload rand4k")
for row in rows[1:]:
    if len(row) != len(header):
        sys.exit(f"row has {len(row)} fields, header {len(header)}: {row}")
print(f"# csv: {len(header)} columns, {len(rows) - 1} rows")
EOF

# Stopping a workload that has finished must not break anything.
if ctl stop >"$WORK/stop.out" 2>&1; then
	note "soakctl stop: $(cat "$WORK/stop.out")"
else
	note "soakctl stop exited non-zero: $(cat "$WORK/stop.out")"
fi
state=$(workload_state rand4k) || fail "status after stop failed"
[[ $state == finished || $state == stopped ]] || fail "after stop, rand4k is '$state'"


stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
