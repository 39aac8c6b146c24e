#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Makes a long run log fast, for dump and resume tests and benches.

gen_runlog.py [--as NAME] LOG SECONDS [INTERVAL_S]

LOG is the intervals.log of a short real run (soakd ran a few intervals
and stopped).  Its last interval record of each workload is the template:
SECONDS of further intervals are appended to LOG, one record per workload
per interval, in soakd's format (runlog.h: "CRC32 JSON\\n", zlib's CRC-32 of
the compact JSON), run time and wall time moving on as a live run's would.
A resumed soakd then sees a run that has gone on for SECONDS longer.
With --as, the records are those of a workload NAME (one template only):
a log soakd is writing can take them, beside its own records, without
mixing them up.  Prints the number of records appended.
"""
import json
import sys
import zlib

TIME_KEYS = ("start_ns", "end_ns", "wall_start_ns", "wall_end_ns", "sched_ns")


def records(path):
    with open(path, "rb") as f:
        header = f.readline()
        if header != b"soakd-intervals 1\n":
            sys.exit(f"{path}: not a soakd interval log")
        for line in f:
            crc, _, text = line.rstrip(b"\n").partition(b" ")
            if int(crc, 16) == zlib.crc32(text):
                yield json.loads(text)


def template(rec):
    """The record as a %-format string with its times as %d, in TIME_KEYS order."""
    marked = dict(rec)
    for i, key in enumerate(TIME_KEYS):
        marked[key] = f"@{i}@"
    text = json.dumps(marked, separators=(",", ":")).replace("%", "%%")
    for i in range(len(TIME_KEYS)):
        text = text.replace(f'"@{i}@"', "%d")
    return text


def main():
    args = sys.argv[1:]
    rename = None
    if args[:1] == ["--as"]:
        rename, args = args[1], args[2:]
    path, seconds = args[0], float(args[1])
    interval_ns = int(float(args[2]) * 1e9) if len(args) > 2 else 1000000000
    last, biggest = {}, {}
    for rec in records(path):
        if rec.get("type") == "interval":
            name = rec["workload"]
            last[name] = rec
            # The fullest interval is the template: the last may be cut short.
            if len(json.dumps(rec)) >= len(json.dumps(biggest.get(name, {}))):
                biggest[name] = rec
    if not last:
        sys.exit(f"{path}: no interval record to copy")
    # The run goes on from the last boundary any workload reached.
    end = max(r["end_ns"] for r in last.values())
    start = (end // interval_ns + 1) * interval_ns
    wall0 = max(r["wall_end_ns"] - r["end_ns"] for r in last.values())
    plans = []
    for name, rec in last.items():
        sched_off = rec["sched_ns"] - rec["end_ns"]
        rec = dict(biggest[name])
        rec["lag_max_ns"] = 0
        if rename:
            rec["workload"] = rename
        plans.append((template(rec), sched_off))
        if rename:
            break
    n = int(seconds * 1e9 // interval_ns)
    out = []
    size = 0
    with open(path, "ab") as f:
        for k in range(n):
            s = start + k * interval_ns
            e = s + interval_ns
            for text, sched_off in plans:
                body = (text % (s, e, wall0 + s, wall0 + e, e + sched_off)).encode()
                out.append(b"%08x " % zlib.crc32(body) + body + b"\n")
                size += len(body) + 10
            if size > (8 << 20):
                f.write(b"".join(out))
                out.clear()
                size = 0
        f.write(b"".join(out))
    print(n * len(plans))


main()
