#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A flood on the control socket must not hold up the workloads nor lock
# out the operators.  While a rate-scheduled device workload runs on a file
# (2000 ops/s), thousands of connections (far more than CTL_MAX_CLIENTS,
# a few hundred a second) come and go sending garbage, oversized lines,
# half requests, a byte per second, or requests they never read the
# answers to (the storm of phase 0 is another test of the same promise,
# measured per interval):
#   - as nobody (the socket is made world-connectable for the test): root's
#     soakctl status must answer all along, from the slots kept for peers
#     that may change state; nobody gets "too many ..." past its share of
#     connections and "over the control socket's budget" past its 32
#     connections and requests a second;
#   - then as root: connections past CTL_MAX_CLIENTS get "too many clients".
# soakd closes the slow and half-open clients after its request timeout,
# logs refusals a few times rather than once each, answers status
# afterwards, and the workload's achieved rate stays within 1% of its
# target in every whole interval (dump --format csv).  The flooders run at
# nice 19 so that their own CPU does not count against soakd on a small
# machine: what is measured is what soakd's handling of them costs the
# workload.
source "$(dirname "$0")/lib.sh"

need_cmd python3
# A halted CPU waiting for a busy hypervisor would make soakd late (lib.sh).
keep_cpus_awake
FLOOD="$SRCDIR/tests/integration/ctl_flood.py"
RATE=2000
# Intervals of 5 s: an op late by a few ms on a busy machine, whatever
# the cause, completes in the next interval; at 1 s a 10 ms hiccup of the
# scheduler alone would move 1% of the ops.
INTERVAL=5
DURATION=45

# The unprivileged flooders: uids without a name, no groups.
FLOOD_UIDS=(61001 61002 61003 61004 61005)
as_uid() { setpriv --reuid="$1" --regid="$1" --clear-groups "${@:2}"; }
unprivileged=no
if [[ $(id -u) == 0 ]] && command -v setpriv >/dev/null &&
	# python3 may be a shim under root's home; the system's is reachable.
	as_uid "${FLOOD_UIDS[0]}" /usr/bin/python3 -c 'import selectors' 2>/dev/null &&
	as_uid "${FLOOD_UIDS[0]}" test -r "$FLOOD"; then
	unprivileged=yes
else
	note "cannot switch to other uids: the flood runs as $(id -un) only"
fi
chmod 755 "$WORK"
mkdir -m 1777 "$WORK/flood" "$WORK/storm"

# The data file in RAM where tmpfs takes O_DIRECT (Linux 6.6 and later):
# the shared disk's hiccups would move ops across interval boundaries and
# hide what the test looks for.
ram_file DATA steady.dat

# Phase 0, the storm: one unprivileged uid connects STORM_RATE times a
# second, each connection sending status requests and closing at once,
# while a device workload runs at a fixed rate in 1 s intervals.  soakd
# must spend a bounded share of its main thread on it (its budget refuses
# the excess cheaply), root's soakctl status must answer all along, and
# the workload's achieved rate must stay within 1% of its target in every
# interval of the storm: per interval, not in total (but for an interval
# in which the hypervisor held a CPU, below).  The flooder runs at
# nice 0, as any user's process would.
STORM_RATE=15000
STORM_SECONDS=30
STORM_BEFORE=8
STORM_DURATION=$((STORM_BEFORE + STORM_SECONDS + 6))
# What soakd's main thread may spend on the storm, in % of a core.  An
# accepted and refused connection costs what the machine makes it: on a
# 2-vCPU VM of 2026-11-29 (the ASan build), 20% alone and 27% within the
# suite; with the budget broken (every request answered), 77%.  The bound
# tells the two apart on slower machines too.
STORM_MAIN_CPU_MAX=40

# user + system time of a process's main thread, in clock ticks.
main_thread_ticks() {
	local stat fields
	stat=$(cat "/proc/$1/task/$1/stat") || fail "soakd's main thread is gone"
	stat=${stat##*) }
	read -r -a fields <<<"$stat"
	# utime and stime are fields 14 and 15; the array starts at field 3.
	echo $((fields[11] + fields[12]))
}

storm_phase() {
	local cfg="$WORK/storm.json" data
	ram_file data storm.dat
	cat >"$cfg" <<EOF
{
  "run": {"name": "storm", "duration": "${STORM_DURATION}s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "storm", "type": "device", "model": "pattern", "targets": ["$data"],
     "file_size": "16MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
     "queue_depth": 8, "rate": $RATE}
  ]
}
EOF
	start_soakd --config "$cfg" --socket "$SOCK" --state-dir "$WORK/storm-state" --no-table
	wait_until 15 "the control socket" ctl_answers
	wait_until 10 "workload storm to run" workload_is storm running
	chmod 0666 "$SOCK"
	# Calm intervals first, to compare the device's p99 with (not a wait
	# for a condition: the intervals are what is measured).
	sleep "$STORM_BEFORE"

	# Run as root (CAP_SYS_NICE): the main thread SCHED_BATCH, the
	# workload's thread nice -10 (soakd(8), CPU).
	local task tid stat fields prio="" main_policy=""
	for task in "/proc/$SOAKD_PID/task"/*; do
		tid=${task##*/}
		stat=$(cat "$task/stat" 2>/dev/null) || continue
		read -r -a fields <<<"${stat##*) }"
		# nice and policy: fields 19 and 41; the array starts at 3.
		prio+=" $tid:${fields[16]}/${fields[38]}"
		[[ $tid == "$SOAKD_PID" ]] && main_policy=${fields[38]}
	done
	note "soakd's threads (tid:nice/policy):$prio"
	local problems=()
	((main_policy == 3)) || problems+=("soakd's main thread runs policy $main_policy, not SCHED_BATCH (3)")
	[[ $prio == *:-10/0* ]] || problems+=("no thread of soakd runs SCHED_OTHER at nice -10")

	local main_before main_after t_start t_end
	main_before=$(main_thread_ticks "$SOAKD_PID")
	t_start=$(now_ns)
	spawn "$WORK/storm-flooder.log" as_uid "${FLOOD_UIDS[0]}" /usr/bin/python3 "$FLOOD" --storm \
		"$SOCK" "$STORM_SECONDS" "$STORM_RATE" "$WORK/storm/stats.json"
	local flooder=$SPAWNED probes=0 probe_failures=0 slowest_ms=0 ms t0
	while is_alive "$flooder"; do
		t0=$(now_ns)
		if ctl status --json >/dev/null 2>"$WORK/probe.err"; then
			ms=$((($(now_ns) - t0) / 1000000))
			((ms > slowest_ms)) && slowest_ms=$ms
		else
			probe_failures=$((probe_failures + 1))
			note "root's status during the storm failed: $(cat "$WORK/probe.err")"
		fi
		probes=$((probes + 1))
		sleep 0.5
	done
	t_end=$(now_ns)
	main_after=$(main_thread_ticks "$SOAKD_PID")
	wait "$flooder" || fail "the storm's flooder failed: $(cat "$WORK/storm-flooder.log")"
	local cpu_pct=$(((main_after - main_before) * 100 * 1000000000 / $(getconf CLK_TCK) / (t_end - t_start)))
	python3 - "$WORK/storm/stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"# the storm: {s['opened'] / s['seconds']:.0f} connections/s made, {s['connect_eagain']} found "
      f"the backlog full; of {s['sampled']} sampled, {s['sampled_ok']} answered, "
      f"{s['sampled_refused']} refused: {s['sampled_messages']}")
PY
	note "soakd's main thread during the storm: ${cpu_pct}% of a core (at most $STORM_MAIN_CPU_MAX%)"
	note "root's status during the storm: $probes asked, $probe_failures failed, slowest ${slowest_ms} ms"
	{ grep "over budget" "$SOAKD_LOG" || true; } | head -3 | sed "s/^/# soakd said: /"

	wait_until $((STORM_DURATION + 15)) "workload storm to finish" workload_is storm finished
	ctl dump --format csv >"$WORK/storm.csv" || fail "soakctl dump --format csv failed"
	stop_soakd 10
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"

	((probe_failures == 0)) || problems+=("root's status was refused or lost during the storm")
	((slowest_ms < 1000)) || problems+=("root's status took ${slowest_ms} ms during the storm")
	((cpu_pct <= STORM_MAIN_CPU_MAX)) ||
		problems+=("soakd's main thread spent ${cpu_pct}% of a core on the storm")
	# The whole intervals of the storm: start_s and end_s count from the
	# run's start, which is the workload's; the storm began STORM_BEFORE s
	# later (plus start-up).  One interval of margin at either end.
	python3 - "$WORK/storm.csv" "$RATE" "$STORM_BEFORE" "$STORM_SECONDS" <<'PY' ||
import csv, sys
rate, before, seconds = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
by_interval = {}
for r in csv.DictReader(open(sys.argv[1])):
    if r["workload"] != "storm":
        continue
    start, end = float(r["start_s"]), float(r["end_s"])
    if end - start < 0.999:
        continue  # not a whole interval
    by_interval.setdefault((start, end), []).append(r)
storm = {k: v for k, v in by_interval.items() if k[0] >= before + 1 and k[1] <= before + seconds}
calm = {k: v for k, v in by_interval.items() if k[0] >= 1 and k[1] <= before}
def p99(ops):
    return max(float(o["latency_p99_us"]) for o in ops)
def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")
# The hypervisor's steal in an interval (the host columns beside its rows):
# a virtual CPU it holds for 50 ms moves 5% of an interval's ops into the
# next one, which is the host's doing, not the storm's.  Such an interval
# is excused when the host stole at least STEAL_PCT of all CPUs' time in
# it or a neighbour (a freeze straddles the boundary); one on a quiet host
# fails.  A shift loses no op: the storm's total must still be the target.
STEAL_PCT = 2.0
def steal(key):
    try:
        return max(float(o["host_cpu_steal_pct"] or 0) for o in by_interval.get(key, []))
    except ValueError:
        return 0.0
problems, worst, excused, total, span = [], 0.0, [], 0, 0.0
for (start, end), ops in sorted(storm.items()):
    n = sum(int(o["count"]) for o in ops)
    total += n
    span += end - start
    achieved = n / (end - start)
    dev = abs(achieved - rate) / rate
    if dev > 0.01:
        stolen = max(steal((start - 1, start)), steal((start, end)), steal((end, end + 1)))
        if stolen >= STEAL_PCT:
            excused.append(f"[{start:g}, {end:g}) s: {achieved:.0f} ops/s, {stolen:.1f}% stolen")
            continue
        problems.append(f"[{start:g}, {end:g}) s: {achieved:.0f} ops/s against {rate:.0f} "
                        f"(the host stole {stolen:.1f}% of the CPU about then)")
    worst = max(worst, dev)
    for o in ops:
        if int(o["errors"]):
            problems.append(f"[{start:g}, {end:g}) s {o['op']}: {o['errors']} errors")
if span and abs(total / span - rate) / rate > 0.002:
    problems.append(f"the storm's intervals did {total} ops in {span:g} s, "
                    f"{total / span:.1f} ops/s against {rate:.0f}")
print("# ops/s per interval during the storm: " + " ".join(
    f"{sum(int(o['count']) for o in ops) / (e - s):.0f}" for (s, e), ops in sorted(storm.items())))
print("# the host's steal per interval (% of all CPUs): " + " ".join(
    f"{steal(k):.1f}" for k in sorted(storm)))
print(f"# worst deviation from the target during the storm, on a quiet host: {100 * worst:.2f}%")
for e in excused:
    print(f"# excused, the hypervisor held a CPU: {e}")
if len(excused) > len(storm) // 3:
    print(f"# {len(excused)} of {len(storm)} intervals excused: this host cannot time the storm now")
print(f"# device p99 latency, median over the intervals: before the storm "
      f"{median([p99(o) for o in calm.values()]):.0f} us, during it "
      f"{median([p99(o) for o in storm.values()]):.0f} us (worst interval "
      f"{max([p99(o) for o in storm.values()] or [0]):.0f} us)")
if len(storm) < seconds - 3:
    problems.append(f"only {len(storm)} whole intervals in the storm")
sys.exit("\n".join(problems) or None)
PY
		problems+=("the workload's rate left 1% of its target during the storm (above)")
	SOAKD_PID=
	((${#problems[@]} == 0)) || fail "$(printf '%s\n' "${problems[@]}")"
}

if [[ $unprivileged == yes ]]; then
	storm_phase
else
	note "the storm needs root, to run its flooder as another uid: not run"
fi

CFG="$WORK/flood.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "flood", "duration": "${DURATION}s", "interval": "${INTERVAL}s", "on_finish": "idle"},
  "workloads": [
    {"name": "steady", "type": "device", "model": "pattern", "targets": ["$DATA"],
     "file_size": "16MiB", "read_pct": 70, "block_size": "4KiB", "access": "random",
     "queue_depth": 8, "rate": $RATE}
  ]
}
EOF
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 10 "workload steady to run" workload_is steady running

# Phase 1: five unprivileged uids flood for 14 s (past the 10 s request
# timeout), more than their share of connections, while root asks for
# status twice a second.
if [[ $unprivileged == yes ]]; then
	chmod 0666 "$SOCK"
	flood_pids=()
	for uid in "${FLOOD_UIDS[@]}"; do
		spawn "$WORK/flood-$uid.log" as_uid "$uid" nice -n 19 /usr/bin/python3 "$FLOOD" "$SOCK" 14 40 \
			"$WORK/flood/$uid.json"
		flood_pids+=("$SPAWNED")
	done
	probes=0 probe_failures=0 slowest_ms=0
	while is_alive "${flood_pids[0]}"; do
		t0=$(now_ns)
		if ctl status --json >/dev/null 2>"$WORK/probe.err"; then
			ms=$((($(now_ns) - t0) / 1000000))
			((ms > slowest_ms)) && slowest_ms=$ms
		else
			probe_failures=$((probe_failures + 1))
			note "status during the flood failed: $(cat "$WORK/probe.err")"
		fi
		probes=$((probes + 1))
		sleep 0.5
	done
	for pid in "${flood_pids[@]}"; do
		wait_until 10 "the flooders to end" not_alive "$pid"
		wait "$pid" || fail "a flooder failed: $(cat "$WORK"/flood-*.log)"
	done
	note "root's status during the flood: $probes asked, $probe_failures failed, slowest ${slowest_ms} ms"
	((probe_failures == 0)) || fail "root's status was refused or lost during the flood"
	((slowest_ms < 2000)) || fail "root's status took ${slowest_ms} ms during the flood"
	python3 - "$WORK"/flood/*.json <<'PY' || fail "the unprivileged flood: $(cat "$WORK"/flood/*.json)"
import json, sys
total = {"opened": 0, "refused_busy": 0, "over_budget": 0, "error_lines": 0, "ok_lines": 0}
closed, life_max, messages = {}, {}, set()
for path in sys.argv[1:]:
    s = json.load(open(path))
    for k in total:
        total[k] += s[k]
    for role, n in s["closed_by_soakd"].items():
        closed[role] = closed.get(role, 0) + n
    for role, t in s["lifetime_max"].items():
        life_max[role] = max(life_max.get(role, 0), t)
    messages.update(s["busy_messages"])
print(f"# the unprivileged flood: {total['opened']} connections, {total['refused_busy']} refused "
      f"busy, {total['over_budget']} over budget, {total['ok_lines']} answers, {total['error_lines']} error lines; closed by soakd: "
      f"{closed}; longest lives: "
      f"{ {k: round(v, 1) for k, v in life_max.items()} }")
for m in sorted(messages):
    print(f"#   {m}")
problems = []
if total["opened"] < 200:
    problems.append(f"only {total['opened']} connections opened")
if not any("at most 8" in m for m in messages):
    problems.append("no uid was held to its 8 connections")
if not any("without the right to change state" in m for m in messages):
    problems.append("the unprivileged peers were not held to their share")
# Each uid's connections use up its budget (32 a second): its pipelined
# requests are refused, one line and closed (phase 2 has root's answered).
if total["over_budget"] == 0:
    problems.append("no connection or request was refused over budget")
for role in ("slow", "half_open", "oversized"):
    if not closed.get(role):
        problems.append(f"soakd closed no {role} client")
for role in ("slow", "half_open"):
    # The request timeout is 10 s; the sweep runs every second.
    if life_max.get(role, 0) > 12.5:
        problems.append(f"a {role} client lived {life_max[role]:.1f} s")
if total["error_lines"] == 0:
    problems.append("garbage got no error lines")
sys.exit("\n".join(problems) or None)
PY
fi

# Phase 2: root opens connections past CTL_MAX_CLIENTS.
nice -n 19 python3 "$FLOOD" "$SOCK" 4 150 "$WORK/flood-root.json" silent,garbage,pipeline,oversized ||
	fail "the root flooder failed"
python3 - "$WORK/flood-root.json" <<'PY' || fail "root's flood: $(cat "$WORK/flood-root.json")"
import json, sys
s = json.load(open(sys.argv[1]))
print(f"# root's flood: {s['opened']} connections, {s['refused_busy']} refused busy "
      f"({'; '.join(s['busy_messages'])}), {s['ok_lines']} answers, {s['error_lines']} errors")
if not any("too many clients connected" in m for m in s["busy_messages"]):
    sys.exit("no 'too many clients connected' past CTL_MAX_CLIENTS")
if s["ok_lines"] == 0:
    sys.exit("the pipelined status requests got no answers")
PY

# Afterwards: status answers at once.
wait_until 5 "status after the flood" ctl_answers
refusals=$(grep -c "refused" "$SOAKD_LOG" || true)
note "soakd logged $refusals refusal line(s)"
((refusals <= 12)) || fail "soakd logged $refusals refusal lines: refusals must be rate-limited"

wait_until $((DURATION + 15)) "workload steady to finish" workload_is steady finished
ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
python3 - "$WORK/dump.csv" "$RATE" "$INTERVAL" "$DURATION" <<'PY' || fail "the workload's rate did not hold: $(cat "$WORK/dump.csv")"
import csv, sys
rate, interval, duration = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = list(csv.DictReader(open(sys.argv[1])))
by_interval = {}
for r in rows:
    if r["workload"] != "steady":
        continue
    start, end = float(r["start_s"]), float(r["end_s"])
    if end - start < interval - 0.001:
        continue  # not a whole interval
    by_interval.setdefault((start, end), []).append(r)
problems = []
worst = 0.0
for (start, end), ops in sorted(by_interval.items()):
    achieved = sum(int(o["count"]) for o in ops) / (end - start)
    target = sum(float(o["rate_target"]) for o in ops)
    if abs(target - rate) > 0.001 * rate:
        problems.append(f"[{start}, {end}): target {target}, expected {rate}")
    dev = abs(achieved - target) / target
    worst = max(worst, dev)
    if dev > 0.01:
        problems.append(f"[{start}, {end}): {achieved:.0f} ops/s against {target:.0f}")
    for o in ops:
        if int(o["errors"]):
            problems.append(f"[{start}, {end}) {o['op']}: {o['errors']} errors")
print(f"# {len(by_interval)} whole intervals of {interval:g} s, ops/s: "
      + " ".join(f"{sum(int(o['count']) for o in ops) / (e - s):.0f}"
                 for (s, e), ops in sorted(by_interval.items())))
print(f"# worst deviation from the target: {100 * worst:.2f}%")
if len(by_interval) < duration / interval - 1:
    problems.append(f"only {len(by_interval)} whole intervals")
sys.exit("\n".join(problems) or None)
PY

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
