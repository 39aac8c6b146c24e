#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Certifying a drive (issue 18, section 1): a loop device over RAM,
# throttled with a block cgroup to a known IOPS limit, certified in steps
# that pass below the limit and one that must fail above it.  The verdicts
# and the answer are in the run's log, soakctl status, report and dump,
# and a private journald; every interval's ops are accounted across the
# step changes.  Then a certification SIGKILLed mid-step resumes at the
# same step.  Config errors point at the key.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/certlib.sh"

need_cmd unshare journalctl python3
JOURNALD=/lib/systemd/systemd-journald
[[ -x $JOURNALD ]] || skip_unless_strict "$JOURNALD is not installed"
[[ -d /run/log && -d /var/log/journal ]] ||
	skip_unless_strict "/run/log or /var/log/journal missing (no mount points for the private journald)"

# --- config errors, at the key ---------------------------------------------
cert_case() {
	local name=$1 certify=$2 extra=${3:-}
	cat >"$WORK/$name.json" <<CONFIG
{
  "run": {"name": "c", "interval": "1s",
    "certify": $certify},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/w.dat"],
     "file_size": "16MiB", "block_size": "4KiB", "rate": 100$extra}
  ]
}
CONFIG
}
# want_error NAME WORD: --check-config exits 1 with FILE:3:COL naming WORD.
want_error() {
	local out="$WORK/$1.out" rc=0
	(cd "$WORK" && timeout 20 "$SOAKD" --check-config "$WORK/$1.json") >"$out" 2>&1 || rc=$?
	((rc == 1)) || fail "$1: --check-config exited $rc: $(cat "$out")"
	grep -q "^$WORK/$1.json:3:[0-9]*: .*$2" "$out" || fail "$1: expected line 3 naming '$2': $(cat "$out")"
	note "$1: $(head -n1 "$out")"
}
cert_case decreasing '{"steps": ["2x", "1x"], "hold": "3s"}'
want_error decreasing "must increase"
cert_case hold '{"steps": ["1x"], "hold": "1500ms"}'
want_error hold "whole number of the run's intervals"
cert_case no-hold '{"steps": ["1x"]}'
want_error no-hold '"hold"'
cert_case unknown '{"steps": ["1x"], "hold": "3s", "workload": "nope"}'
want_error unknown 'no workload is named "nope"'
cert_case own-schedule '{"steps": ["1x"], "hold": "3s"}' ', "schedule": [{"scale": 1, "for": "3s"}]'
want_error own-schedule 'has a "schedule" of its own'
cert_case both '{"steps": ["1x"], "start": "1x", "factor": 2, "max": "4x", "hold": "3s"}'
want_error both 'either "steps" or'
cert_case factor '{"start": "1x", "factor": 1, "max": "4x", "hold": "3s"}'
want_error factor '"factor" must be above 1'
cert_case limits '{"steps": ["1x"], "hold": "3s", "thresholds": "1,8", "limits": [5]}'
want_error limits "one limit per threshold"
cert_case confirm '{"steps": ["1x"], "hold": "3s", "confirm": "2500ms"}'
want_error confirm '"confirm" must be a whole number'
# start/factor/max, as the plan shows it.
cert_case ladder '{"start": "1x", "factor": 2, "max": "8x", "hold": "3s"}'
(cd "$WORK" && timeout 20 "$SOAKD" --check-config "$WORK/ladder.json") >"$WORK/ladder.plan" 2>&1 ||
	fail "ladder: $(cat "$WORK/ladder.plan")"
grep -q '"steps": \["1x", "2x", "4x", "8x"\]' "$WORK/ladder.plan" ||
	fail "the plan does not show the steps 1x..8x: $(cat "$WORK/ladder.plan")"
grep -q '"at": "9s", "for": "3s", "scale": 8, "ramp": false, "rate": 800' "$WORK/ladder.plan" ||
	fail "the plan's schedule is not the steps: $(cat "$WORK/ladder.plan")"

# The example: ACT's stepped loads on a drive, an hour each.
timeout 20 "$SOAKD" --check-config "$SRCDIR/config/certify.json" --no-targets >"$WORK/example.plan" 2>&1 ||
	fail "config/certify.json: $(cat "$WORK/example.plan")"
grep -q '"steps": \["1x", "3x", "6x", "12x", "24x", "30x"\]' "$WORK/example.plan" &&
	grep -q '"at": "5h", "for": "1h", "scale": 30, ' "$WORK/example.plan" ||
	fail "config/certify.json's plan: $(cat "$WORK/example.plan")"

# --- a certification that ends at the first failing step -------------------
new_loop 64M
DEV=$NEW_LOOP
LIMIT_IOPS=600
throttle_device "$DEV" "$LIMIT_IOPS"
note "$DEV throttled to $LIMIT_IOPS IOPS ($THROTTLE_HOW)"

# 150, 300 ops/s hold under the limit; 900 ops/s cannot.  Thresholds of
# tens of ms, not ACT's 1 ms: a loop device on a shared 2-core machine
# (its kernel workers not in the test's cgroup) has a tail of its own;
# the step above the limit queues without bound.
CFG="$WORK/cert.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "cert", "interval": "1s", "on_finish": "idle",
    "certify": {"steps": ["1x", "2x", "6x"], "hold": "3s",
                "thresholds": ["20ms", "100ms", "500ms"], "limits": "5,1,0.1"}},
  "workloads": [
    {"name": "drive", "type": "device", "model": "pattern", "targets": ["$DEV"],
     "read_pct": 100, "block_size": "4KiB", "queue_depth": 64, "rate": 150}
  ]
}
EOF
JOURNAL_DIR="$WORK/journal-root"
mkdir "$JOURNAL_DIR"
cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
source "$SRCDIR/tests/integration/journallib.sh"
journald_start

"$SOAKD_THROTTLED" --config "$CFG" --socket "$WORK/soakd.sock" --state-dir "$WORK/state" \
	--no-table >"$WORK/soakd.log" 2>&1 &
soakd=$!
ctl() { timeout 20 "$SOAKCTL" --socket "$WORK/soakd.sock" "$@"; }
for ((i = 0; i < 600; i++)); do
	grep -q '"answer"' "$WORK/state/cert/intervals.log" 2>/dev/null && break
	kill -0 $soakd 2>/dev/null || { echo "soakd exited early" >&2; exit 3; }
	# Mid-run: status shows the step held.
	if [[ ! -s $WORK/status-mid.txt ]] && grep -q '"type":"certify"' "$WORK/state/cert/intervals.log" 2>/dev/null; then
		ctl status >"$WORK/status-mid.txt" || true
	fi
	sleep 0.1
done
grep -q '"answer"' "$WORK/state/cert/intervals.log" || { echo "no answer in 60 s" >&2; exit 4; }
# The certified workload stopped: the run is over (idle, not exiting).
for ((i = 0; i < 100; i++)); do
	ctl status --json | grep -q '"state": "finished"' && break
	sleep 0.1
done
ctl status >"$WORK/status.txt"
ctl status --json >"$WORK/status.json"
rc=0
ctl report >"$WORK/report.txt" || rc=$?
echo "$rc" >"$WORK/report.rc"
ctl dump --format json >"$WORK/dump.json"
ctl dump --format csv >"$WORK/dump.csv"
kill -TERM $soakd
wait $soakd || echo "soakd exited $?" >&2
journald_stop
INNER
export WORK JOURNAL_DIR JOURNALD SRCDIR SOAKD SOAKCTL CFG SOAKD_THROTTLED
# late_spoiled LOG STEPS: a step of the first STEPS (those that should
# pass) failed because soakd itself was late (generator_late): the
# certification rightly refused to judge the device by that step.  The run
# is repeated then (late_retry, lib.sh).
late_spoiled() {
	python3 - "$1" "$2" <<'PY'
import json, sys
for line in open(sys.argv[1]).read().splitlines()[1:]:
    try:
        r = json.loads(line.split(" ", 1)[1])
    except Exception:
        continue
    if r.get("type") == "certify" and r.get("step", 99) <= int(sys.argv[2]) and \
            r["verdict"] == "fail" and any(w["generator_late"] for w in r["workloads"]):
        print(f"# step {r['step']} spoiled: {r['why']}")
        sys.exit(0)
sys.exit(1)
PY
}
late_attempts_begin
for attempt in 1 2 3; do
	timeout 100 unshare --mount --propagation private bash "$WORK/inner.sh" ||
		fail "the certification with a private journald failed (exit $?)"
	late_spoiled "$WORK/state/cert/intervals.log" 2 || break
	late_retry "the certification" "$attempt"
	rm -rf "$WORK/state/cert" "$JOURNAL_DIR" "$WORK/status-mid.txt"
	mkdir "$JOURNAL_DIR"
done

LOG="$WORK/state/cert/intervals.log"
python3 - "$LOG" "$LIMIT_IOPS" <<'EOF' || fail "the run's log"
import json, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
cert = [r for r in recs if r["type"] == "certify"]
steps = [r for r in cert if "step" in r]
answer = [r for r in cert if "answer" in r]
got = [(r["load"], r["verdict"]) for r in steps]
if got != [("1x", "pass"), ("2x", "pass"), ("6x", "fail")]:
    sys.exit(f"verdicts {got}, expected 1x pass, 2x pass, 6x fail")
for r in steps:
    for key in ("step", "rate", "start_ns", "end_ns", "why", "workloads"):
        if key not in r:
            sys.exit(f"verdict without {key}: {r}")
    print(f"# step {r['step']} {r['load']} {r['rate']:.0f}/s: {r['verdict']}: {r['why']}")
if [r["rate"] for r in steps] != [150, 300, 900]:
    sys.exit(f"rates {[r['rate'] for r in steps]}")
if [(r["start_ns"], r["end_ns"]) for r in steps] != [(0, 3e9), (3e9, 6e9), (6e9, 9e9)]:
    sys.exit("the steps' times are not 0-3-6-9 s")
if "over" not in steps[2]["why"]:
    sys.exit(f"the failing step's why does not name a threshold: {steps[2]['why']}")
for r in steps[:2]:
    n = r["workloads"][0]["ops"]["read"]["count"]
    if not 0.95 * r["rate"] * 3 <= n <= 1.05 * r["rate"] * 3:
        sys.exit(f"step {r['step']} counted {n} reads, expected about {r['rate'] * 3}")
if len(answer) != 1 or answer[0]["answer"] != "2x" or answer[0]["rate"] != 300:
    sys.exit(f"answer {answer}")
if "table" not in answer[0] or answer[0]["thresholds_ms"] != [20, 100, 500]:
    sys.exit(f"the answer has no threshold table: {answer[0]}")
# Every interval accounted across the step changes: completed + failed +
# missed = scheduled, less the change in ops pending (due, not done).
ivs = [r for r in recs if r["type"] == "interval"]
pending = 0
for r in ivs:
    o = r["ops"]["read"]
    done = o["count"] + o["errors"] + o["missed"]
    want = r["target_ops"] - (o["pending"] - pending)
    if abs(done - want) > 1.01:
        sys.exit(f"interval {r['start_ns'] / 1e9:.1f}-{r['end_ns'] / 1e9:.1f} s: {done} ops "
                 f"accounted, {want:.2f} scheduled")
    pending = o["pending"]
# The rate changed at the steps' boundaries: whole intervals at each rate.
rates = [round(r["target_ops"] / ((r["end_ns"] - r["start_ns"]) / 1e9)) for r in ivs[1:8]]
if rates[:2] != [150, 150] or rates[3:5] != [300, 300] or rates[6] != 900:
    sys.exit(f"per-interval rates {rates}")
print(f"# {len(ivs)} intervals accounted; answer {answer[0]['answer']}")
EOF

grep -q "^certify: step [12] of 3" "$WORK/status-mid.txt" ||
	fail "status mid-run does not show the step held: $(cat "$WORK/status-mid.txt")"
grep -q "^certify: over after 3 step(s): the answer is 2x" "$WORK/status.txt" ||
	fail "status: $(cat "$WORK/status.txt")"
grep -q "step 3   6x .*fail: drive read: .* over" "$WORK/status.txt" || fail "status: $(cat "$WORK/status.txt")"
grep -q "^answer: 2x, 300.0 ops/s" "$WORK/report.txt" || fail "report: $(cat "$WORK/report.txt")"
grep -Eq '^3 +6x +900.0 +fail +drive +read' "$WORK/report.txt" || fail "report: $(cat "$WORK/report.txt")"
grep -q "why: drive read:" "$WORK/report.txt" || fail "report has no why: $(cat "$WORK/report.txt")"
python3 - "$WORK/dump.json" "$WORK/status.json" <<'EOF' || fail "dump/status JSON"
import json, sys
dump, status = (json.load(open(p)) for p in sys.argv[1:3])
c = dump.get("certify")
if not c or [s["verdict"] for s in c["steps"]] != ["pass", "pass", "fail"] or c["answer"]["answer"] != "2x":
    sys.exit(f"dump's certify: {c}")
s = status.get("certify")
if not s or s["answer"] != "2x" or len(s["verdicts"]) != 3:
    sys.exit(f"status's certify: {s}")
EOF
# The same from the run directory, without soakd.
rc=0
"$SOAKCTL" report --run-dir "$WORK/state/cert" >"$WORK/offline-report.txt" 2>&1 || rc=$?
grep -q "^answer: 2x, 300.0 ops/s" "$WORK/offline-report.txt" &&
	grep -Eq '^3 +6x +900.0 +fail +drive +read' "$WORK/offline-report.txt" ||
	fail "report --run-dir (exit $rc): $(cat "$WORK/offline-report.txt")"
"$SOAKCTL" dump --run-dir "$WORK/state/cert" >"$WORK/offline-dump.json" || fail "dump --run-dir"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["certify"]
assert [s["verdict"] for s in c["steps"]] == ["pass", "pass", "fail"] and c["answer"]["answer"] == "2x", c
' "$WORK/offline-dump.json" || fail "dump --run-dir has no certification"
note "status, report and dump show the verdicts and the answer, live and from the run directory"

journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_RUN=cert >"$WORK/journal.json" 2>"$WORK/journalctl.err" ||
	fail "journalctl: $(cat "$WORK/journalctl.err")"
python3 - "$WORK/journal.json" "$SRCDIR/daemon/base/journal_ids.h" "$SRCDIR/units/soakd.catalog" <<'EOF' ||
import json, re, sys
entries = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ids = dict(re.findall(r'#define (SOAK_MESSAGE_CERTIFY_\w+) +"(\w+)"', open(sys.argv[2]).read()))
catalog = open(sys.argv[3]).read()
for name, mid in ids.items():
    if f"-- {mid}" not in catalog:
        sys.exit(f"{name} {mid} is not in units/soakd.catalog")
steps = [e for e in entries if e.get("SOAK_EVENT") == "certify_step"]
answers = [e for e in entries if e.get("SOAK_EVENT") == "certify_answer"]
got = [(e["SOAK_CERTIFY_LOAD"], e["SOAK_CERTIFY_VERDICT"]) for e in steps]
if got != [("1x", "pass"), ("2x", "pass"), ("6x", "fail")]:
    sys.exit(f"journal verdicts {got}")
if any(e["MESSAGE_ID"] != ids["SOAK_MESSAGE_CERTIFY_STEP"] for e in steps):
    sys.exit("a verdict entry without the step's MESSAGE_ID")
if len(answers) != 1 or answers[0]["SOAK_CERTIFY_ANSWER"] != "2x" or \
        answers[0]["MESSAGE_ID"] != ids["SOAK_MESSAGE_CERTIFY_ANSWER"]:
    sys.exit(f"journal answer {answers}")
if "over" not in steps[2]["SOAK_CERTIFY_WHY"] or steps[2]["PRIORITY"] != "4":
    sys.exit(f"the failed step's entry: {steps[2]}")
print(f"# journal: {answers[0]['MESSAGE']}")
EOF
	fail "the journal's certification entries"

# --- SIGKILLed mid-step, resumed: the same step goes on ---------------------
# On a device of its own, unthrottled (both steps pass), run through the
# cgroup for its CPU share.
new_loop 64M
DEV2=$NEW_LOOP
CFG2="$WORK/resume.json"
cat >"$CFG2" <<EOF
{
  "run": {"name": "cresume", "interval": "1s",
    "certify": {"steps": ["1x", "2x"], "hold": "5s", "thresholds": "20,100,500",
                "limits": "5,1,0.1"}},
  "workloads": [
    {"name": "drive", "type": "device", "model": "pattern", "targets": ["$DEV2"],
     "read_pct": 100, "block_size": "4KiB", "rate": 400}
  ]
}
EOF
# killed_and_resumed CFG LOG BEFORE WHAT READY SPOILED: runs the
# certification CFG (its run's log LOG) on the throttled device; once step
# 1 is judged and READY holds (WHAT, for the wait), SIGKILLs soakd, keeps
# the log as it was in BEFORE and starts soakd again to finish the run.
# Runs spoiled by soakd's own lateness (late_spoiled LOG SPOILED) are run
# again from scratch, at most 3 in all.
killed_and_resumed() {
	local cfg=$1 log=$2 before=$3 what=$4 ready=$5 spoiled=$6 attempt real=$SOAKD
	# (A failed step 1 ends the run: soakd exits by itself.)
	step1_judged() { grep -q '"type":"certify","step":1' "$log" 2>/dev/null || not_alive "$SOAKD_PID"; }
	SOAKD=$SOAKD_THROTTLED
	late_attempts_begin
	for attempt in 1 2 3; do
		start_soakd --config "$cfg" --socket "$SOCK" --state-dir "$WORK/state" --no-table
		wait_until 30 "step 1's verdict" step1_judged
		if ! late_spoiled "$log" 1; then
			wait_until 30 "$what" "$ready"
			kill -KILL "$SOAKD_PID"
			wait_soakd_exit 5
			cp "$log" "$before"
			start_soakd --config "$cfg" --socket "$SOCK" --state-dir "$WORK/state" --no-table
		fi
		wait_soakd_exit 40
		late_spoiled "$log" "$spoiled" || break
		late_retry "the resumed certification" "$attempt"
		rm -rf "$(dirname "$log")"
	done
	SOAKD=$real
}

LOG2="$WORK/state/cresume/intervals.log"
# Step 1 judged, and two intervals into step 2.
in_step2() {
	grep -q '"type":"certify","step":1' "$LOG2" 2>/dev/null &&
		(($(grep -c '"type":"interval"' "$LOG2") >= 7))
}
killed_and_resumed "$CFG2" "$LOG2" "$WORK/before-kill.log" "two intervals of step 2" in_step2 2
((SOAKD_RC == 0)) || fail "the resumed soakd exited $SOAKD_RC"
grep -q "certify: resuming at step 2 of 2 after 1 verdict" "$SOAKD_LOG" ||
	fail "soakd did not say it resumed the certification at step 2"
python3 - "$WORK/before-kill.log" "$LOG2" <<'EOF' || fail "the resumed certification"
import json, sys
def records(p):
    out = []
    for l in open(p).read().splitlines()[1:]:
        try:
            out.append(json.loads(l.split(" ", 1)[1]))
        except Exception:
            pass
    return out
before, after = records(sys.argv[1]), records(sys.argv[2])
if any(r["type"] == "certify" and r.get("step") == 2 for r in before):
    sys.exit("step 2 was judged before the kill: the kill was not mid-step")
steps = [r for r in after if r["type"] == "certify" and "step" in r]
if [(r["step"], r["verdict"]) for r in steps] != [(1, "pass"), (2, "pass")]:
    sys.exit(f"verdicts {[(r['step'], r['verdict'], r['why']) for r in steps]}")
answer = [r for r in after if r["type"] == "certify" and "answer" in r]
if len(answer) != 1 or answer[0]["answer"] != "2x":
    sys.exit(f"answer {answer}")
# Step 2 counts the intervals held before the kill and after it: the
# hold went on where it was, not from its start (5 intervals, less the
# one the kill cut short).
n = steps[1]["workloads"][0]["intervals"]
before2 = sum(1 for r in before if r["type"] == "interval" and r["sched_ns"] > 5.5e9)
if before2 < 2 or not 4 <= n <= 5:
    sys.exit(f"step 2 judged {n} intervals ({before2} before the kill)")
print(f"# step 2 resumed: {before2} intervals before the kill, {n} judged")
EOF

# --- "confirm": the highest step that passed runs again, SIGKILLed in it ---
CFG3="$WORK/confirm.json"
cat >"$CFG3" <<EOF
{
  "run": {"name": "cconfirm", "interval": "1s",
    "certify": {"steps": ["1x", "6x"], "hold": "3s", "confirm": "5s",
                "thresholds": "20,100,500", "limits": "5,1,0.1"}},
  "workloads": [
    {"name": "drive", "type": "device", "model": "pattern", "targets": ["$DEV"],
     "read_pct": 100, "block_size": "4KiB", "queue_depth": 64, "rate": 150}
  ]
}
EOF
LOG3="$WORK/state/cconfirm/intervals.log"
confirming() {
	local n
	grep -q '"confirm_start"' "$LOG3" 2>/dev/null || return 1
	n=$(sed -n '/"confirm_start"/,$p' "$LOG3" | grep -c '"type":"interval"')
	((${n:-0} >= 3))
}
killed_and_resumed "$CFG3" "$LOG3" "$WORK/before-kill3.log" "three intervals of the confirmation" \
	confirming 1
# The log as the kill left it, in the confirmation: not over, no answer.
"$SOAKCTL" report --run-dir "$WORK/before-kill3.log" >"$WORK/report-confirming.txt" 2>&1 || true
grep -q '^certification: not over yet$' "$WORK/report-confirming.txt" &&
	! grep -q '^answer:' "$WORK/report-confirming.txt" ||
	fail "report --run-dir of a run in its confirmation: $(cat "$WORK/report-confirming.txt")"
((SOAKD_RC == 0)) || fail "the confirmed certification exited $SOAKD_RC"
grep -q "certify: resuming the confirmation of step 1" "$SOAKD_LOG" ||
	fail "soakd did not say it resumed the confirmation"
python3 - "$WORK/before-kill3.log" "$LOG3" <<'EOF' || fail "the confirmation"
import json, sys
def records(p):
    out = []
    for l in open(p).read().splitlines()[1:]:
        try:
            out.append(json.loads(l.split(" ", 1)[1]))
        except Exception:
            pass
    return out
before, after = records(sys.argv[1]), records(sys.argv[2])
cert = [r for r in after if r["type"] == "certify"]
got = [(r.get("step"), r.get("confirm", False), r["verdict"]) for r in cert if "verdict" in r]
if got != [(1, False, "pass"), (2, False, "fail"), (1, True, "pass")]:
    sys.exit(f"verdicts {got}")
if sum(1 for r in cert if "confirm_start" in r) != 1:
    sys.exit("the confirmation started more than once")
answer = [r for r in cert if "answer" in r]
if len(answer) != 1 or answer[0]["answer"] != "1x" or "confirmed" not in answer[0]["why"]:
    sys.exit(f"answer {answer}")
# The confirmation went on across the kill: its verdict counts the reads
# of its 5 s at 150/s, less at most the interval the kill cut short.
conf = [r for r in cert if r.get("confirm")][0]
n = conf["workloads"][0]["ops"]["read"]["count"]
if not 150 * 4 - 10 <= n <= 150 * 5 + 10:
    sys.exit(f"the confirmation counted {n} reads")
if any(r.get("confirm") for r in before if r["type"] == "certify"):
    sys.exit("the confirmation was judged before the kill")
print(f"# confirmed 1x across the kill: {n} reads in the confirmation")
EOF
note "ok"
