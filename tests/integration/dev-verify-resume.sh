#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a resumed run with "verify" reads back first (issue 15,
# "verify_on_resume"), after soakd was SIGKILLed mid-run:
#   - "full": every block of the region, before the run goes on, with its
#     progress in the log and sent to systemd as STATUS= (with
#     EXTEND_TIMEOUT_USEC=); no failure, the blocks written after the last
#     flush counted uncertain;
#   - "none": nothing at resume; the blocks the kill left uncertain are
#     counted uncertain at their next read, none as a failure.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
wait_until 10 "the notify socket" test -S "$NOTIFY"
SOAKD_ENV=("NOTIFY_SOCKET=$NOTIFY")

# "checked failures uncertain" over the run so far.
totals() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
s = lambda *ks: sum(x.get(k, 0) for x in v for k in ks)
print(s("checked"), s("corrupt", "stale", "misdirected", "torn", "foreign"), s("uncertain"))'
}
CHECKED=0
progressed() {
	local c f u
	read -r c f u < <(totals) || return 1
	((c >= CHECKED + 10000))
}

# run_killed MODE: a run that is killed once and resumed; leaves soakd running.
run_killed() {
	new_loop 8M
	cat >"$WORK/$1.json" <<EOF
{"run": {"name": "resume-$1", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "r", "type": "device", "model": "pattern",
                "targets": [{"path": "$NEW_LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "queue_depth": 8, "rate": 4000,
                "verify": true, "fill": true, "flush_interval": "2s",
                "verify_on_resume": "$1"}]}
EOF
	CHECKED=0
	SOAKD_LOG="$WORK/soakd.$1.0.log"
	start_soakd --config "$WORK/$1.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 60 "the control socket" ctl_answers
	wait_until 60 "10000 blocks checked" progressed
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 20
	: >"$WORK/notify.jsonl"
	SOAKD_LOG="$WORK/soakd.$1.1.log"
	start_soakd --config "$WORK/$1.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 60 "the control socket (resumed)" ctl_answers
	grep -q "resuming run resume-$1" "$SOAKD_LOG" || fail "$1: soakd did not resume the run"
	grep -q "blocks were written after the last completed flush" "$SOAKD_LOG" ||
		fail "$1: the kill left no block uncertain (flushes every 2 s: it should have)"
}

run_killed full
line=$(grep -h "verify on resume (full): .* blocks checked" "$SOAKD_LOG" || true)
[[ $line == *"2048 blocks checked, 0 failed, "* ]] || fail "full: $line"
note "full: $line"
python3 - "$WORK/notify.jsonl" <<'PY' || fail "notifications: $(cat "$WORK/notify.jsonl")"
import json, sys
msgs = [json.loads(line)["msg"] for line in open(sys.argv[1]) if line.strip()]
done = [m for m in msgs if "STATUS=verify on resume (full)" in m and "100.0%" in m]
if not done or "EXTEND_TIMEOUT_USEC=" not in done[0]:
    sys.exit("no STATUS= with the full check's progress")
ready = [i for i, m in enumerate(msgs) if "READY=1" in m]
if not ready or ready[0] < msgs.index(done[0]):
    sys.exit("READY=1 before the full check ended")
print(f"# {done[0].splitlines()[0]}")
PY
stop_soakd 20

run_killed none
grep -q "verify on resume" "$SOAKD_LOG" && fail "none: blocks were read back at resume"
read -r c0 f0 u0 < <(totals)
CHECKED=$c0
wait_until 60 "10000 more blocks checked" progressed
read -r c f u < <(totals)
((f == 0)) || fail "none: $f failures"
((u > u0)) || fail "none: no block counted uncertain at its next read ($u0 then $u)"
note "none: $((u - u0)) blocks settled as uncertain at their next read, no failure"
if grep -h "verify: .* block at offset" "$WORK"/soakd.*.log >"$WORK/false.txt"; then
	fail "false positives: $(head -3 "$WORK/false.txt")"
fi
stop_soakd 20
note "ok"
