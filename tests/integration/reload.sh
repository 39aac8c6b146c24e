#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl reload (what systemctl reload runs): soakd re-reads its
# configuration file.  A workload whose definition did not change keeps
# running and keeps its results; a changed one starts over under its new
# definition (its old intervals stay in the log); a new one starts; a
# removed one stops.  A malformed file, a change to the run itself and a
# workload that cannot be set up are refused with the error, and nothing
# changes.  A restart after a reload resumes the same run.
source "$(dirname "$0")/lib.sh"
need_cmd python3

CFG="$WORK/reload.json"
STATE="$WORK/state"

# config INTERVAL NAME=RATE...: workloads on regular files in $WORK.
config() {
	python3 - "$CFG" "$WORK" "$@" <<'EOF'
import json, os, sys
path, work, interval = sys.argv[1:4]
workloads = []
for spec in sys.argv[4:]:
    name, rate = spec.split("=")
    workloads.append({"name": name, "type": "device", "model": "pattern",
                      "targets": [f"{work}/{name}.dat"], "file_size": "16MiB",
                      "read_pct": 50, "block_size": "4KiB", "queue_depth": 4,
                      "rate": int(rate)})
run = {"name": "reload", "interval": interval}
if os.environ.get("START_AT"):
    run["start_at"] = os.environ["START_AT"]
json.dump({"run": run, "workloads": workloads}, open(path, "w"), indent=2)
EOF
}

# ops NAME: the workload's reads + writes so far, from soakd's totals.
ops() {
	ctl dump | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = next((w for w in d["workloads"] if w["name"] == sys.argv[1]), None)
print(-1 if w is None else sum(o["count"] for o in w["ops"].values()))' "$1"
}
more_ops_than() { (($(ops "$1") > $2)); }

config 1s a=200 b=100
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "a to have 400 ops" more_ops_than a 400
wait_until 15 "b to have 200 ops" more_ops_than b 200

# 1. Keep a, change b's rate, add c.
config 1s a=200 b=300 c=100
a_before=$(ops a)
out=$(ctl reload) || fail "reload failed: $out"
note "reload: $out"
grep -qx 'a: running (kept)' <<<"$out" || fail "a was not kept: $out"
grep -qx 'b: running (replaced)' <<<"$out" || fail "b was not replaced: $out"
grep -qx 'c: running (added)' <<<"$out" || fail "c was not added: $out"
b_after=$(ops b)
# a's totals go on from where they were; b starts over.
(($(ops a) >= a_before)) || fail "a's results were reset by the reload"
((b_after < 200)) || fail "b kept the old definition's results ($b_after ops)"
wait_until 15 "a to go on counting" more_ops_than a $((a_before + 400))
wait_until 15 "c to run" more_ops_than c 100
ctl status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
b = next(w for w in s["workloads"] if w["name"] == "b")
rates = [o.get("rate_target") for o in b["ops"].values()]
if abs(sum(rates) - 300) > 1:
    sys.exit(f"b runs at {rates}, not 300/s in total")
' || fail "b does not run under its new definition"

# 2. Refusals change nothing: a malformed file, a change to the run, a
# workload that cannot be set up.
a_before=$(ops a)
printf '{"run": {"name": "reload",\n  "interval": }\n' >"$CFG"
if out=$(ctl reload 2>&1); then
	fail "a malformed configuration was reloaded: $out"
fi
note "malformed: $out"
grep -q "$CFG:2:[0-9]*: " <<<"$out" || fail "the error does not say where: $out"
grep -q "not reloaded" <<<"$out" || fail "the error does not say nothing changed: $out"
grep -q "reload refused: $CFG:2:" "$SOAKD_LOG" || fail "soakd did not log the error"

config 2s a=200 b=300 c=100
out=$(ctl reload 2>&1) && fail "a new interval was reloaded: $out"
grep -q '"run": "interval" differs' <<<"$out" || fail "unclear refusal: $out"

config 1s a=200 b=300 c=100 d=100
python3 - "$CFG" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["workloads"][3]["targets"] = ["/nonexistent-soakd-dir/d.dat"]
json.dump(c, open(sys.argv[1], "w"))
EOF
out=$(ctl reload 2>&1) && fail "an unusable target was reloaded: $out"
grep -q 'workload "d"' <<<"$out" || fail "the refusal does not name the workload: $out"
for w in a b c; do
	[[ $(workload_state $w) == running ]] || fail "$w stopped after a refused reload"
done
[[ $(workload_state d) == absent ]] || fail "d exists after a refused reload"
wait_until 15 "a to go on counting" more_ops_than a $((a_before + 400))

# A replacement that cannot start (its new target cannot be created) is
# found only once the old b has let go of its file: b goes on under its
# old definition with its results, and nothing else changes.
b_before=$(ops b)
config 1s a=200 b=300 c=100 d=100
python3 - "$CFG" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["workloads"][1]["targets"] = ["/nonexistent-soakd-dir/b.dat"]
json.dump(c, open(sys.argv[1], "w"))
EOF
out=$(ctl reload 2>&1) && fail "a replacement that cannot start was reloaded: $out"
note "replacement refused: $out"
grep -q 'old definitions' <<<"$out" || fail "the refusal does not say b goes on: $out"
grep -q 'workload "b"' <<<"$out" || fail "the refusal does not name b: $out"
[[ $(workload_state d) == absent ]] || fail "d was added by a refused reload"
(($(ops b) >= b_before)) || fail "b's results were lost by a refused replacement"
wait_until 15 "b to run on under its old definition" more_ops_than b $((b_before + 300))
ctl status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
b = next(w for w in s["workloads"] if w["name"] == "b")
rates = [o.get("rate_target") for o in b["ops"].values()]
if b["state"] != "running" or abs(sum(rates) - 300) > 1:
    sys.exit("b is %s at %s, not running at 300/s" % (b["state"], rates))
' || fail "b does not run under its old definition"

# 3. Remove b: it stops, its results stay; it cannot be started again.
config 1s a=200 c=100
out=$(ctl reload) || fail "reload failed: $out"
grep -qx 'b: stopped (removed)' <<<"$out" || fail "b was not removed: $out"
ctl start b >/dev/null 2>&1 && fail "a removed workload could be started"
b_kept=$(ops b)
((b_kept > 0)) || fail "b's results were dropped"

# 4. A restart with the reloaded file resumes the same run: a's and c's
# results go on; b's replaced definition is what the log says it ran.
wait_until 10 "another interval" more_ops_than a $(($(ops a) + 200))
before_a=$(ops a)
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
grep -q 'resuming run reload at' "$SOAKD_LOG" || fail "the restart did not resume the run"
(($(ops a) >= before_a - 250)) || fail "a's results were not resumed ($(ops a) < $before_a)"
ctl dump --until 1h >"$WORK/log-dump.json" || fail "dump from the log failed"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
python3 - "$STATE/reload/intervals.log" "$WORK/log-dump.json" "$b_kept" <<'EOF' || fail "the log"
import json, sys
records = []
for line in open(sys.argv[1]).read().splitlines()[1:]:
    records.append(json.loads(line.split(" ", 1)[1]))
reloads = [r for r in records if r["type"] == "reload"]
if [sorted(r["replaced"]) for r in reloads] != [["b"], []]:
    sys.exit(f"reload records: {reloads}")
if reloads[1]["removed"] != ["b"]:
    sys.exit(f"b's removal is not recorded: {reloads[1]}")
# b's intervals after its replacement add up to what soakd showed.
at = reloads[0]["run_ns"]
after = sum(sum(o["count"] for o in r["ops"].values()) for r in records
            if r["type"] == "interval" and r["workload"] == "b" and r["start_ns"] >= at)
dump = json.load(open(sys.argv[2]))
b = next(w for w in dump["workloads"] if w["name"] == "b")
logged = sum(o["count"] for o in b["ops"].values())
if logged != after or abs(logged - int(sys.argv[3])) > 0:
    sys.exit(f"b after its replacement: log {after}, dump {logged}, soakd {sys.argv[3]}")
print(f"# b's new definition: {logged} ops in the log and in soakd")
EOF
# 5. A workload a reload removed stays out of a new run.
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
config 1s a=200
out=$(ctl reload) || fail "reload failed: $out"
grep -qx 'c: stopped (removed)' <<<"$out" || fail "c was not removed: $out"
ctl start --new-run >/dev/null || fail "start --new-run failed"
wait_until 10 "a to run in the new run" workload_is a running
[[ $(workload_state c) == stopped ]] || fail "the new run started removed workload c"
# The new run's results outlive the configuration they started under.
config 1s a=250
out=$(ctl reload) || fail "reload after a new run failed: $out"
ctl status >/dev/null || fail "status after a new run and a reload failed"
stop_soakd 15
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# 6. Before start_at, a replaced workload waits for it too.
START_AT=$(date -u -d '+40 seconds' +%Y-%m-%dT%H:%M:%SZ) config 1s a=200
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table --new-run
wait_until 15 "the control socket" ctl_answers
START_AT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["start_at"])' "$CFG") \
	config 1s a=300
out=$(ctl reload) || fail "reload before start_at failed: $out"
sleep 1.5
[[ $(workload_state a) != running ]] || fail "a reload started a workload before start_at"
(($(grep -c '"type":"interval"' "$STATE/reload/intervals.log") == 0)) ||
	fail "intervals recorded before start_at"
stop_soakd 15

# 7. A new run whose old run cannot be moved aside (its directory a mount
# point: rename says EBUSY) is refused, not written into the old run's
# log, and soakd, its old run ended, stops cleanly.
config 1s a=200
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table --new-run
wait_until 15 "the control socket" ctl_answers
wait_until 10 "an interval of a" grep -q '"type":"interval"' "$STATE/reload/intervals.log"
mount --bind "$STATE/reload" "$STATE/reload" || fail "cannot bind-mount the run directory"
on_exit "umount -l '$STATE/reload' 2>/dev/null"
rc=0
out=$(ctl start --new-run 2>&1) || rc=$?
((rc == 1)) && [[ $out == *"the new run could not start"* ]] ||
	fail "start --new-run into an unmovable run exited $rc: $out"
wait_soakd_exit 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after the new run was refused"
grep -q "cannot move the previous run in .* aside, so the new run cannot be written there" \
	"$SOAKD_LOG" || fail "soakd did not say why the new run was refused"
python3 - "$STATE/reload/intervals.log" <<'EOF' || fail "the new run wrote into the old one's log"
import json, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
starts = [r for r in recs if r.get("type") == "start"]
if len(starts) != 1:
    sys.exit(f"{len(starts)} start records in one run's log")
EOF

note "reload: kept, replaced, added, removed, refused and resumed as expected"
