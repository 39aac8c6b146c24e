#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Block-layer probes on a partition of a disk whose queue keeps no I/O
# statistics (queue/iostats 0, a common NVMe tuning): the block layer
# then leaves a request's partition unset, and the probes took every
# request of the partition for its whole disk's, which nobody watched:
# the kernel's figures for the target were empty while tracing said "on".
# They now take the device from the request's first bio; and a
# partition's fsyncs, whose flush requests carry no partition at all, are
# counted as the partition's flushes.  Whatever start stamp such a queue
# leaves on a request is an earlier use's: no queue time is taken from it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_loop_devices
need_cmd sfdisk
backing=$(mktemp /dev/shm/soakd-trace.XXXXXX)
on_exit rm -f "$backing"
truncate -s 96M "$backing"
DISK=$(losetup --direct-io=on --partscan -f --show "$backing" 2>"$WORK/losetup.err") ||
	skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
on_exit losetup -d "$DISK"
printf 'label: dos\n,32M,L\n,,L\n' | sfdisk -q "$DISK" >"$WORK/sfdisk.log" 2>&1 ||
	fail "sfdisk $DISK failed: $(cat "$WORK/sfdisk.log")"
partx -u "$DISK" 2>/dev/null || true
PART=${DISK}p2
part_there() { [[ -b $PART ]]; }
wait_until 10 "$PART to appear" part_there
STATS=/sys/block/$(basename "$DISK")/queue/iostats
on_exit "echo 1 >'$STATS'"   # the loop device outlives the test
echo 0 >"$STATS" || fail "cannot turn I/O statistics off in $STATS"
note "$PART on $DISK, $STATS $(cat "$STATS")"

cat >"$WORK/part.json" <<JSON
{"run": {"name": "trace-part", "duration": "3s", "interval": "1s", "on_finish": "idle",
         "trace": {"blk": true}},
 "workloads": [{"name": "load", "type": "device", "model": "pattern",
                "targets": [{"path": "$PART", "destroy_data": true}],
                "read_pct": 70, "block_size": "4KiB", "queue_depth": 8, "rate": 1000,
                "schedule": [{"scale": 1, "for": "3s"}]}]}
JSON
start_soakd --config "$WORK/part.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
require_probes blk
# Five fsyncs of the partition: its flushes go to the whole disk (a flush
# request carries no partition), and are the partition's.
python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(5):
    os.fsync(fd)
os.close(fd)' "$PART" || fail "cannot fsync $PART"
wait_until 20 "the load to finish" workload_is load finished
dump_json "$WORK/dump.json"
stop_soakd 20
python3 - "$WORK/dump.json" "$(basename "$PART")" <<'PY' || fail "block probes on a partition: $(cat "$WORK/dump.json")"
import json, sys
dump = json.load(open(sys.argv[1]))
part = sys.argv[2]
blk = dump["kernel"]["blk"]
app = next(w for w in dump["workloads"] if w["name"] == "load")["ops"]
ops = blk.get(part, {}).get("ops", {})
for op in ("read", "write"):
    k, a = ops.get(op, {}).get("count", 0), app[op]["count"]
    print(f"# {part} {op}: kernel {k}, soakd {a}")
    assert a > 500, f"too few {op}s"
    assert a * 0.99 <= k <= a, f"{op}: kernel counted {k} requests of {a}"
    # Without statistics the queue leaves an earlier use's start stamp:
    # no queue time, rather than one of minutes.
    q = ops[op]["queue_us"]["max"]
    assert q < 1e6, f"{op}: queue time up to {q} us"
flushes = ops.get("flush", {}).get("count", 0)
print(f"# {part} flush: kernel {flushes} for 5 fsyncs")
assert flushes >= 5, f"{flushes} flushes for 5 fsyncs"
PY
note "ok"
