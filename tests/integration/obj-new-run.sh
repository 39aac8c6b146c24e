#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl start --new-run with an object workload, against a real MinIO on
# 127.0.0.1 (issue 17): the new run gets a write ledger of its own in its
# own run directory and a name tag of its own; the old run's ledger, moved
# aside with its directory, takes no more writes.
#   1. "cleanup": false: the old run's objects stay in the bucket, as its
#      ledger (in NAME.1) says, and the new run writes under a new tag.
#   2. "cleanup": true: the old run's objects are deleted when it ends, and
#      the new run's own cleanup leaves the bucket empty.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

ensure_minio
PORT=$(free_port)
start_minio "$WORK/minio" "$PORT"
CREDS="$WORK/s3.credentials"
write_creds "$CREDS"
EP="http://127.0.0.1:$PORT"
make_bucket() { s3 -f -o /dev/null -X PUT "$EP/soak" 2>/dev/null; }
wait_until 20 "bucket soak to be created" make_bucket

# config FILE RUN CLEANUP DURATION
config() {
	cat >"$1" <<EOF2
{
  "run": {"name": "$2", "duration": "$4", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "soak",
    "size": "4KiB", "objects": 30, "rate": 60, "cleanup": $3,
    "mix": {"put": 50, "get": 40, "delete": 10}} ]
}
EOF2
}
tags() { s3_list soak soakd-w/ | cut -d/ -f2 | sort -u; }
count() { s3_list soak "soakd-w/$1/" | wc -l; }
size_of() { stat -c %s "$1" 2>/dev/null || echo 0; }
intervals_at_least() { (($(grep -c '"type":"interval"' "$1" 2>/dev/null || true) >= $2)); }

new_run() {
	ctl start --new-run >"$WORK/new-run.out" 2>&1 || fail "start --new-run: $(cat "$WORK/new-run.out")"
	[[ -d $STATE/$RUN.1 ]] || fail "the old run was not moved aside: $(ls "$STATE")"
}

################ 1. cleanup false: the old run's objects and ledger stay as they were
note "1. --new-run, cleanup false"
RUN=keep STATE="$WORK/state-keep"
config "$WORK/keep.json" $RUN false 60s
start_soakd --config "$WORK/keep.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "3 intervals" intervals_at_least "$STATE/$RUN/intervals.log" 3
old_tag=$(tags)
[[ $(wc -l <<<"$old_tag") == 1 && -n $old_tag ]] || fail "expected one run tag, got: $old_tag"
new_run
wait_until 30 "3 intervals of the new run" intervals_at_least "$STATE/$RUN/intervals.log" 3
old_journal="$STATE/$RUN.1/ledger.w.0.journal"
[[ -s $old_journal ]] || fail "the old run's ledger is not in its directory: $(ls -la "$STATE/$RUN.1")"
old_size=$(size_of "$old_journal")
old_count=$(count "$old_tag")
sleep 4
[[ -s $STATE/$RUN/ledger.w.0.journal ]] ||
	fail "the new run has no ledger of its own: $(ls -la "$STATE/$RUN")"
now_size=$(size_of "$old_journal")
((now_size == old_size)) ||
	fail "the old run's ledger still takes writes: $old_size -> $now_size bytes"
all=$(tags)
new_tag=$(grep -v -x -F "$old_tag" <<<"$all" || true)
[[ -n $new_tag && $(wc -l <<<"$new_tag") == 1 ]] ||
	fail "the new run writes under no new tag: tags $all (old $old_tag)"
grep -q "names under soakd-w/$new_tag/" "$SOAKD_LOG" ||
	fail "soakd's log does not name the new run's names: $(grep 'names under' "$SOAKD_LOG")"
(($(count "$old_tag") == old_count)) ||
	fail "the old run's objects changed after it ended: $old_count -> $(count "$old_tag")"
((old_count > 0)) || fail "the old run (cleanup false) left no objects"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "old run $old_tag: $old_count objects kept, ledger in $RUN.1 unchanged; new run under $new_tag"

################ 2. cleanup true: the old run cleans up its own, the new its own
note "2. --new-run, cleanup true"
# What part 1 left, out of the way.
s3_list soak soakd-w/ | while read -r key _; do s3 -f -X DELETE "$EP/soak/$key"; done
RUN=clean STATE="$WORK/state-clean"
config "$WORK/clean.json" $RUN true 8s
start_soakd --config "$WORK/clean.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "3 intervals" intervals_at_least "$STATE/$RUN/intervals.log" 3
old_tag=$(tags)
[[ $(wc -l <<<"$old_tag") == 1 && -n $old_tag ]] || fail "expected one run tag, got: $old_tag"
new_run
(($(count "$old_tag") == 0)) || fail "the old run's cleanup left $(count "$old_tag") objects"
wait_until 60 "the new run to finish" workload_is w finished
[[ -s $STATE/$RUN/ledger.w.0.journal ]] || fail "the new run has no ledger of its own"
left=$(s3_list soak soakd-w/ | wc -l)
((left == 0)) || fail "$left objects left after the new run's cleanup: $(s3_list soak soakd-w/ | head -3)"
grep -q "names under soakd-w/$old_tag/" "$SOAKD_LOG" &&
	(($(grep -c "names under soakd-w/" "$SOAKD_LOG") == 2)) ||
	fail "expected two runs with their own names: $(grep 'names under' "$SOAKD_LOG")"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "old run cleaned up at its end, new run under its own tag cleaned up at its own"
