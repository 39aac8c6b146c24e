#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Prometheus export through Debian's real node_exporter: soakd writes its
# metrics file into node_exporter's textfile directory at every tick, and
# node_exporter, scraped with curl on loopback, serves soakd_* metrics with
# Prometheus' names and labels and the values "soakctl dump" gives, with no
# textfile scrape error at any time (the file is replaced atomically).  The
# textfile directory is missing at first: the run goes on, status says why,
# and the metrics appear once the directory does.  Then an object workload
# on a pool of two endpoints (nginx's WebDAV on two ports): its per-endpoint
# metrics pass promtool too, the latency a summary like soakd_latency_seconds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

need_cmd python3 curl promtool
NODE_EXPORTER=${NODE_EXPORTER:-/usr/bin/prometheus-node-exporter}
[[ -x $NODE_EXPORTER ]] || skip_unless_strict "needs $NODE_EXPORTER (Debian's prometheus-node-exporter)"

TEXTFILE_DIR="$WORK/textfile"
PROM="$TEXTFILE_DIR/soakd.prom"
CFG="$WORK/prom.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "prom", "duration": "4s", "interval": "1s", "on_finish": "idle",
          "exports": {"prometheus": {"textfile": "$PROM"}}},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern",
     "targets": ["$WORK/a.dat", "$WORK/b.dat"], "file_size": "16MiB",
     "read_pct": 70, "block_size": "4KiB", "queue_depth": 8, "rate": 600}
  ]
}
EOF

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT/metrics"

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers

# No directory yet: the run goes on and says why in status.
prom_failing() {
	ctl status --json | python3 -c '
import json, sys
p = json.load(sys.stdin).get("exports", {}).get("prometheus", {})
sys.exit(0 if p.get("failures", 0) > 0 and "error" in p else 1)'
}
wait_until 10 "status to report the missing textfile directory" prom_failing
workload_is w running || fail "the workload stopped although only its export failed"
mkdir "$TEXTFILE_DIR"
wait_until 10 "$PROM" test -s "$PROM"
[[ $(stat -c %a "$PROM") == 644 ]] || fail "$PROM has mode $(stat -c %a "$PROM"), node_exporter may not read it"

spawn "$WORK/node_exporter.log" "$NODE_EXPORTER" --web.listen-address="127.0.0.1:$PORT" \
	--collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$TEXTFILE_DIR"
scrape() { curl -sf --max-time 5 "$URL" >"$1"; }
wait_until 15 "node_exporter on $URL" scrape "$WORK/first.txt"

# Scrape while the file is replaced every second: never an error, and the
# counters never go back.
n=0
while workload_is w running; do
	scrape "$WORK/scrape.$n.txt" || fail "scrape $n of $URL failed"
	n=$((n + 1))
	((n < 200)) || fail "the workload ran for too long"
	sleep 0.05
done
note "$n scrapes while the workload ran"
python3 - "$WORK" "$n" <<'EOF' || fail "scrapes during the run"
import re, sys
work, n = sys.argv[1], int(sys.argv[2])
last = {}
for i in range(n):
    text = open(f"{work}/scrape.{i}.txt").read()
    m = re.search(r"^node_textfile_scrape_error (\S+)$", text, re.M)
    if not m or float(m.group(1)) != 0:
        sys.exit(f"scrape {i}: node_textfile_scrape_error is {m.group(1) if m else 'missing'}")
    for op, v in re.findall(r'^soakd_ops_total\{[^}]*op="(\w+)"[^}]*\} (\S+)$', text, re.M):
        if float(v) < last.get(op, 0):
            sys.exit(f"scrape {i}: soakd_ops_total for {op} went back from {last[op]} to {v}")
        last[op] = float(v)
if not last:
    sys.exit("no soakd_ops_total in any scrape")
EOF

wait_until 15 "the workload to finish" workload_is w finished
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
# The next tick writes the final totals.
final_written() {
	scrape "$WORK/final.txt" && python3 - "$WORK/dump.json" "$WORK/final.txt" <<'EOF'
import json, re, sys
dump = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
# node_exporter sorts labels by name.
for op, o in dump["workloads"][0]["ops"].items():
    m = re.search(r'^soakd_ops_total\{op="%s",run="prom",workload="w"\} (\S+)$' % op, text, re.M)
    if not m or int(float(m.group(1))) != o["count"]:
        sys.exit(1)
EOF
}
wait_until 10 "node_exporter to serve the run's final totals" final_written

# Prometheus' own linter on the file soakd wrote and on what node_exporter
# serves from it (names, types, units, a summary's quantile label).
promtool check metrics <"$PROM" >"$WORK/promtool.txt" 2>&1 ||
	fail "promtool check metrics $PROM: $(cat "$WORK/promtool.txt")"
grep '^soakd_\|^# [A-Z]* soakd_' "$WORK/final.txt" | promtool check metrics >"$WORK/promtool.txt" 2>&1 ||
	fail "promtool check metrics on node_exporter's soakd_ metrics: $(cat "$WORK/promtool.txt")"

python3 - "$WORK/dump.json" "$WORK/final.txt" "$PROM" <<'EOF' || fail "metrics served by node_exporter"
import json, re, sys

dump = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read()
prom_path = sys.argv[3]
problems = []

samples = {}   # name -> [(labels dict, value)]
types = {}
for line in text.splitlines():
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split(" ", 3)
        types[name] = kind
        continue
    if not line or line.startswith("#"):
        continue
    m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
    if not m:
        problems.append(f"unparsable line {line!r}")
        continue
    labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
    samples.setdefault(m.group(1), []).append((labels, float(m.group(3))))

def get(name, **want):
    found = [v for labels, v in samples.get(name, []) if all(labels.get(k) == w for k, w in want.items())]
    if len(found) != 1:
        problems.append(f"{name}{want}: {len(found)} samples")
        return None
    return found[0]

if get("node_textfile_scrape_error") != 0:
    problems.append("node_textfile_scrape_error is not 0")
get("node_textfile_mtime_seconds", file=prom_path)

expected_types = {
    "soakd_ops_total": "counter", "soakd_errors_total": "counter", "soakd_bytes_total": "counter",
    "soakd_rate_ops_per_second": "gauge", "soakd_rate_scheduled_ops_per_second": "gauge",
    "soakd_latency_seconds": "summary", "soakd_lag_seconds": "gauge",
    "soakd_workload_state": "gauge", "soakd_run_info": "gauge",
    "soakd_run_start_time_seconds": "gauge", "soakd_target_ops_total": "counter",
    "soakd_issue_delay_seconds": "summary",
}
for name, kind in expected_types.items():
    if types.get(name) != kind:
        problems.append(f"{name} has TYPE {types.get(name)}, expected {kind}")

w = dump["workloads"][0]
for op, o in w["ops"].items():
    lab = dict(run="prom", workload="w", op=op)
    for metric, key in (("soakd_ops_total", "count"), ("soakd_errors_total", "errors"),
                        ("soakd_bytes_total", "bytes")):
        v = get(metric, **lab)
        if v is not None and int(v) != o[key]:
            problems.append(f"{metric}{lab} = {v}, dump says {o[key]}")
    # The last interval's quantiles: present, in seconds, in order, and
    # within the run's range (the dump's totals in µs).
    qs = [get("soakd_latency_seconds", quantile=q, **lab) for q in ("0.5", "0.9", "0.99", "0.999", "1")]
    if None not in qs:
        if qs != sorted(qs) or qs[0] <= 0:
            problems.append(f"latency quantiles of {op} out of order: {qs}")
        if qs[-1] > o["latency_us"]["max"] / 1e6 * 1.01 or qs[0] < o["latency_us"]["min"] / 1e6 * 0.99:
            problems.append(f"latency of {op} {qs} outside the run's range {o['latency_us']}")
    # The summary's _sum and _count run from the start, over successful
    # ops and missed ones (their waits are latency too).
    count = get("soakd_latency_seconds_count", **lab)
    total = get("soakd_latency_seconds_sum", **lab)
    timed = o["count"] + o.get("missed", 0)
    if count is not None and int(count) != timed:
        problems.append(f"soakd_latency_seconds_count{lab} = {count}, dump says {timed}")
    if count and total is not None and abs(total / count * 1e6 - o["latency_us"]["mean"]) > 0.01 * o["latency_us"]["mean"] + 1:
        problems.append(f"mean latency of {op} from the summary {total / count * 1e6} us, dump says {o['latency_us']['mean']}")
    # soakd's own lateness: every op issued, one sample each (all
    # completed by the end), the mean and the quantiles the dump's.
    iss = o["issue_delay_us"]
    count = get("soakd_issue_delay_seconds_count", **lab)
    total = get("soakd_issue_delay_seconds_sum", **lab)
    if count is not None and int(count) != o["count"]:
        problems.append(f"soakd_issue_delay_seconds_count{lab} = {count}, dump says {o['count']} issued")
    if count and total is not None and abs(total / count * 1e6 - iss["mean"]) > 0.01 * iss["mean"] + 0.01:
        problems.append(f"mean issue delay of {op} from the summary {total / count * 1e6} us, dump says {iss['mean']}")
    qs = [get("soakd_issue_delay_seconds", quantile=q, **lab) for q in ("0.5", "0.99", "1")]
    if None not in qs and (qs != sorted(qs) or qs[-1] > iss["max"] / 1e6 * 1.01):
        problems.append(f"issue delay quantiles of {op} {qs}, the run's {iss}")
    rate = get("soakd_rate_scheduled_ops_per_second", **lab)
    share = 0.7 if op == "read" else 0.3
    if rate is not None and abs(rate - 600 * share) > 600 * share * 0.05:
        problems.append(f"target rate of {op} is {rate}, expected {600 * share}")
    targets = [v for labels, v in samples.get("soakd_target_ops_total", []) if labels.get("op") == op]
    if len(targets) != 2 or int(sum(targets)) != o["count"]:
        problems.append(f"soakd_target_ops_total for {op}: {targets}, expected 2 adding to {o['count']}")
    paths = sorted(labels["target"] for labels, _ in samples.get("soakd_target_ops_total", [])
                   if labels.get("op") == op)
    if not all(p.endswith((".dat")) for p in paths):
        problems.append(f"target labels {paths}")

if get("soakd_workload_state", run="prom", workload="w", state="finished") != 1:
    problems.append("soakd_workload_state{state=finished} is not 1")
if get("soakd_workload_state", run="prom", workload="w", state="running") != 0:
    problems.append("soakd_workload_state{state=running} is not 0")
get("soakd_lag_seconds", run="prom", workload="w")
get("soakd_run_info", run="prom")

print(f"# {sum(len(v) for k, v in samples.items() if k.startswith('soakd_'))} soakd_ samples, "
      f"reads {int(get('soakd_ops_total', op='read') or 0)}, writes {int(get('soakd_ops_total', op='write') or 0)}")
if problems:
    sys.exit("\n".join(problems))
EOF

# Only the metrics file, no temporary files, in node_exporter's directory.
leftover=$(ls -A "$TEXTFILE_DIR" | grep -vx soakd.prom || true)
[[ -z $leftover ]] || fail "files left in the textfile directory: $leftover"

# The directory is held from the first write on: renamed, and a symlink to
# another directory put in its place, the metrics still land in it.
mkdir "$WORK/elsewhere"
mv "$TEXTFILE_DIR" "$WORK/textfile-moved"
ln -s "$WORK/elsewhere" "$TEXTFILE_DIR"
ino=$(stat -c %i "$WORK/textfile-moved/soakd.prom")
rewritten() { [[ $(stat -c %i "$WORK/textfile-moved/soakd.prom" 2>/dev/null) != "$ino" ]]; }
wait_until 10 "the metrics rewritten in the moved directory" rewritten
[[ -z $(ls -A "$WORK/elsewhere") ]] ||
	fail "metrics written through the symlink put in the directory's place: $(ls -A "$WORK/elsewhere")"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# Resumed after 2 s down, the run's start is where it was: run time stood
# still meanwhile, the wall clock did not (it moved on by the time down).
start_time() { awk '/^soakd_run_start_time_seconds\{/ { print $2 }' "$1"; }
t1=$(start_time "$WORK/textfile-moved/soakd.prom")
[[ -n $t1 ]] || fail "no soakd_run_start_time_seconds in the textfile"
rm "$TEXTFILE_DIR"
mv "$WORK/textfile-moved" "$TEXTFILE_DIR"
ino=$(stat -c %i "$PROM")
sleep 2
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
rewritten() { [[ $(stat -c %i "$PROM" 2>/dev/null) != "$ino" ]]; }
wait_until 15 "the metrics rewritten after the resume" rewritten
t2=$(start_time "$PROM")
note "run start before $t1, after the resume $t2"
awk -v a="$t1" -v b="$t2" 'BEGIN { d = a - b; exit !(d < 0.05 && d > -0.05) }' ||
	fail "the run's start moved from $t1 to $t2 with the resume"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after the resume"
mv "$TEXTFILE_DIR" "$WORK/textfile-moved"

# An object workload's pool: soakd_endpoint_* beside the workload's metrics.
HTTP_PORT=$(free_port)
HTTP_PORT2=$(free_port)
NGINX_HTTP_EXTRA="server { listen 127.0.0.1:$HTTP_PORT2; root $WORK/nginx/dav;
        location / { dav_methods PUT DELETE; create_full_put_path on; } }"
start_nginx "$WORK/nginx" "$HTTP_PORT"
OBJ_PROM="$WORK/textfile-moved/obj.prom"
cat >"$WORK/obj.json" <<EOF
{
  "run": {"name": "obj", "duration": "3s", "interval": "1s", "on_finish": "idle",
          "exports": {"prometheus": {"textfile": "$OBJ_PROM"}}},
  "workloads": [
    {"name": "o", "type": "object", "protocol": "http",
     "endpoints": ["http://127.0.0.1:$HTTP_PORT/o/", "http://127.0.0.1:$HTTP_PORT2/o/"],
     "concurrency": 4, "objects": 32, "size": "4KiB", "rate": 200,
     "mix": {"put": 50, "get": 50}}
  ]
}
EOF
start_soakd --config "$WORK/obj.json" --socket "$SOCK" --state-dir "$WORK/state-obj" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the object workload to finish" workload_is o finished
ctl dump --format json >"$WORK/obj-dump.json" || fail "dump of the object run failed"
obj_final() {
	python3 - "$WORK/obj-dump.json" "$OBJ_PROM" <<'EOF'
import json, re, sys
eps = json.load(open(sys.argv[1]))["workloads"][0]["endpoints"]
text = open(sys.argv[2]).read()
for url, e in eps.items():
    m = re.search(r'^soakd_endpoint_ops_total\{[^}]*endpoint="%s"\} (\S+)$' % re.escape(url), text, re.M)
    if not m or int(float(m.group(1))) != e["total_ops"]:
        sys.exit(1)
EOF
}
wait_until 10 "the object run's final totals in $OBJ_PROM" obj_final
promtool check metrics <"$OBJ_PROM" >"$WORK/promtool.txt" 2>&1 ||
	fail "promtool check metrics $OBJ_PROM: $(cat "$WORK/promtool.txt")"
python3 - "$WORK/obj-dump.json" "$OBJ_PROM" <<'EOF' || fail "endpoint metrics in $OBJ_PROM"
import json, re, sys
eps = json.load(open(sys.argv[1]))["workloads"][0]["endpoints"]
text = open(sys.argv[2]).read()
problems = []
if not re.search(r"^# TYPE soakd_endpoint_latency_seconds summary$", text, re.M):
    problems.append("soakd_endpoint_latency_seconds is not a summary")
if len(eps) != 2:
    problems.append(f"the dump has {len(eps)} endpoints, expected 2")
for url, e in eps.items():
    def get(name, extra=""):
        m = re.search(r'^%s\{run="obj",workload="o",endpoint="%s"%s\} (\S+)$'
                      % (name, re.escape(url), re.escape(extra)), text, re.M)
        if not m:
            problems.append(f"no {name}{{endpoint={url}{extra}}}")
        return float(m.group(1)) if m else None
    count = get("soakd_endpoint_latency_seconds_count")
    total = get("soakd_endpoint_latency_seconds_sum")
    if count is not None and int(count) != e["total_ops"]:
        problems.append(f"{url}: _count {count}, the dump's total_ops {e['total_ops']}")
    if total is not None and abs(total - e["total_latency_us"] / 1e6) > 1e-6:
        problems.append(f"{url}: _sum {total}, the dump's total_latency_us {e['total_latency_us']}")
    if not e["total_ops"] or not total or total / count > 1:
        problems.append(f"{url}: mean latency from _sum/_count {total}/{count}")
    if e["ops"]:
        qs = [get("soakd_endpoint_latency_seconds", f',quantile="{q}"') for q in ("0.5", "0.99", "1")]
        if None not in qs and (qs != sorted(qs) or abs(qs[-1] - e["latency_us"]["max"] / 1e6) > 1e-9):
            problems.append(f"{url}: quantiles {qs}, the last interval's {e['latency_us']}")
print(f"# endpoints: " + ", ".join(f"{u}: {e['total_ops']} ops" for u, e in eps.items()))
if problems:
    sys.exit("\n".join(problems))
EOF
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after the object run"
note "ok"
