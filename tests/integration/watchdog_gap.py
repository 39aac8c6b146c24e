#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""watchdog_gap.py NOTIFY_JSONL MAX_GAP_S: the longest time without a
WATCHDOG=1 during the last reload that notify_listen.py recorded (from its
RELOADING=1 to the READY=1 after it) must be at most MAX_GAP_S; prints
the pings and the gap, exits 1 with the reason otherwise."""
import json
import sys


def main():
    notes = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    most = float(sys.argv[2])
    lines = [(n["t"], n["msg"].split("\n")) for n in notes]
    pings = [t for t, m in lines if "WATCHDOG=1" in m]
    reload = [t for t, m in lines if "RELOADING=1" in m]
    ready = [t for t, m in lines if "READY=1" in m]
    after = [t for t in ready if reload and t > reload[-1]]
    if not reload or not after:
        sys.exit(f"no RELOADING=1 and READY=1 around the reload: {notes}")
    a, b = reload[-1], after[0]
    within = [t for t in pings if a <= t <= b]
    marks = [a] + within + [b]
    gap = max(y - x for x, y in zip(marks, marks[1:]))
    print(f"# watchdog: {len(within)} pings during the {b - a:.1f} s reload, "
          f"longest gap {gap:.2f} s")
    if gap > most:
        sys.exit(f"the watchdog went {gap:.2f} s without a ping during the reload")


main()
