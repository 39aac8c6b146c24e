#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# StatsD counters across runs and restarts: what a UDP listener on
# 127.0.0.1 receives for each run adds up to that run's totals in "soakctl
# dump", never more.  Run A is cut short (its workload stopped at once, a
# few ops); "soakctl start --new-run" begins run B, whose first interval
# has more ops than A's whole run, so counts carried over from A would
# show as differences; soakd is then restarted in the middle of B and
# resumes it from its log, so a resend of B's first part would show as
# counts twice, and so would one after a reload that sets up the exports
# anew (a textfile added) with StatsD unchanged.
source "$(dirname "$0")/lib.sh"

need_cmd python3

spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/statsd_listen.py" \
	"$WORK/port" "$WORK/statsd.jsonl"
wait_until 10 "the StatsD listener" test -s "$WORK/port"
PORT=$(cat "$WORK/port")

cat >"$WORK/runs.json" <<EOF
{
  "run": {"name": "runs", "duration": "5s", "interval": "1s", "on_finish": "idle",
          "exports": {"statsd": {"address": "127.0.0.1:$PORT", "prefix": "soak"}}},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/w.dat"],
     "file_size": "16MiB", "read_pct": 70, "block_size": "4KiB", "queue_depth": 8,
     "rate": 400}
  ]
}
EOF

# check_sums DUMP FROM_LINE [final] [report]: the counters received from line
# FROM_LINE of the listener's file on add up to the dump's totals, op by op;
# "final" also wants the gauges set to 0 at the workload's end; "report"
# says what differs.
check_sums() {
	python3 - "$WORK/statsd.jsonl" "$@" <<'EOF'
import json, sys
out, dump, first = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
final = "final" in sys.argv[4:]
report = "report" in sys.argv[4:]
sums, samples, timers, ended, problems = {}, {}, 0, False, []
for rec in map(json.loads, open(out).readlines()[first:]):
    for line in rec["lines"]:
        if not line:
            continue
        name, _, rest = line.partition(":")
        value, _, kind = rest.partition("|")
        if line == "soak.w.lag:0|g":
            ended = True
        if kind == "c":
            if int(value) > 10**9:
                problems.append(f"counter line {line}: a negative difference sent as unsigned")
            sums[name] = sums.get(name, 0) + int(value)
        elif kind.startswith("ms") and name.endswith(".latency"):
            rate = kind.partition("@")[2]
            samples[name] = samples.get(name, 0) + (1 / float(rate) if rate else 1)
            timers += 1
for op, o in dump["workloads"][0]["ops"].items():
    for metric, key in (("count", "count"), ("error", "errors"), ("missed", "missed")):
        got = sums.get(f"soak.w.{op}.{metric}", 0)
        if got != o[key]:
            problems.append(f"{op}.{metric} adds up to {got}, the dump says {o[key]}")
    timed = o["count"] - o["errors"] + o["missed"]
    got = samples.get(f"soak.w.{op}.latency", 0)
    if abs(got - timed) > 0.01 * max(timers, 1):
        problems.append(f"{op}.latency stands for {got:.2f} samples, the dump says {timed}")
if final and not ended:
    problems.append("the gauges were not set to 0 at the end")
if problems and report:
    sys.exit("\n".join(problems))
if not problems and report:
    print("# " + ", ".join(f"{k}={v}" for k, v in sorted(sums.items())))
sys.exit(1 if problems else 0)
EOF
}
# wait_sums DUMP FROM_LINE: the last datagrams may still be on their way;
# then the sums, or what differs.
wait_sums() {
	local i
	for ((i = 0; i < 50; i++)); do
		check_sums "$1" "$2" final && break
		sleep 0.2
	done
	check_sums "$1" "$2" final report
}
lines_now() { wc -l <"$WORK/statsd.jsonl"; }
total_ops() { python3 -c 'import json, sys
print(sum(o["count"] for o in json.load(open(sys.argv[1]))["workloads"][0]["ops"].values()))' "$1"; }

# Run A: stopped at once, a few ops.
start_soakd --config "$WORK/runs.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
ctl stop w >/dev/null || fail "stop failed"
wait_until 10 "w to stop" workload_is w stopped
ctl dump --format json >"$WORK/dump-a.json" || fail "dump of run A failed"
wait_sums "$WORK/dump-a.json" 0 || fail "run A's StatsD counters"
A_OPS=$(total_ops "$WORK/dump-a.json")
((A_OPS > 0)) || fail "run A counted no ops: the case below tests nothing"
note "run A: $A_OPS ops"

# Run B, over a restart.
MARK=$(lines_now)
out=$(ctl start --new-run) || fail "start --new-run failed: $out"
b_counted() {
	python3 - "$WORK/statsd.jsonl" "$MARK" <<'EOF'
import json, sys
n = 0
for rec in map(json.loads, open(sys.argv[1]).readlines()[int(sys.argv[2]):]):
    n += sum(1 for line in rec["lines"] if line.startswith("soak.w.read.count:"))
sys.exit(0 if n >= 2 else 1)
EOF
}
wait_until 15 "two intervals of run B sent" b_counted
ctl dump --format json >"$WORK/dump-b1.json" || fail "dump of run B failed"
B1_OPS=$(total_ops "$WORK/dump-b1.json")
((B1_OPS > 2 * A_OPS)) || fail "run B's first intervals ($B1_OPS ops) are not past run A's $A_OPS"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "run B: $B1_OPS ops before the restart"

start_soakd --config "$WORK/runs.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
grep -q "resuming run runs" "$SOAKD_LOG" || fail "soakd did not resume run B"
# A reload that adds a Prometheus textfile sets up the exports anew; StatsD,
# at the same address and prefix, goes on from what was sent.
python3 - "$WORK/runs.json" "$WORK/runs.prom" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["run"]["exports"]["prometheus"] = {"textfile": sys.argv[2]}
json.dump(c, open(sys.argv[1], "w"))
EOF
out=$(ctl reload) || fail "reload failed: $out"
wait_until 10 "the textfile" test -s "$WORK/runs.prom"
wait_until 20 "w to finish" workload_is w finished
ctl dump --format json >"$WORK/dump-b.json" || fail "dump of run B failed"
wait_sums "$WORK/dump-b.json" "$MARK" || fail "run B's StatsD counters (from line $MARK)"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
