#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# StatsD export: a UDP listener on 127.0.0.1 receives soakd's lines, named
# as aisloader names its own (<prefix>.<workload>.<op>.count|c,
# .latency|ms, .throughput|g, ...), with counters that add up to the totals
# of "soakctl dump", also under a prefix as long as the config takes
# (each op's lines then fill several KiB).  Then a StatsD address where
# nobody listens: sends fail, status counts them, and the run is not
# disturbed.
source "$(dirname "$0")/lib.sh"

need_cmd python3

spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/statsd_listen.py" \
	"$WORK/port" "$WORK/statsd.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the StatsD listener" test -s "$WORK/port"
PORT=$(cat "$WORK/port")

PAD=$(printf 'p%.0s' {1..110})
write_config() { # FILE RUN ADDRESS
	cat >"$1" <<EOF
{
  "run": {"name": "$2", "duration": "3s", "interval": "1s", "on_finish": "idle",
          "exports": {"statsd": {"address": "$3", "prefix": "soak.{host}.$PAD"}}},
  "workloads": [
    {"name": "w.1", "type": "device", "model": "pattern", "targets": ["$WORK/w.dat"],
     "file_size": "16MiB", "read_pct": 70, "block_size": "4KiB", "queue_depth": 8,
     "rate": 500}
  ]
}
EOF
}

write_config "$WORK/statsd.json" statsd "127.0.0.1:$PORT"
# The plan shows the exports, and the prefix as this host expands it.
"$SOAKD" --check-config "$WORK/statsd.json" --no-targets >"$WORK/plan.json" ||
	fail "--check-config: $(cat "$WORK/plan.json")"
python3 - "$WORK/plan.json" "127.0.0.1:$PORT" "$PAD" <<'EOF' || fail "plan: $(cat "$WORK/plan.json")"
import json, re, socket, sys
statsd = json.load(open(sys.argv[1]))["run"]["exports"]["statsd"]
host = re.sub(r"[^a-z0-9-]", "_", socket.gethostname().split(".")[0].lower())
pad = sys.argv[3]
want = {"address": sys.argv[2], "prefix": f"soak.{{host}}.{pad}",
        "prefix_on_this_host": f"soak.{host}.{pad}"}
if statsd != want:
    sys.exit(f"exports.statsd in the plan: {statsd}, expected {want}")
EOF
start_soakd --config "$WORK/statsd.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the workload to finish" workload_is w.1 finished
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"

# Every op's count lines add up to the dump's totals once the last
# interval has been sent.
counts_complete() {
	python3 - "$WORK/dump.json" "$WORK/statsd.jsonl" <<'EOF'
import json, sys
dump = json.load(open(sys.argv[1]))
sums = {}
ended = False
for rec in map(json.loads, open(sys.argv[2])):
    for line in rec["lines"]:
        ended = ended or line.endswith(".w_1.lag:0|g")
        name, _, rest = line.partition(":")
        if name.endswith(".count") and rest.endswith("|c"):
            sums[name] = sums.get(name, 0) + int(rest[:-2])
for op, o in dump["workloads"][0]["ops"].items():
    if sum(v for k, v in sums.items() if k.endswith(f".w_1.{op}.count")) != o["count"]:
        sys.exit(1)
sys.exit(0 if ended else 1)
EOF
}
wait_until 10 "StatsD counts to add up to the dump, and the gauges to go to 0" counts_complete
# What was sent for the run as configured, checked in full below.
cp "$WORK/statsd.jsonl" "$WORK/run.jsonl"

# A reload that gives w.1 other ops (reads only) and adds w.2: StatsD
# follows both (each slot's ops are sized anew).
python3 - "$WORK/statsd.json" <<'EOF'
import copy, json, sys
c = json.load(open(sys.argv[1]))
w = c["workloads"][0]
w["read_pct"] = 100
w2 = copy.deepcopy(w)
w2["name"], w2["targets"] = "w.2", [w["targets"][0].replace("w.dat", "w2.dat")]
c["workloads"].append(w2)
json.dump(c, open(sys.argv[1], "w"))
EOF
out=$(ctl reload) || fail "reload failed: $out"
note "reload: $(tr '\n' ' ' <<<"$out")"
w2_sent() { grep -q '\.w_2\.read\.count' "$WORK/statsd.jsonl"; }
wait_until 15 "StatsD lines of w.2" w2_sent
ctl status >/dev/null || fail "soakd does not answer after the reload"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
_kill_bg "$LISTENER"

python3 - "$WORK/dump.json" "$WORK/run.jsonl" "$PAD" <<'EOF' || fail "StatsD lines: $(head -c 3000 "$WORK/run.jsonl")"
import json, re, socket, sys

dump = json.load(open(sys.argv[1]))
records = [json.loads(line) for line in open(sys.argv[2])]
host = re.sub(r"[^a-z0-9-]", "_", socket.gethostname().split(".")[0].lower())
prefix = f"soak.{host}.{sys.argv[3]}.w_1."
problems = []

metrics = {}  # name -> [(value, type, sample rate)]
for rec in records:
    if rec["size"] > 1432:
        problems.append(f"a datagram of {rec['size']} bytes, more than 1432")
    for line in rec["lines"]:
        # A sample rate is plain decimals: StatsD servers read [0-9.] only.
        m = re.fullmatch(r"([a-z0-9_.-]+):(-?[0-9.]+)\|(c|ms|g)(?:\|@(0\.[0-9]+))?", line)
        if not m:
            problems.append(f"not a StatsD line: {line!r}")
            continue
        if not m.group(1).startswith(prefix):
            problems.append(f"{m.group(1)} does not start with {prefix}")
        if m.group(4) and m.group(3) != "ms":
            problems.append(f"a sample rate on a {m.group(3)} line: {line!r}")
        metrics.setdefault(m.group(1), []).append(
            (float(m.group(2)), m.group(3), float(m.group(4) or 1)))

def sent(name, kind):
    got = metrics.get(prefix + name, [])
    if not got:
        problems.append(f"no {prefix + name}")
    for v, k, _ in got:
        if k != kind:
            problems.append(f"{prefix + name} sent as |{k}, expected |{kind}")
    return got

def values(name, kind):
    return [v for v, _, _ in sent(name, kind)]

def gauges(name):
    """A gauge's values while the workload ran: after its end it is sent
    once more, as 0, so a dashboard does not keep the last rate."""
    got = values(name, "g")
    if not got or got[-1] != 0:
        problems.append(f"{prefix + name} not set to 0 at the end: {got[-3:]}")
    return got[:-1]

w = dump["workloads"][0]
for op, o in w["ops"].items():
    if sum(values(f"{op}.count", "c")) != o["count"]:
        problems.append(f"{op}.count adds up to {sum(values(f'{op}.count', 'c'))}, dump says {o['count']}")
    if sum(values(f"{op}.error", "c")) != o["errors"]:
        problems.append(f"{op}.error does not add up to {o['errors']}")
    if sum(values(f"{op}.missed", "c")) != o["missed"]:
        problems.append(f"{op}.missed does not add up to {o['missed']}")
    # aisloader's gauge of ops due and not completed; 0 once it ended.
    gauges(f"{op}.pending")
    lat = o["latency_us"]
    for name in ("latency", "minlatency", "maxlatency", "latency.p50", "latency.p90",
                 "latency.p99", "latency.p999"):
        for v in values(f"{op}.{name}", "ms"):
            if not lat["min"] / 1e3 * 0.99 <= v <= lat["max"] / 1e3 * 1.01:
                problems.append(f"{op}.{name} {v} ms outside the run's {lat['min']}..{lat['max']} us")
    # Each timer line stands for the successful (and missed) ops since the
    # last send: 1/@rate adds up to them, so a StatsD server counts the ops.
    samples = sum(1 / rate for _, _, rate in sent(f"{op}.latency", "ms"))
    timed = o["count"] + o["missed"]
    if abs(samples - timed) > 0.01:
        problems.append(f"{op}.latency stands for {samples} samples, dump says {timed} ops")
    # soakd's own lateness at issue: gauges of each interval's p99 and max.
    late_max = o["issue_delay_us"]["max"] / 1e3
    for name in ("issue_delay.p99", "issue_delay.max"):
        for v in gauges(f"{op}.{name}"):
            if not 0 <= v <= late_max * 1.01 + 0.001:
                problems.append(f"{op}.{name} {v} ms, the run's largest is {late_max} ms")
    share = 0.7 if op == "read" else 0.3
    for v in gauges(f"{op}.rate_target"):
        if abs(v - 500 * share) > 500 * share * 0.05:
            problems.append(f"{op}.rate_target {v}, expected {500 * share}")
    rates = gauges(f"{op}.rate")
    if rates and max(rates) < 500 * share * 0.8:
        problems.append(f"{op}.rate never near its target: {rates}")
    for v in gauges(f"{op}.throughput"):
        if v > 0 and abs(v - 4096 * 500 * share) > 4096 * 500 * share * 0.3:
            problems.append(f"{op}.throughput {v} B/s, expected about {4096 * 500 * share}")
gauges("lag")
print(f"# {len(records)} datagrams, {sum(len(v) for v in metrics.values())} lines, "
      f"e.g. {prefix}read.count adds up to {sum(values('read.count', 'c'))}")
if problems:
    sys.exit("\n".join(sorted(set(problems))[:30]))
EOF

# Nobody listening: sends fail, are counted, and the run goes on to its end.
write_config "$WORK/nobody.json" nobody "127.0.0.1:$PORT"
start_soakd --config "$WORK/nobody.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the workload to finish" workload_is w.1 finished
ctl status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)["exports"]["statsd"]
print(f"# nobody listening: {s}")
sys.exit(0 if s["send_errors"] > 0 and s["datagrams"] + s["send_errors"] >= 3 else 1)' ||
	fail "status does not count failed StatsD sends"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC with nobody listening to StatsD"
grep -q 'StatsD at 127.0.0.1:[0-9]*: cannot send' "$SOAKD_LOG" || fail "the failing sends were not logged"
(($(grep -c 'StatsD at .*: cannot send' "$SOAKD_LOG") == 1)) || fail "failing sends logged more than once"
note "ok"
