#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# "versioning": true against a real MinIO on 127.0.0.1 (issue 17): soakd
# switches versioning on for its buckets at setup, the run PUTs, rewrites
# and DELETEs under versioning (each DELETE only a delete marker), and its
# cleanup leaves no version and no delete marker of the run in the
# buckets; "versioning" with an http workload is refused by name.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"
minio_ready() { s3 -f -o /dev/null "$EP/minio/health/ready" 2>/dev/null; }
wait_until 20 "MinIO to be ready" minio_ready

# versions BUCKET PREFIX: "Version KEY ID" / "DeleteMarker KEY ID" lines.
versions() {
	python3 - "$1" "$2" "$PORT" "$MINIO_USER:$MINIO_SECRET" <<'PY'
import html, re, subprocess, sys, urllib.parse
bucket, prefix, port, user = sys.argv[1:]
markers = {}
while True:
    query = dict(markers, prefix=prefix, versions="")
    url = f"http://127.0.0.1:{port}/{bucket}/?" + urllib.parse.urlencode(
        sorted(query.items()), quote_via=urllib.parse.quote, safe="")
    page = subprocess.run(["curl", "-sS", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", user,
                           "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", url],
                          capture_output=True, text=True, check=True).stdout
    if "<ListVersionsResult" not in page:
        sys.exit(f"listing versions failed: {page}")
    for kind, body in re.findall(r"<(Version|DeleteMarker)>(.*?)</\1>", page, re.S):
        key = re.search(r"<Key>(.*?)</Key>", body).group(1)
        vid = re.search(r"<VersionId>(.*?)</VersionId>", body).group(1)
        print(kind, html.unescape(key), vid)
    if "<IsTruncated>true</IsTruncated>" not in page:
        break
    markers = {"key-marker": html.unescape(re.search(r"<NextKeyMarker>(.*?)</", page).group(1)),
               "version-id-marker": html.unescape(
                   re.search(r"<NextVersionIdMarker>(.*?)</", page).group(1))}
PY
}

cat >"$WORK/v.json" <<JSON
{
  "run": {"name": "ver", "duration": "8s", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "ver",
    "create_bucket": true, "versioning": true, "buckets": 2, "threads": 2,
    "size": "4KiB", "objects": 20, "rate": 80, "concurrency": 4,
    "mix": {"put": 50, "get": 30, "delete": 20}} ]
}
JSON
"$SOAKD" --check-config "$WORK/v.json" >"$WORK/plan.out" 2>&1 ||
	fail "the configuration is refused: $(cat "$WORK/plan.out")"
grep -q '"versioning": true' "$WORK/plan.out" || fail "the plan does not show versioning: $(cat "$WORK/plan.out")"

start_soakd --config "$WORK/v.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the mix to start" grep -q '"type":"interval"' "$WORK/state/ver/intervals.log"
for b in ver-0 ver-1; do
	s3 "$EP/$b/?versioning=" >"$WORK/vc.xml"
	grep -q "<Status>Enabled</Status>" "$WORK/vc.xml" ||
		fail "versioning is not enabled on bucket $b: $(cat "$WORK/vc.xml")"
done
sleep 3
mid=$(versions ver-0 soakd-w/; versions ver-1 soakd-w/)
markers=$(grep -c '^DeleteMarker' <<<"$mid" || true)
old=$(awk '$1 == "Version" {n[$2]++} END {m = 0; for (k in n) if (n[k] > 1) m++; print m}' <<<"$mid")
note "mid-run: $(wc -l <<<"$mid") versions and markers, $markers delete markers, $old names with older versions"
((markers > 0 && old > 0)) || fail "the run made no delete marker or no second version: $mid"
wait_until 60 "the workload to finish" workload_is w finished
dump_json "$WORK/v.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
python3 - "$WORK/v.dump" <<'PY' || fail "$(head -c 2000 "$WORK/v.dump")"
import json, sys
w = next(x for x in json.load(open(sys.argv[1]))["workloads"] if x["name"] == "w")
for op, o in w["ops"].items():
    assert o["corrupt"] == 0, f"{op}: corrupt"
    for k in ("lost", "stale", "resurrected"):
        assert o.get("verify", {}).get(k, 0) == 0, f"{op}: {k}"
assert w["ops"]["get"]["count"] > 0
PY
left=$(versions ver-0 soakd-w/; versions ver-1 soakd-w/)
[[ -z $left ]] || fail "the cleanup left $(wc -l <<<"$left") versions and delete markers: $(head -5 <<<"$left")"
note "versioning enabled on both buckets; no version or delete marker of the run left"

################ 2. the acknowledged version by its id, across a kill of soakd
# An object rewritten behind soakd's back (a newer version of other bytes)
# is still read right by GETs, which ask for the acknowledged version by
# its id; the same bytes put again (same ETag, a new version id) make a
# STAT (the latest version) stale; the ids survive soakd's SIGKILL, so the
# resumed run's audit reads the acknowledged versions too.
cat >"$WORK/v2.json" <<JSON
{
  "run": {"name": "ver2", "duration": "30s", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "ver2",
    "create_bucket": true, "versioning": true, "cleanup": true,
    "size": "4KiB", "objects": 6, "rate": 60, "concurrency": 2,
    "mix": {"get": 60, "stat": 40}} ]
}
JSON
STATE2="$WORK/state2"
start_soakd --config "$WORK/v2.json" --socket "$SOCK" --state-dir "$STATE2" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the mix to start" grep -q '"type":"interval"' "$STATE2/ver2/intervals.log"
keys=$(s3_list ver2 soakd-w/ | cut -d' ' -f1)
k1=$(sed -n 1p <<<"$keys")
k2=$(sed -n 2p <<<"$keys")
[[ -n $k1 && -n $k2 ]] || fail "no objects after the prefill: $keys"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
# Behind soakd's back: k1 gets other bytes, k2 its own bytes again.
head -c 4096 /dev/zero >"$WORK/zeros"
s3 -f -o /dev/null -X PUT --data-binary @"$WORK/zeros" "$EP/ver2/$k1" || fail "cannot rewrite $k1"
s3 -f -o "$WORK/k2" "$EP/ver2/$k2" || fail "cannot read $k2"
s3 -f -o /dev/null -X PUT --data-binary @"$WORK/k2" "$EP/ver2/$k2" || fail "cannot rewrite $k2"
start_soakd --config "$WORK/v2.json" --socket "$SOCK" --state-dir "$STATE2" --no-table
wait_until 20 "the control socket" ctl_answers
grep -q "resumes" "$SOAKD_LOG" || fail "the run did not resume: $(tail -5 "$SOAKD_LOG")"
wait_until 20 "a stale STAT" op_at_least w stat verify.stale 1
dump_json "$WORK/v2.dump"
python3 - "$WORK/v2.dump" <<'PY' || fail "$(head -c 3000 "$WORK/v2.dump")"
import json, sys
w = next(x for x in json.load(open(sys.argv[1]))["workloads"] if x["name"] == "w")
ops = w["ops"]
v = lambda op, k: ops[op].get("verify", {}).get(k, 0)
print("# audit", ops["audit"]["count"], ops["audit"].get("verify"), "get", ops["get"]["count"],
      ops["get"]["corrupt"], "stat", ops["stat"].get("verify"))
assert ops["audit"]["count"] >= 6, "the resumed run did not audit its objects"
for op in ("audit", "get"):
    assert ops[op]["corrupt"] == 0, f"{op}: {ops[op]['corrupt']} corrupt: not the acknowledged version"
    assert v(op, "lost") == 0 and v(op, "stale") == 0, f"{op}: {ops[op].get('verify')}"
assert ops["get"]["count"] > 0
assert v("stat", "stale") > 0
PY
grep -q "STALE.*$k2.*latest version is not the one" "$SOAKD_LOG" ||
	fail "no STAT of $k2 reported stale by its version id: $(grep STALE "$SOAKD_LOG" | head -3)"
ctl stop w >/dev/null
wait_until 60 "the workload to stop" workload_is w stopped
stop_soakd 30
left=$(versions ver2 soakd-w/)
[[ -z $left ]] || fail "the cleanup left $(wc -l <<<"$left") versions: $(head -3 <<<"$left")"
note "GETs and the audit read the acknowledged versions by id; $k2 put again is stale by its id"

################ 3. a server without versioning: refused, naming the bucket
NV_PORT=$(free_port)
spawn "$WORK/nv.log" python3 "$(dirname "$0")/s3_no_versioning.py" "$NV_PORT"
wait_until 10 "the server without versioning" curl -s -o /dev/null "http://127.0.0.1:$NV_PORT/"
sed -e "s|$EP|http://127.0.0.1:$NV_PORT|" -e 's/"name": "ver"/"name": "nover"/' \
	-e 's/"bucket": "ver"/"bucket": "plain"/' "$WORK/v.json" >"$WORK/nv.json"
start_soakd --config "$WORK/nv.json" --socket "$SOCK" --state-dir "$WORK/state-nv" --no-table
wait_soakd_exit 20
((SOAKD_RC != 0)) || fail "soakd started against a server that cannot enable versioning"
grep -q "does not enable versioning on bucket plain-0" "$SOAKD_LOG" ||
	fail "the refusal does not name the bucket: $(tail -5 "$SOAKD_LOG")"
note "refused: $(grep -o 'does not enable versioning.*' "$SOAKD_LOG" | head -1)"

# Not for http.
cat >"$WORK/h.json" <<JSON
{ "workloads": [ {"name": "h", "type": "object", "protocol": "http",
    "endpoint": "http://127.0.0.1:1/", "versioning": true, "rate": 1} ] }
JSON
if "$SOAKD" --check-config "$WORK/h.json" >"$WORK/h.out" 2>&1; then
	fail "versioning with an http workload was accepted"
fi
grep -q '"versioning" is for "protocol": "s3"' "$WORK/h.out" || fail "unclear refusal: $(cat "$WORK/h.out")"
