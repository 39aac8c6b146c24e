#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Drift alarms (issue 18, section 3) on a real device slowed on purpose:
# config/drift.json, scaled down (5 s windows at "low" sensitivity, 20 s
# runs), on a RAM-backed
# loop device.  Run 1 runs in a blkio cgroup whose read IOPS limit on the
# loop device is set to 300 (the workload asks for 1000 reads/s) halfway
# through: it must raise p99 and throughput alarms, as a journal entry
# (SOAK_EVENT=drift with its MESSAGE_ID, read back from a private
# journald), an event record in the run's log, systemd's STATUS= line, the
# soakd_drift gauge, soakctl status, and a mark in the dump's CSV and the
# plot.  Run 2 is the same, unslowed: no alarm.  Run 3 is run 1 with
# "on_drift": "stop": the workload stops itself at the alarm.  Run 4 is
# SIGKILLed after its reference window, resumed, killed again, slowed while
# down and resumed: the alarm still comes (the reference is rebuilt from
# the log, also from before the checkpoint the first resume wrote).  Every JSON
# dump (live, filtered, --run-dir) lists the run's alarms in "drift".
#
# The limit is cgroup v1's blkio.throttle.read_iops_device on this
# machine's hybrid hierarchy (cgroup v2 has no io controller here); where
# v2's io.max is there, it is used instead (devlib.sh's blk_cgroup).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

need_root "loop devices, cgroups and a private journald"
need_cmd losetup python3 unshare journalctl
# A halted CPU waiting for a busy hypervisor would make soakd late (lib.sh).
keep_cpus_awake
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"
JOURNALD=/lib/systemd/systemd-journald
[[ -x $JOURNALD ]] || skip_unless_strict "$JOURNALD is not installed"
[[ -d /run/log && -d /var/log/journal ]] ||
	skip_unless_strict "/run/log or /var/log/journal missing (no mount points for a private journald)"

blk_cgroup
CG=$BLK_CG

ram_file BACKING drift.img
truncate -s 256M "$BACKING"
LOOP=$(losetup --direct-io=on -f --show "$BACKING" 2>"$WORK/losetup.err") ||
	skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
on_exit losetup -d "$LOOP"
MAJMIN=$(cat "/sys/block/${LOOP#/dev/}/dev")
note "loop device $LOOP ($MAJMIN), cgroup $CG"

# config/drift.json with the loop device, 5 s windows and a 20 s run.
config_for() {
	python3 - "$SRCDIR/config/drift.json" "$LOOP" "$1" "$WORK/$1.prom" >"$WORK/$1.json" <<'EOF'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["run"].update(name=sys.argv[3], duration="20s",
                  on_finish="idle" if sys.argv[3] == "slowed" else "exit",
                  exports={"prometheus": {"textfile": sys.argv[4]}})
cfg["run"]["drift"]["window"] = "5s"
w = cfg["workloads"][0]
w["targets"] = [{"path": sys.argv[2], "destroy_data": True}]
del w["file_size"]
# Windows of 5 s instead of 5 min see the load of everything else on a
# shared 2-core machine come and go (a steady run measured here at a load
# of 10 had 5% of its ops above the reference's p99): "low" counts only
# ops 3x slower than it.
w["drift"].update(window="5s", sensitivity="low")
print(json.dumps(cfg, indent=1))
EOF
}
config_for slowed
config_for steady
config_for stopper
config_for resumed
python3 - "$WORK/stopper.json" <<'EOF'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["workloads"][0]["drift"]["on_drift"] = "stop"
json.dump(cfg, open(sys.argv[1], "w"))
EOF

# Run 1 inside a private journald: soakd in the cgroup, the limit set
# after 10 s of run time.
JOURNAL_DIR="$WORK/journal-root"
mkdir "$JOURNAL_DIR"
cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
source "$SRCDIR/tests/integration/journallib.sh"
journald_start
python3 "$SRCDIR/tests/integration/notify_listen.py" "$WORK/notify.sock" "$WORK/notify.jsonl" \
	>"$WORK/listen.log" 2>&1 &
listener=$!
for ((i = 0; i < 100; i++)); do
	[[ -S $WORK/notify.sock ]] && break
	sleep 0.1
done
NOTIFY_SOCKET="$WORK/notify.sock" "$SOAKD" --config "$WORK/slowed.json" --socket "$WORK/slowed.sock" \
	--state-dir "$WORK/state" --no-table >"$WORK/slowed.log" 2>&1 &
soakd=$!
echo $soakd >"$CG/cgroup.procs"
# Halfway: the reference window (the first 5 s) is long done.
for ((i = 0; i < 200; i++)); do
	grep -q '"end_ns":1[0-9]\{10\}' "$WORK/state/slowed/intervals.log" 2>/dev/null && break
	sleep 0.1
done
bash -c "$LIMIT_CMD"
# The run finished (idle): status says what alarmed; then SIGTERM.
for ((i = 0; i < 400; i++)); do
	"$SOAKCTL" --socket "$WORK/slowed.sock" status --json 2>/dev/null |
		grep -q '"state": *"finished"' && break
	sleep 0.1
done
"$SOAKCTL" --socket "$WORK/slowed.sock" status >"$WORK/status.txt" 2>&1 || true
"$SOAKCTL" --socket "$WORK/slowed.sock" status --json >"$WORK/status.json" 2>&1 || true
# The alarms in JSON dumps: unfiltered, and filtered (from the log).
"$SOAKCTL" --socket "$WORK/slowed.sock" dump --format json >"$WORK/live-dump.json" 2>&1 || true
"$SOAKCTL" --socket "$WORK/slowed.sock" dump --format json --workload rand4k --since 1s \
	>"$WORK/live-dump-filtered.json" 2>&1 || true
kill -TERM $soakd
rc=0
wait $soakd || rc=$?
kill -TERM $listener
wait $listener || true
if ((rc != 0)); then
	echo "soakd exited $rc" >&2
	exit 3
fi
journald_stop
INNER
LIMIT_CMD=$(blk_limit_cmd "$LOOP" riops=300)
export WORK JOURNAL_DIR JOURNALD SOAKD SOAKCTL SRCDIR CG LIMIT_CMD
timeout 90 unshare --mount --propagation private bash "$WORK/inner.sh" ||
	fail "the slowed run failed (exit $?): $(tail -5 "$WORK/slowed.log")"
blk_limit "$LOOP" riops=0

# Run 2: the same, never slowed.  Its 5 s windows see the rest of a
# suite's load on a 2-core machine come and go, and once in a while one
# of them really is slower (3.4% of a window's reads above 3x the
# reference's p99, in one full run): a steady run that alarmed runs once
# more, afresh, and only a second alarm fails the test.  A false alarm of
# soakd's own would come back.
steady_run() {
	start_soakd --config "$WORK/steady.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	echo "$SOAKD_PID" >"$CG/cgroup.procs"
	wait_soakd_exit 60
	((SOAKD_RC == 0)) || fail "the steady run exited $SOAKD_RC"
}
steady_run
if grep -q '"event":"drift"' "$WORK/state/steady/intervals.log"; then
	note "the steady run alarmed, once more: $(grep -o '"message":"[^"]*"' \
		"$WORK/state/steady/intervals.log" | head -n1)"
	rm -rf "$WORK/state/steady" "$WORK/steady.prom"
	steady_run
fi

# Run 3: "on_drift": "stop", slowed halfway: the workload stops itself.
start_soakd --config "$WORK/stopper.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
echo "$SOAKD_PID" >"$CG/cgroup.procs"
wait_until 20 "10 s of the stopper run" grep -q '"end_ns":1[0-9]\{10\}' "$WORK/state/stopper/intervals.log"
blk_limit "$LOOP" riops=300
wait_soakd_exit 60
blk_limit "$LOOP" riops=0

# Run 4: SIGKILLed once the reference window is done, resumed, SIGKILLed
# again (its checkpoint now past the reference), slowed while soakd is
# down, resumed: the reference from before the kills is still the
# reference, so the slowness is caught (a reference gathered afresh on
# the slowed device would see no change).
RLOG="$WORK/state/resumed/intervals.log"
start_soakd --config "$WORK/resumed.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
echo "$SOAKD_PID" >"$CG/cgroup.procs"
wait_until 20 "8 s of the resumed run" grep -q '"end_ns":\(8\|9\)[0-9]\{9\}' "$RLOG"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 10
# Resumed once, unslowed: that resume writes a checkpoint past the
# reference window; killed again, the next resume starts from it.
start_soakd --config "$WORK/resumed.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
echo "$SOAKD_PID" >"$CG/cgroup.procs"
wait_until 20 "10 s of the resumed run" grep -q '"end_ns":1[0-9]\{10\}' "$RLOG"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 10
cp "$RLOG" "$WORK/resumed-before-kill.log"
blk_limit "$LOOP" riops=300
start_soakd --config "$WORK/resumed.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
echo "$SOAKD_PID" >"$CG/cgroup.procs"
wait_soakd_exit 60
blk_limit "$LOOP" riops=0
((SOAKD_RC == 0)) || fail "the resumed run exited $SOAKD_RC"
"$SOAKCTL" dump --format json --run-dir "$WORK/state/resumed" >"$WORK/resumed-dump.json" ||
	fail "dump --run-dir of the resumed run failed"
"$SOAKCTL" dump --format json --run-dir "$WORK/state/slowed" >"$WORK/offline-dump.json" ||
	fail "dump --run-dir of the slowed run failed"
"$SOAKCTL" dump --format json --run-dir "$WORK/state/steady" >"$WORK/steady-dump.json" ||
	fail "dump --run-dir of the steady run failed"

journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_EVENT=drift >"$WORK/journal.json" \
	2>"$WORK/journalctl.log" || fail "journalctl failed: $(cat "$WORK/journalctl.log")"
"$SOAKCTL" dump --format csv --run-dir "$WORK/state/slowed" >"$WORK/slowed.csv" ||
	fail "dump --format csv of the slowed run failed"
"$SOAKCTL" plot --run-dir "$WORK/state/slowed" --output "$WORK/slowed.svg" 2>/dev/null ||
	fail "plot of the slowed run failed"

python3 - "$WORK" "$SRCDIR/daemon/base/journal_ids.h" <<'EOF' || fail "drift alarms: see above"
import csv, json, re, sys

work, ids = sys.argv[1:]
msgid = re.search(r'SOAK_MESSAGE_DRIFT\s+"([0-9a-f]{32})"', open(ids).read()).group(1)
problems = []

def events(run):
    out = []
    for line in open(f"{work}/state/{run}/intervals.log"):
        if line.startswith("soakd-intervals"):
            continue
        rec = json.loads(line.split(" ", 1)[1])
        if rec.get("type") == "event" and rec.get("event") == "drift":
            out.append(rec)
    return out

slowed, steady = events("slowed"), events("steady")
print(f"# slowed run: {[(e['metric'], e['start_ns'] / 1e9) for e in slowed]}")
print(f"# steady run: {[(e['metric'], e['start_ns'] / 1e9) for e in steady]}")
metrics = {e["metric"] for e in slowed}
if "p99" not in metrics or "throughput" not in metrics:
    problems.append(f"the slowed run raised {sorted(metrics)}, not p99 and throughput")
for e in slowed:
    for k in ("workload", "op", "metric", "start_ns", "message"):
        if k not in e:
            problems.append(f"event without {k}: {e}")
    if e.get("workload") != "rand4k" or e.get("op") != "read":
        problems.append(f"event for the wrong workload or op: {e}")
    if e.get("end_ns", 0) < 10e9:
        problems.append(f"an alarm before the device was slowed: {e}")
if steady:
    problems.append(f"the steady run raised {len(steady)} alarm(s): {steady}")

journal = [json.loads(l) for l in open(f"{work}/journal.json") if l.strip()]
if not any(j.get("MESSAGE_ID") == msgid and j.get("SOAK_METRIC") == "p99" and
           j.get("SOAK_WORKLOAD") == "rand4k" and j.get("SOAK_OP") == "read" for j in journal):
    problems.append(f"no SOAK_EVENT=drift journal entry for p99 with MESSAGE_ID {msgid}: "
                    f"{[(j.get('MESSAGE_ID'), j.get('SOAK_METRIC')) for j in journal]}")

notes = [json.loads(l)["msg"] for l in open(f"{work}/notify.jsonl") if l.strip()]
if not any("STATUS=" in n and "drift: rand4k/read p99" in n for n in notes):
    problems.append("no STATUS= line with the alarm: " +
                    repr([n for n in notes if "STATUS=" in n][-3:]))

def gauge(run, metric):
    for line in open(f"{work}/{run}.prom"):
        if line.startswith("soakd_drift{") and f'metric="{metric}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return None
if gauge("slowed", "p99") != 1:
    problems.append(f"soakd_drift p99 of the slowed run: {gauge('slowed', 'p99')}")
if gauge("steady", "p99") != 0:
    problems.append(f"soakd_drift p99 of the steady run: {gauge('steady', 'p99')}")

states = [json.loads(l.split(" ", 1)[1]) for l in open(f"{work}/state/stopper/intervals.log")
          if not l.startswith("soakd-intervals")]
states = [r for r in states if r.get("type") == "state"]
last = states[-1] if states else {}
if last.get("state") != "stopped" or not last.get("reason", "").startswith("on_drift: read "):
    problems.append(f"on_drift stop: the workload ended {last}")
elif last.get("run_ns", 0) > 19e9:
    problems.append(f"on_drift stop: stopped only at {last['run_ns'] / 1e9} s")

status = json.load(open(f"{work}/status.json")).get("drift", {})
if status.get("tests", {}).get("rand4k", {}).get("read", {}).get("p99") != 1 or \
        status.get("alarms", 0) < 2:
    problems.append(f"soakctl status --json: drift {status}")
if "drift: rand4k/read p99" not in open(f"{work}/status.txt").read():
    problems.append("soakctl status does not show the alarm: " + open(f"{work}/status.txt").read())

rows = list(csv.DictReader(open(f"{work}/slowed.csv")))
marked = [r for r in rows if r.get("drift")]
if not marked or "p99" not in marked[0]["drift"]:
    problems.append(f"no CSV row marked with the drift: {[r.get('drift') for r in rows]}")
svg = open(f"{work}/slowed.svg").read()
if 'class="drift"' not in svg:
    problems.append("no drift mark in the plot")
# The JSON dumps list the run's alarms as the log has them.
def key(e):
    return (e["workload"], e["op"], e["metric"], e["start_ns"], e["end_ns"])
for name, want in (("live-dump.json", slowed), ("live-dump-filtered.json", slowed),
                   ("offline-dump.json", slowed), ("steady-dump.json", steady)):
    try:
        got = json.load(open(f"{work}/{name}")).get("drift")
    except Exception as e:
        problems.append(f"{name}: {e}")
        continue
    if got is None or sorted(map(key, got)) != sorted(map(key, want)):
        problems.append(f"{name}: drift {got}, the log's alarms {want}")

# The resumed run: the alarm came after the restart, from the old reference.
def records(path):
    return [json.loads(l.split(" ", 1)[1]) for l in open(path)
            if not l.startswith("soakd-intervals")]
before = records(f"{work}/resumed-before-kill.log")
killed_at = max(r.get("end_ns", 0) for r in before if r.get("type") == "interval")
resumed = events("resumed")
print(f"# resumed run (killed at {killed_at / 1e9:.0f} s): "
      f"{[(e['metric'], e['end_ns'] / 1e9) for e in resumed]}")
if not any(e["metric"] in ("p99", "throughput") and e["end_ns"] > killed_at for e in resumed):
    problems.append(f"no p99/throughput alarm after the resume: {resumed}")
if any(e["end_ns"] <= killed_at for e in resumed):
    problems.append(f"an alarm before the kill, on the unslowed device: {resumed}")
got = json.load(open(f"{work}/resumed-dump.json")).get("drift")
if got is None or sorted(map(key, got)) != sorted(map(key, resumed)):
    problems.append(f"resumed-dump.json: drift {got}, the log's alarms {resumed}")
if problems:
    sys.exit("\n".join(problems))
EOF
note "the slowed run alarmed, the steady one did not, the resumed one did after its restart"
