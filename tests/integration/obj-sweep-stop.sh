#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The sweeps at the end of an object workload's run (after its cleanup)
# give way to a stop, against s3_versions_loop.py, a fake S3 server whose
# listings never end:
#   1. the sweep of the run's names (ListObjectsV2, every page truncated):
#      "soakctl stop w" ends the workload within a few seconds, the sweep
#      saying where it stopped and what it left, the version sweep after
#      it too, no listing after the stop; every scheduled op accounted for
#      (acct_check.py: count + errors + missed = scheduled);
#   2. the version sweep ("?versions", markers moving on for ever): the
#      same;
#   3. the names' sweep and SIGTERM: soakd exits within a few seconds;
#   4. a workload stopped during its run still sweeps (the stop that ended
#      the run does not cut its cleanup short): the version listing with
#      stuck markers is asked for, twice, before the workload is stopped;
#   5. the cleanup before the sweeps, its DELETEs held by the server: a
#      stop after the run ended ends the workload within a few seconds,
#      the log saying what the cleanup left and why;
#   6. the same cleanup and SIGTERM: soakd exits within a few seconds.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/objlib.sh"

start_versions_loop endless-list
RATE=10

# config NAME DURATION: a versioned run named NAME in $WORK/NAME.json.
config() {
	cat >"$WORK/$1.json" <<JSON
{
  "run": {"name": "$1", "duration": "$2", "interval": "1s", "on_finish": "idle"},
  "workloads": [ {"name": "w", "type": "object", "protocol": "s3",
    "credentials": {"file": "$CREDS"}, "endpoint": "$EP", "bucket": "ver",
    "versioning": true, "threads": 1, "size": "1KiB", "objects": 5, "rate": $RATE,
    "concurrency": 1, "mix": {"put": 100}} ]
}
JSON
}
version_listings() { cat "$COUNT" 2>/dev/null || echo 0; }
name_listings() { cat "$COUNT.list" 2>/dev/null || echo 0; }
deletes() { cat "$COUNT.delete" 2>/dev/null || echo 0; }
over() { (($("$1") > $2)); }
stopped_or_finished() { workload_is w stopped || workload_is w finished; }

# stop_during NAME COUNTER WHAT: once COUNTER grows by 20 (the sweep lists
# on), soakctl stop; the workload ends within 5 s and COUNTER moves no
# more; the dump accounts for every op of the 2 s schedule.
stop_during() {
	local name=$1 counter=$2 what=$3 start t0 t1 n
	start=$($counter)
	wait_until 30 "the $what to list on" over "$counter" $((start + 20))
	t0=$(now_ns)
	ctl stop w >/dev/null || fail "soakctl stop failed"
	wait_until 5 "the workload to end after the stop" stopped_or_finished
	t1=$(now_ns)
	n=$($counter)
	note "$name: the workload ended $(((t1 - t0) / 1000000)) ms after soakctl stop," \
		"$((n - start)) listings"
	sleep 1 # no sleep-to-wait: the count must stay still over this second
	(($($counter) - n <= 1)) || fail "$name: the $what goes on after the workload ended"
	dump_json "$WORK/$name.dump"
	ctl dump --format csv >"$WORK/$name.csv" || fail "soakctl dump --format csv failed"
	python3 "$(dirname "$0")/acct_check.py" "$WORK/$name.dump" "$WORK/$name.csv" w \
		$((RATE * 2)) --rate $RATE ||
		fail "$name: not every scheduled op is accounted for: $(cat "$WORK/$name.csv")"
}

################ 1. soakctl stop during the sweep of the run's names
config names 2s
start_soakd --config "$WORK/names.json" --socket "$SOCK" --state-dir "$WORK/state1" --no-table
wait_until 20 "the control socket" ctl_answers
stop_during names name_listings "sweep of the run's names"
line=$(grep "the workload is stopped: thread 0's sweep of the run's names stops before its end" \
	"$SOAKD_LOG") || fail "the names' sweep did not say it stopped: $(tail -5 "$SOAKD_LOG")"
[[ $line == *"its listing cut short after "*" page(s)"* ]] ||
	fail "the names' sweep does not say what it left: $line"
grep -q "the workload is stopped: thread 0's sweep of old versions and delete markers stops" \
	"$SOAKD_LOG" || fail "the version sweep did not give way: $(tail -5 "$SOAKD_LOG")"
note "said: ${line#*: }"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

################ 2. soakctl stop during the version sweep
echo endless >"$MODE"
config versions 2s
start_soakd --config "$WORK/versions.json" --socket "$SOCK" --state-dir "$WORK/state2" --no-table
wait_until 20 "the control socket" ctl_answers
stop_during versions version_listings "version sweep"
line=$(grep "the workload is stopped: thread 0's sweep of old versions and delete markers stops" \
	"$SOAKD_LOG") || fail "the version sweep did not say it stopped: $(tail -5 "$SOAKD_LOG")"
[[ $line == *"bucket ver after "*" page(s) of its listing"* ]] ||
	fail "the version sweep does not say what it left: $line"
note "said: ${line#*: }"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

################ 3. SIGTERM during the sweep of the run's names
echo endless-list >"$MODE"
config term 2s
start_soakd --config "$WORK/term.json" --socket "$SOCK" --state-dir "$WORK/state3" --no-table
wait_until 20 "the control socket" ctl_answers
start=$(name_listings)
wait_until 30 "the sweep of the run's names to list on" over name_listings $((start + 20))
stop_soakd 5
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
grep -q "soakd is stopping: thread 0's sweep of the run's names stops before its end" \
	"$SOAKD_LOG" || fail "the names' sweep did not say it stopped: $(tail -5 "$SOAKD_LOG")"
note "SIGTERM: soakd exited after $(($(name_listings) - start)) listings"

################ 4. stopped during its run: the workload still sweeps
echo stuck >"$MODE"
config early 60s
start_soakd --config "$WORK/early.json" --socket "$SOCK" --state-dir "$WORK/state4" --no-table
wait_until 20 "the control socket" ctl_answers
wait_until 20 "PUTs" op_at_least w put count 5
before=$(version_listings)
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 30 "the workload to stop" workload_is w stopped
(($(version_listings) - before == 2)) ||
	fail "$(($(version_listings) - before)) version listings after a stop during the run (want 2)"
grep -q "sweep.*stops before its end" "$SOAKD_LOG" &&
	fail "a stop during the run cut the sweeps short: $(grep 'stops before its end' "$SOAKD_LOG")"
note "stopped during its run: the version sweep still ran"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

################ 5. soakctl stop during the cleanup, its DELETEs held
echo hold-delete >"$MODE"
config clean 2s
start_soakd --config "$WORK/clean.json" --socket "$SOCK" --state-dir "$WORK/state5" --no-table
wait_until 20 "the control socket" ctl_answers
start=$(deletes)
wait_until 30 "the cleanup's first DELETE" over deletes "$start"
t0=$(now_ns)
ctl stop w >/dev/null || fail "soakctl stop failed"
wait_until 5 "the workload to end after the stop" stopped_or_finished
note "the cleanup ended $((($(now_ns) - t0) / 1000000)) ms after soakctl stop"
line=$(grep "w: cleanup left [0-9]* objects under .* (the workload is stopped)" "$SOAKD_LOG") ||
	fail "the cleanup did not say what it left and why: $(tail -5 "$SOAKD_LOG")"
note "said: ${line#*: }"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

################ 6. SIGTERM during the cleanup
config cleanterm 2s
start_soakd --config "$WORK/cleanterm.json" --socket "$SOCK" --state-dir "$WORK/state6" \
	--no-table
wait_until 20 "the control socket" ctl_answers
start=$(deletes)
wait_until 30 "the cleanup's first DELETE" over deletes "$start"
stop_soakd 5
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
grep -q "w: cleanup left [0-9]* objects under .* (soakd is stopping)" "$SOAKD_LOG" ||
	fail "the cleanup did not say it gave way to SIGTERM: $(tail -5 "$SOAKD_LOG")"
note "SIGTERM during the cleanup: soakd exited"
