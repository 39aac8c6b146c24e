#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Switching the probes at run time: "soakctl trace off blk" stops the
# kernel's counts while the workload goes on, "trace on blk" resumes them;
# SIGHUP switches everything off, and on again; "trace" without names
# switches both families; unknown probe names are refused.  The config's
# "trace" sets the start state.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_loop_devices
make_loop LOOP 64M
DEV=$(basename "$LOOP")

cat >"$WORK/toggle.json" <<EOF
{"run": {"name": "trace-toggle", "duration": "60s", "interval": "500ms", "on_finish": "idle",
         "trace": {"blk": true, "tcp": false}},
 "workloads": [
   {"name": "reads", "type": "device", "model": "pattern", "targets": ["$LOOP"],
    "read_pct": 100, "block_size": "4KiB", "queue_depth": 4, "rate": 2000}]}
EOF
start_soakd --config "$WORK/toggle.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
require_probes blk
[[ $(probe_state blk) == on && $(probe_state tcp) == off ]] ||
	fail "start state: blk $(probe_state blk), tcp $(probe_state tcp); the config says on, off"
KERNEL_BASE=0
wait_until 10 "kernel reads on $DEV" kernel_grew "$DEV" read

# frozen WHY: the kernel's count stays put while soakd's own grows by two
# intervals' worth (after one interval, for what was read before).
frozen() {
	APP_BASE=$(app_count reads read)
	wait_until 10 "soakd's reads to go on" app_grew_by reads read 1000
	local before after
	before=$(live_count "$DEV" read)
	APP_BASE=$(app_count reads read)
	wait_until 10 "soakd's reads to go on" app_grew_by reads read 2000
	after=$(live_count "$DEV" read)
	((after == before)) || fail "$1: kernel reads went from $before to $after"
	note "$1: kernel reads stay at $after while soakd's grow"
	KERNEL_BASE=$after
}

t0=$(now_ns)
ctl trace off blk >"$WORK/off.txt" || fail "trace off blk: $(cat "$WORK/off.txt")"
note "trace off blk took $((($(now_ns) - t0) / 1000000)) ms"
grep -q '^blk: off' "$WORK/off.txt" || fail "trace off blk answered: $(cat "$WORK/off.txt")"
frozen "blk off"

t0=$(now_ns)
ctl trace on blk >"$WORK/on.txt" || fail "trace on blk: $(cat "$WORK/on.txt")"
note "trace on blk took $((($(now_ns) - t0) / 1000000)) ms"
grep -q '^blk: on' "$WORK/on.txt" || fail "trace on blk answered: $(cat "$WORK/on.txt")"
wait_until 10 "kernel reads to resume" kernel_grew "$DEV" read

# SIGHUP: something is on, so everything goes off; then all on.
kill -HUP "$SOAKD_PID"
wait_until 5 "SIGHUP to switch blk off" eval '[[ $(probe_state blk) == off && $(probe_state tcp) == off ]]'
frozen "after SIGHUP"
kill -HUP "$SOAKD_PID"
wait_until 5 "SIGHUP to switch everything on" eval '[[ $(probe_state blk) == on && $(probe_state tcp) == on ]]'
wait_until 10 "kernel reads to resume after SIGHUP" kernel_grew "$DEV" read
grep -q 'SIGHUP received: kernel tracing off' "$SOAKD_LOG" || fail "no log line for SIGHUP"

# Without names: both families.
ctl trace off >/dev/null || fail "trace off failed"
[[ $(probe_state blk) == off && $(probe_state tcp) == off ]] || fail "trace off left $(ctl trace)"
ctl trace on tcp >/dev/null || fail "trace on tcp failed"
[[ $(probe_state blk) == off && $(probe_state tcp) == on ]] || fail "trace on tcp left $(ctl trace)"
ctl status --json | python3 -c '
import json, sys
trace = json.load(sys.stdin)["trace"]
assert trace == {"blk": {"state": "off"}, "tcp": {"state": "on"}}, trace' ||
	fail "status --json: $(ctl status --json)"

rc=0
ctl trace on disk >"$WORK/bad.txt" 2>&1 || rc=$?
((rc == 64)) || fail "trace on disk exited $rc, expected 64 (usage)"
grep -q "unknown probe 'disk'" "$WORK/bad.txt" || fail "trace on disk said: $(cat "$WORK/bad.txt")"
rc=0
ctl trace sideways >"$WORK/bad.txt" 2>&1 || rc=$?
((rc != 0)) || fail "trace sideways was accepted"

stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
