#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Object workloads against a real MinIO on 127.0.0.1: every op of the mix in
# its ratio, verified GETs (whole and ranged, fixed and random ranges),
# Content-MD5 and CRC32C on PUT, keep-alive reuse, virtual-host addressing,
# each size distribution's mean and bounds as the server stores them, and a
# cleanup that deletes what the workloads created and nothing else.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
# MINIO_DOMAIN turns on virtual-host style (BUCKET.s3.soak.test) beside path style.
start_minio "$WORK/minio" "$PORT" MINIO_DOMAIN=s3.soak.test
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"

# Objects soakd did not create: one beside its names, one under its prefix.
s3 -f -X PUT "$EP/soak" >/dev/null || fail "cannot create bucket soak"
s3 -f -T /etc/hostname "$EP/soak/keep/other.txt" >/dev/null || fail "cannot put other.txt"
s3 -f -T /etc/hostname "$EP/soak/soakd-mix/foreign.txt" >/dev/null || fail "cannot put foreign.txt"

common="\"type\": \"object\", \"protocol\": \"s3\", \"credentials\": {\"file\": \"$CREDS\"}"
cat >"$WORK/a.json" <<EOF
{
  "run": {"name": "s3a", "duration": "8s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "mix", $common, "endpoint": "$EP", "bucket": "soak",
     "concurrency": 8, "objects": 64, "size": "8KiB", "checksum": "md5", "list_max_keys": 10,
     "mix": {"put": 30, "get": 40, "stat": 10, "delete": 10, "list": 10}},
    {"name": "paced", $common, "endpoint": "$EP", "bucket": "soak", "threads": 2,
     "concurrency": 16, "objects": 40, "size": "4KiB", "rate": 50,
     "mix": {"get": 80, "put": 20}},
    {"name": "vhost", $common, "endpoint": "http://s3.soak.test:$PORT", "connect_to": "127.0.0.1",
     "addressing": "virtual-host", "bucket": "vhost", "create_bucket": true,
     "concurrency": 2, "objects": 16, "size": "4KiB", "mix": {"put": 50, "get": 50}},
    {"name": "range-fixed", $common, "endpoint": "$EP", "bucket": "soak",
     "concurrency": 2, "objects": 10, "size": "64KiB", "read_offset": 1000, "read_length": 5000,
     "mix": {"get": 100}},
    {"name": "range-random", $common, "endpoint": "$EP", "bucket": "soak",
     "concurrency": 2, "objects": 10, "size": "64KiB", "read_range": "random",
     "mix": {"get": 100}}
  ]
}
EOF

"$SOAKD" --check-config "$WORK/a.json" >"$WORK/a.plan" 2>&1 || fail "check-config: $(cat "$WORK/a.plan")"
start_soakd --config "$WORK/a.json" --socket "$SOCK" --state-dir "$WORK/state-a" --no-table
wait_until 20 "the control socket" ctl_answers
for w in mix paced vhost range-fixed range-random; do
	wait_until 60 "workload $w to finish" workload_is "$w" finished
done
dump_json "$WORK/a.dump"
ctl dump --format csv >"$WORK/a.csv" || fail "soakctl dump --format csv failed"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
secret_absent "$SOAKD_LOG" "$WORK/a.dump" "$WORK/a.plan"

python3 - "$WORK/a.dump" "$WORK/a.csv" <<'PY' || fail "run a: $(head -c 3000 "$WORK/a.dump")"
import csv, json, sys
d = json.load(open(sys.argv[1]))
w = {x["name"]: x for x in d["workloads"]}
mix = w["mix"]["ops"]
weights = {"put": 30, "get": 40, "stat": 10, "delete": 10, "list": 10}
total = sum(mix[op]["count"] for op in weights)
print(f"# mix: {total} ops: " + ", ".join(f'{op} {mix[op]["count"]}' for op in weights))
assert total >= 100, "too few ops to judge"
for op, weight in weights.items():
    o = mix[op]
    for key in ("count", "errors", "corrupt", "errors_by_class", "ttfb_us", "connect_us"):
        assert key in o, f"{op} has no {key}"
    assert o["errors"] == 0 and o["corrupt"] == 0, f"{op}: {o['errors']} errors, {o['corrupt']} corrupt"
    # Each block of 100 ops holds each op exactly its weight of times, so
    # only the last, partial block strays from the ratio, by at most
    # min(weight, 100 - weight).
    assert abs(o["count"] - total * weight / 100) <= min(weight, 100 - weight) + 1, \
        f"{op}: {o['count']} of {total}"
    assert o["ttfb_us"]["p50"] > 0, f"{op}: no ttfb"
assert mix["get"]["bytes"] == 8192 * mix["get"]["count"], "GETs did not move whole objects"
# Pages of at most 10 keys: a listing of ~60 keys needs several.
assert mix["list"]["bytes"] / mix["list"]["count"] > 8000, "listings were not paged"
assert mix["prefill"]["count"] == 64 and mix["prefill"]["errors"] == 0, mix["prefill"]
assert mix["cleanup"]["count"] > 0 and mix["cleanup"]["errors"] == 0, mix["cleanup"]
# Keep-alive: a connection per transfer, not per op.
conns = sum(o.get("connections", 0) for o in mix.values())
ops = sum(o["count"] for o in mix.values())
print(f"# mix: {conns} connections for {ops} requests")
assert conns <= 16, f"{conns} connections for 8 transfers"

# Open loop at 50 ops/s over 2 threads for 8 s: each thread issues every op
# due from the end of its prefill to the end of the schedule, however late
# the server makes it, and none before; so the ops add up to 50/s times the
# time after the prefill (a closed loop at 16 would do many more).
# Latency runs from the due time, so it is never below the service time.
rows = list(csv.DictReader(open(sys.argv[2])))
paced = [r for r in rows if r["workload"] == "paced" and r["op"] in ("get", "put")]
prefill_end = max(float(r["end_s"]) for r in rows
                  if r["workload"] == "paced" and r["op"] == "prefill" and int(r["count"]) > 0)
total = sum(int(r["count"]) for r in paced)
lo, hi = 50 * (8 - prefill_end) - 2, 50 * 8 + 2
print(f"# paced: {total} ops, prefill done by {prefill_end:.1f} s: expected {lo:.0f} to {hi:.0f}")
assert lo <= total <= hi, f"{total} ops at 50/s"
p = w["paced"]["ops"]["get"]
assert p["errors"] == 0 and p["latency_us"]["p50"] >= p["service_us"]["p50"], p
assert len(w["paced"]["targets"]) == 2, "two threads, two targets"

v = w["vhost"]["ops"]
assert v["put"]["count"] > 0 and v["get"]["count"] > 0 and v["put"]["errors"] == 0 and v["get"]["errors"] == 0, v

fixed = w["range-fixed"]["ops"]["get"]
assert fixed["count"] > 0 and fixed["errors"] == 0 and fixed["corrupt"] == 0, fixed
assert fixed["bytes"] == 5000 * fixed["count"], f"fixed ranges moved {fixed['bytes']} bytes"
rnd = w["range-random"]["ops"]["get"]
assert rnd["count"] > 0 and rnd["errors"] == 0 and rnd["corrupt"] == 0, rnd
assert 0 < rnd["bytes"] < 65536 * rnd["count"] * 0.6, f"random ranges moved {rnd['bytes']} bytes"
print(f"# ranges: fixed {fixed['count']} GETs of 5000 bytes, random {rnd['count']} GETs"
      f" averaging {rnd['bytes'] / rnd['count']:.0f} bytes, none corrupt")
PY
grep -q "answers over HTTP/1.1" "$SOAKD_LOG" || fail "soakd did not log the HTTP version"

# Cleanup took what the workloads created and nothing else.
left=$(s3_list soak "")
[[ $left == *"keep/other.txt"* && $left == *"soakd-mix/foreign.txt"* ]] ||
	fail "cleanup deleted objects it did not create; left: $left"
[[ $(wc -l <<<"$left") == 2 ]] || fail "cleanup left objects behind: $left"
[[ -z $(s3_list vhost "") ]] || fail "cleanup left objects in bucket vhost"
note "cleanup: only keep/other.txt and soakd-mix/foreign.txt are left"

# Sizes, as MinIO stored them (cleanup off), in a bucket soakd creates.
cat >"$WORK/b.json" <<EOF
{
  "run": {"name": "s3b", "duration": "8s", "interval": "1s", "on_finish": "idle"},
  "workloads": [
    {"name": "uniform", $common, "endpoint": "$EP", "bucket": "sizes", "create_bucket": true,
     "concurrency": 4, "objects": 250, "cleanup": false, "prefix": "uniform/",
     "checksum": "crc32c", "size": {"dist": "uniform", "min": "1KiB", "max": "64KiB"},
     "mix": {"put": 100}},
    {"name": "log2", $common, "endpoint": "$EP", "bucket": "sizes", "create_bucket": true,
     "concurrency": 4, "objects": 250, "cleanup": false, "prefix": "log2/",
     "size": {"dist": "log2", "max": "256KiB"}, "mix": {"put": 100}},
    {"name": "exponential", $common, "endpoint": "$EP", "bucket": "sizes",
     "create_bucket": true, "concurrency": 4, "objects": 250, "cleanup": false,
     "prefix": "exp/", "size": {"dist": "exponential", "mean": "32KiB", "max": "256KiB"},
     "mix": {"put": 100}}
  ]
}
EOF
start_soakd --config "$WORK/b.json" --socket "$SOCK" --state-dir "$WORK/state-b" --no-table
wait_until 20 "the control socket" ctl_answers
for w in uniform log2 exponential; do
	wait_until 60 "workload $w to finish" workload_is "$w" finished
done
dump_json "$WORK/b.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
for p in uniform log2 exp; do
	s3_list sizes "$p/" >"$WORK/sizes-$p.txt" || fail "cannot list sizes/$p/"
done
python3 - "$WORK" <<'PY' || fail "size distributions"
import json, math, sys
work = sys.argv[1]
d = {w["name"]: w for w in json.load(open(f"{work}/b.dump"))["workloads"]}
KiB = 1024
m, a, b = 32 * KiB, 0, 256 * KiB
specs = {
    # name: (listing, lowest, highest, expected mean, its coefficient of variation)
    "uniform": ("uniform", KiB, 64 * KiB, 32.5 * KiB, 0.56),
    "log2": ("log2", KiB, 256 * KiB, (256 * KiB - KiB) / math.log(256), 1.34),
    "exponential": ("exp", 0, b,
                    m + (a * math.exp(-a / m) - b * math.exp(-b / m)) / (math.exp(-a / m) - math.exp(-b / m)),
                    1.0),
}
for name, (listing, lo, hi, mean, cv) in specs.items():
    put = d[name]["ops"]["put"]
    assert put["errors"] == 0, f"{name}: {put['errors']} PUT errors"
    by_dump = put["bytes"] / put["count"]
    sizes = [int(line.split()[1]) for line in open(f"{work}/sizes-{listing}.txt")]
    # Every PUT creates an object until 250 exist, then overwrites one.
    assert len(sizes) == min(250, put["count"]), f"{name}: {len(sizes)} objects stored"
    stored = sum(sizes) / len(sizes)
    print(f"# {name}: {put['count']} PUTs averaging {by_dump / KiB:.1f} KiB, {len(sizes)} stored "
          f"averaging {stored / KiB:.1f} KiB in [{min(sizes)}, {max(sizes)}]; expected mean "
          f"{mean / KiB:.1f} KiB in [{lo}, {hi}]")
    assert lo <= min(sizes) and max(sizes) <= hi, f"{name}: sizes outside [{lo}, {hi}]"
    # Means of n sizes: within 4 standard errors of the distribution's mean.
    for what, got, n in (("of all PUTs", by_dump, put["count"]), ("stored", stored, len(sizes))):
        assert abs(got - mean) <= 4 * cv * mean / math.sqrt(n), f"{name}: mean {what} {got:.0f}"
PY

# MinIO checked and kept the CRC32C soakd sent with each PUT.
key=$(head -n1 "$WORK/sizes-uniform.txt" | cut -d' ' -f1)
s3 -f -I -H "x-amz-checksum-mode: ENABLED" "$EP/sizes/$key" >"$WORK/head.txt" ||
	fail "cannot HEAD sizes/$key"
grep -qi "^x-amz-checksum-crc32c: " "$WORK/head.txt" ||
	fail "MinIO holds no CRC32C for sizes/$key: $(cat "$WORK/head.txt")"
note "sizes/$key: $(grep -i '^x-amz-checksum-crc32c' "$WORK/head.txt" | tr -d '\r')"
note "ok"
