#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Block-layer probes on RAM-backed loop devices:
# - a device under load shows issue->complete latency per op (read, write,
#   and the flushes and discards another process sends it), and an idle
#   one shows nothing, even when something else reads it: neither the
#   device of a workload that is not running nor a device of no workload;
# - the kernel's read count agrees with soakd's within 1%, and its
#   issue->complete p50 is not above soakd's service-time p50 for the
#   same reads (the kernel's part of the trip is the shorter);
# - "all_devices" shows every device; "blk_timestamps": "map" (the
#   per-request map, the fallback for queues the block layer does not
#   stamp) gives the same counts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_loop_devices
make_loop LOADED 128M
make_loop IDLE 64M
make_loop OTHER 64M
make_loop EXTRA 64M
note "loaded $LOADED, idle workload's $IDLE, no workload's $OTHER and $EXTRA"

# write_config FILE TRACE: reads and writes on LOADED for 4 s; a workload
# on IDLE that is never started.
write_config() {
	cat >"$1" <<EOF
{"run": {"name": "trace-blk", "duration": "4s", "interval": "1s", "on_finish": "idle",
         "trace": $2},
 "workloads": [
   {"name": "load", "type": "device", "model": "pattern",
    "targets": [{"path": "$LOADED", "destroy_data": true}],
    "read_pct": 70, "block_size": "4KiB", "queue_depth": 16, "rate": 4000,
    "schedule": [{"scale": 1, "for": "4s"}]},
   {"name": "idle", "type": "device", "model": "pattern", "targets": ["$IDLE"],
    "read_pct": 100, "autostart": false}]}
EOF
}

# Flushes (fsync of the device), FUA writes (RWF_DSYNC on O_DIRECT, which
# a loop device, claiming no FUA, completes twice: after its data and
# again after the post-flush) and discards (BLKDISCARD) from another
# process, on the device under load.
FUA_WRITES=20
flush_and_discard() {
	python3 - "$1" "$FUA_WRITES" <<'EOF'
import fcntl, mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
for i in range(5):
    os.fsync(fd)   # a block device's fsync always sends a flush
BLKDISCARD = 0x1277
for i in range(3):
    fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", (64 + i) << 20, 1 << 20))
os.close(fd)
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for i in range(int(sys.argv[2])):
    os.pwritev(fd, [buf], (96 << 20) + i * 8192, os.RWF_DSYNC)
os.close(fd)
EOF
}

run_phase() {
	local name=$1 trace=$2
	rm -rf "$WORK/state"
	write_config "$WORK/$name.json" "$trace"
	start_soakd --config "$WORK/$name.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 15 "the control socket" ctl_answers
	require_probes blk
	[[ $(probe_state blk) == on ]] || fail "blk probes are $(probe_state blk), expected on"
	wait_until 10 "the load to start" workload_is load running
	dd if="$IDLE" of=/dev/null bs=4k count=2000 iflag=direct status=none
	dd if="$OTHER" of=/dev/null bs=4k count=2000 iflag=direct status=none
	dd if="$EXTRA" of=/dev/null bs=4k count=200 iflag=direct status=none
	flush_and_discard "$LOADED" || fail "cannot flush or discard $LOADED"
	wait_until 30 "the load to finish" workload_is load finished
	dump_json "$WORK/$name.dump.json"
	stop_soakd 20
}

L=$(basename "$LOADED") I=$(basename "$IDLE") O=$(basename "$OTHER")

run_phase targets '{"blk": true}'
python3 - "$WORK/targets.dump.json" "$L" "$I" "$O" "$FUA_WRITES" <<'EOF' || fail "block probes: $(cat "$WORK/targets.dump.json")"
import json, sys
dump = json.load(open(sys.argv[1]))
loaded, idle, other = sys.argv[2:5]
fua = int(sys.argv[5])
blk = dump["kernel"]["blk"]
app = next(w for w in dump["workloads"] if w["name"] == "load")["ops"]
problems = []
# Events the kernel skipped: counted (a count; none is expected here,
# but the kernel decides).
probe = next(p for p in dump["kernel"]["probes"] if p["name"] == "blk")
missed = probe.get("missed")
if not isinstance(missed, int) or missed < 0:
    problems.append(f"kernel.probes blk missed: {missed!r}, expected a count")
if loaded not in blk:
    sys.exit(f"no {loaded} in kernel.blk: {sorted(blk)}")
dev = blk[loaded]
ops = dev["ops"]
for op in ("read", "write", "flush", "discard"):
    o = ops.get(op)
    if not o or not o["count"]:
        problems.append(f"no {op} on {loaded}: {sorted(ops)}")
        continue
    lat = o["latency_us"]
    print(f"# {loaded} {op}: {o['count']} requests, p50 {lat['p50']} us, p99 {lat['p99']} us, "
          f"queue p99 {o['queue_us']['p99']} us, size p50 {o['size_bytes']['p50']}")
    if not 0 < lat["p50"] <= lat["p99"] <= lat["max"]:
        problems.append(f"{op}: latency percentiles out of order: {lat}")
if ops.get("flush", {}).get("count", 0) < 5:
    problems.append(f"5 fsyncs gave {ops.get('flush', {}).get('count', 0)} flushes")
if dev["workloads"] != ["load"]:
    problems.append(f"{loaded} attributed to {dev['workloads']}")
for op in ("read", "write"):
    # The other process's FUA writes are writes too; its fsyncs' empty
    # PREFLUSH writes and the FUA writes' second completions are not.
    k, a = ops[op]["count"], app[op]["count"] + (fua if op == "write" else 0)
    print(f"# {op}: kernel {k}, soakd {app[op]['count']}" + (f" + {fua} FUA" if op == "write" else ""))
    if abs(k - a) > 0.01 * a:
        problems.append(f"{op}: kernel counted {k} requests, expected {a}: not within 1%")
    if k > a:
        problems.append(f"{op}: kernel counted {k} requests, more than the {a} sent")
    if ops[op]["size_bytes"]["p50"] != 4096:
        problems.append(f"{op}: request size p50 {ops[op]['size_bytes']['p50']}, expected 4096")
kp50, sp50 = ops["read"]["latency_us"]["p50"], app["read"]["service_us"]["p50"]
print(f"# read p50: kernel issue->complete {kp50} us, soakd service {sp50} us")
if kp50 > sp50:
    problems.append(f"kernel read p50 {kp50} us is above soakd's service p50 {sp50} us")
for name in (idle, other):
    if name in blk and any(o["count"] for o in blk[name]["ops"].values()):
        problems.append(f"{name} is not under load, yet kernel.blk has {blk[name]}")
if problems:
    sys.exit("\n".join(problems))
EOF

# The interval records carry the kernel's series beside the workload's.
python3 - "$WORK"/state/*/intervals.log <<'EOF' || fail "interval records lack the kernel series"
import json, sys
seen = 0
for line in open(sys.argv[1]):
    record = json.loads(line.split(" ", 1)[-1])
    if isinstance(record, dict) and record.get("type") == "interval" and record.get("workload") == "load":
        blk = record.get("kernel", {}).get("blk", {})
        seen += "read" in blk and blk["read"]["count"] > 0 and blk["read"]["latency_us"]["p99"] > 0
print(f"# {seen} interval records of 'load' carry kernel.blk.read")
if seen < 3:
    sys.exit(f"only {seen} interval records carry kernel.blk")
EOF

# A dump read from the log has them per workload, as the records did.
"$SOAKCTL" dump --run-dir "$(dirname "$(ls "$WORK"/state/*/intervals.log)")" >"$WORK/offline.json" ||
	fail "dump --run-dir failed: $(cat "$WORK/offline.json")"
python3 - "$WORK/offline.json" "$WORK/targets.dump.json" "$L" <<'EOF' || fail "dump --run-dir lacks the kernel's figures"
import json, sys
offline, live = (json.load(open(p)) for p in sys.argv[1:3])
w = next(w for w in offline["workloads"] if w["name"] == "load")
k = w.get("kernel", {}).get("blk", {}).get("read", {})
n, want = k.get("count", 0), live["kernel"]["blk"][sys.argv[3]]["ops"]["read"]["count"]
print(f"# dump --run-dir: kernel.blk.read {n} requests of load, live {want}; p99 {k.get('latency_us', {}).get('p99')} us")
if abs(n - want) > 0.01 * want or not k["latency_us"]["p99"] > 0 or not k.get("latency_hist"):
    sys.exit(f"workloads[load].kernel {w.get('kernel')} against {want} live reads")
EOF

run_phase all '{"blk": true, "all_devices": true}'
for dev in "$L" "$O"; do
	n=$(kernel_blk "$WORK/all.dump.json" "$dev" read count)
	((n > 0)) || fail "all_devices: no reads on $dev"
	note "all_devices: $dev read $n"
done

# More devices than max_devices (OTHER and EXTRA for one slot): what is
# beyond it is not counted, and the log says so.
run_phase few '{"blk": true, "all_devices": true, "max_devices": 1}'
grep -q 'met more devices than "max_devices" (1) holds' "$SOAKD_LOG" ||
	fail "no word of the devices beyond max_devices: $(grep -i 'block probes' "$SOAKD_LOG")"

run_phase map '{"blk": true, "blk_timestamps": "map"}'
python3 - "$WORK/map.dump.json" "$L" <<'EOF' || fail "per-request map: $(cat "$WORK/map.dump.json")"
import json, sys
dump = json.load(open(sys.argv[1]))
dev = dump["kernel"]["blk"][sys.argv[2]]
app = next(w for w in dump["workloads"] if w["name"] == "load")["ops"]
if not dev["per_request_map"]:
    sys.exit("per_request_map is false with \"blk_timestamps\": \"map\"")
k, a = dev["ops"]["read"]["count"], app["read"]["count"]
print(f"# map: read kernel {k}, soakd {a}, p50 {dev['ops']['read']['latency_us']['p50']} us")
if abs(k - a) > 0.01 * a or dev["ops"]["read"]["latency_us"]["p50"] <= 0:
    sys.exit(f"map: kernel {k}, soakd {a}")
EOF

# A file target on tmpfs has no block device under it: the probes say so,
# in a sentence that reads, in the log and in status.
SHM_TARGET=$(mktemp /dev/shm/soakd-trace.XXXXXX)
on_exit rm -f "$SHM_TARGET"
rm -f "$SHM_TARGET"
cat >"$WORK/shm.json" <<EOF
{"run": {"name": "trace-shm", "duration": "2s", "interval": "1s", "on_finish": "idle",
         "trace": {"blk": true}},
 "workloads": [{"name": "shm", "type": "device", "model": "pattern", "file_size": "4MiB",
                "targets": [{"path": "$SHM_TARGET", "allow_unsafe_path": true}],
                "read_pct": 100, "block_size": "4KiB", "rate": 100}]}
EOF
rm -rf "$WORK/state"
start_soakd --config "$WORK/shm.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
want="block probes cannot watch $SHM_TARGET: on a filesystem without a block device under it (tmpfs, btrfs, overlay, NFS...)"
wait_until 10 "the unwatched target in the log" grep -qF "$want" "$SOAKD_LOG"
ctl trace >"$WORK/shm.trace.txt" || fail "soakctl trace failed"
grep -qxF "blk: cannot watch ${want#block probes cannot watch }" "$WORK/shm.trace.txt" ||
	fail "soakctl trace does not say which target it cannot watch: $(cat "$WORK/shm.trace.txt")"
stop_soakd 15
note "ok"
