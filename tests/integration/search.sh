#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Capacity under a latency target (issue 18, section 2): a loop device
# over RAM throttled by a block cgroup to a known IOPS limit; the search
# bisects the open-loop rate for p99 under 20 ms and must land within a
# stated tolerance of the limit.  The curve is in the run's log, soakctl
# status, report and plot (live and from the run directory); the soak at
# 80% of the answer follows.  SIGKILLed mid-search, it resumes with the
# probes it had.  Config errors point at the key.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/certlib.sh"

# --- config errors ----------------------------------------------------------
search_case() {
	cat >"$WORK/$1.json" <<CONFIG
{
  "run": {"name": "s", "interval": "1s",
    $2},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "targets": ["$WORK/w.dat"],
     "file_size": "16MiB", "block_size": "4KiB", "rate": 100}
  ]
}
CONFIG
}
want_error() {
	local out="$WORK/$1.out" rc=0
	(cd "$WORK" && timeout 20 "$SOAKD" --check-config "$WORK/$1.json") >"$out" 2>&1 || rc=$?
	((rc == 1)) || fail "$1: --check-config exited $rc: $(cat "$out")"
	grep -q "^$WORK/$1.json:3:[0-9]*: .*$2" "$out" || fail "$1: expected line 3 naming '$2': $(cat "$out")"
	note "$1: $(head -n1 "$out")"
}
search_case no-below '"search": {"window": "2s", "max": 1000}'
want_error no-below '"below"'
search_case window '"search": {"below": "2ms", "window": "1500ms", "max": 1000}'
want_error window "whole number of the run's intervals"
search_case bounds '"search": {"below": "2ms", "window": "2s", "min": 2000, "max": 1000}'
want_error bounds '"min" must be above 0 and below "max"'
search_case both '"certify": {"steps": ["1x"], "hold": "2s"}, "search": {"below": "2ms", "window": "2s", "max": 1000}'
want_error both "either certifies or searches"
search_case then '"search": {"below": "2ms", "window": "2s", "max": 1000, "then": "180%"}'
want_error then '"then" must be a share'

# --- the search on a device held to 600 IOPS --------------------------------
new_loop 64M
DEV=$NEW_LOOP
LIMIT_IOPS=600
throttle_device "$DEV" "$LIMIT_IOPS"
note "$DEV throttled to $LIMIT_IOPS IOPS ($THROTTLE_HOW)"
# The tolerance: the answer is within 20% of the limit (a block cgroup's
# throttle lets a burst through, and the bisection stops within 10%).
LOW=$((LIMIT_IOPS * 8 / 10))
HIGH=$((LIMIT_IOPS * 12 / 10))

CFG="$WORK/search.json"
write_search_config() {
	cat >"$CFG" <<EOF
{
  "run": {"name": "$1", "interval": "1s", "on_finish": "$2",
    "search": {"percentile": 99, "below": "20ms", "window": "1s", "windows": 3,
               "min": 100, "max": 1600, "resolution": 0.1, "then": "80%", "then_for": "2s"}},
  "workloads": [
    {"name": "drive", "type": "device", "model": "pattern", "targets": ["$DEV"],
     "read_pct": 100, "block_size": "4KiB", "queue_depth": 64, "rate": 100}
  ]
}
EOF
}
write_search_config search idle
timeout 20 "$SOAKD" --check-config "$CFG" >"$WORK/plan.txt" 2>&1 || fail "plan: $(cat "$WORK/plan.txt")"
grep -q '"search": {"workload": "drive", "percentile": 99, "below": "20ms", "window": "1s", "windows": 3, "min": 100, "max": 1600' "$WORK/plan.txt" ||
	fail "the plan does not show the search: $(cat "$WORK/plan.txt")"

SOAKD_REAL=$SOAKD
SOAKD=$SOAKD_THROTTLED
LOG="$WORK/state/search/intervals.log"
answered() { grep -q '"answer_rate"' "$LOG" 2>/dev/null; }
# check_answer LOG: the answer within the tolerance; with --spoiled, exit 3
# when it is not (this shared machine's load, soakd starved or the loop
# device's kernel workers, which no cgroup of the test's holds, can push a
# probe near the limit over; a wrong search is wrong every time, so the
# test runs it again, up to three times).
check_answer() {
	python3 - "$@" "$LOW" "$HIGH" <<'EOF'
import json, sys
log, low, high = sys.argv[1], float(sys.argv[-2]), float(sys.argv[-1])
recs = []
for line in open(log).read().splitlines()[1:]:
    try:
        recs.append(json.loads(line.split(" ", 1)[1]))
    except Exception:
        pass
probes = [r for r in recs if r["type"] == "search" and "probe" in r]
answer = [r for r in recs if r["type"] == "search" and "answer_rate" in r]
if [p["probe"] for p in probes] != list(range(1, len(probes) + 1)):
    sys.exit(f"probes numbered {[p['probe'] for p in probes]}")
if len(answer) != 1 or answer[0]["answer_rate"] is None:
    sys.exit(f"answer {answer}")
rate = answer[0]["answer_rate"]
for p in probes:
    print(f"# probe {p['probe']}: {p['rate']:.1f} ops/s p99 {p['percentile_us']} us {p['verdict']}"
          f" ({p['agreed']} of {p['windows']})")
print(f"# answer {rate:.1f} ops/s: {answer[0]['confidence']}")
if not low <= rate <= high:
    if "--spoiled" in sys.argv:
        print(f"# the answer {rate:.1f} ops/s is not within {low:.0f}..{high:.0f}")
        sys.exit(3)
    sys.exit(f"the answer {rate:.1f} ops/s is not within {low:.0f}..{high:.0f}")
if probes[0]["rate"] != 100 or probes[1]["rate"] != 1600 or probes[1]["verdict"] != "above":
    sys.exit("the bisection did not start at min and max")
lo, hi = rate, min(p["rate"] for p in probes if p["verdict"] == "above")
if hi - lo > 0.1 * hi + 1e-9:
    sys.exit(f"stopped with {lo}..{hi}, wider than the resolution")
# The soak at 80% of the answer: after the answer, intervals at that rate.
if "--soak" not in sys.argv:
    sys.exit(0)
at = recs.index(answer[0])
# The first may be cut short by where in its interval the soak began
# (an interval keeps the run's grid, so it can be a whole second long with
# the workload in it for less): one full interval at the rate is the proof.
soak = [r for r in recs[at:] if r["type"] == "interval" and r["end_ns"] - r["start_ns"] > 9e8]
if not any(abs(r["target_ops"] - 0.8 * rate) <= 0.05 * rate + 2 for r in soak):
    sys.exit(f"no soak at 80% of {rate}: {[r['target_ops'] for r in soak]}")
EOF
}
for attempt in 1 2 3; do
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 100 "the search's answer" answered
	rc=0
	check_answer "$LOG" --spoiled || rc=$?
	((rc == 3)) || break
	((attempt < 3)) || fail "the answer was out of the tolerance in 3 searches"
	note "attempt $attempt out of the tolerance; again"
	stop_soakd 10
	rm -rf "$WORK/state/search"
done
((rc == 0)) || fail "the search's answer"
sleep_until_soaked() { ctl status --json | grep -q '"state": "finished"'; }
wait_until 20 "the soak after the search to end" sleep_until_soaked
ctl status >"$WORK/status.txt" || fail "status"
ctl report >"$WORK/report.txt" || true
(cd "$WORK" && timeout 20 "$SOAKCTL" --socket "$SOCK" plot) >"$WORK/plot.out" 2>&1 ||
	fail "plot: $(cat "$WORK/plot.out")"
stop_soakd 10
check_answer "$LOG" --soak || fail "the search's answer"
grep -Eq '^search: p99 below 20000 us, 1 s windows' "$WORK/status.txt" || fail "status: $(cat "$WORK/status.txt")"
grep -Eq '^answer: [0-9.]+ ops/s with p99 below 20000 us \([0-9] of 3 windows below' "$WORK/status.txt" ||
	fail "status has no answer: $(cat "$WORK/status.txt")"
grep -Eq '^2 +1600.0 .* above +[0-9] of 3$' "$WORK/report.txt" || fail "report has no curve: $(cat "$WORK/report.txt")"
grep -q "wrote search-search.svg (the search's curve" "$WORK/plot.out" || fail "plot: $(cat "$WORK/plot.out")"
"$SOAKCTL" report --run-dir "$WORK/state/search" >"$WORK/offline-report.txt" 2>&1 || true
grep -Eq '^2 +1600.0 .* above +[0-9] of 3$' "$WORK/offline-report.txt" &&
	grep -Eq '^answer: [0-9.]+ ops/s with p99 below 20000 us' "$WORK/offline-report.txt" ||
	fail "report --run-dir has no curve: $(cat "$WORK/offline-report.txt")"
timeout 20 "$SOAKCTL" plot --run-dir "$WORK/state/search" --output "$WORK/offline.svg" >"$WORK/plot2.out" 2>&1 ||
	fail "plot --run-dir: $(cat "$WORK/plot2.out")"
python3 - "$WORK/search-search.svg" "$WORK/offline-search.svg" "$LOG" <<'EOF' || fail "the curve's plot"
import json, sys, xml.dom.minidom as minidom
probes = sum(1 for l in open(sys.argv[3]) if '"type":"search","probe"' in l)
for path in sys.argv[1:3]:
    doc = minidom.parse(path)
    series = {p.getAttribute("data-series"): p.getAttribute("d") for p in doc.getElementsByTagName("path")}
    if set(series) != {"p50", "p99", "p99.9"}:
        sys.exit(f"{path}: series {sorted(series)}")
    if any(d.count("L") + 1 != probes for d in series.values()):
        sys.exit(f"{path}: not one point per probe ({probes})")
    lines = {l.getAttribute("data-series") for l in doc.getElementsByTagName("line")}
    if not {"target", "answer"} <= lines:
        sys.exit(f"{path}: no target or answer line")
print(f"# both plots draw {probes} probes, the target and the answer")
EOF

# --- SIGKILLed mid-search, resumed with the probes it had -------------------
write_search_config sresume exit
LOG="$WORK/state/sresume/intervals.log"
three_probes() {
	local n
	n=$(grep -c '"type":"search","probe"' "$LOG" 2>/dev/null)
	((${n:-0} >= 3))
}
for attempt in 1 2 3; do
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 60 "three probes" three_probes
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 5
	before=$(grep -c '"type":"search","probe"' "$LOG")
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_soakd_exit 100
	((SOAKD_RC == 0)) || fail "the resumed search exited $SOAKD_RC"
	grep -q "search: resuming after $before probe(s)" "$SOAKD_LOG" ||
		fail "soakd did not say it resumed the search after $before probes"
	rc=0
	check_answer "$LOG" --spoiled --soak || rc=$?
	((rc == 3)) || break
	((attempt < 3)) || fail "the resumed search's answer was out of the tolerance 3 times"
	note "attempt $attempt out of the tolerance; again"
	rm -rf "$WORK/state/sresume"
done
((rc == 0)) || fail "the resumed search's answer"

# --- stopped mid-search: the rate so far is said to be no answer -----------
write_search_config sgiveup idle
LOG="$WORK/state/sgiveup/intervals.log"
one_probe() { grep -q '"type":"search","probe"' "$LOG" 2>/dev/null; }
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 60 "the first probe" one_probe
ctl stop drive >/dev/null || fail "soakctl stop drive failed"
wait_until 20 "the given-up search's record" answered
stop_soakd 10
python3 - "$LOG" <<'EOF' || fail "the given-up search's record"
import json, sys
for line in open(sys.argv[1]):
    if '"answer_rate"' in line:
        rec = json.loads(line.split(" ", 1)[1])
if rec.get("gave_up") is not True or "stopped" not in rec.get("why", ""):
    sys.exit(f"a search stopped after one probe: {rec}")
EOF
if grep -q '"answer_rate":[0-9]' "$LOG"; then
	grep -q "search: given up; the highest rate with p99 below 20000 us is" "$SOAKD_LOG" ||
		fail "soakd's answer line does not say the search was given up: $(grep 'search:' "$SOAKD_LOG")"
	"$SOAKCTL" report --html "$WORK/giveup.html" --run-dir "$WORK/state/sgiveup" \
		>"$WORK/giveup.out" 2>&1 || true
	grep -q 'data-gave-up="true">Given up; the highest rate below so far' "$WORK/giveup.html" ||
		fail "the HTML report shows a given-up search as an answer: $(grep -o '<p id="search-answer".*' "$WORK/giveup.html")"
fi
SOAKD=$SOAKD_REAL
note "ok"
