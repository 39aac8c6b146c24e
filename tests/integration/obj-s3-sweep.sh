#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The end-of-run sweep of a versioned bucket ("versioning": true) against
# an S3 server whose version listing never ends (s3_versions_loop.py):
#   1. the same markers on every page (a server ignoring key-marker): the
#      sweep stops after the second page, saying so with the endpoint and
#      the marker, cleaned of its newline and escapes; the workload ends;
#   2. markers that move on for ever: SIGTERM stops soakd at once, the
#      sweep saying it stopped early;
#   3. the same, left alone: the sweep stops at the bound of a listing
#      (OBJ_LIST_MAX_PAGES, 10000 pages) and the workload ends.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_versions_loop stuck

# config NAME: a short versioned run named NAME in $WORK/NAME.json.
config() {
	cat >"$WORK/$1.json" <<JSON
{
  "run": {"name": "$1", "duration": "2s", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "ver",
    "versioning": true, "threads": 1, "size": "1KiB", "objects": 5, "rate": 10,
    "concurrency": 1, "mix": {"put": 100}} ]
}
JSON
}
listings() { cat "$COUNT" 2>/dev/null || echo 0; }
listings_over() { (($(listings) > $1)); }

################ 1. a marker that does not move on
config stuck
start_soakd --config "$WORK/stuck.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 30 "the workload to finish" workload_is w finished
n=$(listings)
note "stuck markers: $n version listings"
((n <= 2)) || fail "$n version listings with the same marker (want 2: it is seen once repeated)"
line=$(grep "marker that does not move on" "$SOAKD_LOG") ||
	fail "the stuck marker is not reported: $(tail -5 "$SOAKD_LOG")"
[[ $line == *"$EP"* && $line =~ other/stuck..\[31mkey ]] ||
	fail "the report does not name the endpoint and the marker: $line"
LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$SOAKD_LOG" && fail "control bytes in the log"
note "reported: ${line#*: }"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

################ 2. markers that move on for ever, and SIGTERM
echo endless >"$MODE"
config endless
start_soakd --config "$WORK/endless.json" --socket "$SOCK" --state-dir "$WORK/state2" --no-table
wait_until 20 "the control socket" ctl_answers
start=$(listings)
wait_until 30 "the sweep to list on" listings_over $((start + 50))
# Well before the bound of part 3 (about 10 s away here).
stop_soakd 3
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
(($(listings) - start < 3000)) || fail "$(($(listings) - start)) listings: SIGTERM did not stop the sweep"
grep -q "soakd is stopping: thread 0's sweep of old versions and delete markers stops" \
	"$SOAKD_LOG" || fail "the sweep did not say it stopped: $(tail -5 "$SOAKD_LOG")"
note "SIGTERM: soakd stopped after $(($(listings) - start)) listings"

################ 3. the same, left alone: bounded
before=$(listings)
config bound
start_soakd --config "$WORK/bound.json" --socket "$SOCK" --state-dir "$WORK/state3" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 120 "the workload to finish" workload_is w finished
n=$(($(listings) - before))
((n == 10000)) || fail "$n version listings (want the bound, 10000)"
grep -q "goes on past 10000 pages: the sweep stops there" "$SOAKD_LOG" ||
	fail "the bound is not reported: $(tail -5 "$SOAKD_LOG")"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "bounded at $n listings"
