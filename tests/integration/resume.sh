#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Crash-safe results and resume: soakd is SIGKILLed mid-run and started
# again on the same configuration.  Every interval recorded before the kill
# is kept, the restart is recorded as a gap, the schedule goes on at the
# run time it had reached, and the finished run can be dumped, reported
# and exported as an HdrHistogram log without soakd.
source "$(dirname "$0")/lib.sh"
need_cmd python3
# A halted CPU waiting for a busy hypervisor would make soakd late (lib.sh).
keep_cpus_awake
# The CPU the hypervisor takes from here on (the report's verdict, below).
steal_mark

CFG="$WORK/resume.json"
STATE="$WORK/state"
write_file_config "$CFG" resume w 10s idle 1000

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/resume/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
four_intervals() { (($(intervals) >= 4)); }
at_least_two() { (($(intervals) >= 2)); }
wait_until 15 "4 intervals in the log" four_intervals
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
before=$(intervals)
note "SIGKILLed with $before intervals on disk"
cp "$LOG" "$WORK/before.log"

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
grep -q 'resuming run resume at' "$SOAKD_LOG" || fail "soakd did not say it resumed"
wait_until 30 "the resumed workload to finish" workload_is w finished

ctl dump --format csv --op read >"$WORK/dump.csv" || fail "dump --format csv failed"
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

python3 - "$WORK/before.log" "$LOG" "$WORK/dump.csv" "$WORK/dump.json" <<'EOF' || fail "resume"
import csv, json, sys
def records(path):
    out = []
    for line in open(path).read().splitlines()[1:]:
        try:
            out.append(json.loads(line.split(" ", 1)[1]))
        except Exception:
            pass  # a torn last line
    return out
before = [r for r in records(sys.argv[1]) if r["type"] == "interval"]
after = records(sys.argv[2])
intervals = [r for r in after if r["type"] == "interval"]
# Every interval on disk before the kill is still there, unchanged.
if intervals[:len(before)] != before:
    sys.exit("intervals recorded before the kill were lost or changed")
gaps = [r for r in after if r["type"] == "gap"]
if len(gaps) != 1:
    sys.exit(f"expected one gap record, found {len(gaps)}")
# The schedule went on at the run time reached: run time never goes back
# and the run covers the 10 s schedule (minus the interval in progress).
ends = [r["end_ns"] for r in intervals]
if ends != sorted(ends):
    sys.exit("run time went backwards across the restart")
if not 9.0e9 <= ends[-1] <= 10.5e9:
    sys.exit(f"the run ended at {ends[-1] / 1e9} s of run time, expected about 10 s")
rows = list(csv.DictReader(open(sys.argv[3])))
total = sum(int(r["count"]) for r in rows)
dump = json.load(open(sys.argv[4]))
count = dump["workloads"][0]["ops"]["read"]["count"]
if count != total:
    sys.exit(f"dump totals ({count}) disagree with its intervals ({total})")
# 700 reads/s for 10 s, less at most the interval lost in the kill.
if not 6300 - 700 <= count <= 7000 * 1.01:
    sys.exit(f"{count} reads, expected 5600..7070")
print(f"{len(before)} intervals kept across the kill; {count} reads in all")
EOF

# The finished run, without soakd: dump, report and HdrHistogram log.
"$SOAKCTL" dump --run-dir "$STATE/resume" >"$WORK/offline.json" || fail "dump --run-dir failed"
python3 - "$WORK/offline.json" "$WORK/dump.json" <<'EOF' || fail "dump --run-dir disagrees with soakd"
import json, sys
a, b = (json.load(open(p))["workloads"][0]["ops"]["read"]["count"] for p in sys.argv[1:3])
if a != b:
    sys.exit(f"offline {a} != live {b}")
EOF
rc=0
"$SOAKCTL" report --run-dir "$STATE/resume" --slice 5s --thresholds 1,8,5000 --limits -,-,50 >"$WORK/report.txt" || rc=$?
# Its verdict is the log's: PASS, or INCONCLUSIVE over exactly the
# intervals the log marks generator_late (soakd itself late, which a host
# that steals its CPU can cause, lib.sh); with no late interval, nothing
# else.  A soakd late on a quiet host fails.
late=$(python3 - "$STATE/resume/intervals.log" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    try:
        r = json.loads(line.split(" ", 1)[1])
    except Exception:
        continue
    n += r.get("type") == "interval" and r.get("generator_late") is True
print(n)
EOF
)
sed 's/^/# report: /' "$WORK/report.txt"
if ((late == 0)); then
	((rc == 0)) || fail "report --run-dir exited $rc: $(cat "$WORK/report.txt")"
	grep -q '^verdict: PASS$' "$WORK/report.txt" || fail "report --run-dir did not pass (above)"
else
	stolen=$(steal_pct)
	note "soakd was late in $late interval record(s) of the log; the hypervisor took $stolen% of the CPU"
	((rc == 3)) || fail "report --run-dir exited $rc (not 3) over $late late interval(s)"
	grep -Eq "^verdict: INCONCLUSIVE \(soakd itself was late in $late intervals?\)$" "$WORK/report.txt" ||
		fail "report --run-dir's verdict is not INCONCLUSIVE over the log's $late late interval(s)"
	((stolen >= 3)) || fail "soakd was late (generator_late) on a host that stole $stolen% of the CPU"
fi
"$SOAKCTL" dump --run-dir "$STATE/resume" --format hdr --op read >"$WORK/read.hlog" ||
	fail "dump --format hdr failed"
grep -q '^Tag=w.read,' "$WORK/read.hlog" || fail "no tagged interval lines in the hdr log"
HDRH_PYTHON=$(test_python)
"$HDRH_PYTHON" - "$WORK/read.hlog" "$WORK/dump.json" <<'EOF' || fail "HdrHistogram cannot read the log"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 2**45 - 1, 2))
total = 0
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    total += h.get_total_count()
# A missed op's wait is in the latency histogram (a lower bound of its
# latency), so the log holds the served ops and the missed ones.
read = json.load(open(sys.argv[2]))["workloads"][0]["ops"]["read"]
want = read["count"] + read["missed"]
if total != want:
    sys.exit(f"HdrHistogram read {total} values, soakd counted {read['count']} served "
             f"and {read['missed']} missed")
print(f"HdrHistogram's reader decoded {total} reads")
EOF

# A clean stop (systemctl stop, a reboot) is no end of the run either: the
# workload resumes where it was.
CFG2="$WORK/resume2.json"
write_file_config "$CFG2" resume2 w2 6s idle 500
start_soakd --config "$CFG2" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/resume2/intervals.log"
wait_until 15 "2 intervals in the log" at_least_two
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC on SIGTERM"
start_soakd --config "$CFG2" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
grep -q 'resuming run resume2 at' "$SOAKD_LOG" || fail "after SIGTERM, soakd did not resume the run"
wait_until 20 "the workload resumed after SIGTERM to finish" workload_is w2 finished
stop_soakd 10
note "ok"
