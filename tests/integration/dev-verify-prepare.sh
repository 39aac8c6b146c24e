#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A verified device's fill and its "full" check on resume, on a device slow
# enough (throttled by a block cgroup) that each takes several seconds
# (issue 15):
#   - while they run, before the run goes on, "soakctl status" shows their
#     progress (the workload, the target, blocks done of total, percent,
#     ETA), in text and in --json ("preparing");
#   - SIGTERM and "soakctl stop" interrupt them within a second or two, and
#     soakd exits 0;
#   - an interrupted fill leaves no state behind: the next start fills
#     again from the start, so no block is taken for generation 0 that was
#     never written (no read of the run is unchecked or fails);
#   - an interrupted full check runs again at the next start, to the end.
# The run's schedule begins when the preparation is done: no op of it is
# due meanwhile.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/certlib.sh"

SIZE_MIB=${VERIFY_PREPARE_MIB:-96}
new_loop "${SIZE_MIB}M"
DEV=$NEW_LOOP
throttle_device "$DEV" 12
SOAKD=$SOAKD_THROTTLED
note "$DEV throttled to 12 IOPS ($THROTTLE_HOW)"
BLOCKS=$((SIZE_MIB * 256))
CFG="$WORK/prepare.json"
cat >"$CFG" <<EOF2
{"run": {"name": "prepare", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "p", "type": "device", "model": "pattern",
                "targets": [{"path": "$DEV", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "queue_depth": 4, "rate": 8,
                "verify": true, "fill": true, "flush_interval": "200ms",
                "verify_on_resume": "full"}]}
EOF2

# preparing WHAT: status --json shows WHAT in progress, something done;
# prints "done total percent eta".
preparing_json() {
	ctl status --json | python3 -c '
import json, sys
s = json.load(sys.stdin)
p = s.get("preparing")
if s.get("state") != "preparing" or not p or p.get("what") != sys.argv[1] or not p.get("done"):
    sys.exit(1)
if p.get("workload") != "p" or p.get("target") != sys.argv[2] or p.get("unit") != "blocks":
    sys.exit(f"wrong preparing object: {p}")
print(p["done"], p["total"], p["percent"], p.get("eta_s", -1))' "$1" "$DEV"
}
in_progress() { preparing_json "$1" >/dev/null; }
# interrupt HOW: SIGTERM or soakctl stop; soakd must be gone within 3 s, with 0.
interrupt() {
	local t0=$SECONDS
	if [[ $1 == stop ]]; then
		ctl stop >"$WORK/stop.out" || fail "soakctl stop while preparing: $(cat "$WORK/stop.out")"
	else
		kill -TERM "$SOAKD_PID"
	fi
	wait_soakd_exit 3
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after $1 while preparing"
	note "$1 while preparing: soakd gone in $((SECONDS - t0))s or less"
}
start() {
	SOAKD_LOG="$WORK/soakd.$1.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 20 "the control socket ($1)" eval 'ctl status --json >/dev/null 2>&1'
}

# --- the fill: progress in status, SIGTERM ---------------------------------
start fill
wait_until 30 "the fill in status" in_progress "verify fill"
sleep 1
read -r done total pct eta < <(preparing_json "verify fill")
note "fill: $done of $total blocks ($pct%), ETA ${eta}s"
((total == BLOCKS)) || fail "the fill's total is $total blocks, expected $BLOCKS"
((done < total)) || fail "the fill was done before it could be interrupted: make the device slower"
python3 -c "import sys; sys.exit(not (0 < float('$pct') < 100 and float('$eta') > 0))" ||
	fail "the fill's percent ($pct) or ETA ($eta) is wrong"
ctl status >"$WORK/status.txt" || fail "soakctl status while preparing failed"
grep -q "^preparing p $DEV: verify fill [0-9.]*% ([0-9]* of $BLOCKS blocks), about" "$WORK/status.txt" ||
	fail "soakctl status does not show the fill: $(cat "$WORK/status.txt")"
ctl reload >"$WORK/reload.out" 2>&1 && fail "a reload while preparing was accepted"
interrupt SIGTERM
grep -q "verify fill of $DEV interrupted" "$SOAKD_LOG" || fail "no word of the interrupted fill in the log"

# --- the fill again, from the start, to the end; then the run ---------------
start fill-again
grep -q "filling (again)" "$SOAKD_LOG" || note "(the run had not begun: a new one)"
wait_until 30 "the fill in status" in_progress "verify fill"
read -r done total pct eta < <(preparing_json "verify fill")
running() { [[ $(workload_state p) == running ]]; }
wait_until 120 "the fill to end and the run to go on" running
totals() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
s = lambda *ks: sum(x.get(k, 0) for x in v for k in ks)
print(s("checked"), s("corrupt", "stale", "misdirected", "torn", "foreign"), s("unchecked"))'
}
checked_some() { local c f u; read -r c f u < <(totals) && ((c >= 10)); }
wait_until 30 "reads checked" checked_some
read -r c f u < <(totals)
note "after the fill: $c blocks checked, $f failed, $u unchecked"
((f == 0 && u == 0)) || fail "after a fill interrupted and done again: $f failed, $u unchecked"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 10

# --- the full check on resume: progress in status, soakctl stop --------------
start check
wait_until 30 "the full check in status" in_progress "verify on resume (full)"
read -r done total pct eta < <(preparing_json "verify on resume (full)")
note "full check: $done of $total blocks ($pct%), ETA ${eta}s"
((done < total)) || fail "the check was done before it could be interrupted"
interrupt stop
grep -q "interrupted: it runs again at the next start" "$SOAKD_LOG" ||
	fail "no word of the interrupted check in the log"

start check-again
wait_until 120 "the full check to end and the run to go on" running
grep -q "verify on resume (full): $BLOCKS blocks checked, 0 failed" "$SOAKD_LOG" ||
	fail "the full check did not run to the end: $(grep 'verify on resume' "$SOAKD_LOG")"
sleep 2
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
python3 - "$WORK/dump.json" <<'PY' || fail "the run's counts are wrong"
import json, sys
w = json.load(open(sys.argv[1]))["workloads"][0]
for name, op in w["ops"].items():
    if name not in ("read", "write"):
        continue
    n = op.get("count", 0) + op.get("errors", 0) + op.get("missed", 0)
    print(f"# {name}: count {op.get('count')} errors {op.get('errors')} missed {op.get('missed')} scheduled {op.get('scheduled', op.get('target_ops'))}")
PY
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
if grep -h "verify: .* block at offset" "$WORK"/soakd.*.log >"$WORK/false.txt"; then
	fail "false positives: $(head -3 "$WORK/false.txt")"
fi
note "ok"
