#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Long waits on soakd's main thread while a workload is prepared: laying
# out a large file target (random data over its whole size: minutes for
# many GiB), and probing an object endpoint that is slow to answer (up to
# its timeout).  At start, status shows the wait and a stop ends it at once
# (a layout stopped is undone as any failed one: the file soakd created is
# removed); neither could be stopped before.  In a reload, the workloads
# already running keep one record per interval while it lasts; they were
# merged into one record of the whole wait (the main loop did not tick).
# The watchdog is pinged through a reload's wait where no interval ends
# (it was pinged only as intervals ended), and a SIGTERM during a reload
# stops the workload it replaces with soakd (it was recorded failed, and
# soakd exited 3).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

need_root "a large file target"
need_cmd python3 stat
BIG=$((2 * 1024 * 1024 * 1024))
avail=$(($(stat -f -c '%a * %S' "$WORK")))
((avail > 3 * BIG)) || skip "less than $((3 * BIG >> 30)) GiB free under $WORK for a 2 GiB layout"

# Every request answered after 3 s.
start_fault_server slow

G="{\"name\": \"g\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$WORK/g.dat\"],
   \"file_size\": \"2GiB\", \"read_pct\": 100, \"block_size\": \"4KiB\", \"access\": \"random\",
   \"queue_depth\": 1, \"rate\": 100}"
F="{\"name\": \"f\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$WORK/f.dat\"],
   \"file_size\": \"4MiB\", \"read_pct\": 50, \"block_size\": \"4KiB\", \"access\": \"random\",
   \"queue_depth\": 1, \"rate\": 1000}"
O="{\"name\": \"o\", \"type\": \"object\", \"protocol\": \"http\",
   \"endpoint\": \"http://127.0.0.1:$PORT/soak/\", \"concurrency\": 1, \"objects\": 10,
   \"rate\": 5, \"mix\": {\"put\": 100}, \"size\": \"4KiB\", \"timeout\": \"8s\",
   \"connect_timeout\": \"1s\"}"
config() {
	local IFS=,
	echo "{\"run\": {\"name\": \"wait\", \"interval\": \"250ms\"}, \"workloads\": [$*]}" >"$CFG"
}
CFG="$WORK/wait.json"

# waiting WHAT TARGET TOTAL: status --json shows the preparation waiting
# on WHAT for TARGET, part of TOTAL done.
waiting() {
	ctl status --json 2>/dev/null | python3 2>/dev/null -c '
import json, sys
s = json.load(sys.stdin)
p = s.get("preparing") or {}
sys.exit(0 if s.get("state") == "preparing" and p.get("what") == sys.argv[1] and
         p.get("target") == sys.argv[2] and 0 < p.get("done", 0) < p.get("total", 0) == int(sys.argv[3])
         else 1)' "$@"
}
# stopped_while NAME WHAT TARGET TOTAL: started on the configuration,
# soakd shows the wait in status and ends at once on soakctl stop.
stopped_while() {
	SOAKD_LOG="$WORK/soakd.start-$1.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state-$1" --no-table
	shift
	wait_until 30 "status to show the $1" waiting "$@"
	local t0 ms
	t0=$(now_ns)
	ctl stop >"$WORK/stop.out" || fail "soakctl stop during the $1: $(cat "$WORK/stop.out")"
	wait_soakd_exit 5
	ms=$((($(now_ns) - t0) / 1000000))
	note "stopped during the $1: soakd gone in $ms ms"
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after a stop during the $1"
	((ms < 1500)) || fail "soakd took $ms ms to stop during the $1"
}

# 1. At start: the layout, then the endpoint's probe, in status, stopped.
config "$G"
stopped_while layout layout "$WORK/g.dat" "$BIG"
grep -q "stopped while laying out $WORK/g.dat" "$SOAKD_LOG" ||
	fail "the log does not say the layout was stopped: $(tail -n 5 "$SOAKD_LOG")"
[[ ! -e $WORK/g.dat ]] || fail "g.dat, created by soakd, is left after the stopped start"
config "$O"
stopped_while probe "waiting for the endpoint" "http://127.0.0.1:$PORT/soak/" 8000
grep -q "stopped while waiting for the endpoint" "$SOAKD_LOG" ||
	fail "the log does not say the probe was stopped: $(tail -n 5 "$SOAKD_LOG")"

# 2. Reloads that lay out g, then wait for o's endpoint, while f runs.
config "$F"
SOAKD_LOG="$WORK/soakd.reload.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "f to run" workload_is f running
sleep 1
# reload WHAT: a reload, timed into $WORK/took; meanwhile a soakctl that
# gives up says the request may still be carried out.
reload() {
	rm -f "$WORK/reload.rc"
	(
		t0=$(now_ns)
		rc=0
		# 2 GiB at a slow disk's 100 MB/s: 20 s.
		timeout 120 "$SOAKCTL" --socket "$SOCK" --timeout 100 reload >"$WORK/reload.out" 2>&1 || rc=$?
		echo "$rc $((($(now_ns) - t0) / 1000000))" >"$WORK/reload.rc"
	) &
	local pid=$! out rc took_ms
	sleep 0.5
	if out=$(timeout 10 "$SOAKCTL" --socket "$SOCK" --timeout 1 status 2>&1); then
		[[ -s $WORK/reload.rc ]] || fail "status answered while the reload ($1) still ran"
		note "the reload ($1) was over before status gave up: its message is not checked"
	else
		grep -q "no reply from soakd .* within 1 s .*soakd may still carry out the request" <<<"$out" ||
			fail "soakctl giving up during the reload ($1) said: $out"
	fi
	wait "$pid"
	read -r rc took_ms <"$WORK/reload.rc"
	((rc == 0)) || fail "the reload ($1) failed: $(cat "$WORK/reload.out")"
	note "the reload ($1) took $took_ms ms"
	# Less than four intervals would not have merged records anyway.
	((took_ms >= 1000)) || fail "the reload ($1) took $took_ms ms, too quick to show anything"
	echo "$took_ms" >>"$WORK/took"
}
config "$F" "$G"
reload "a 2 GiB layout"
grep -q "laying out $WORK/g.dat: 2048 MiB" "$SOAKD_LOG" ||
	fail "no layout of g.dat in the reload: $(grep 'laying out' "$SOAKD_LOG")"
config "$F" "$G" "$O"
reload "a slow endpoint"
echo ok >"$MODE"
sleep 1
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# f's records: one per interval, end to end, over both reloads too.
python3 - "$WORK/state/wait/intervals.log" "$WORK/took" <<'EOF' || fail "f's intervals during the reloads"
import json, sys
recs, reloads = [], []
with open(sys.argv[1]) as f:
    next(f)
    for line in f:
        r = json.loads(line.split(" ", 1)[1])
        if r.get("type") == "interval" and r.get("workload") == "f":
            recs.append(r)
        elif r.get("type") == "reload":
            reloads.append(r["run_ns"])
took = [int(t) * 1_000_000 for t in open(sys.argv[2]).read().split()]
assert len(reloads) == len(took) == 2, (reloads, took)
# The last one ends where soakd stopped, its thread's interval cut there.
bad = [(r["start_ns"], r["end_ns"], r.get("intervals")) for r in recs[:-1]
       if r.get("intervals", 1) != 1 or r["end_ns"] - r["start_ns"] > 250_000_000]
gaps = [(a["end_ns"], b["start_ns"]) for a, b in zip(recs, recs[1:]) if a["end_ns"] != b["start_ns"]]
if bad:
    sys.exit(f"records spanning more than one interval: {bad}")
if gaps:
    sys.exit(f"gaps between records: {gaps}")
for end, t in zip(reloads, took):
    during = sum(1 for r in recs if end - t <= r["start_ns"] and r["end_ns"] <= end)
    print(f"# f: {during} records within a reload's {t // 1_000_000} ms")
    if during < t // 250_000_000 - 3:
        sys.exit(f"only {during} of f's records within the reload")
EOF

# 3. The watchdog through a reload that waits for the endpoint, where no
# interval ends meanwhile (intervals of 20 s): pinged all along, never
# 1.5 s without (WatchdogSec 2 s here), not only as intervals end.
NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"
echo slow >"$MODE"
config "$F"
sed -i 's/"250ms"/"20s"/' "$CFG"
SOAKD_LOG="$WORK/soakd.watchdog.log"
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=2000000")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state-watchdog" --no-table
SOAKD_ENV=()
wait_until 20 "the control socket" ctl_answers
config "$F" "$O"
sed -i 's/"250ms"/"20s"/' "$CFG"
t0=$(now_ns)
ctl --timeout 30 reload >"$WORK/reload.out" 2>&1 || fail "the reload failed: $(cat "$WORK/reload.out")"
took_ms=$((($(now_ns) - t0) / 1000000))
((took_ms >= 2500)) || fail "the reload took $took_ms ms: the endpoint did not keep it waiting"
echo ok >"$MODE"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
_kill_bg "$LISTENER"
# Pings come every 0.5 s at least (a quarter of WatchdogSec 2 s); 1.5 s
# leaves a loaded machine room, and a reload pinged only as intervals end
# (20 s) would show the whole 3 s.
python3 "$SRCDIR/tests/integration/watchdog_gap.py" "$WORK/notify.jsonl" 1.5 ||
	fail "the watchdog during the reload"

# 4. SIGTERM while a reload replaces o and waits for its endpoint: the
# replacement's probe ends, and so does the old definition's, put back as
# the reload is refused; o stops with soakd (it did not fail: soakd exits
# 0, its record says stopped, not failed).
echo ok >"$MODE"
config "$F" "$O"
SOAKD_LOG="$WORK/soakd.sigterm.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state-sigterm" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "o to run" workload_is o running
echo slow >"$MODE"
config "$F" "${O/\"rate\": 5/\"rate\": 6}"
grep -q '"rate": 6' "$CFG" || fail "the test's changed definition of o"
("$SOAKCTL" --socket "$SOCK" --timeout 30 reload >"$WORK/reload4.out" 2>&1 || true) &
reloader=$!
wait_until 10 "the reload to wait for the endpoint" grep -q "control socket: reload" "$SOAKD_LOG"
sleep 1
kill -TERM "$SOAKD_PID"
wait_soakd_exit 20
wait "$reloader" || true
echo ok >"$MODE"
((SOAKD_RC == 0)) || fail "soakd stopped during a reload exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
grep -q "workload o stops with soakd" "$SOAKD_LOG" ||
	fail "the log does not say o stopped with soakd: $(tail -n 8 "$SOAKD_LOG")"
python3 - "$WORK/state-sigterm/wait/intervals.log" <<'EOF' || fail "o's records after the stop"
import json, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
states = [(r["state"], r["reason"]) for r in recs if r["type"] == "state" and r.get("workload") == "o"]
print(f"# o's states: {states}")
if not states or states[-1] != ("stopped", "soakd stopped while a reload replaced it"):
    sys.exit(f"o's last state is not a stop with soakd: {states}")
if any(s == "failed" for s, _ in states):
    sys.exit(f"o was recorded failed: {states}")
EOF
note "ok"
