#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The host beside the numbers (issue 18, section 4): a run on a RAM-backed
# loop device under load writes one "host" record per interval; the records
# are plausible (CPU shares add up to at most 100, the loop device busy and
# moving bytes, memory and PSI present), and they reach the live dump, the
# dump of the finished run directory, the report's input and Prometheus's
# textfile (which promtool accepts).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

need_root "loop devices"
need_cmd losetup python3 promtool
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

ram_file BACKING host.img
truncate -s 256M "$BACKING"
LOOP=$(losetup --direct-io=on -f --show "$BACKING" 2>"$WORK/losetup.err") ||
	skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
on_exit losetup -d "$LOOP"
NAME=${LOOP#/dev/}
note "loop device $LOOP over $BACKING"

PROM="$WORK/soakd.prom"
CFG="$WORK/host.json"
# Deep queues at a high rate keep I/O in flight across the kernel's
# jiffy-sampled io_ticks, so the device's utilisation shows.
cat >"$CFG" <<EOF
{
  "run": {"name": "host", "duration": "6s", "interval": "1s", "slice": "2s", "on_finish": "idle",
          "exports": {"prometheus": {"textfile": "$PROM"}}},
  "workloads": [
    {"name": "load", "type": "device", "model": "pattern",
     "targets": [{"path": "$LOOP", "destroy_data": true}],
     "read_pct": 50, "block_size": "64KiB", "access": "random", "queue_depth": 32, "rate": 8000}
  ]
}
EOF

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 30 "workload load to finish" workload_is load finished
wait_until 10 "$PROM" test -s "$PROM"
ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump failed"
# Re-sliced over the live socket: every slice, the last (closed only by
# the log's end) too, as the run directory gives them.
for fmt in csv hdr; do
	ctl dump --format "$fmt" --slice 4s >"$WORK/live-sliced.$fmt" ||
		fail "soakctl dump --format $fmt --slice 4s failed"
done
ctl report >"$WORK/report.txt" || true
cp "$PROM" "$WORK/last.prom"
stop_soakd 15
LOG=$(ls "$WORK"/state/*/intervals.log)
"$SOAKCTL" dump --format json --run-dir "$(dirname "$LOG")" >"$WORK/offline.json" ||
	fail "soakctl dump --run-dir failed"
for fmt in csv hdr; do
	"$SOAKCTL" dump --format "$fmt" --slice 4s --run-dir "$(dirname "$LOG")" \
		>"$WORK/offline-sliced.$fmt" || fail "soakctl dump --format $fmt --slice 4s --run-dir failed"
	cmp -s "$WORK/live-sliced.$fmt" "$WORK/offline-sliced.$fmt" ||
		fail "the live $fmt dump in 4 s slices differs from the run directory's: $(diff \
			"$WORK/live-sliced.$fmt" "$WORK/offline-sliced.$fmt" | head -c 2000)"
done
# The report from the run directory judges the run's own slices (2 s), as
# the live one does, not an hour.
"$SOAKCTL" report --run-dir "$(dirname "$LOG")" >"$WORK/offline-report.txt" 2>&1 || true
grep -q "^load: latency (from the intended time), 2s slices" "$WORK/offline-report.txt" ||
	fail "report --run-dir does not judge the run's 2 s slices: $(head -3 "$WORK/offline-report.txt")"
grep -q "^load: latency (from the intended time), 2s slices" "$WORK/report.txt" ||
	fail "the live report does not judge 2 s slices: $(head -3 "$WORK/report.txt")"
slices=$(cut -d, -f3 "$WORK/live-sliced.csv" | tail -n +2 | sort -u | wc -l)
((slices == 2)) || fail "6 s in 4 s slices gave $slices slices: $(cat "$WORK/live-sliced.csv")"

python3 - "$LOG" "$NAME" "$WORK/dump.json" "$WORK/offline.json" <<'EOF' || fail "host records: see above"
import json, sys

log, dev, live, offline = sys.argv[1:]
hosts = []
for line in open(log):
    if line.startswith("soakd-intervals"):
        continue
    rec = json.loads(line.split(" ", 1)[1])
    if rec.get("type") == "host":
        hosts.append(rec)
problems = []
if len(hosts) < 4:
    sys.exit(f"{len(hosts)} host records in a 6 s run of 1 s intervals")
for h in hosts:
    for k in ("start_ns", "end_ns", "wall_start_ns", "wall_end_ns", "cpu", "psi", "mem",
              "disks", "net", "tcp", "nvme"):
        if k not in h:
            problems.append(f"host record without {k}: {h}")
    cpu = h.get("cpu", {})
    total = sum(cpu.get(k, 0) for k in ("user", "system", "iowait", "steal"))
    if not 0 <= total <= 100.5:
        problems.append(f"cpu shares add up to {total}: {cpu}")
    if not 0 <= cpu.get("soakd", -1) <= 100:
        problems.append(f"soakd's cpu share {cpu.get('soakd')}")
    if h["mem"].get("available_bytes", 0) <= 0 or h["mem"].get("used_bytes", 0) <= 0:
        problems.append(f"memory: {h['mem']}")
    if not 0.5e9 < h["end_ns"] - h["start_ns"] < 2e9:
        problems.append(f"a host interval of {(h['end_ns'] - h['start_ns']) / 1e9} s")
    if h["nvme"]:
        problems.append(f"nvme on a machine without NVMe: {h['nvme']}")
disks = [h["disks"].get(dev) for h in hosts]
if any(d is None for d in disks):
    problems.append(f"{dev} missing from a host record: {disks}")
disks = [d for d in disks if d]
if not any(d["util_pct"] > 0 for d in disks):
    problems.append(f"{dev} never busy under load: {disks}")
if not any(d["read_Bps"] > 1e6 and d["write_Bps"] > 1e6 for d in disks):
    problems.append(f"{dev} moved no bytes under load: {disks}")
if "lo" not in hosts[-1]["net"]:
    problems.append(f"no lo interface: {hosts[-1]['net']}")
for name in (live, offline):
    d = json.load(open(name)).get("host")
    if not d:
        problems.append(f"{name}: no host in the dump")
        continue
    if d.get("intervals", 0) < 4:
        problems.append(f"{name}: host intervals {d.get('intervals')}")
    util = d.get("disks", {}).get(dev, {}).get("util_pct", {})
    if not util.get("max", 0) > 0 or "mean" not in util:
        problems.append(f"{name}: no {dev} utilisation in {d}")
    if "steal" not in d.get("cpu", {}):
        problems.append(f"{name}: no cpu steal in {d}")
if problems:
    sys.exit("\n".join(problems))
EOF

# CSV rows carry the host's columns, and the plot draws them.
"$SOAKCTL" dump --format csv --run-dir "$(dirname "$LOG")" >"$WORK/dump.csv" ||
	fail "soakctl dump --format csv --run-dir failed"
python3 - "$WORK/dump.csv" <<'EOF' || fail "CSV: see above"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
with_host = [r for r in rows if r.get("host_disk_util_pct")]
if len(with_host) < 3:
    sys.exit(f"{len(with_host)} of {len(rows)} CSV rows carry the host: {rows[:2]}")
if not any(float(r["host_disk_util_pct"]) > 0 for r in with_host):
    sys.exit("no CSV row shows the loop device busy")
EOF
"$SOAKCTL" plot --run-dir "$(dirname "$LOG")" --output "$WORK/plot.svg" ||
	fail "soakctl plot failed"
grep -q 'data-panel="host"' "$WORK/plot.svg" || fail "no host panel in the plot"
grep -q 'data-series="load/host/disk_util"' "$WORK/plot.svg" ||
	fail "no disk utilisation line in the plot's host panel"

grep -q "^soakd_host_cpu_percent{run=\"host\",mode=\"iowait\"} " "$WORK/last.prom" ||
	fail "no host cpu gauge in $(cat "$WORK/last.prom")"
grep -q "^soakd_host_disk_utilisation_percent{run=\"host\",device=\"$NAME\"} " "$WORK/last.prom" ||
	fail "no $NAME utilisation gauge in the metrics"
grep -q "^soakd_host_disk_bytes_per_second{run=\"host\",device=\"$NAME\",direction=\"write\"} " \
	"$WORK/last.prom" || fail "no $NAME write throughput gauge in the metrics"
promtool check metrics <"$WORK/last.prom" >"$WORK/promtool.out" 2>&1 ||
	fail "promtool check metrics: $(cat "$WORK/promtool.out")"
# Restarted after a clean stop, whose checkpoint covers the whole log: the
# live summary still holds every host record of the run, the checkpoint's
# and those after it.  A log past 256 KiB (short intervals), so the resume
# seeks to the checkpoint rather than read it all.
CFG2="$WORK/host2.json"
sed -e 's/"name": "host", "duration": "6s", "interval": "1s", "slice": "2s"/"name": "host2", "duration": "60s", "interval": "20ms", "slice": "1s"/' \
	-e 's/"rate": 8000/"rate": 2000/' "$CFG" >"$CFG2"
grep -q '"interval": "20ms"' "$CFG2" || fail "could not make $CFG2"
start_soakd --config "$CFG2" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket (host2)" ctl_answers
log_past() { (($(stat -c %s "$WORK/state/host2/intervals.log" 2>/dev/null || echo 0) > $1)); }
wait_until 40 "host2's log to pass 256 KiB" log_past 300000
stop_soakd 15
"$SOAKCTL" dump --format json --run-dir "$WORK/state/host2" >"$WORK/host2-before.json" ||
	fail "soakctl dump --run-dir of host2 failed"
start_soakd --config "$CFG2" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket (host2 restarted)" ctl_answers
ctl dump --format json >"$WORK/host2-after.json" || fail "soakctl dump after the restart failed"
stop_soakd 15
grep -q "from its checkpoint" "$SOAKD_LOG" || fail "host2 did not resume from its checkpoint"
"$SOAKCTL" dump --format json --run-dir "$WORK/state/host2" >"$WORK/host2-final.json" ||
	fail "soakctl dump --run-dir of host2 failed"
# Neither lost nor counted twice: between the log before the restart and
# the log once the restarted soakd stopped.
python3 - "$WORK/host2-before.json" "$WORK/host2-after.json" "$WORK/host2-final.json" <<'EOF' ||
import json, sys
before, after, final = (json.load(open(p)).get("host", {}).get("intervals", 0)
                        for p in sys.argv[1:])
if before < 20 or not before <= after <= final:
    sys.exit(f"host intervals: {before} before the restart, {after} after it, {final} in the log")
print(f"# host intervals: {before} before the restart, {after} after it, {final} in the log")
EOF
	fail "the host's summary lost the records before the restart's checkpoint"

# A pause in the run (the workload stopped, then started again 4 s later):
# no host record spans it.  The first after it was the pause's, averaged
# over an idle gap and counted as one interval.
CFG3="$WORK/host3.json"
sed -e 's/"name": "host", "duration": "6s"/"name": "host3", "duration": "60s"/' "$CFG" >"$CFG3"
grep -q '"host3"' "$CFG3" || fail "could not make $CFG3"
start_soakd --config "$CFG3" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket (host3)" ctl_answers
sleep 2.5
ctl stop load >/dev/null || fail "soakctl stop load failed"
wait_until 15 "workload load to stop" workload_is load stopped
sleep 4
ctl start load >/dev/null || fail "soakctl start load failed"
wait_until 15 "workload load to run again" workload_is load running
sleep 2.5
stop_soakd 15
python3 - "$WORK/state/host3/intervals.log" <<'EOF' || fail "host records across a pause: see above"
import json, sys
recs = []
for line in open(sys.argv[1]):
    if line.startswith("soakd-intervals"):
        continue
    rec = json.loads(line.split(" ", 1)[1])
    if rec.get("type") == "host":
        recs.append((rec["wall_start_ns"] / 1e9, rec["wall_end_ns"] / 1e9))
recs.sort()
spans = [b - a for a, b in recs]
# Records on both sides of the pause, and none over it.
gap = max((recs[i + 1][0] - recs[i][1] for i in range(len(recs) - 1)), default=0)
if gap < 3 or max(spans) > 1.9:
    sys.exit(f"host records across the pause (a gap of {gap:.1f} s between two), "
             f"spans, s: {spans}")
print(f"# host records' spans across the pause, s: {[round(s, 2) for s in spans]}")
EOF
note "host records, dumps and metrics are plausible"
