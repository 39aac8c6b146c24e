#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl watch: a status table per interval, one after another when its
# output is not a terminal; it exits 2 with a message when soakd goes away,
# and 0 at once on Ctrl-C (SIGINT).
source "$(dirname "$0")/lib.sh"

need_cmd python3

CFG="$WORK/watch.json"
write_file_config "$CFG" watch w 60s idle 400

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 10 "the workload to run" workload_is w running

WATCH_OUT="$WORK/watch.out"
"$SOAKCTL" --socket "$SOCK" watch >"$WATCH_OUT" 2>"$WORK/watch.err" &
WATCH=$!
on_exit _kill_bg "$WATCH"
tables() { grep -c '^--- [0-9][0-9]:[0-9][0-9]:[0-9][0-9] ' "$WATCH_OUT" 2>/dev/null || true; }
four_tables() { (($(tables) >= 4)); }
wait_until 10 "4 tables from soakctl watch" four_tables

python3 - "$WATCH_OUT" <<'EOF' || fail "watch output: $(cat "$WATCH_OUT")"
import re, sys
blocks = [b for b in open(sys.argv[1]).read().split("--- ")[1:] if b.strip()]
problems = []
achieved = []
for b in blocks[:4]:
    lines = b.splitlines()
    if not re.match(r"\d\d:\d\d:\d\d \(every interval; Ctrl-C ends\)$", lines[0]):
        problems.append(f"header {lines[0]!r}")
    if not any(re.match(r"run watch: running, elapsed \d+s$", l) for l in lines):
        problems.append("no run line")
    head = [l for l in lines if l.startswith("WORKLOAD")]
    if not head or not all(c in head[0] for c in ("TARGET/s", "ACHIEVED/s", "P50(us)", "P99(us)", "MAX(us)", "ERRORS", "LAG(ms)")):
        problems.append(f"no table header in {b!r}")
    rows = {l.split()[1]: l.split() for l in lines if l.startswith("w ")}
    if set(rows) != {"read", "write"}:
        problems.append(f"rows {sorted(rows)}")
        continue
    achieved.append(float(rows["read"][4]))
# After the first interval, the table shows the read rate near its target.
if not any(abs(a - 280) < 28 for a in achieved):
    problems.append(f"read rates {achieved}, target 280/s")
# One table per interval: the elapsed times step by about one second.
elapsed = [int(m) for m in re.findall(r"elapsed (\d+)s", " ".join(blocks))]
if any(b - a > 2 for a, b in zip(elapsed, elapsed[1:])) or len(set(elapsed)) < 3:
    problems.append(f"elapsed times {elapsed}: not one table per interval")
print(f"# {len(blocks)} tables, elapsed {elapsed}, read ops/s {achieved}")
if problems:
    sys.exit("\n".join(problems))
EOF

# soakd goes away: watch says so and exits 2.
stop_soakd 15
wait_until 10 "soakctl watch to exit" not_alive "$WATCH"
rc=0
wait "$WATCH" || rc=$?
((rc == 2)) || fail "watch exited $rc when soakd went away, expected 2: $(cat "$WORK/watch.err")"
grep -q 'soakd went away (run watch was running); watch ends' "$WORK/watch.err" ||
	fail "watch did not say soakd went away: $(cat "$WORK/watch.err")"
note "watch exited 2: $(tail -n1 "$WORK/watch.err")"

# Ctrl-C: exit 0, at once (not after the refresh interval).
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
"$SOAKCTL" --socket "$SOCK" watch --interval 30 >"$WATCH_OUT" 2>"$WORK/watch.err" &
WATCH=$!
on_exit _kill_bg "$WATCH"
one_table() { (($(tables) >= 1)); }
wait_until 10 "a table from soakctl watch --interval 30" one_table
sent=$(now_ns)
kill -INT "$WATCH"
wait_until 5 "soakctl watch to exit on SIGINT" not_alive "$WATCH"
rc=0
wait "$WATCH" || rc=$?
((rc == 0)) || fail "watch exited $rc on SIGINT, expected 0: $(cat "$WORK/watch.err")"
took_ms=$((($(now_ns) - sent) / 1000000))
((took_ms < 3000)) || fail "watch took ${took_ms} ms to end on SIGINT"
[[ ! -s $WORK/watch.err ]] || fail "watch complained on SIGINT: $(cat "$WORK/watch.err")"
note "watch exited 0 on SIGINT after ${took_ms} ms"

# Without soakd at all: the usual "cannot connect" and exit 2.
stop_soakd 15
rc=0
timeout 10 "$SOAKCTL" --socket "$SOCK" watch >/dev/null 2>"$WORK/watch.err" || rc=$?
((rc == 2)) || fail "watch without soakd exited $rc, expected 2"
grep -q 'cannot connect to soakd' "$WORK/watch.err" || fail "watch without soakd: $(cat "$WORK/watch.err")"
note "ok"
