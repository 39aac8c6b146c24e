#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A reload that would rebuild a verified device workload whose last run
# gave up ops the device still holds.  faultdev stalls 1.5 s into a 3 s
# schedule: the run ends with the ops in flight given up (counted as
# missed) and the stream's thread lingers to take them back.  While they
# are held:
#   - a reload changing the workload is refused before anything stops,
#     naming the device and the ops still in flight (the log says it too):
#     a replacement opening the device then would have its blocks
#     overwritten by the late writes, and its verify state written by the
#     lingering thread as well; the workload stays as it was, not started;
#   - a reload adding a workload of another name on the same device is
#     refused the same way.
# Once the device is released and the ops are back, the same reload is
# taken: the new definition starts, writes and reads back, and verify finds
# nothing corrupt or stale; every op scheduled over both definitions is
# counted exactly once.  Run twice: on faultdev's image as a regular file
# (where nothing kept the replacement out: the late writes could land over
# its blocks), and on a loop device over it (where the exclusive open did,
# with a misleading "in use" that left the workload failed), and on the
# first partition of that loop device, where the workload step 2 adds is on
# the whole disk.  On the file and on the partition, a loop device attached
# over the held target is refused too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

faultdev_start 16M

DURATION=3
# config RATE PRE_READ [EXTRA_WORKLOAD_JSON]: writes only, one op, so the
# accounting is exact per op and interval; with PRE_READ true each write
# first reads back and checks the block it overwrites.
# TARGET: the device or file, in JSON.
config() {
	cat >"$CFG" <<JSON
{"run": {"name": "reload-linger", "duration": "120s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "v", "type": "device", "model": "pattern",
                "targets": [$TARGET], "read_pct": 0,
                "block_size": "4KiB", "access": "random", "queue_depth": 8, "rate": $1,
                "verify": true, "pre_read": $2, "schedule": [{"scale": 1, "for": "${DURATION}s"}]}${3:+,
               $3}]}
JSON
}
# op: count errors missed verify-failures verify-checked, over every run so far.
totals() {
	ctl status --json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "v")
ops = w["ops"].values()
v = [o.get("verify_total", {}) for o in ops]
print(sum(o["count_total"] for o in ops), sum(o.get("errors_total", 0) for o in ops),
      sum(o.get("missed_total", 0) for o in ops),
      sum(x.get(k, 0) for x in v for k in ("corrupt", "stale", "misdirected", "torn", "foreign")),
      sum(x.get("checked", 0) for x in v))'
}
ops_done() { local c; read -r c _ < <(totals); ((c >= $1)); }
# log_keeps_first LOG SCHEDULED COUNT MISSED: the first definition's
# intervals in the run's log, before the one reload that was taken, add up
# to its schedule as soakd showed it; no verify failure in any interval.
log_keeps_first() {
	python3 - "$@" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()[1:]
records = [json.loads(line.split(" ", 1)[1]) for line in lines]
reloads = [r for r in records if r["type"] == "reload"]
if [r["replaced"] for r in reloads] != [["v"]]:
    sys.exit(f"reload records: {reloads} (one reload, replacing v, was taken)")
at = reloads[0]["run_ns"]
first = [r for r in records
         if r["type"] == "interval" and r["workload"] == "v" and r["start_ns"] < at]
ops = [o for r in first for o in r["ops"].values()]
count, missed = sum(o["count"] for o in ops), sum(o.get("missed", 0) for o in ops)
done = count + sum(o["errors"] for o in ops) + missed
if done != int(sys.argv[2]) or count != int(sys.argv[3]) or missed != int(sys.argv[4]):
    sys.exit(f"first v in the log: count {count} missed {missed}, {done} in all; soakd showed "
             f"count {sys.argv[3]} missed {sys.argv[4]} of {sys.argv[2]}")
fails = sum(o.get("verify", {}).get(k, 0) for r in records if r["type"] == "interval"
            for o in r["ops"].values()
            for k in ("corrupt", "stale", "misdirected", "torn", "foreign"))
if fails:
    sys.exit(f"{fails} verify failures in the log")
print(f"# first v in the log: count {count} missed {missed} of {done}")
PY
}

# other_refused OTHER_JSON OTHER_SAYS [MORE_JSON]: a reload adding workload
# "other" on OTHER_JSON (with MORE_JSON's members) while v's ops are held
# is refused, naming TARGET_PATH, its ops, and OTHER_SAYS as what "other"
# cannot use.
other_refused() {
	config 200 false "{\"name\": \"other\", \"type\": \"device\", \"model\": \"pattern\",
	  \"targets\": [$1], \"read_pct\": 0,
	  \"block_size\": \"4KiB\", \"access\": \"random\", \"queue_depth\": 1, \"rate\": 10${3:-}}"
	out=$(ctl reload 2>&1) &&
		fail "a workload was added on $1 with $held ops of $TARGET_PATH still in flight: $out"
	note "refused: $out"
	grep -q "$PATH_RE still has $held ops of workload \"v\"'s .*\"other\" cannot use $2 until" <<<"$out" ||
		fail "adding \"other\" on $1 is not refused naming $TARGET_PATH and its $held ops: $out"
	[[ $(workload_state other) == absent ]] || fail "\"other\" exists after a refused reload"
}

# scenario PHASE TARGET_PATH TARGET_JSON [OTHER_JSON OTHER_SAYS [EXTRA_STEP]]:
# OTHER_JSON is the target of the workload step 2 adds (TARGET_JSON by
# default), OTHER_SAYS what it cannot use ("it": the same device), and
# EXTRA_STEP a function run with "before-stall" as the workload runs, with
# "held" after step 2, and with "released" once the ops are back.
scenario() {
	PHASE=$1 TARGET_PATH=$2 TARGET=$3 OTHER=${4:-$3} OTHER_SAYS=${5:-it} EXTRA_STEP=${6:-}
	PATH_RE=$(sed 's/[.[\*^$]/\\&/g' <<<"$TARGET_PATH")
	CFG="$WORK/reload-linger-$PHASE.json"
	note "--- $PHASE: $TARGET_PATH"
	config 200 false

	SOAKD_LOG="$WORK/soakd-$PHASE.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state-$PHASE" --no-table
	wait_until 30 "the control socket" ctl_answers
	wait_until 30 "workload v to run" workload_is v running
	wait_until 10 "100 ops" ops_done 100
	[[ -z $EXTRA_STEP ]] || $EXTRA_STEP before-stall
	sleep 1
	faultdev_cmd stall
	wait_until $((DURATION + 10)) "workload v to finish while $TARGET_PATH stalls" \
		workload_is v finished
	grep -q "ops still in flight .* were given up" "$SOAKD_LOG" ||
		fail "no ops were given up: $(tail -n 20 "$SOAKD_LOG")"
	held=$(sed -n 's/.*: \([0-9]*\) ops still in flight .* were given up.*/\1/p' "$SOAKD_LOG" |
		tail -n 1)
	note "$held ops given up in flight"
	read -r c1 e1 m1 f1 k1 < <(totals)
	note "run 1: count $c1 errors $e1 missed $m1, verify: $k1 checked, $f1 failed"
	((c1 + e1 + m1 == 200 * DURATION)) ||
		fail "run 1: count $c1 + errors $e1 + missed $m1 != $((200 * DURATION))"

	# 1. The workload changed (its writes now read back what the first wrote,
	# the late writes among them): reload refused while the ops are held.
	config 300 true
	out=$(ctl reload 2>&1) && fail "a reload rebuilt v with $held ops still in flight: $out"
	note "refused: $out"
	grep -q "not reloaded" <<<"$out" ||
		fail "the refusal does not say the configuration was not reloaded: $out"
	grep -q "$PATH_RE still has $held ops of workload \"v\"'s last run in flight" <<<"$out" ||
		fail "the refusal does not name $TARGET_PATH and its $held ops: $out"
	grep -q "reload refused: .*$PATH_RE still has $held ops" "$SOAKD_LOG" ||
		fail "the log does not say why the reload was refused: $(tail -n 5 "$SOAKD_LOG")"
	sleep 1
	workload_is v finished || fail "a refused reload changed v: $(workload_state v)"
	read -r c e m _ < <(totals)
	((c == c1 && e == e1 && m == m1)) ||
		fail "v ran after a refused reload: count $c errors $e missed $m"

	# 2. Another workload on the same device (or one sharing its blocks):
	# refused the same way.
	other_refused "$OTHER" "$OTHER_SAYS" ', "prep": true'
	[[ -z $EXTRA_STEP ]] || $EXTRA_STEP held

	# 3. Released: the ops come back and the changed workload is reloaded.
	faultdev_cmd unstall
	wait_until 15 "the given-up ops to come back" \
		grep -q "ops given up in flight have completed" "$SOAKD_LOG"
	[[ -z $EXTRA_STEP ]] || $EXTRA_STEP released
	config 300 true
	out=$(ctl reload 2>&1) || fail "the reload after the device answered failed: $out"
	note "reloaded: $out"
	grep -qx 'v: running (replaced)' <<<"$out" || fail "v was not replaced: $out"
	# The replacement's results start over (as any replaced workload's do).
	wait_until 10 "the new v to write" ops_done 200
	wait_until $((DURATION + 10)) "the new v to finish" workload_is v finished
	# The first definition's results are in the run's log (below).
	read -r c2 e2 m2 f2 k2 < <(totals)
	note "new v: count $c2 errors $e2 missed $m2, verify: $k2 checked, $f2 failed"
	((f2 == 0)) ||
		fail "verify reported $f2 failures (corrupt, stale, ...) on a device that lost nothing"
	((k2 > 0)) || fail "the new v checked no block"
	((c2 + e2 + m2 == 300 * DURATION)) ||
		fail "new v: count $c2 + errors $e2 + missed $m2 != $((300 * DURATION)) scheduled"
	((m2 == 0)) || fail "the new v missed $m2 ops on a device that answers"
	ctl dump --format json >"$WORK/dump.json" || fail "soakctl dump --format json failed"
	ctl dump --format csv >"$WORK/dump.csv" || fail "soakctl dump --format csv failed"
	# The dump's totals are the new definition's; its intervals are both's,
	# each of which must add up.
	python3 "$(dirname "$0")/acct_check.py" "$WORK/dump.json" "$WORK/dump.csv" v \
		$((300 * DURATION)) ||
		fail "not every op scheduled is accounted for: $(cat "$WORK/dump.csv")"

	stop_soakd 20
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
	# Nothing the first definition measured was lost or counted again: its
	# intervals in the log, before the one reload that was taken, add up to
	# its schedule, with the given-up ops as missed; no verify failure in any.
	log_keeps_first "$WORK/state-$PHASE/reload-linger/intervals.log" $((200 * DURATION)) \
		"$c1" "$m1" || fail "the run's log does not keep the first definition's results"
}

# 2b. A loop device attached over the held target after its workload
# started (a stalled target cannot be attached) shares its blocks: adding
# a workload on it is refused the same way.  (The other way round, soakd
# refuses a loop device's backing file as a target whatever happens.)
# On the file, its blocks are the file's; on the partition, that
# partition's, on the same whole disk.
loop_over_held_target() {
	case $1 in
	before-stall)
		OVER_LOOP=$(losetup -f --show "$TARGET_PATH" 2>"$WORK/losetup.err") ||
			fail "cannot attach a loop device over $TARGET_PATH: $(cat "$WORK/losetup.err")"
		on_exit "losetup -d $OVER_LOOP 2>/dev/null"
		return ;;
	released)
		losetup -d "$OVER_LOOP" || fail "cannot detach $OVER_LOOP"
		return ;;
	esac
	other_refused "{\"path\": \"$OVER_LOOP\", \"destroy_data\": true}" \
		"a device that shares its blocks"
}

on_exit faultdev_cmd unstall
# The file first: soakd refuses the backing file of a loop device.
scenario file "$FAULTDEV_MNT/disk.img" "\"$FAULTDEV_MNT/disk.img\"" \
	"\"$FAULTDEV_MNT/disk.img\"" it loop_over_held_target
faultdev_loop
scenario device "$FAULTDEV_LOOP" "{\"path\": \"$FAULTDEV_LOOP\", \"destroy_data\": true}"
# A partition of a loop device over it: the ops the first partition holds
# are in blocks of its whole disk too, which the kernel's exclusive open
# alone would refuse with a misleading "in use", failing the workload.
losetup -d "$FAULTDEV_LOOP" || fail "cannot detach $FAULTDEV_LOOP"
FAULTDEV_LOOP=
printf 'label: dos\n,8MiB\n,\n' | sfdisk -q "$FAULTDEV_MNT/disk.img" >"$WORK/sfdisk.out" 2>&1 ||
	fail "sfdisk: $(cat "$WORK/sfdisk.out")"
FAULTDEV_LOOP=$(losetup --direct-io=on --partscan -f --show "$FAULTDEV_MNT/disk.img") ||
	fail "cannot attach $FAULTDEV_MNT/disk.img with its partitions"
wait_until 10 "the kernel to list ${FAULTDEV_LOOP}p1" rescan_partitions "$FAULTDEV_LOOP"
scenario partition "${FAULTDEV_LOOP}p1" "{\"path\": \"${FAULTDEV_LOOP}p1\", \"destroy_data\": true}" \
	"{\"path\": \"$FAULTDEV_LOOP\", \"destroy_data\": true}" "a device that shares its blocks" \
	loop_over_held_target
note "ok"
