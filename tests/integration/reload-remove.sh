#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A reload that removes an object workload whose cleanup is slow (its
# endpoint takes 2 s a DELETE, 12 objects to delete): the removed
# workload's stop is not a suspend, so it cleans up, and the reload waited
# for all of it on the main thread, with no watchdog ping (WatchdogSec 30 s
# in the unit: systemd killed soakd, and its restart moved the run aside).
# Now the reload waits 10 s, pinging the watchdog all along, then cuts the
# cleanup short as a second stop would, says so, and answers; the workload
# kept meanwhile runs on, and soakd keeps the removed one's results.  Before
# that, a reload that would move o's objects elsewhere is refused, and a
# workload stopped by soakctl and redefined by a reload that fails stays
# stopped.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

need_cmd python3
start_fault_server ok

F="{\"name\": \"f\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$WORK/f.dat\"],
   \"file_size\": \"4MiB\", \"read_pct\": 50, \"block_size\": \"4KiB\", \"access\": \"random\",
   \"queue_depth\": 1, \"rate\": 200}"
O="{\"name\": \"o\", \"type\": \"object\", \"protocol\": \"http\",
   \"endpoint\": \"http://127.0.0.1:$PORT/soak/\", \"concurrency\": 1, \"objects\": 12,
   \"rate\": 50, \"mix\": {\"put\": 100}, \"size\": \"4KiB\", \"timeout\": \"8s\",
   \"connect_timeout\": \"1s\"}"
P="${O//\"o\"/\"p\"}"
P=${P/\"size\"/\"prefix\": \"p\/\", \"size\"}
config() {
	local IFS=,
	echo "{\"run\": {\"name\": \"remove\", \"interval\": \"1s\"}, \"workloads\": [$*]}" >"$CFG"
}
CFG="$WORK/remove.json"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"

config "$F" "$O" "$P"
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=4000000")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
SOAKD_ENV=()
wait_until 20 "the control socket" ctl_answers
wait_until 20 "o to run" workload_is o running
wait_until 20 "p to run" workload_is p running
# Every object of the pool written once: 12 to delete.
sleep 2

# A reload that would move o's objects (another prefix) is refused and
# changes nothing: o's ledger describes them where they are.  Another
# rate is taken.
config "$F" "${O/\"size\"/\"prefix\": \"moved/\", \"size\"}" "$P"
rc=0
ctl reload >"$WORK/moved.out" 2>&1 || rc=$?
((rc != 0)) && grep -q 'workload "o": "prefix" or "prefixes" changed, but its objects' \
	"$WORK/moved.out" || fail "a reload moving o's objects: exit $rc: $(cat "$WORK/moved.out")"
workload_is o running || fail "o stopped after a refused reload: $(ctl status 2>&1)"
O40=${O/\"rate\": 50/\"rate\": 40}
config "$F" "$O40" "$P"
ctl reload >"$WORK/rate.out" 2>&1 || fail "a reload of o's rate failed: $(cat "$WORK/rate.out")"
wait_until 20 "o to run again" workload_is o running

# p stopped by soakctl and still cleaning up when a reload redefines it
# and the new definition cannot start (its pool is another size): the old one
# put back stays stopped, as asked (it ran again: a stopping workload
# was taken for a running one).
echo "deletesleep:2" >"$MODE"
ctl stop p >/dev/null || fail "soakctl stop p failed"
workload_is p stopping || fail "p is not cleaning up: $(ctl status 2>&1)"
config "$F" "$O40" "${P/\"objects\": 12/\"objects\": 13}"
rc=0
ctl reload >"$WORK/refused.out" 2>&1 || rc=$?
((rc != 0)) || fail "a reload of p with another pool was taken: $(cat "$WORK/refused.out")"
workload_is p running && fail "p, stopped, runs again after the refused reload: $(ctl status 2>&1)"
wait_until 20 "p to stop" workload_is p stopped
config "$F"
t0=$(now_ns)
ctl --timeout 60 reload >"$WORK/reload.out" 2>&1 || fail "the reload failed: $(cat "$WORK/reload.out")"
took_ms=$((($(now_ns) - t0) / 1000000))
note "the reload took $took_ms ms"
((took_ms >= 9000)) || fail "the reload took $took_ms ms: the cleanup did not keep it waiting"
((took_ms < 20000)) || fail "the reload took $took_ms ms: it waited for the whole cleanup"
grep -q "o: removed by a reload and still ending 10 s after its stop (its cleanup): cut short" \
	"$SOAKD_LOG" || fail "no word of the cleanup cut short: $(tail -n 20 "$SOAKD_LOG")"
grep -q "o: cleanup left [0-9]* objects" "$SOAKD_LOG" ||
	fail "the objects left are not said: $(tail -n 20 "$SOAKD_LOG")"
workload_is f running || fail "f no longer runs: $(ctl status 2>&1)"
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
echo ok >"$MODE"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
_kill_bg "$LISTENER"
# A ping every second at least (a quarter of WatchdogSec 4 s); 3 s leaves
# a loaded machine room, and the 10 s wait without pings would show whole.
python3 "$SRCDIR/tests/integration/watchdog_gap.py" "$WORK/notify.jsonl" 3 ||
	fail "the watchdog during the reload"
python3 - "$WORK/dump.json" <<'EOF' || fail "the removed workload's results"
import json, sys
dump = json.load(open(sys.argv[1]))
o = [w for w in dump["workloads"] if w["name"] == "o"]
if not o or o[0]["state"] != "stopped" or not 0 < o[0]["ops"]["cleanup"]["count"] < 12:
    sys.exit(f"the removed workload's results are not its cut cleanup's: {o}")
EOF
