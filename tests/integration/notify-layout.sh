#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A long file layout before READY=1 (a big regular-file target soakd must
# fill first) keeps systemd informed: STATUS= with its progress,
# EXTEND_TIMEOUT_USEC= so TimeoutStartSec does not kill it, and WATCHDOG=1
# at least every half watchdog period, although the main loop is busy.
source "$(dirname "$0")/lib.sh"
need_cmd python3

# RAM-backed when tmpfs takes O_DIRECT (Linux 6.6+), so the layout costs
# memory and CPU for a few seconds, not the shared disk.
ram_file DATA big.dat
SIZE=2GiB
[[ $DATA == "$WORK"/* ]] && SIZE=1GiB
note "laying out $SIZE in $DATA"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"

CFG="$WORK/layout.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "layout", "duration": "2s", "interval": "1s"},
  "workloads": [{"name": "big", "type": "device", "model": "pattern",
                 "targets": ["$DATA"], "file_size": "$SIZE",
                 "read_pct": 100, "block_size": "4KiB", "queue_depth": 4, "rate": 100}]
}
EOF
WATCHDOG_USEC=1000000
SOAKD_ENV=(-u WATCHDOG_PID "NOTIFY_SOCKET=$NOTIFY" "WATCHDOG_USEC=$WATCHDOG_USEC")
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_soakd_exit 120
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
_kill_bg "$LISTENER"

python3 - "$WORK/notify.jsonl" "$WATCHDOG_USEC" <<'EOF' || fail "notifications: $(head -c 3000 "$WORK/notify.jsonl")"
import json, sys
records = [json.loads(line) for line in open(sys.argv[1])]
half = int(sys.argv[2]) / 2e6
ready = next((r["t"] for r in records if "READY=1" in r["msg"].split("\n")), None)
if ready is None:
    sys.exit("no READY=1")
layout = [r for r in records if "STATUS=laying out" in r["msg"] and r["t"] < ready]
if not layout:
    sys.exit("no layout progress before READY=1 (the layout took under a second?)")
for r in layout:
    if "EXTEND_TIMEOUT_USEC=" not in r["msg"]:
        sys.exit(f"layout progress without EXTEND_TIMEOUT_USEC: {r['msg']!r}")
pings = [r["t"] for r in records if "WATCHDOG=1" in r["msg"].split("\n") and r["t"] < ready]
start = records[0]["t"]
marks = [start] + pings + [ready]
gap = max(b - a for a, b in zip(marks, marks[1:]))
# The first report comes after a second of layout; then one per second.
if gap > half + 1.0:
    sys.exit(f"{gap:.2f} s without WATCHDOG=1 during the layout")
print(f"# {len(layout)} progress reports before READY=1 at {ready - start:.1f} s; "
      f"longest watchdog gap {gap:.2f} s; last: {layout[-1]['msg'].splitlines()[0]}")
EOF
