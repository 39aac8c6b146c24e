#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A flood on the control socket must not hold up the workloads nor lock
# out the operators.  While a rate-scheduled device workload runs on a file
# (2000 ops/s), thousands of connections (far more than CTL_MAX_CLIENTS,
# a few hundred a second) come and go sending garbage, oversized lines,
# half requests, a byte per second, or requests they never read the
# answers to:
#   - as nobody (the socket is made world-connectable for the test): root's
#     soakctl status must answer all along, from the slots kept for peers
#     that may change state; nobody gets "too many ..." past its share;
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
mkdir -m 1777 "$WORK/flood"

# The data file in RAM where tmpfs takes O_DIRECT (Linux 6.6 and later):
# the shared disk's hiccups would move ops across interval boundaries and
# hide what the test looks for.
ram_file DATA steady.dat

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
total = {"opened": 0, "refused_busy": 0, "error_lines": 0, "ok_lines": 0}
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
      f"busy, {total['ok_lines']} answers, {total['error_lines']} error lines; closed by soakd: "
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
if total["ok_lines"] < 200:
    problems.append(f"the pipelined requests got {total['ok_lines']} answers")
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
