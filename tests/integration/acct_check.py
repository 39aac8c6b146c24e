# SPDX-License-Identifier: GPL-2.0-only
"""Checks that every scheduled op of a workload is accounted for (issue 14).

acct_check.py DUMP.json DUMP.csv WORKLOAD SCHEDULED [--rate R] [--p99-min-ms MS]
  [--freeze-lag]

Whole workload: count + errors + missed = SCHEDULED, summed over its ops
(per op when the workload has one op), and pending 0 at the end.  Per
interval and op: count + errors + missed = scheduled in it (rate_target
times its length) - (pending at its end - pending at its start), within
the rounding of a fractional expected count.  --rate: rate_target (summed
over the ops) is the configured rate, not diluted by a drain.  --freeze-lag: the first
interval whose completions fell short of its schedule (the device froze in
it) shows the lag its oldest waiting op had reached at its end.
"""
import csv
import json
import sys

args = sys.argv[1:]
dump_json, dump_csv, name, scheduled = args[0], args[1], args[2], int(args[3])
p99_min_ms = float(args[args.index("--p99-min-ms") + 1]) if "--p99-min-ms" in args else None
freeze_lag = "--freeze-lag" in args
rate = float(args[args.index("--rate") + 1]) if "--rate" in args else None
problems = []

dump = json.load(open(dump_json))
workload = next((w for w in dump.get("workloads", []) if w.get("name") == name), None)
if workload is None:
    sys.exit(f"workload {name} is not in the dump")
# Prefill and cleanup sweep the pool, closed loop: none of their ops is
# scheduled.
ops = {k: v for k, v in workload["ops"].items() if k not in ("prefill", "cleanup")}
total = 0
for op, o in ops.items():
    if "missed" not in o or "pending" not in o:
        problems.append(f"{op}: no missed or pending in the dump: {sorted(o)}")
    done = o["count"] + o["errors"] + o.get("missed", 0)
    total += done
    print(f"# {op}: count {o['count']} errors {o['errors']} missed {o.get('missed')} "
          f"pending {o.get('pending')} p99 {o['latency_us']['p99']} us "
          f"rate_target {o['rate_target']:.2f}")
    if o.get("pending", 0) != 0:
        problems.append(f"{op}: {o['pending']} ops still pending when the workload ended")
    if p99_min_ms is not None and done and o["latency_us"]["p99"] < p99_min_ms * 1000:
        problems.append(f"{op}: latency p99 {o['latency_us']['p99']} us hides the stall "
                        f"(at least {p99_min_ms} ms expected)")
rate_target = sum(o["rate_target"] for o in ops.values())
if rate is not None and abs(rate_target - rate) > 0.01 * rate:
    problems.append(f"rate_target {rate_target:.2f} ops/s, the configured rate is {rate}")
if total != scheduled:
    problems.append(f"count + errors + missed = {total}, {scheduled} ops were scheduled")

rows = list(csv.DictReader(open(dump_csv)))
rows = [r for r in rows if r["workload"] == name and r["op"] in ops]
if not rows or "missed" not in rows[0] or "pending" not in rows[0]:
    problems.append(f"the CSV has no missed or pending column: {list(rows[0]) if rows else []}")
else:
    pending = {}
    for r in rows:
        span = float(r["end_s"]) - float(r["start_s"])
        expected = float(r["rate_target"]) * span
        before = pending.get(r["op"], 0)
        now = int(r["pending"])
        got = int(r["count"]) + int(r["errors"]) + int(r["missed"]) + now - before
        pending[r["op"]] = now
        # A stream's fractional share of the expected count rounds either way.
        if abs(got - expected) > 1.5 + 0.002 * expected:
            problems.append(f"{r['op']} interval {r['start_s']}..{r['end_s']}: count "
                            f"{r['count']} + errors {r['errors']} + missed {r['missed']} + "
                            f"pending {now} - {before} = {got}, {expected:.1f} scheduled")
    if freeze_lag:
        frozen = next((r for r in rows if float(r["rate_target"]) > 0 and
                       int(r["count"]) < 0.9 * float(r["rate_target"]) *
                       (float(r["end_s"]) - float(r["start_s"]))), None)
        if frozen is None:
            problems.append("no interval shows the freeze")
        else:
            span = float(frozen["end_s"]) - float(frozen["start_s"])
            rate = float(frozen["rate_target"])
            # Ops completed until the freeze: it began count / rate into
            # the interval, so at its end the oldest waiting op was late by
            # about the rest of it (less the few the queue held).
            lag_expected_ms = (span - int(frozen["count"]) / rate) * 1000
            print(f"# the freeze's interval {frozen['start_s']}..{frozen['end_s']}: "
                  f"{frozen['count']} ops, lag_max {frozen['lag_max_ms']} ms "
                  f"(about {lag_expected_ms:.0f} expected)")
            if float(frozen["lag_max_ms"]) < 0.7 * lag_expected_ms - 30:
                problems.append(f"the interval in which the device froze shows lag_max "
                                f"{frozen['lag_max_ms']} ms, about {lag_expected_ms:.0f} "
                                f"expected")
if problems:
    sys.exit("\n".join(problems))
