#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd's StatsD lines as the reference StatsD server (etsy's statsd, from
# npm) aggregates them, flushing every second into a JSON backend of the
# test's own: each .latency timer counts as the ops it stands for (its
# sample rate), so StatsD's timer counts add up to the dump's successful
# ops; counters add up to the dump's totals; minlatency is there, as
# aisloader sends it; and once the run is over its gauges read 0, not the
# last interval's rates.
source "$(dirname "$0")/lib.sh"

need_cmd python3 node npm

# The server, pinned, installed once per build directory.
STATSD_DIR="$BUILDDIR/statsd-server"
STATSD_VERSION=0.9.0
if [[ ! -f $STATSD_DIR/node_modules/statsd/stats.js ]] ||
	[[ $(node -p "require('$STATSD_DIR/node_modules/statsd/package.json').version" 2>/dev/null) != "$STATSD_VERSION" ]]; then
	mkdir -p "$STATSD_DIR"
	timeout 180 npm install --no-audit --no-fund --omit=optional --prefix "$STATSD_DIR" \
		"statsd@$STATSD_VERSION" >"$WORK/npm.log" 2>&1 ||
		skip "cannot install statsd@$STATSD_VERSION from npm: $(tail -n 3 "$WORK/npm.log")"
fi

PORT=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$WORK/statsd.js" <<JS
{ port: $PORT, address: "127.0.0.1", flushInterval: 1000, deleteIdleStats: false,
  backends: ["$SRCDIR/tests/integration/statsd_json_backend.js"],
  jsonBackend: { path: "$WORK/flushes.jsonl" } }
JS
spawn "$WORK/statsd.log" node "$STATSD_DIR/node_modules/statsd/stats.js" "$WORK/statsd.js"
wait_until 15 "StatsD's first flush" test -s "$WORK/flushes.jsonl"

cat >"$WORK/run.json" <<JSON
{
  "run": {"name": "etsy", "duration": "4s", "interval": "1s", "on_finish": "idle",
          "exports": {"statsd": {"address": "127.0.0.1:$PORT", "prefix": "soak"}}},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/w.dat"],
     "file_size": "16MiB", "read_pct": 70, "block_size": "4KiB", "queue_depth": 8,
     "rate": 800}
  ]
}
JSON
start_soakd --config "$WORK/run.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the workload to finish" workload_is w finished
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"

# What StatsD made of it: wait until its flushes hold the whole run and
# the gauges' end.
check() {
	python3 - "$WORK/dump.json" "$WORK/flushes.jsonl" "$1" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
final = sys.argv[3] == "final"
flushes = [json.loads(line) for line in open(sys.argv[2])]
problems = []
counters, timer_counts, gauges = {}, {}, {}
for f in flushes:
    for name, v in f["counters"].items():
        counters[name] = counters.get(name, 0) + v
    for name, t in f["timer_data"].items():
        timer_counts[name] = timer_counts.get(name, 0) + t["count"]
    gauges.update(f["gauges"])
if counters.get("statsd.bad_lines_seen", 0):
    problems.append(f"StatsD saw {counters['statsd.bad_lines_seen']} bad lines")
for op, o in dump["workloads"][0]["ops"].items():
    if counters.get(f"soak.w.{op}.count") != o["count"]:
        problems.append(f"soak.w.{op}.count adds up to {counters.get(f'soak.w.{op}.count')}, dump says {o['count']}")
    ok = o["count"] + o.get("missed", 0)  # missed ops' waits are timed too
    got = timer_counts.get(f"soak.w.{op}.latency", 0)
    if abs(got - ok) > 0.01:
        problems.append(f"StatsD counted {got} soak.w.{op}.latency samples, the dump {ok} successful ops")
    if not timer_counts.get(f"soak.w.{op}.minlatency"):
        problems.append(f"no soak.w.{op}.minlatency")
    for g in ("rate", "rate_target", "throughput"):
        if gauges.get(f"soak.w.{op}.{g}") != 0:
            problems.append(f"soak.w.{op}.{g} is {gauges.get(f'soak.w.{op}.{g}')} after the run, not 0")
if gauges.get("soak.w.lag") != 0:
    problems.append(f"soak.w.lag is {gauges.get('soak.w.lag')} after the run, not 0")
if problems:
    if final:
        print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
print(f"# {len(flushes)} flushes; read: {counters.get('soak.w.read.count')} ops, "
      f"{timer_counts.get('soak.w.read.latency', 0):.3f} latency samples")
PY
}
# (Up to 15 s: StatsD flushes every second; a failure shows what is wrong.)
for _ in $(seq 150); do
	check wait >/dev/null && break
	sleep 0.1
done
check final || fail "what StatsD aggregated"

# A finished run's clock stopped: status shows the same elapsed time later.
elapsed() { ctl status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["elapsed_s"])'; }
wait_until 10 "the run to finish" sh -c "'$SOAKCTL' --socket '$SOCK' status --json | grep -q '\"state\": \"finished\"'"
first=$(elapsed)
sleep 1.5
second=$(elapsed)
[[ $first == "$second" ]] || fail "a finished run's elapsed time goes on: $first s, then $second s"
python3 -c "import sys; sys.exit(0 if 4 <= $first < 6 else 1)" || fail "a 4 s run finished after $first s"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
