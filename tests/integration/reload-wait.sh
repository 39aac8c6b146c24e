#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Laying out a large file target (random data over its whole size) takes
# minutes on soakd's main thread.  At start, status shows its progress and
# a stop ends it at once (the file soakd created is removed, as after any
# failed start; it could not be stopped at all).  In a reload, the workloads already running
# keep one record per interval while the new one is laid out; they were
# merged into one record of the whole wait (the main loop did not tick).
source "$(dirname "$0")/lib.sh"

need_root "a large file target"
need_cmd python3 stat
BIG=$((2 * 1024 * 1024 * 1024))
avail=$(($(stat -f -c '%a * %S' "$WORK")))
((avail > 3 * BIG)) || skip "less than $((3 * BIG >> 30)) GiB free under $WORK for a 2 GiB layout"

G="{\"name\": \"g\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$WORK/g.dat\"],
   \"file_size\": \"2GiB\", \"read_pct\": 100, \"block_size\": \"4KiB\", \"access\": \"random\",
   \"queue_depth\": 1, \"rate\": 100}"
F="{\"name\": \"f\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$WORK/f.dat\"],
   \"file_size\": \"4MiB\", \"read_pct\": 50, \"block_size\": \"4KiB\", \"access\": \"random\",
   \"queue_depth\": 1, \"rate\": 1000}"
config() {
	local IFS=,
	echo "{\"run\": {\"name\": \"layout\", \"interval\": \"250ms\"}, \"workloads\": [$*]}" >"$CFG"
}
CFG="$WORK/layout.json"

# 1. At start: the layout in status, then a stop.
config "$G"
SOAKD_LOG="$WORK/soakd.start.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state1" --no-table
laying_out() {
	ctl status --json 2>/dev/null | python3 2>/dev/null -c '
import json, sys
s = json.load(sys.stdin)
p = s.get("preparing") or {}
sys.exit(0 if s.get("state") == "preparing" and p.get("what") == "layout" and
         p.get("target") == sys.argv[1] and p.get("unit") == "bytes" and
         0 < p.get("done", 0) < p.get("total", 0) == int(sys.argv[2]) else 1)' "$WORK/g.dat" "$BIG"
}
wait_until 30 "status to show g.dat's layout" laying_out
t0=$(now_ns)
ctl stop >"$WORK/stop.out" || fail "soakctl stop during the layout: $(cat "$WORK/stop.out")"
wait_soakd_exit 5
note "stopped during the layout: soakd gone in $((($(now_ns) - t0) / 1000000)) ms"
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after a stop during the layout"
grep -q "stopped while laying out $WORK/g.dat" "$SOAKD_LOG" ||
	fail "the log does not say the layout was stopped: $(tail -n 5 "$SOAKD_LOG")"
[[ ! -e $WORK/g.dat ]] || fail "g.dat, created by soakd, is left after the stopped start"

# 2. A reload that lays out the rest while f runs.
config "$F"
SOAKD_LOG="$WORK/soakd.reload.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state2" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "f to run" workload_is f running
sleep 1
config "$F" "$G"
(
	t0=$(now_ns)
	rc=0
	# 2 GiB at a slow disk's 100 MB/s: 20 s.
	timeout 300 "$SOAKCTL" --socket "$SOCK" --timeout 240 reload >"$WORK/reload.out" 2>&1 || rc=$?
	echo "$rc $((($(now_ns) - t0) / 1000000))" >"$WORK/reload.rc"
) &
reload_pid=$!
# Meanwhile soakd answers nothing; a soakctl that gives up says the
# request may still be carried out.
sleep 0.5
if out=$(timeout 10 "$SOAKCTL" --socket "$SOCK" --timeout 1 status 2>&1); then
	[[ -s $WORK/reload.rc ]] || fail "status answered while the reload still ran"
	note "the reload was over before status gave up: its message is not checked"
else
	grep -q "no reply from soakd .* within 1 s .*soakd may still carry out the request" <<<"$out" ||
		fail "soakctl giving up during the reload said: $out"
fi
wait "$reload_pid"
read -r rc took_ms <"$WORK/reload.rc"
((rc == 0)) || fail "the reload failed: $(cat "$WORK/reload.out")"
note "the reload took $took_ms ms"
grep -q "laying out $WORK/g.dat: 2048 MiB" "$SOAKD_LOG" ||
	fail "no layout of g.dat in the reload: $(grep 'laying out' "$SOAKD_LOG")"
# Less than four intervals would not have merged records anyway.
((took_ms >= 1000)) || fail "the layout of 2 GiB took $took_ms ms, too quick to show anything"
sleep 1
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# f's records: one per interval, end to end, over the reload too.
python3 - "$WORK/state2/layout/intervals.log" "$took_ms" <<'EOF' || fail "f's intervals during the reload"
import json, sys
recs = []
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        r = json.loads(line.split(" ", 1)[1])
        if r.get("type") == "interval" and r.get("workload") == "f":
            recs.append(r)
reload = None
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        r = json.loads(line.split(" ", 1)[1])
        if r.get("type") == "reload":
            reload = r["run_ns"]
assert reload is not None, "no reload record"
# The last one ends where soakd stopped, its thread's interval cut there.
bad = [(r["start_ns"], r["end_ns"], r.get("intervals")) for r in recs[:-1]
       if r.get("intervals", 1) != 1 or r["end_ns"] - r["start_ns"] > 250_000_000]
gaps = [(a["end_ns"], b["start_ns"]) for a, b in zip(recs, recs[1:]) if a["end_ns"] != b["start_ns"]]
took = int(sys.argv[2]) * 1_000_000
during = sum(1 for r in recs if reload - took <= r["start_ns"] and r["end_ns"] <= reload)
print(f"# f: {len(recs)} records, {during} within the reload's {took // 1_000_000} ms")
if bad:
    sys.exit(f"records spanning more than one interval: {bad}")
if gaps:
    sys.exit(f"gaps between records: {gaps}")
if during < took // 250_000_000 - 3:
    sys.exit(f"only {during} of f's records within the reload")
EOF
note "ok"
