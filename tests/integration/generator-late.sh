#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Generator fidelity (issue 14, section 2): soakd says when it, not the
# device, was late.  A device run on a loop device with max_lag 10s:
#
#  - under normal load, issue_delay_us is recorded per op (its p99 is
#    printed, not judged: this machine is shared);
#  - soakd is SIGSTOPped for 12 s: the run goes on (no "max_lag exceeded"
#    naming the device), the intervals of the freeze are generator_late,
#    the ops due in it are issued seconds late by issue_delay_us, and
#    soakctl report flags them and does not say PASS;
#  - soakd is starved of CPU (a cgroup allowed 1 ms of CPU a second) for a few
#    seconds: those intervals are generator_late too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

new_loop 64M
LOOP=$NEW_LOOP
CFG="$WORK/genlate.json"
cat >"$CFG" <<EOF2
{
  "run": {"name": "genlate", "duration": "60s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {
      "name": "dev",
      "type": "device",
      "model": "pattern",
      "targets": [{"path": "$LOOP", "destroy_data": true}],
      "read_pct": 70,
      "block_size": "4KiB",
      "access": "random",
      "queue_depth": 8,
      "rate": 200,
      "max_lag": "10s",
      "schedule": [{"scale": 1, "for": "60s"}]
    }
  ]
}
EOF2
STATE="$WORK/state"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/genlate/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
at_least() { (($(intervals) >= $1)); }
wait_until 20 "4 intervals on disk" at_least 4
normal=$(intervals)

# 1. SIGSTOP for 12 s, longer than max_lag.
kill -STOP "$SOAKD_PID"
on_exit kill -CONT "$SOAKD_PID"
sleep 12
kill -CONT "$SOAKD_PID"
n=$(intervals)
wait_until 30 "intervals after the freeze" at_least $((n + 16))
is_alive "$SOAKD_PID" || fail "soakd exited after a 12 s SIGSTOP: $(tail -5 "$SOAKD_LOG")"
workload_is dev running || fail "workload dev is $(workload_state dev)"
if grep -q "max_lag.*exceeded" "$SOAKD_LOG"; then
	fail "the freeze failed the run: $(grep "max_lag" "$SOAKD_LOG")"
fi
grep "soakd itself was stopped or starved" "$SOAKD_LOG" | head -1 | sed 's/^/# /'
frozen_end=$(intervals)

# 2. CPU starvation: soakd in a cgroup allowed 1 ms of CPU a second.
CG=
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
		echo +cpu >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
	CG=/sys/fs/cgroup/soakd-genlate.$$
	mkdir "$CG" 2>/dev/null && echo "1000 1000000" >"$CG/cpu.max" 2>/dev/null || CG=
elif [[ -d /sys/fs/cgroup/cpu ]]; then
	CG=/sys/fs/cgroup/cpu/soakd-genlate.$$
	mkdir "$CG" 2>/dev/null && echo 1000000 >"$CG/cpu.cfs_period_us" &&
		echo 1000 >"$CG/cpu.cfs_quota_us" || CG=
fi
[[ -n $CG ]] || skip_unless_strict "cannot make a cgroup with a CPU quota"
ORIG_CG=$(awk -F: '$2 == "cpu" || $2 == "cpu,cpuacct" || $2 == "cpuacct,cpu" || $1 == "0" {print $3; exit}' "/proc/$SOAKD_PID/cgroup")
move_back() {
	local root=${CG%/*}
	echo "$SOAKD_PID" >"$root${ORIG_CG}/cgroup.procs" 2>/dev/null || echo "$SOAKD_PID" >"$root/cgroup.procs" 2>/dev/null || true
	rmdir "$CG" 2>/dev/null || true
}
on_exit move_back
starved_from=$(intervals)
echo "$SOAKD_PID" >"$CG/cgroup.procs" || fail "cannot move soakd into $CG"
note "soakd in $CG for 5 s"
sleep 5
move_back
wait_until 30 "intervals after the starvation" at_least $((starved_from + 8))
is_alive "$SOAKD_PID" || fail "soakd exited after starving: $(tail -5 "$SOAKD_LOG")"

# 3. soakctl report flags the intervals and does not pass.
rc=0
ctl report >"$WORK/report.txt" 2>&1 || rc=$?
sed 's/^/# report: /' "$WORK/report.txt"
grep -q "generator_late" "$WORK/report.txt" || fail "soakctl report does not flag generator_late"
grep -q "verdict: PASS" "$WORK/report.txt" && fail "soakctl report passes over generator_late intervals"
((rc != 0)) || fail "soakctl report exited 0"

# 4. The dump's CSV: issue delay per op and interval, and the late ones.
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 - "$WORK/dump.csv" "$normal" <<'PY' || fail "the CSV has no issue delay or generator_late"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
normal = int(sys.argv[2])
for col in ("issue_delay_p50_us", "issue_delay_p99_us", "issue_delay_max_us", "generator_late_ms"):
    if col not in rows[0]:
        sys.exit(f"no column {col}")
early = [r for r in rows if float(r["start_s"]) >= 1 and float(r["end_s"]) <= normal]
for r in early:
    print(f"# normal load: {r['op']} {r['start_s']}-{r['end_s']} s: issue_delay p50 "
          f"{r['issue_delay_p50_us']} us, p99 {r['issue_delay_p99_us']} us, max "
          f"{r['issue_delay_max_us']} us")
if not any(float(r["generator_late_ms"]) > 0 for r in rows):
    sys.exit("no row with generator_late_ms")
# The ops due in the 12 s freeze went out when soakd woke: their issue
# delay is soakd's own lateness, whatever completions it reaped first.
worst = max(float(r["issue_delay_max_us"] or 0) for r in rows)
print(f"# the largest issue_delay_max_us: {worst:.0f}")
if worst < 5e6:
    sys.exit(f"the 12 s freeze is not in issue_delay_us: its largest max is {worst:.0f} us")
PY

stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

python3 - "$LOG" "$normal" "$frozen_end" "$starved_from" <<'PY' || fail "generator_late not as expected"
import json, sys
sys.path.insert(0, "")
log, normal, frozen_end, starved_from = sys.argv[1], *map(int, sys.argv[2:])
ivs = []
for line in open(log).read().splitlines()[1:]:
    rec = json.loads(line.split(" ", 1)[1])
    if rec["type"] == "interval":
        ivs.append(rec)
problems = []
for i, r in enumerate(ivs):
    late = r.get("generator_late")
    ops = r["ops"]
    print(f"# {i:3d} {r['start_ns']/1e9:6.1f}s count={sum(o['count'] for o in ops.values()):4d} "
          f"cpu_s={r.get('cpu_s', 0):.4f} frozen_ms={r.get('frozen_ms', 0):8.1f} "
          f"lag_ms={r['lag_max_ns']/1e6:8.1f} issue_delay={'yes' if any('issue_delay' in o for o in ops.values()) else 'no'} "
          f"late={late} {r.get('generator_late_ms', '')}")
    if "cpu_s" not in r or "main_cpu_s" not in r:
        problems.append(f"interval {i}: no cpu_s or main_cpu_s")
before = ivs[1:normal]
if not any("issue_delay" in o for r in before for o in r["ops"].values()):
    problems.append("no issue_delay histogram in the intervals before the freeze")
frozen = [r for r in ivs[normal:frozen_end] if r.get("generator_late")]
if len(frozen) < 8:
    problems.append(f"only {len(frozen)} generator_late intervals over a 12 s SIGSTOP")
starved = [r for r in ivs[starved_from:] if r.get("generator_late")]
if not starved:
    problems.append("no generator_late interval while soakd was starved of CPU")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY
