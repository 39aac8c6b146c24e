#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Makes a long run log fast, for dump and resume tests and benches.

gen_runlog.py [--as NAME] [--vary K] LOG SECONDS [INTERVAL_S]

LOG is the intervals.log of a short real run (soakd ran a few intervals
and stopped).  Its last interval record of each workload is the template:
SECONDS of further intervals are appended to LOG, one record per workload
per interval, in soakd's format (runlog.h: "CRC32 JSON\\n", zlib's CRC-32 of
the compact JSON), run time and wall time moving on as a live run's would.
A resumed soakd then sees a run that has gone on for SECONDS longer.
With --as, the records are those of a workload NAME (one template only):
a log soakd is writing can take them, beside its own records, without
mixing them up.  With --vary, each op's latency, service and issue_delay
histograms are not the template's in every record but one of K made from
it (the same count, values drawn log-normally over its min..max), as a
device's differ from second to second: totals and slices then fill as
many buckets as a real run's do, not one interval's.  Prints the number
of records appended.
"""
import base64
import json
import math
import random
import re
import sys
import zlib

HIST_KEYS = ("latency", "service", "issue_delay")
HIST_MAX_VALUE = (1 << 45) - 1


def varints(data):
    out, value, shift = [], 0, 0
    for byte in data:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            out.append(value)
            value, shift = 0, 0
    return out


def put_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def bucket_of(value):
    """common/hist.c's bucket_of."""
    if value < 256:
        return value
    shift = value.bit_length() - 1 - 7
    return shift * 128 + (value >> shift)


def hist_text(values):
    """The base64url text of a histogram of values (hist.h's format)."""
    buckets = {}
    for v in values:
        b = bucket_of(v)
        buckets[b] = buckets.get(b, 0) + 1
    out = bytearray([1])
    for field in (len(values), sum(values), min(values), max(values), 0):
        out += put_varint(field)
    nxt = 0
    for b in sorted(buckets):
        out += put_varint(b - nxt) + put_varint(buckets[b])
        nxt = b + 1
    return base64.urlsafe_b64encode(bytes(out)).rstrip(b"=").decode()


def variants(text, k, rng):
    """k histograms of the same count as text's, over its min..max."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    count, _, lo, hi = varints(raw[1:])[:4]
    if count < 2 or hi <= lo or hi > HIST_MAX_VALUE:
        return [text]
    mu = (math.log(lo) + math.log(hi)) / 2
    sigma = (math.log(hi) - math.log(lo)) / 6
    out = []
    for _ in range(k):
        values = [min(max(int(rng.lognormvariate(mu, sigma)), 1), HIST_MAX_VALUE)
                  for _ in range(count)]
        out.append(hist_text(values))
    return out

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


def marked_hists(rec, k, rng):
    """Replaces rec's op histograms by markers @Hn@; returns, for each n,
    its op's index and its variants (one draw per op picks all of its)."""
    slots = []
    for i, op in enumerate((rec.get("ops") or {}).values()):
        for key in HIST_KEYS:
            if isinstance(op.get(key), str):
                slots.append((i, variants(op[key], k, rng)))
                op[key] = "@H%d@" % (len(slots) - 1)
    return slots


def main():
    args = sys.argv[1:]
    rename, vary = None, 0
    while args[:1] in (["--as"], ["--vary"]):
        if args[0] == "--as":
            rename = args[1]
        else:
            vary = int(args[1])
        args = args[2:]
    rng = random.Random(1)
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
        rec = json.loads(json.dumps(biggest[name]))
        rec["lag_max_ns"] = 0
        if rename:
            rec["workload"] = rename
        slots = marked_hists(rec, vary, rng) if vary else []
        # The text split at the markers: a record is the pieces joined with
        # one variant of each marker's (the same draw for an op's), then
        # its times.
        parts = re.split(r'"@H(\d+)@"', template(rec))
        order = [slots[int(n)] for n in parts[1::2]]
        plans.append((parts[0::2], order, sched_off))
        if rename:
            break
    n = int(seconds * 1e9 // interval_ns)
    n_ops = max((len(r.get("ops") or {}) for r in biggest.values()), default=0)
    out = []
    size = 0
    with open(path, "ab") as f:
        for k in range(n):
            s = start + k * interval_ns
            e = s + interval_ns
            for parts, order, sched_off in plans:
                if order:
                    draw = [rng.randrange(vary) for _ in range(n_ops)]
                    pieces = [parts[0]]
                    for j, (op, texts) in enumerate(order):
                        pieces.append('"%s"' % texts[draw[op] % len(texts)])
                        pieces.append(parts[j + 1])
                    text = "".join(pieces)
                else:
                    text = parts[0]
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
