#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# sd_notify as systemd sees it: soakd, with NOTIFY_SOCKET and WATCHDOG_USEC
# set as a Type=notify service with WatchdogSec= gets them, sends READY=1,
# STATUS= lines, WATCHDOG=1 often enough, and STOPPING=1 when it finishes,
# all from its main pid (NotifyAccess=main), then exits 0.
source "$(dirname "$0")/lib.sh"

need_cmd python3

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"

CFG="$WORK/notify.json"
write_file_config "$CFG" notify small 4s exit 500

WATCHDOG_USEC=2000000
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=$WATCHDOG_USEC")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state"
pid=$SOAKD_PID
wait_soakd_exit 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

_kill_bg "$LISTENER"
python3 - "$WORK/notify.jsonl" "$pid" "$WATCHDOG_USEC" <<'PY' || fail "notifications: $(cat "$WORK/notify.jsonl")"
import json, sys

records = [json.loads(line) for line in open(sys.argv[1])]
pid, watchdog_s = int(sys.argv[2]), int(sys.argv[3]) / 1e6
problems = []

events = []  # (time, line) in arrival order
for r in records:
    if r["pid"] != pid:
        problems.append(f"datagram from pid {r['pid']}, not soakd's main pid {pid}: {r['msg']!r}")
    for line in r["msg"].split("\n"):
        if line:
            events.append((r["t"], line))

def times(line):
    return [t for t, l in events if l == line]

ready, stopping, watchdog = times("READY=1"), times("STOPPING=1"), times("WATCHDOG=1")
status = [l for _, l in events if l.startswith("STATUS=")]
print(f"# {len(records)} datagrams: READY=1 x{len(ready)}, WATCHDOG=1 x{len(watchdog)},"
      f" STATUS= x{len(status)}, STOPPING=1 x{len(stopping)}")
for line in status[:3]:
    print(f"#   {line}")

if len(ready) != 1:
    problems.append(f"READY=1 sent {len(ready)} times, expected once")
if not status:
    problems.append("no STATUS= line")
if not watchdog:
    problems.append("no WATCHDOG=1 although WATCHDOG_USEC was set")
if len(stopping) != 1:
    problems.append(f"STOPPING=1 sent {len(stopping)} times, expected once")
if ready and stopping and stopping[0] < ready[0]:
    problems.append("STOPPING=1 before READY=1")
if stopping and any(t > stopping[0] for t in ready + watchdog):
    problems.append("READY=1 or WATCHDOG=1 after STOPPING=1")

# systemd kills a service whose pings are further apart than WatchdogSec.
if ready and stopping:
    pings = [ready[0]] + [t for t in watchdog if ready[0] <= t <= stopping[0]] + [stopping[0]]
    gap = max(b - a for a, b in zip(pings, pings[1:]))
    print(f"# longest gap between READY=1, WATCHDOG=1 and STOPPING=1: {gap:.2f}s")
    if gap >= watchdog_s:
        problems.append(f"watchdog pings {gap:.2f}s apart, WATCHDOG_USEC allows {watchdog_s:.2f}s")

if problems:
    sys.exit("\n".join(problems))
PY
note "ok"
