#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A dump of a long run does not hold soakd up (issue 12, item 3): the run's
# log gets three and a half days of 1 s intervals (gen_runlog.py, beside
# soakd's own records), then a full CSV dump streams it while another client
# asks for status over and over.  Status answers in well under a second
# throughout, the watchdog keeps being pinged, the CSV is complete (a row
# per interval and op) and bigger than the 64 MiB soakctl used to refuse.
# Then eight clients loop on dumps, and status still answers.  (resume-long
# shows that --since is found by bisection.)
source "$(dirname "$0")/lib.sh"
need_cmd python3

DAYS=${DUMP_LARGE_DAYS:-3.5}
SECONDS_OF_LOG=$(python3 -c "print(int($DAYS * 86400))")
STATE=$(mktemp -d /dev/shm/soakd-dump-large.XXXXXX)
on_exit rm -rf "$STATE"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"

# A low rate: small records, so the log is mostly what a dump prints.
CFG="$WORK/large.json"
write_file_config "$CFG" large w 60d idle 20
WATCHDOG_USEC=2000000
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=$WATCHDOG_USEC")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$STATE/large/intervals.log"
has_interval() { grep -q '"type":"interval"' "$LOG" 2>/dev/null; }
wait_until 15 "a first interval on disk" has_interval

t0=$(now_ns)
n=$(python3 "$SRCDIR/tests/integration/gen_runlog.py" --as synthetic "$LOG" "$SECONDS_OF_LOG") ||
	fail "cannot generate the log"
note "appended $n records ($DAYS days) in $((($(now_ns) - t0) / 1000000)) ms:" \
	"$(($(stat -c %s "$LOG") >> 20)) MiB of log"

# The full CSV, streamed, while status is asked for again and again.
t0=$(now_ns)
timeout 600 "$SOAKCTL" --socket "$SOCK" dump --format csv --workload synthetic \
	>"$STATE/dump.csv" 2>"$WORK/dump.err" &
DUMP=$!
on_exit _kill_bg "$DUMP"
max_ms=0 asked=0
while is_alive "$DUMP"; do
	s=$(now_ns)
	ctl status >/dev/null || fail "status failed while a dump was streaming"
	ms=$((($(now_ns) - s) / 1000000))
	((ms > max_ms)) && max_ms=$ms
	asked=$((asked + 1))
	sleep 0.2
done
wait "$DUMP" || fail "the dump failed: $(cat "$WORK/dump.err")"
dump_ms=$((($(now_ns) - t0) / 1000000))
note "dump: $dump_ms ms, $(($(stat -c %s "$STATE/dump.csv") >> 20)) MiB of CSV;" \
	"status asked $asked times meanwhile, slowest answer $max_ms ms"
((asked >= 3)) || fail "the dump was over too soon to ask for status ($dump_ms ms)"
((max_ms < 1000)) || fail "status took $max_ms ms while a dump was streaming"
(($(stat -c %s "$STATE/dump.csv") > 64 << 20)) || fail "the CSV is not larger than 64 MiB"

# Complete: one row per generated interval and op, in order, none twice.
python3 - "$STATE/dump.csv" "$n" <<'PY' || fail "the CSV is not complete"
import sys
rows = {}
with open(sys.argv[1]) as f:
    header = f.readline()
    assert header.startswith("workload,op,start_s"), header
    for line in f:
        w, op, start, end = line.split(",", 4)[:4]
        rows.setdefault(op, []).append(float(start))
n = int(sys.argv[2])
for op, starts in rows.items():
    if len(starts) != n:
        sys.exit(f"{op}: {len(starts)} rows, expected {n}")
    if any(b - a != 1 for a, b in zip(starts, starts[1:])):
        sys.exit(f"{op}: rows missing or out of order")
print(f"# {len(rows)} ops x {n} rows")
PY

# Eight clients loop on dumps (any reader may): at most a few are built at
# once, the rest are told to try again, and status still answers quickly.
loop_dumps() {
	local end=$(($(now_ns) + 12 * 1000000000)) i=0
	while (($(now_ns) < end)); do
		if "$SOAKCTL" --socket "$SOCK" --timeout 60 dump --format csv --workload synthetic \
			--until 20000s >/dev/null 2>"$WORK/loop$1.err"; then
			echo ok
		else
			grep -q 'already building' "$WORK/loop$1.err" && echo busy ||
				echo "failed: $(cat "$WORK/loop$1.err")"
		fi
		sleep 0.1
	done >"$WORK/loop$1.out"
}
loopers=()
for i in 1 2 3 4 5 6 7 8; do
	loop_dumps "$i" &
	loopers+=($!)
done
max_ms=0 asked=0
while is_alive "${loopers[0]}"; do
	s=$(now_ns)
	ctl status >/dev/null || fail "status failed while eight clients looped on dumps"
	ms=$((($(now_ns) - s) / 1000000))
	((ms > max_ms)) && max_ms=$ms
	asked=$((asked + 1))
	sleep 0.2
done
for p in "${loopers[@]}"; do wait "$p"; done
ok=$(cat "$WORK"/loop*.out | grep -c '^ok$' || true)
busy=$(cat "$WORK"/loop*.out | grep -c '^busy$' || true)
note "eight looping dumpers: $ok dumps done, $busy told to retry; status asked $asked times," \
	"slowest answer $max_ms ms"
! grep -h '^failed' "$WORK"/loop*.out || fail "a looping dump failed otherwise than busy"
((ok >= 4)) || fail "only $ok dumps were done by eight looping clients"

# The run's own workload, through all of the above: every 1 s interval is
# in its log, in order, and each did the 20 ops its rate asks for, so no
# result was lost or skewed by the dumps.
# (The whole log is read for it: about as long as the first dump.)
timeout 300 "$SOAKCTL" --socket "$SOCK" --timeout 240 dump --format csv --workload w \
	>"$WORK/w.csv" 2>"$WORK/w.err" || fail "dump of the run's workload failed: $(cat "$WORK/w.err")"
python3 - "$WORK/w.csv" 20 <<'PY' || fail "the run's own intervals were lost or skewed during the dumps"
import csv, sys
counts, lag = {}, 0.0
for row in csv.DictReader(open(sys.argv[1])):
    start = float(row["start_s"])
    counts[start] = counts.get(start, 0) + int(row["count"])
    lag = max(lag, float(row["lag_max_ms"] or 0))
starts = sorted(counts)
rate = int(sys.argv[2])
print(f"# workload w: {len(starts)} intervals, ops per interval "
      f"{min(counts[s] for s in starts[1:-1])}..{max(counts[s] for s in starts[1:-1])}, "
      f"lag at most {lag:.1f} ms")
if len(starts) < 30:
    sys.exit(f"only {len(starts)} intervals of the run's workload")
# The first interval starts a moment into the run; the rest each 1 s on.
gaps = [(a, b) for a, b in zip(starts[1:], starts[2:]) if b - a != 1]
if gaps:
    sys.exit(f"intervals missing between {gaps[:5]}")
# The first and last intervals may be partial.
off = [(s, counts[s]) for s in starts[1:-1] if abs(counts[s] - rate) > 1]
if off:
    sys.exit(f"intervals whose op count is not {rate}: {off[:10]}")
PY
((max_ms < 1000)) || fail "status took $max_ms ms while eight clients looped on dumps"

# The main loop kept going: the watchdog was pinged all along.
_kill_bg "$LISTENER"
python3 - "$WORK/notify.jsonl" "$WATCHDOG_USEC" <<'PY' || fail "the watchdog was not pinged in time"
import json, sys
pings = [r["t"] for r in map(json.loads, open(sys.argv[1])) if "WATCHDOG=1" in r["msg"].split("\n")]
gaps = [b - a for a, b in zip(pings, pings[1:])]
print(f"# {len(pings)} watchdog pings, longest gap {max(gaps):.2f} s")
sys.exit(0 if max(gaps) < int(sys.argv[2]) / 1e6 * 0.75 else 1)
PY

stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
