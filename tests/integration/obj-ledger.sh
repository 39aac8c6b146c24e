#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The object write ledger against a real MinIO on 127.0.0.1 (issue 17):
#   1. soakd SIGKILLed mid-run and started again: the resumed run keeps its
#      names (no new prefill), audits every object its ledger holds with no
#      false failure, and its cleanup leaves the bucket without a single
#      object of the run, from either start.
#   2. MinIO SIGKILLed and restarted on the same data directory mid-run: no
#      object is reported lost, stale, resurrected or corrupt.
#   3. an object deleted behind soakd's back is reported "lost".
#   4. an old version of an object put back behind soakd's back is
#      reported "stale".
#   (5-7: LIST against the ledger, periodic audits, the final sweep.)
#   8. a ledger journal damaged in the middle (a record after the map's,
#      newer writes after it): the resumed audit reports nothing lost or
#      stale, and one warning names the file and the damage's offset.
#   9. a journal whose tail a power cut zeroed, an acknowledged overwrite
#      in it: the objects whose last write is lost are audited, not judged.
#  10. a journal whose last records a power cut took whole (the file as
#      long as its last synced size), then soakd started under another
#      boot: every object the lost records may have written is audited,
#      not judged; the names they began are neither listed as extra nor
#      given again; the final sweep leaves nothing of the run.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"
# MinIO may answer "not initialized" for a moment after it is live.
make_bucket() { s3 -f -o /dev/null -X PUT "$EP/soak" 2>/dev/null; }
wait_until 20 "bucket soak to be created" make_bucket
common="\"type\": \"object\", \"protocol\": \"s3\", \"credentials\": {\"file\": \"$CREDS\"},
        \"endpoint\": \"$EP\", \"bucket\": \"soak\", \"size\": \"4KiB\""

# config FILE RUN DURATION WORKLOAD-JSON [RUN-JSON]
config() {
	cat >"$1" <<EOF
{
  "run": {"name": "$2", "duration": "$3", "interval": "1s", "on_finish": "idle"${5:+, $5}},
  "workloads": [ {"name": "w", $common, $4} ]
}
EOF
}

# objects PREFIX: how many objects the bucket holds under PREFIX.
objects() { s3_list soak "$1" | wc -l; }
# tags PREFIX: the distinct run tags of the names under PREFIX.
tags() { s3_list soak "$1" | cut -d/ -f2 | sort -u; }

# OBJ_LEDGER_PARTS="3 4" runs only those parts (to watch one fail).
part() { [[ -z ${OBJ_LEDGER_PARTS:-} || " $OBJ_LEDGER_PARTS " == *" $1 "* ]]; }

# check_dump FILE PYTHON: asserts on the dump's workload "w" (as w, its ops as ops).
check_dump() {
	python3 - "$1" "$2" <<'PY' || fail "$(basename "$1"): $(head -c 3000 "$1")"
import json, sys
d = json.load(open(sys.argv[1]))
w = next(x for x in d["workloads"] if x["name"] == "w")
ops = w["ops"]
def v(op, key):
    return ops[op].get("verify", {}).get(key, 0)
exec(sys.argv[2])
PY
}

################ 1. soakd killed and resumed: no orphans
if part 1; then
note "1. soakd SIGKILLed and resumed"
config "$WORK/k.json" kill 14s '"threads": 2, "concurrency": 6, "objects": 40, "rate": 150,
  "mix": {"put": 30, "get": 40, "stat": 10, "delete": 10, "list": 10}'
STATE="$WORK/state-k"
start_soakd --config "$WORK/k.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
intervals() { grep -c '"type":"interval"' "$STATE/kill/intervals.log" 2>/dev/null || true; }
four() { (($(intervals) >= 8)); }
wait_until 30 "8 intervals" four
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
[[ -s $STATE/kill/ledger.w.0.journal && -s $STATE/kill/ledger.w.1.journal ]] ||
	fail "no ledger in the run directory: $(ls -la "$STATE/kill")"
before=$(objects soakd-w/)
tag=$(tags soakd-w/)
note "killed with $before objects under soakd-w/$tag"
((before > 0)) || fail "no objects in the bucket before the kill"
[[ $(wc -l <<<"$tag") == 1 ]] || fail "several run tags before the kill: $tag"

start_soakd --config "$WORK/k.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
grep -q "resumes .* objects under soakd-w/$tag/" "$SOAKD_LOG" ||
	fail "the resumed run did not take its names back: $(grep -i 'resume\|names under' "$SOAKD_LOG")"
# While it runs, every name is still the first start's.
mid=$(tags soakd-w/)
[[ $mid == "$tag" ]] || fail "the resumed run writes under other names: $mid (was $tag)"
wait_until 60 "the resumed workload to finish" workload_is w finished
dump_json "$WORK/k.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
# No orphans: after the resumed run's cleanup, nothing of the run is left
# (a run that forgot its first start's names leaves them all).
left=$(objects soakd-w/)
((left == 0)) || fail "$left objects of the run were left in the bucket after its cleanup: $(s3_list soak soakd-w/ | head)"
check_dump "$WORK/k.dump" '
audit = ops["audit"]
print("# audit:", audit["count"], "reads, verify", audit.get("verify"))
assert audit["count"] > 0, "the resumed run audited nothing"
for op in ops:
    for k in ("lost", "stale", "resurrected"):
        assert v(op, k) == 0, f"{op}: {k} = {v(op, k)} after a clean kill and resume"
    assert ops[op]["corrupt"] == 0, f"{op}: corrupt"
assert v("audit", "checked") > 0, "the audit checked nothing"
'
note "resumed under the same names; $before objects audited and cleaned up, none left"
fi

################ 2. MinIO killed and restarted on the same data
if part 2; then
note "2. MinIO SIGKILLed and restarted"
config "$WORK/m.json" minio 14s '"concurrency": 4, "objects": 30, "rate": 100, "timeout": "2s",
  "mix": {"put": 30, "get": 50, "stat": 10, "delete": 10}'
start_soakd --config "$WORK/m.json" --socket "$SOCK" --state-dir "$WORK/state-m" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "the mix to start" grep -q '"type":"interval"' "$WORK/state-m/minio/intervals.log"
sleep 2
kill -KILL "$MINIO_PID"
wait_until 10 "MinIO to die" not_alive "$MINIO_PID"
sleep 1
start_minio "$WORK/minio" "$PORT"
wait_until 60 "the workload to finish" workload_is w finished
dump_json "$WORK/m.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
check_dump "$WORK/m.dump" '
errors = sum(ops[op]["errors"] for op in ops)
print("#", errors, "errors while MinIO was down; uncertain writes:",
      v("put", "uncertain") + v("delete", "uncertain"))
assert errors > 0, "MinIO was killed, yet no op failed: the test did not test"
for op in ops:
    for k in ("lost", "stale", "resurrected"):
        assert v(op, k) == 0, f"{op}: {k} = {v(op, k)}: a false failure after a server restart"
    assert ops[op]["corrupt"] == 0, f"{op}: corrupt after a server restart"
assert v("get", "checked") > 0
'
left=$(objects soakd-w/)
((left == 0)) || fail "$left objects left after the cleanup"
fi

################ 3. an object deleted behind soakd's back: lost
if part 3; then
note "3. an object deleted behind soakd's back"
spawn "$WORK/statsd.log" python3 "$SRCDIR/tests/integration/statsd_listen.py" \
	"$WORK/statsd.port" "$WORK/statsd.jsonl"
STATSD=$SPAWNED
wait_until 10 "the StatsD listener" test -s "$WORK/statsd.port"
config "$WORK/l.json" lost 30s '"concurrency": 2, "objects": 8, "rate": 40, "mix": {"get": 100}' \
	"\"exports\": {\"prometheus\": {\"textfile\": \"$WORK/l.prom\"},
	 \"statsd\": {\"address\": \"127.0.0.1:$(cat "$WORK/statsd.port")\", \"prefix\": \"soak\"}}"
start_soakd --config "$WORK/l.json" --socket "$SOCK" --state-dir "$WORK/state-l" --no-table
wait_until 20 "the control socket" ctl_answers
eight() { (($(objects soakd-w/) == 8)); }
wait_until 20 "the prefill" eight
victim=$(s3_list soak soakd-w/ | awk 'NR == 1 { print $1 }')
s3 -f -X DELETE "$EP/soak/$victim" >/dev/null || fail "cannot delete $victim"
lost_seen() { (($(op_field w get verify.lost) >= 1)); }
wait_until 20 "soakd to report $victim lost" lost_seen
grep -q "LOST: GET $victim" "$SOAKD_LOG" || fail "the loss of $victim is not in the log"
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
dump_json "$WORK/l.dump"
stop_soakd 30
check_dump "$WORK/l.dump" '
assert v("get", "lost") == 1, "lost = %d, expected exactly 1 (the object is not read again)" % v("get", "lost")
assert v("get", "stale") == 0 and ops["get"]["corrupt"] == 0
'
grep -q '^soakd_verify_total{run="lost",workload="w",op="get",class="lost"} 1$' "$WORK/l.prom" ||
	fail "Prometheus does not count the lost object: $(grep soakd_verify "$WORK/l.prom")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$WORK/l.prom" >"$WORK/promtool.txt" 2>&1 ||
		fail "promtool check metrics: $(cat "$WORK/promtool.txt")"
fi
_kill_bg "$STATSD"
python3 - "$WORK/statsd.jsonl" <<'PY' || fail "StatsD: $(grep -o 'soak.w.get.verify[^"]*' "$WORK/statsd.jsonl" | head)"
import json, sys
lost = checked = 0
for line in open(sys.argv[1]):
    for m in json.loads(line)["lines"]:
        name, value = m.split(":", 1)
        if name == "soak.w.get.verify.lost":
            lost += int(value.split("|")[0])
        if name == "soak.w.get.verify.checked":
            checked += int(value.split("|")[0])
assert lost == 1, f"StatsD's verify.lost adds up to {lost}, not 1"
assert checked > 0
PY
note "the deleted object was reported lost once (also in Prometheus and StatsD)"
fi

################ 4. an old version put back: stale
# Read whole, and read as a range past the object's header (which names
# its version): the range's bytes are found to be an older version's.
if part 4; then
for variant in whole range; do
note "4. an old version put back behind soakd's back (reads: $variant)"
range=
[[ $variant == range ]] && range='"read_offset": "1KiB", "read_length": "1KiB", '
config "$WORK/s.json" "stale-$variant" 120s "$range"'"concurrency": 2, "objects": 4, "rate": 40, "mix": {"put": 10, "get": 90}'
rm -rf "$WORK/state-s"
start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state-s" --no-table
wait_until 20 "the control socket" ctl_answers
four_objects() { (($(objects soakd-w/) == 4)); }
wait_until 20 "the prefill" four_objects
etag() { s3 -sI "$EP/soak/$1" | tr -d '\r' | awk 'tolower($1) == "etag:" { print $2 }'; }
stale_seen() { (($(op_field w get verify.stale) >= 1)); }
for attempt in 1 2 3 4 5 6 7 8; do
	key=$(s3_list soak soakd-w/ | shuf -n 1 | cut -d' ' -f1)
	[[ -n $key ]] || fail "no object of soakd in the bucket"
	s3 -f -o "$WORK/old" "$EP/soak/$key" || continue
	old=$(etag "$key")
	changed() { [[ $(etag "$key") != "$old" ]]; }
	wait_until 10 "soakd to overwrite $key" changed
	s3 -f -T "$WORK/old" "$EP/soak/$key" >/dev/null || fail "cannot put back $key"
	for ((i = 0; i < 30; i++)); do
		stale_seen && break 2
		sleep 0.1
	done
done
stale_seen || fail "an old version was put back $attempt times and never reported stale ($variant)"
grep -q "STALE: GET .*version [0-9]* came back where version" "$SOAKD_LOG" ||
	fail "the stale read is not in the log ($variant)"
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
dump_json "$WORK/s.dump"
stop_soakd 30
check_dump "$WORK/s.dump" '
assert v("get", "stale") >= 1
assert ops["get"]["corrupt"] == 0, "an old version was counted corrupt, not stale"
assert v("get", "lost") == 0
'
note "an old version put back was reported stale (reads: $variant, attempt $attempt)"
done
fi

################ 5. LIST against the ledger: missing and extra
if part 5; then
note "5. LIST of the prefix against the ledger"
config "$WORK/x.json" list 60s '"threads": 2, "concurrency": 4, "objects": 24, "rate": 40,
  "prefixes": 4, "list_max_keys": 4, "mix": {"list": 80, "put": 10, "delete": 10}'
start_soakd --config "$WORK/x.json" --socket "$SOCK" --state-dir "$WORK/state-x" --no-table
wait_until 20 "the control socket" ctl_answers
lists() { (($(op_field w list count) >= $1)); }
wait_until 30 "60 listings" lists 60
# Writes and deletes run beside the listings: none may look missing or extra.
for k in list_missing list_extra resurrected; do
	n=$(op_field w list "verify.$k")
	((n == 0)) || fail "$n $k in listings while nothing was touched behind soakd's back"
done
tag=$(tags soakd-w/)
s3 -f -T /etc/hostname "$EP/soak/soakd-w/$tag/p1/foreign" >/dev/null || fail "cannot put foreign"
extra() { (($(op_field w list verify.list_extra) >= 1)); }
wait_until 20 "soakd to list the foreign object as extra" extra
# A present object whose sub-prefix gets listed, deleted behind soakd's back.
victim=$(s3_list soak "soakd-w/$tag/p2/" | awk 'NR == 1 { print $1 }')
[[ -n $victim ]] || fail "no object under p2/"
s3 -f -X DELETE "$EP/soak/$victim" >/dev/null || fail "cannot delete $victim"
missing() { (($(op_field w list verify.list_missing) >= 1)); }
wait_until 20 "soakd to find $victim missing from a listing" missing
grep -q "LIST MISMATCH" "$SOAKD_LOG" || fail "the listing mismatch is not in the log"
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
stop_soakd 30
s3 -f -X DELETE "$EP/soak/soakd-w/$tag/p1/foreign" >/dev/null
left=$(objects soakd-w/)
((left == 0)) || fail "$left objects left after the cleanup"
note "a foreign object was listed as extra, a deleted one as missing"
fi

################ 6. "audit": "interval:2s": passes beside the mix, progress in status
if part 6; then
note "6. periodic audits"
# The schedule is long: the workload is stopped once a pass is done, so
# that a slow prefill (MinIO took 7-12 s for 3000 objects on an idle
# machine here) cannot leave a pass unfinished.
config "$WORK/a.json" audit 2m '"concurrency": 3, "objects": 2000, "rate": 30,
  "audit": "interval:2s", "mix": {"get": 60, "put": 20, "delete": 20}'
"$SOAKD" --check-config "$WORK/a.json" | grep -q '"audit": "interval:2s"' ||
	fail "the plan does not show the audit"
"$SOAKD" --check-config "$SRCDIR/config/s3-ledger.json" | grep -q '"audit": "interval:6h"' ||
	fail "config/s3-ledger.json: the plan does not show its audit"
# systemd's STATUS= line, through a stand-in for its notification socket.
NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
LISTENER=$SPAWNED
wait_until 10 "the notify socket" test -S "$NOTIFY"
SOAKD_ENV=("NOTIFY_SOCKET=$NOTIFY")
start_soakd --config "$WORK/a.json" --socket "$SOCK" --state-dir "$WORK/state-a" --no-table
SOAKD_ENV=()
wait_until 20 "the control socket" ctl_answers
audit_shown() { ctl status --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["workloads"][0]
sys.exit(0 if "audit" in w and w["audit"]["total"] > 0 else 1)'; }
wait_until 60 "an audit's progress in status" audit_shown
pass_done() { grep -q "thread 0 audited the objects of its ledger" "$SOAKD_LOG"; }
wait_until 90 "an audit pass to complete" pass_done
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
dump_json "$WORK/a.dump"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
PREFILL_MISSED=$(sed -n 's/.* \([0-9]*\) ops came due while the pool was prefilled.*/\1/p' "$SOAKD_LOG")
export PREFILL_MISSED=${PREFILL_MISSED:-0}
check_dump "$WORK/a.dump" '
audit = ops["audit"]
print("# periodic audits:", audit["count"], "reads, verify", audit.get("verify"))
# A pass reads every slot but those being written (and the log says one
# completed, below).
assert audit["count"] >= 1990, "fewer audit reads than a pass of the 2000 objects"
assert audit["errors"] == 0 and audit["corrupt"] == 0
for k in ("lost", "stale", "resurrected"):
    assert v("audit", k) == 0, k
# The audit never holds the schedule back: the only ops missed came due
# while the pool was prefilled (an op waiting for a transfer at the stop
# would be missed too: rate 30 on 3 transfers leaves none waiting).
import os
missed = sum(ops[op]["missed"] for op in ("get", "put", "delete"))
assert missed == int(os.environ["PREFILL_MISSED"]), f"{missed} ops missed beside the audit"
'
_kill_bg "$LISTENER"
grep -q 'STATUS=.*w running auditing [0-9]*/2000 objects' "$WORK/notify.jsonl" ||
	fail "no STATUS= line shows the audit: $(grep -o 'STATUS=[^"]*' "$WORK/notify.jsonl" | head -3)"
fi

################ 7. names the ledger lost: the final sweep deletes them
if part 7; then
note "7. an object of the run that the ledger does not hold"
config "$WORK/w.json" sweep 6s '"concurrency": 2, "objects": 10, "rate": 20, "names": "sequential",
  "mix": {"put": 50, "get": 50}'
start_soakd --config "$WORK/w.json" --socket "$SOCK" --state-dir "$WORK/state-w" --no-table
wait_until 20 "the control socket" ctl_answers
ten() { (($(objects soakd-w/) >= 10)); }
wait_until 20 "the prefill" ten
tag=$(tags soakd-w/)
# As if a power cut had taken the ledger's record of this PUT: a name
# soakd makes (thread 0, a number it has not reached), unknown to it.
s3 -f -T /etc/hostname "$EP/soak/soakd-w/$tag/t0-000000099999" >/dev/null || fail "cannot put"
s3 -f -T /etc/hostname "$EP/soak/soakd-w/$tag/not-a-soakd-name" >/dev/null || fail "cannot put"
wait_until 30 "the workload to finish" workload_is w finished
stop_soakd 30
grep -q "found 1 objects of the run the ledger did not hold" "$SOAKD_LOG" ||
	fail "the sweep did not report the object: $(grep -i sweep "$SOAKD_LOG")"
left=$(s3_list soak soakd-w/ | cut -d' ' -f1)
[[ $left == "soakd-w/$tag/not-a-soakd-name" ]] ||
	fail "after the cleanup the bucket holds: ${left:-nothing} (expected only the foreign object)"
s3 -f -X DELETE "$EP/soak/$left" >/dev/null
note "the sweep deleted the run's unrecorded object and left the foreign one"
fi


# stop_and_check_audit NAME WHAT: stops workload w and soakd, then checks
# the dump ($WORK/NAME.dump): the resumed run audited, and nothing was
# reported lost, stale, resurrected or corrupt (WHAT: what was done to
# the ledger, for the messages).
stop_and_check_audit() {
	ctl stop w >/dev/null || fail "soakctl stop failed"
	wait_until 30 "the workload to stop" workload_is w stopped
	dump_json "$WORK/$1.dump"
	stop_soakd 30
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
	WHAT=$2 check_dump "$WORK/$1.dump" '
import os
what = os.environ["WHAT"]
audit = ops["audit"]
print(f"# audit after the {what}:", audit["count"], "reads, verify", audit.get("verify"))
assert audit["count"] > 0, "the resumed run audited nothing"
for op in ops:
    for k in ("lost", "stale", "resurrected"):
        assert v(op, k) == 0, f"{op}: {k} = {v(op, k)}: a false failure after the {what}"
    assert ops[op]["corrupt"] == 0, f"{op}: corrupt"
'
}

################ 8. a damaged journal: no false loss
if part 8; then
note "8. the ledger journal damaged in the middle"
config "$WORK/d.json" damage 120s '"concurrency": 2, "objects": 8, "rate": 60,
  "mix": {"put": 50, "get": 50}'
STATE="$WORK/state-d"
JOURNAL="$STATE/damage/ledger.w.0.journal"
intervals() { grep -c '"type":"interval"' "$STATE/damage/intervals.log" 2>/dev/null || true; }
more_intervals() { (($(intervals) >= $1)); }
audited() { grep -q "thread 0 audited the objects of its ledger" "$SOAKD_LOG"; }
# run_then_kill [resume]: start (after the audit, resuming), let the mix
# overwrite for 4 intervals, SIGKILL.
run_then_kill() {
	start_soakd --config "$WORK/d.json" --socket "$SOCK" --state-dir "$STATE" --no-table
	wait_until 20 "the control socket" ctl_answers
	[[ -z ${1:-} ]] || wait_until 30 "the audit of the resumed run" audited
	local want=$(($(intervals) + 4))
	wait_until 30 "$want intervals" more_intervals "$want"
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 5
}
run_then_kill
# A torn byte: the next start folds the journal into a map of every
# object's state; what it writes next goes to a new journal.
truncate -s +1 "$JOURNAL"
run_then_kill resume
[[ -s $STATE/damage/ledger.w.0.map ]] || fail "no ledger map: $(ls -la "$STATE/damage")"
records=$(($(stat -c %s "$JOURNAL") / 48))
((records > 20)) || fail "the second start wrote only $records ledger records"
# A bad byte in the journal's first record after its header: every write
# of the second start (newer versions of the map's objects) comes after it.
printf 'X' | dd of="$JOURNAL" bs=1 seek=68 conv=notrunc status=none
start_soakd --config "$WORK/d.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the audit of the resumed run" audited
grep "ledger file ledger.w.0.journal is damaged at byte 48 " "$SOAKD_LOG" >"$WORK/d.warn" ||
	fail "no warning names the damaged journal and where: $(grep -i ledger "$SOAKD_LOG")"
(($(wc -l <"$WORK/d.warn") == 1)) || fail "the damage is reported more than once: $(cat "$WORK/d.warn")"
stop_and_check_audit d damage
note "$(cut -d: -f2- "$WORK/d.warn" | head -c 300)"
fi

################ 9. a journal's tail lost in a power cut: no false loss
if part 9; then
note "9. the ledger journal's tail zeroed, as a power cut leaves it"
config "$WORK/z.json" tail 120s '"concurrency": 2, "objects": 8, "rate": 60,
  "mix": {"put": 50, "get": 50}'
STATE="$WORK/state-z"
JOURNAL="$STATE/tail/ledger.w.0.journal"
audited() { grep -q "thread 0 audited the objects of its ledger" "$SOAKD_LOG"; }
start_soakd --config "$WORK/z.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
ticks() { (($(grep -c '"type":"interval"' "$STATE/tail/intervals.log" 2>/dev/null || true) >= 4)); }
wait_until 30 "4 intervals" ticks
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
# Zeroes from the announcement of the last overwrite that was acknowledged
# on: the server holds that newer version, the ledger's last whole record
# of the slot says the older one.
at=$(python3 "$SRCDIR/tests/integration/ledger_cut.py" overwrite "$JOURNAL") ||
	fail "cannot read $JOURNAL"
((at > 0)) || fail "no acknowledged overwrite in the journal"
size=$(stat -c %s "$JOURNAL")
head -c $((size - at)) /dev/zero | dd of="$JOURNAL" bs=1M seek="$at" oflag=seek_bytes conv=notrunc status=none
start_soakd --config "$WORK/z.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the audit of the resumed run" audited
grep "ledger file ledger.w.0.journal is damaged at byte $at " "$SOAKD_LOG" >"$WORK/z.warn" ||
	fail "no warning names the damaged journal at byte $at: $(grep -i ledger "$SOAKD_LOG")"
grep -q ", so [1-9][0-9]* object(s) whose last write" "$WORK/z.warn" ||
	fail "the lost tail left no object unknown: $(cat "$WORK/z.warn")"
stop_and_check_audit z "lost tail"
note "$(cut -d: -f2- "$WORK/z.warn" | head -c 300)"
fi

################ 10. a host restart took the journal's last records
if part 10; then
note "10. the ledger journal's last records lost with the host's page cache"
config "$WORK/h.json" host 120s '"concurrency": 2, "objects": 8, "rate": 60,
  "names": "sequential", "mix": {"put": 40, "get": 30, "delete": 15, "list": 15}'
STATE="$WORK/state-h"
JOURNAL="$STATE/host/ledger.w.0.journal"
INNER_PID="$WORK/inner.pid"
on_exit "p=\$(cat '$INNER_PID' 2>/dev/null) && [[ \$(cat /proc/\$p/comm 2>/dev/null) == soakd ]] &&
	kill -KILL \$p"
start_soakd --config "$WORK/h.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
ticks() { (($(grep -c '"type":"interval"' "$STATE/host/intervals.log" 2>/dev/null || true) >= 5)); }
wait_until 30 "5 intervals" ticks
kill -KILL "$SOAKD_PID"
wait_soakd_exit 5
tag=$(tags soakd-w/)
# The journal cut at a record's boundary, as a power cut leaves a file
# whose last writes never reached the disk: from the earliest of the last
# acknowledged overwrite, the last acknowledged DELETE and the last
# acknowledged PUT of a new name on, so that the server holds a newer
# version, has deleted an object and holds a name the ledger never saw.
at=$(python3 "$SRCDIR/tests/integration/ledger_cut.py" host "$JOURNAL") ||
	fail "cannot read $JOURNAL"
read -r at records known <<<"$at"
((at > 0)) || fail "the journal lacks an acknowledged overwrite, delete or new name (has: $records)"
truncate -s "$at" "$JOURNAL"
note "journal cut from byte $at of $((48 * (records + 1))); its last name is $known"
# A name the lost records began, far enough past the ledger's last that
# this run would not give it before it ends: listings must not judge it.
planted=$(printf 't0-%012d' $((known + 1000)))
s3 -f -T /etc/hostname "$EP/soak/soakd-w/$tag/$planted" >/dev/null || fail "cannot put $planted"
cat /proc/sys/kernel/random/uuid >"$WORK/boot_id"
SOAKD_LOG="$WORK/soakd.rebooted.log"
spawn "$SOAKD_LOG" unshare --mount --fork \
	sh -c 'mount --bind "$2" /proc/sys/kernel/random/boot_id || exit 125
	       echo $$ >"$1"; shift 2; exec "$@"' sh "$INNER_PID" "$WORK/boot_id" \
	"$SOAKD" --config "$WORK/h.json" --socket "$SOCK" --state-dir "$STATE" --no-table
SOAKD_PID=$SPAWNED
wait_until 20 "the control socket (rebooted)" ctl_answers
audited() { grep -q "thread 0 audited the objects of its ledger" "$SOAKD_LOG"; }
wait_until 30 "the audit of the resumed run" audited
grep "the host restarted since thread 0's ledger was last closed" "$SOAKD_LOG" >"$WORK/h.warn" ||
	fail "the restart under another boot was not noticed: $(grep -i ledger "$SOAKD_LOG")"
lists() { (($(op_field w list count) >= $1)); }
l0=$(op_field w list count)
wait_until 30 "20 listings after the restart" lists $((l0 + 20))
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
dump_json "$WORK/h.dump"
kill -TERM "$(cat "$INNER_PID")"
wait_soakd_exit 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
check_dump "$WORK/h.dump" '
print("# audit after the host restart:", ops["audit"]["count"], "reads, verify",
      ops["audit"].get("verify"))
assert ops["audit"]["count"] > 0, "the resumed run audited nothing"
for op in ops:
    for k in ("lost", "stale", "resurrected", "list_missing", "list_extra"):
        assert v(op, k) == 0, f"{op}: {k} = {v(op, k)}: a false failure after a host restart"
    assert ops[op]["corrupt"] == 0, f"{op}: corrupt"
'
left=$(objects "soakd-w/$tag/")
((left == 0)) || fail "$left objects of the run were left after the cleanup: $(s3_list soak "soakd-w/$tag/" | head)"
note "$(cut -d: -f2- "$WORK/h.warn" | head -c 300)"
fi
