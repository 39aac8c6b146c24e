#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Resuming a long run keeps systemd informed (issue 12, item 3): the run's
# log gets hours of 1 s intervals (gen_runlog.py) and soakd, started again
# with WATCHDOG_USEC set, reads it all before it is ready.  The watchdog is
# pinged throughout (no gap near WatchdogSec), every interval is counted,
# and the run goes on from where the log ends.  A dump --since the last
# seconds finds them by bisection: far faster than a dump that reads the
# whole log.  Stopped and started again, soakd resumes from the checkpoint
# it wrote: fast, and nothing is counted twice.  bench/dump-log.sh times
# all this for a month of intervals.
source "$(dirname "$0")/lib.sh"
need_cmd python3

HOURS=${RESUME_LONG_HOURS:-12}
STATE=$(mktemp -d /dev/shm/soakd-resume-long.XXXXXX)
on_exit rm -rf "$STATE"
CFG="$WORK/long.json"
write_file_config "$CFG" long w 60d idle 20

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/long/intervals.log"
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$LOG" 2>/dev/null)
	echo "${n:-0}"
}
at_least() { (($(intervals) >= $1)); }
wait_until 15 "2 intervals on disk" at_least 2
stop_soakd 10
n=$(python3 "$SRCDIR/tests/integration/gen_runlog.py" "$LOG" $((HOURS * 3600))) ||
	fail "cannot generate the log"
total=$(intervals)
note "the log holds $total intervals ($n generated), $(($(stat -c %s "$LOG") >> 20)) MiB"

# A stop while the log is read ends the read at once: nothing is written,
# soakd exits 0, and the next start reads it all again (below), from the
# checkpoint the first start's stop wrote, which the stopped read leaves.
STOPNOTIFY="$WORK/stop-notify.sock"
spawn "$WORK/stop-listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$STOPNOTIFY" "$WORK/stop-notify.jsonl"
wait_until 10 "the notify socket" test -S "$STOPNOTIFY"
size0=$(stat -c %s "$LOG")
CK="$STATE/long/checkpoint.json"
[[ -s $CK ]] || fail "the first start's stop left no checkpoint"
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$STOPNOTIFY" "WATCHDOG_USEC=2000000")
SOAKD_LOG="$WORK/soakd.stopped.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
reading() { grep -q 'resuming run long: [0-9]* records read' "$WORK/stop-notify.jsonl" 2>/dev/null; }
wait_until 60 "soakd to read the log" reading
t0=$(now_ns)
kill -TERM "$SOAKD_PID"
wait_soakd_exit 10
((SOAKD_RC == 0)) || fail "stopped while reading the log, soakd exited $SOAKD_RC"
grep -q "stopped while reading run long's log to resume it" "$SOAKD_LOG" ||
	fail "no word of the stop while the log was read: $(tail -5 "$SOAKD_LOG")"
grep -q 'READY=1' "$WORK/stop-notify.jsonl" && fail "soakd said READY=1 though stopped while reading"
(($(stat -c %s "$LOG") == size0)) || fail "the log changed when soakd was stopped while reading it"
[[ -s $CK ]] || fail "the stop while the log was read took the checkpoint with it"
note "stopped while reading the log: exited in $((($(now_ns) - t0) / 1000000)) ms, the log as it was"
SOAKD_LOG="$WORK/soakd.log"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"
WATCHDOG_USEC=2000000
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=$WATCHDOG_USEC")
t0=$(now_ns)
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
ready() { grep -q 'READY=1' "$WORK/notify.jsonl" 2>/dev/null; }
wait_until 180 "soakd to be ready" ready
note "resumed and ready after $((($(now_ns) - t0) / 1000000)) ms"
grep -q "resuming run long at" "$SOAKD_LOG" || fail "soakd did not say it resumed"
sleep 2.5 # two more intervals, for pings after READY=1 as well
counted=$(ctl dump --format json | python3 -c '
import json, sys
print(json.load(sys.stdin)["workloads"][0]["intervals"])')
((counted >= total)) || fail "the resumed run counts $counted intervals, the log had $total"

# The pings so far: before, while and after the log was read.
python3 - "$WORK/notify.jsonl" "$WATCHDOG_USEC" <<'PY' || fail "the watchdog was not pinged throughout"
import json, sys
recs = [json.loads(line) for line in open(sys.argv[1])]
watchdog_s = int(sys.argv[2]) / 1e6
pings = [r["t"] for r in recs if "WATCHDOG=1" in r["msg"].split("\n")]
ready = [r["t"] for r in recs if "READY=1" in r["msg"].split("\n")]
start = 0.0  # the listener started just before soakd
before = [t for t in pings if t < ready[0]]
gaps = [b - a for a, b in zip([start] + pings, pings)]
worst = max(range(len(gaps)), key=gaps.__getitem__)
print(f"# READY=1 at {ready[0] - start:.2f} s; {len(before)} watchdog pings before it, "
      f"{len(pings)} in all; longest gap {max(gaps):.2f} s, ending at {pings[worst] - start:.2f} s")
if ready[0] - start > watchdog_s / 2 and not before:
    sys.exit("no watchdog ping while the log was read")
# And each pushes the start's timeout on (TimeoutStartSec=, which pings of
# the watchdog do not extend).
unextended = [r["t"] for r in recs if r["t"] < ready[0] and "WATCHDOG=1" in r["msg"].split("\n")
              and not any(l.startswith("EXTEND_TIMEOUT_USEC=") for l in r["msg"].split("\n"))
              and "resuming run" in r["msg"]]
if unextended:
    sys.exit(f"{len(unextended)} pings while the log was read do not extend the start's timeout")
sys.exit(0 if max(gaps) < watchdog_s * 0.75 else 1)
PY

# The JSON dump answers only once the whole log is read (seconds here):
# the spaces soakd sends meanwhile keep a 3 s read timeout from expiring.
t0=$(now_ns)
timeout 120 "$SOAKCTL" --socket "$SOCK" --timeout 3 dump --format json --op read \
	>"$WORK/read.json" || fail "dump --op read failed"
full_ms=$((($(now_ns) - t0) / 1000000))
# A CSV of one slice over the whole log has its row only at the end: the
# spaces between its text's chunks keep the 3 s timeout from expiring.
t0=$(now_ns)
timeout 120 "$SOAKCTL" --socket "$SOCK" --timeout 3 dump --format csv --op read \
	--slice "$((HOURS + 1))h" >"$WORK/slice.csv" || fail "dump --format csv --slice failed"
slice_ms=$((($(now_ns) - t0) / 1000000))
python3 - "$WORK/slice.csv" "$WORK/read.json" "$slice_ms" <<'PY' || fail "the one-slice CSV"
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
read = json.load(open(sys.argv[2]))["workloads"][0]["ops"]["read"]
# The run went on between the two dumps: a few seconds' more reads.
if len(rows) != 1 or not read["count"] <= int(rows[0]["count"]) <= read["count"] + 1000:
    sys.exit(f"{len(rows)} rows, {rows[:1]}; the JSON dump before it counts {read['count']}")
print(f"# one slice in {sys.argv[3]} ms: {rows[0]['count']} reads "
      f"({read['count']} in the JSON dump before it)")
PY
# On the wire: the text as one string, or in chunks when asked; either
# reply is one line of JSON, and the text is the same.
python3 - "$SOCK" "$((HOURS * 3600 - 3600))s" <<'PY' || fail "the CSV reply on the wire"
import json, socket, sys
def dump(chunks):
    req = {"cmd": "dump", "format": "csv", "op": "read", "since": sys.argv[2],
           "until": "%ds" % (int(sys.argv[2][:-1]) + 1800), "slice": "10m"}
    if chunks:
        req["chunks"] = True
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(json.dumps(req).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        part = s.recv(65536)
        if not part:
            sys.exit("the connection closed before the reply's end")
        data += part
    return data
one, chunked = dump(False), dump(True)
if not one.startswith(b'{"ok":true,"format":"csv","csv":"'):
    sys.exit(f"the reply begins {one[:60]!r}")
if not chunked.startswith(b'{"ok":true,"format":"csv","csv_chunks":['):
    sys.exit(f"the chunked reply begins {chunked[:60]!r}")
text = json.loads(one)["csv"]
parts = json.loads(chunked)["csv_chunks"]
if "".join(parts) != text or len(text.splitlines()) != 4:
    sys.exit(f"the text differs: {text!r} against {parts!r}")
print(f"# on the wire: {len(text)} bytes of CSV as one string and in {len(parts)} chunk(s)")
PY
since=$((HOURS * 3600 - 10))
t0=$(now_ns)
ctl dump --format csv --op read --since "${since}s" >"$WORK/since.csv" || fail "dump --since failed"
since_ms=$((($(now_ns) - t0) / 1000000))
rows=$(($(wc -l <"$WORK/since.csv") - 1))
first=$(sed -n 2p "$WORK/since.csv" | cut -d, -f3)
note "dump of the whole log: $full_ms ms; dump --since ${since}s: $since_ms ms, $rows rows from $first s"
((rows >= 10)) || fail "dump --since returned $rows rows"
python3 -c "import sys; sys.exit(0 if $first >= $since else 1)" || fail "dump --since began at $first s"
((since_ms < 1000 && since_ms * 5 < full_ms)) ||
	fail "dump --since took $since_ms ms, the whole log $full_ms ms: not found by bisection"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# Again: from the checkpoint written when it stopped.  A copy without it
# is read whole below: both must come to the same results.
[[ -s $STATE/long/checkpoint.json ]] || fail "no checkpoint.json after soakd stopped"
FULL=$(mktemp -d /dev/shm/soakd-resume-long-full.XXXXXX)
on_exit rm -rf "$FULL"
cp -a "$STATE/long" "$FULL/"
rm "$FULL/long/checkpoint.json"
logged=$(intervals)
t0=$(now_ns)
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 120 "the control socket" ctl_answers
again_ms=$((($(now_ns) - t0) / 1000000))
grep -q "from its checkpoint" "$SOAKD_LOG" || fail "soakd did not resume from its checkpoint"
cp "$STATE/long/checkpoint.json" "$WORK/from-checkpoint.json"
counted=$(ctl dump --format json | python3 -c '
import json, sys
print(json.load(sys.stdin)["workloads"][0]["intervals"])')
note "resumed from the checkpoint in $again_ms ms; $counted intervals counted, $logged in the log"
((counted >= logged && counted <= logged + again_ms / 1000 + 3)) ||
	fail "after resuming from the checkpoint $counted intervals are counted, the log has $logged"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# The same log read whole: the checkpoint it writes once resumed (before
# any new interval) is the one the resume from the checkpoint wrote.
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$FULL" --no-table
wait_until 180 "the control socket" ctl_answers
grep -q "from its checkpoint" "$SOAKD_LOG" && fail "the copy without a checkpoint used one"
cp "$FULL/long/checkpoint.json" "$WORK/from-log.json"
stop_soakd 20
cmp -s "$WORK/from-checkpoint.json" "$WORK/from-log.json" ||
	fail "resuming from the checkpoint and from the whole log give different results"
note "the checkpoint and the whole log give the same results ($(stat -c %s "$WORK/from-log.json") bytes)"
