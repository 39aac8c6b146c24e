#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Socket activation as soakd.socket does it: systemd-socket-activate holds the
# listening socket (named "ctl") and starts soakd at the first connection.
# soakd must serve that very connection on the socket it was handed, not
# bind one of its own, and must leave the socket file alone when it exits:
# systemd owns it.
source "$(dirname "$0")/lib.sh"

need_cmd systemd-socket-activate python3

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"

CFG="$WORK/activate.json"
write_file_config "$CFG" activate small 60s idle 200
mkdir "$WORK/runtime"

# No --socket: the socket comes from LISTEN_FDS.  RUNTIME_DIRECTORY points
# at the work directory so that a soakd which ignored LISTEN_FDS would show
# up there rather than in /run.
start_soakd_activated() {
	spawn "$SOAKD_LOG" systemd-socket-activate -l "$SOCK" --fdname=ctl \
		-E "NOTIFY_SOCKET=$NOTIFY" -E WATCHDOG_USEC=5000000 \
		-E "RUNTIME_DIRECTORY=$WORK/runtime" \
		-E "ASAN_OPTIONS=${ASAN_OPTIONS:-}" -E "UBSAN_OPTIONS=${UBSAN_OPTIONS:-}" \
		"$SOAKD" --config "$CFG" --state-dir "$WORK/state"
	SOAKD_PID=$SPAWNED
}
start_soakd_activated
wait_until 10 "systemd-socket-activate to listen on $SOCK" test -S "$SOCK"

# The first connection starts soakd and is answered by it: the run's
# status, or the preparation's while the workload's file is laid out.
ctl status --json >"$WORK/status.json" 2>"$WORK/status.err" ||
	fail "first status over the activated socket failed: $(cat "$WORK/status.err")"
python3 - "$WORK/status.json" <<'PY' || fail "status --json: $(cat "$WORK/status.json")"
import json, sys
status = json.load(open(sys.argv[1]))
if status.get("ok", True) is not True:
    sys.exit("ok is not true")
names = [w.get("name") for w in status.get("workloads", [])]
if status.get("state") == "preparing":
    names = [status.get("preparing", {}).get("workload")]
if "small" not in names:
    sys.exit(f"workload 'small' not listed: {names}")
print(f"# run {status.get('run')!r}, state {status.get('state')!r}, workloads {names}")
PY

exe=$(readlink "/proc/$SOAKD_PID/exe" 2>/dev/null) || true
[[ $exe == "$(readlink -f "$SOAKD")" ]] ||
	note "pid $SOAKD_PID is $exe (systemd-socket-activate forked soakd)"

has_ready() { grep -q '"msg": "[^"]*READY=1' "$WORK/notify.jsonl" 2>/dev/null; }
wait_until 10 "READY=1" has_ready

[[ -z $(find "$WORK/runtime" -type s 2>/dev/null) ]] ||
	fail "soakd bound a socket of its own in RUNTIME_DIRECTORY: $(find "$WORK/runtime" -type s)"

ctl stop small >"$WORK/stop.out" 2>&1 || fail "soakctl stop small failed: $(cat "$WORK/stop.out")"
wait_until 10 "workload small to stop" workload_is small stopped

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
[[ -S $SOCK ]] || fail "soakd removed the socket file it was handed ($SOCK)"

_kill_bg "$LISTENER"
grep -q 'STOPPING=1' "$WORK/notify.jsonl" || fail "no STOPPING=1: $(cat "$WORK/notify.jsonl")"
note "ok"
