#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Adds hand-made records of fields other parts of soakd add, to a copy of
a real run's log, so the HTML report's reader is tested on them:

  report_extra.py LOG

  - a per-op "verify" object on the first interval of every workload's
    first op (every class, some nonzero);
  - one {"type": "host"} record per interval of the run (cpu, psi, mem,
    disks, net, tcp);
  - one {"type": "event", "event": "drift"} record.

Records are framed as soakd frames them (runlog.h: "CRC32 JSON\\n")."""
import json
import sys
import zlib

VERIFY = {"checked": 500, "corrupt": 2, "stale": 0, "misdirected": 1, "torn": 0,
          "foreign": 0, "uncertain": 3, "unchecked": 0, "lost": 0, "resurrected": 0,
          "list_missing": 0, "list_extra": 4}


def frame(rec):
    text = json.dumps(rec, separators=(",", ":")).encode()
    return b"%08x " % zlib.crc32(text) + text + b"\n"


path = sys.argv[1]
with open(path, "rb") as f:
    header = f.readline()
    lines = f.readlines()
out, seen, ends = [header], set(), []
for line in lines:
    crc, _, text = line.rstrip(b"\n").partition(b" ")
    rec = json.loads(text)
    if rec.get("type") == "interval":
        ends.append((rec["start_ns"], rec["end_ns"]))
        if rec["workload"] not in seen and rec.get("ops"):
            seen.add(rec["workload"])
            first = next(iter(rec["ops"]))
            rec["ops"][first]["verify"] = VERIFY
            line = frame(rec)
    out.append(line)
spans = sorted(set((s // 10**9, e // 10**9) for s, e in ends))
for i, (s, e) in enumerate(spans):
    out.append(frame({"type": "host", "start_ns": s * 10**9, "end_ns": max(e, s + 1) * 10**9,
                      "cpu": {"user": 10 + i, "system": 5, "iowait": 2 + (i % 3), "steal": 0,
                              "soakd": 4},
                      "psi": {"cpu_some": 1, "mem_some": 0, "mem_full": 0, "io_some": 3 + i,
                              "io_full": 1},
                      "mem": {"available_bytes": 8 << 30, "used_bytes": (4 << 30) + i * (1 << 20)},
                      "disks": {"loop9": {"util_pct": 20 + i, "queue_depth": 2,
                                          "read_Bps": 1e6, "write_Bps": 5e5}},
                      "net": {"lo": {"rx_Bps": 1000, "tx_Bps": 1000}},
                      "tcp": {"retrans": i % 2}}))
out.append(frame({"type": "event", "event": "drift", "workload": "storage", "op": "read",
                  "metric": "p99", "start_ns": 3 * 10**9,
                  "message": "p99 rose 40% over the first hour's"}))
with open(path, "wb") as f:
    f.writelines(out)
print(f"{len(seen)} verify objects, {len(spans)} host records, 1 drift event")
