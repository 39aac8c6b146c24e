#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "endpoints" (issue 17): a pool of two gateways to one real MinIO, the
# second a TCP forwarder (tcp_forward.py) in front of the same store.
#   1. both endpoints carry ops, with no verification failure;
#   2. the forwarder killed mid-run: errors are counted on its endpoint
#      only, the other endpoint carries on, and the ledger's classes show
#      nothing lost, stale, resurrected or corrupt;
#   3. soakd SIGKILLed mid-run and resumed: each endpoint's totals go on
#      from where the log left them (the sum of every interval record's
#      ops and errors, from both starts), not from 0;
#   4. a pool whose second endpoint is down at start: soakd says so, naming
#      it, before the workload starts, and the first carries the ops;
#   5. three gateways that accept connections and never answer: each is
#      named at start, and the workload starts after about one request
#      timeout, not three (the gateways are probed at once).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

need_cmd python3
ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP1="http://127.0.0.1:$PORT"
FWD_PORT=$(free_port)
EP2="http://127.0.0.1:$FWD_PORT"
spawn "$WORK/forward.log" python3 "$SRCDIR/tests/integration/tcp_forward.py" "$FWD_PORT" "$PORT"
FWD_PID=$SPAWNED
make_bucket() { s3 -f -o /dev/null -X PUT "$EP1/soak" 2>/dev/null; }
wait_until 20 "bucket soak to be created" make_bucket
# Through the forwarder too: the same store answers.
through_forwarder() { s3 -f -o /dev/null "$EP2/soak" 2>/dev/null; }
wait_until 10 "the forwarder to reach MinIO" through_forwarder

cat >"$WORK/e.json" <<CONFIG
{
  "run": {"name": "eps", "duration": "16s", "interval": "1s", "on_finish": "idle",
          "exports": {"prometheus": {"textfile": "$WORK/soakd.prom"}}},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoints": ["$EP1", "$EP2"],
    "bucket": "soak", "size": "4KiB", "threads": 2, "concurrency": 8, "objects": 60,
    "rate": 150, "timeout": "2s",
    "mix": {"put": 30, "get": 50, "stat": 10, "delete": 10}} ]
}
CONFIG
timeout 20 "$SOAKD" --check-config "$WORK/e.json" >"$WORK/plan" 2>&1 ||
	fail "--check-config: $(cat "$WORK/plan")"
grep -q "\"endpoints\": \[\"$EP1\", \"$EP2\"\]" "$WORK/plan" ||
	fail "the plan does not show both endpoints: $(cat "$WORK/plan")"

STATE="$WORK/state"
start_soakd --config "$WORK/e.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
intervals() { grep -c '"type":"interval"' "$STATE/eps/intervals.log" 2>/dev/null || true; }
at_least() { (($(intervals) >= $1)); }
wait_until 30 "6 intervals" at_least 6
ctl status --json >"$WORK/status.json" || fail "soakctl status failed"
kill -KILL "$FWD_PID"
wait_until 10 "the forwarder to die" not_alive "$FWD_PID"
killed_at=$(intervals)
note "forwarder killed after $killed_at intervals"
wait_until 60 "the workload to finish" workload_is w finished
dump_json "$WORK/e.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# endpoint_counts URL: "OPS ERRORS" from soakd's closing line for URL.
endpoint_counts() {
	sed -n "s|.*w: endpoint $1: \([0-9]*\) ops, \([0-9]*\) errors.*|\1 \2|p" "$SOAKD_LOG" | tail -n1
}
read -r ops1 err1 <<<"$(endpoint_counts "$EP1")"
read -r ops2 err2 <<<"$(endpoint_counts "$EP2")"
note "$EP1: ${ops1:-?} ops, ${err1:-?} errors; $EP2 (killed): ${ops2:-?} ops, ${err2:-?} errors"
[[ -n $ops1 && -n $ops2 ]] || fail "no per-endpoint results in the log: $(grep endpoint "$SOAKD_LOG")"
((ops1 > 100)) || fail "$EP1 carried only $ops1 ops"
((ops2 > 100)) || fail "$EP2 carried only $ops2 ops before it was killed: the pool was not shared"
((err1 == 0)) || fail "$EP1 has $err1 errors: the killed endpoint's failures were counted on it"
((err2 > 0)) || fail "$EP2 was killed, yet no error was counted on it"
grep -q "endpoint $EP2 fails" "$SOAKD_LOG" || fail "no warning that $EP2 fails"

# The other endpoint carries on: the intervals after the kill still hold
# successful ops (beside the errors of the killed endpoint).
python3 - "$STATE/eps/intervals.log" "$killed_at" "$EP1" "$EP2" <<'PY' ||
import json, sys
# Each line after the header: "CHECKSUM JSON".
records = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
records = [r for r in records if r.get("type") == "interval" and r.get("workload") == "w"]
# From two intervals after the kill to the last but one (the drain).
after = records[int(sys.argv[2]) + 2:-1]
ok = [sum(o["count"] for o in r["ops"].values()) for r in after]
print("# successful ops per interval after the kill:", ok)
assert len(ok) >= 4, f"only {len(ok)} intervals after the kill"
assert min(ok) >= 50, "an interval after the kill has almost no successful op"
# Each interval record's "endpoints": both carry ops before the kill; after
# it, errors on the killed one only.
ep1, ep2 = sys.argv[3], sys.argv[4]
before = records[1:int(sys.argv[2]) - 1]
for r in before:
    eps = r.get("endpoints")
    assert eps and ep1 in eps and ep2 in eps, f"no \"endpoints\" in {r}"
    assert eps[ep1]["ops"] > 0 and eps[ep2]["ops"] > 0, f"an endpoint idle before the kill: {eps}"
    assert eps[ep2]["latency_us"]["p99"] > 0
assert all(r["endpoints"][ep1]["errors"] == 0 for r in records), "errors on the live endpoint"
assert sum(r["endpoints"][ep2]["errors"] for r in records) > 0, "no error on the killed one"
assert all(r["endpoints"][ep1]["ops"] > 50 for r in after)
last = records[-1]["endpoints"]
print("# last record's endpoints:", json.dumps(last))
PY
	fail "the interval records do not show the pool shared, then the killed endpoint failing"
check_dump() {
	python3 - "$1" <<'PY' || fail "$(basename "$1"): $(head -c 3000 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
w = next(x for x in d["workloads"] if x["name"] == "w")
ops = w["ops"]
v = lambda op, k: ops[op].get("verify", {}).get(k, 0)
print("# get checked:", v("get", "checked"), "errors:", {op: ops[op]["errors"] for op in ops})
assert v("get", "checked") > 0, "nothing was verified"
for op in ops:
    for k in ("lost", "stale", "resurrected"):
        assert v(op, k) == 0, f"{op}: {k} = {v(op, k)} with a gateway of the pool gone"
    assert ops[op]["corrupt"] == 0, f"{op}: corrupt"
PY
}
check_dump "$WORK/e.dump"

# Status (before the kill), the dump and Prometheus carry the pool too.
python3 - "$WORK/status.json" "$WORK/e.dump" "$EP1" "$EP2" <<'PY' || fail "status or dump without \"endpoints\""
import json, sys
status, dump, ep1, ep2 = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
s = next(w for w in status["workloads"] if w["name"] == "w")["endpoints"]
assert s[ep1]["total_ops"] > 0 and s[ep2]["total_ops"] > 0, f"status: {s}"
d = next(w for w in dump["workloads"] if w["name"] == "w")["endpoints"]
print("# dump's endpoints:", {u: (e["total_ops"], e["total_errors"]) for u, e in d.items()})
assert d[ep1]["total_errors"] == 0 and d[ep2]["total_errors"] > 0, f"dump: {d}"
PY
grep -q "^soakd_endpoint_errors_total{run=\"eps\",workload=\"w\",endpoint=\"$EP2\"} [1-9]" "$WORK/soakd.prom" ||
	fail "no soakd_endpoint_errors_total for $EP2: $(grep endpoint "$WORK/soakd.prom")"
grep -q "^soakd_endpoint_errors_total{run=\"eps\",workload=\"w\",endpoint=\"$EP1\"} 0$" "$WORK/soakd.prom" ||
	fail "$EP1's errors in Prometheus are not 0: $(grep endpoint "$WORK/soakd.prom")"
grep -q "^soakd_endpoint_latency_seconds{run=\"eps\",workload=\"w\",endpoint=\"$EP1\",quantile=\"0.99\"}" "$WORK/soakd.prom" ||
	fail "no per-endpoint latency in Prometheus: $(grep endpoint "$WORK/soakd.prom")"

# 3. The pool's totals across a SIGKILL and a resume, through a second
# forwarder (the first is dead).
FWD2_PORT=$(free_port)
EP3="http://127.0.0.1:$FWD2_PORT"
spawn "$WORK/forward2.log" python3 "$SRCDIR/tests/integration/tcp_forward.py" "$FWD2_PORT" "$PORT"
through_forwarder2() { s3 -f -o /dev/null "$EP3/soak" 2>/dev/null; }
wait_until 10 "the second forwarder to reach MinIO" through_forwarder2
sed -e 's|"name": "eps"|"name": "eps2"|' -e "s|\"$EP2\"|\"$EP3\"|" -e 's|"16s"|"12s"|' \
	"$WORK/e.json" >"$WORK/r.json"
grep -q '"eps2"' "$WORK/r.json" && grep -q "$EP3" "$WORK/r.json" || fail "r.json: $(cat "$WORK/r.json")"
STATE2="$WORK/state2"
start_soakd --config "$WORK/r.json" --socket "$SOCK" --state-dir "$STATE2" --no-table
wait_until 20 "the control socket" ctl_answers
intervals2() { grep -c '"type":"interval"' "$STATE2/eps2/intervals.log" 2>/dev/null || true; }
five() { (($(intervals2) >= 5)); }
wait_until 30 "5 intervals" five
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
before_kill=$(intervals2)
start_soakd --config "$WORK/r.json" --socket "$SOCK" --state-dir "$STATE2" --no-table
wait_until 20 "the control socket after the resume" ctl_answers
wait_until 60 "the resumed workload to finish" workload_is w finished
dump_json "$WORK/r.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after the resume"
python3 - "$STATE2/eps2/intervals.log" "$WORK/r.dump" "$before_kill" "$EP1" "$EP3" <<'PY' ||
import json, sys
log, dump, before = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
records = [json.loads(l.split(" ", 1)[1]) for l in open(log).read().splitlines()[1:]]
records = [r for r in records if r.get("type") == "interval" and r.get("workload") == "w"]
eps = next(w for w in dump["workloads"] if w["name"] == "w")["endpoints"]
assert len(records) > before + 2, f"{len(records)} records, {before} before the kill"
for url in sys.argv[4:]:
    ops = sum(r["endpoints"][url]["ops"] for r in records)
    errors = sum(r["endpoints"][url]["errors"] for r in records)
    killed_total = records[before - 1]["endpoints"][url]["total_ops"]
    total, total_errors = eps[url]["total_ops"], eps[url]["total_errors"]
    print(f"# {url}: {ops} ops in the records of both starts, {killed_total} before the "
          f"kill; the dump's total {total} ({total_errors} errors, records {errors})")
    assert killed_total > 0, "no ops before the kill"
    # An op counted in the total as the record is taken may fall in the
    # next interval's ops: a few (at most the concurrency) either way.
    assert abs(total - ops) <= 8, f"total_ops {total}, the records' ops add up to {ops}"
    assert abs(total_errors - errors) <= 8, f"total_errors {total_errors}, records {errors}"
PY
	fail "after a SIGKILL and a resume, the pool's totals do not go on from the log's"
# 4. The killed forwarder's endpoint in a new run's pool: named at start.
sed -e 's|"name": "eps"|"name": "eps4"|' -e 's|"16s"|"3s"|' "$WORK/e.json" >"$WORK/d.json"
start_soakd --config "$WORK/d.json" --socket "$SOCK" --state-dir "$WORK/state4" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC with an endpoint down at start"
warned=$(grep -n "w: endpoint $EP2 cannot be reached now" "$SOAKD_LOG" | head -n1 | cut -d: -f1 || true)
started=$(grep -n "workload w started" "$SOAKD_LOG" | head -n1 | cut -d: -f1 || true)
[[ -n $warned ]] || fail "no warning at start that $EP2 is down: $(grep -i endpoint "$SOAKD_LOG")"
[[ -n $started ]] && ((warned < started)) || fail "the warning about $EP2 is not before the start"
read -r ops1 err1 <<<"$(endpoint_counts "$EP1")"
note "endpoint down at start: warned; $EP1 carried ${ops1:-?} ops"
((ops1 > 100)) || fail "$EP1 carried only ${ops1:-0} ops with $EP2 down"

# 5. Three silent gateways (listening, never answering) behind the first.
SILENT=("$(free_port)" "$(free_port)" "$(free_port)")
spawn "$WORK/silent.log" python3 -c '
import socket, sys, time
held = []
for port in sys.argv[1:]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", int(port)))
    s.listen(64)  # the kernel completes handshakes; nothing is ever read
    held.append(s)
print("listening", flush=True)
time.sleep(300)' "${SILENT[@]}"
silent_up() { grep -q listening "$WORK/silent.log"; }
wait_until 10 "the silent gateways" silent_up
eps="\"$EP1\""
for p in "${SILENT[@]}"; do eps+=", \"http://127.0.0.1:$p\""; done
python3 - "$WORK/e.json" "$WORK/s.json" "[$eps]" <<'PY' || fail "cannot write the silent pool's configuration"
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["run"].update(name="eps5", duration="2s")
cfg["run"].pop("exports", None)
cfg["workloads"][0].update(endpoints=json.loads(sys.argv[3]), timeout="3s")
json.dump(cfg, open(sys.argv[2], "w"))
PY
t0=$(now_ns)
start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state5" --no-table
wait_until 30 "the workload to start" workload_is w running
took_ms=$((($(now_ns) - t0) / 1000000))
for p in "${SILENT[@]}"; do
	grep -q "w: endpoint http://127.0.0.1:$p cannot be reached now" "$SOAKD_LOG" ||
		fail "the silent gateway on port $p is not named at start: $(grep -i endpoint "$SOAKD_LOG")"
done
note "three silent gateways, 3 s timeout: the workload started $took_ms ms after soakd"
# Probed one after another they would take 9 s.
((took_ms < 7000)) || fail "the workload started $took_ms ms after soakd: the gateways were not probed at once"
wait_until 30 "the workload to finish" workload_is w finished
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC with silent gateways in its pool"
note "ok"
