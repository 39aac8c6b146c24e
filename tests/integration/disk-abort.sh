#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The run's log on a filesystem that aborts (ext4 on a loop device, mounted
# errors=remount-ro, its error triggered through sysfs).  An abort drops
# the dirty pages of records soakd has written but not yet synced, as a
# power cut does; after fsck the log holds exactly what was synced.
#  1. The fsync promise: records written with nothing after them (the run
#     finished) are synced within 2 s, so an abort then loses none.
#  2. Records written but not synced when the filesystem aborts are kept in
#     memory, not freed: every record soakd appended is either in the log
#     after recovery or counted in records_dropped, exactly.
source "$(dirname "$0")/lib.sh"
need_root "a loop device and an ext4 mount"
need_cmd python3 losetup mkfs.ext4 e2fsck mount umount

STATE="$WORK/state"
mkdir -p "$STATE"
truncate -s 32M "$WORK/state.img"
mkfs.ext4 -q -F "$WORK/state.img" || fail "mkfs.ext4 failed"
LOOP=$(losetup -f --show "$WORK/state.img") || skip "no loop device available"
on_exit losetup -d "$LOOP"
TRIGGER="/sys/fs/ext4/$(basename "$LOOP")/trigger_fs_error"
mount_state() { mount -o errors=remount-ro "$LOOP" "$STATE" || fail "cannot mount $LOOP"; }
mount_state
on_exit 'mountpoint -q "$STATE" && umount "$STATE"'
[[ -e $TRIGGER ]] || skip "this kernel's ext4 has no $TRIGGER to make it abort"

# results FIELD: a field of status's "results" (empty if absent).
results() {
	ctl status --json | python3 -c '
import json, sys
print(json.load(sys.stdin).get("results", {}).get(sys.argv[1], ""))' "$1"
}
# log_records LOG: the whole records in a run log.
log_records() {
	python3 - "$1" <<'EOF'
import json, sys
n = 0
for line in open(sys.argv[1], errors="replace").read().splitlines()[1:]:
    try:
        json.loads(line.split(" ", 1)[1])
        n += 1
    except Exception:
        pass
print(n)
EOF
}
abort_fs() {
	echo 1 >"$TRIGGER"
	note "ext4 error triggered; mount now: $(grep " $STATE " /proc/mounts)"
}
# recover RUN: stops soakd and recovers the filesystem.  Sets ON_DISK (the
# records in the log after recovery), and from soakd's last words DROPPED
# (records_dropped) and APPENDED (all the records it appended; empty if it
# does not say).
recover() {
	local run=$1 line rc=0
	stop_soakd 20
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
	line=$(grep -o '[0-9]* of the run.s [0-9]* records could not be written' "$SOAKD_LOG" || true)
	DROPPED=${line%% *}
	DROPPED=${DROPPED:-0}
	APPENDED=$(echo "$line" | grep -o "run.s [0-9]*" | grep -o '[0-9]*$' || true)
	if [[ -z $line ]]; then
		line=$(grep -o "all [0-9]* of the run.s records are synced" "$SOAKD_LOG" || true)
		APPENDED=$(echo "$line" | grep -o '[0-9]*' || true)
	fi
	umount "$STATE"
	e2fsck -fy "$LOOP" >"$WORK/fsck.out" 2>&1 || rc=$?
	# 1: errors corrected (the abort left its error flag).
	((rc <= 1)) || fail "e2fsck could not repair the filesystem (exit $rc): $(cat "$WORK/fsck.out")"
	mount_state
	ON_DISK=$(log_records "$STATE/$run/intervals.log")
	note "$run: ${APPENDED:-?} records appended, $ON_DISK on disk after recovery, $DROPPED dropped"
}
# check_counted RUN: every record appended is on disk or counted as dropped.
check_counted() {
	[[ -n $APPENDED ]] || fail "$1: soakd did not say how many records it appended and lost"
	((ON_DISK + DROPPED == APPENDED)) ||
		fail "$1: $((APPENDED - ON_DISK - DROPPED)) record(s) lost without being counted ($APPENDED appended, $ON_DISK on disk, records_dropped $DROPPED)"
}
at_least_records() { (($(log_records "$LOG") >= $1)); }

# 1. A short run finishes; its last records have nothing after them.
cat >"$WORK/short.json" <<EOF
{"run": {"name": "short", "duration": "1s", "interval": "250ms", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern",
                "targets": ["$WORK/w.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 500,
                "schedule": [{"scale": 1, "for": "1s"}]}]}
EOF
LOG="$STATE/short/intervals.log"
start_soakd --config "$WORK/short.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "the workload to finish" workload_is w finished
wait_until 5 "the finished state in the log" grep -q '"state":"finished"' "$LOG"
VISIBLE=$(log_records "$LOG")
# The promise: a record is synced at most 2 s after it is written, even
# with nothing after it.  The wait is the promise under test.
sleep 2.2
PENDING=$(results records_pending)
abort_fs
recover short
((ON_DISK >= VISIBLE)) ||
	fail "an abort 2.2 s after the last record took $((VISIBLE - ON_DISK)) of the $VISIBLE written: they were never synced"
[[ $PENDING == 0 ]] || fail "status: records_pending '$PENDING' 2.2 s after the last record, expected 0"
check_counted short

# 2. A running run; the filesystem aborts with records written, not synced.
cat >"$WORK/long.json" <<EOF
{"run": {"name": "long", "interval": "250ms", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern",
                "targets": ["$WORK/w.dat"], "file_size": "16MiB", "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 500}]}
EOF
LOG="$STATE/long/intervals.log"
start_soakd --config "$WORK/long.json" --socket "$SOCK" --state-dir "$STATE" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "8 records in the log" at_least_records 8
# Abort with records written but not synced: just after a sync, a record
# written next waits 2 s for its own.
synced=$(results records_synced)
if [[ -n $synced ]]; then
	just_synced() { (($(results records_synced) > synced)); }
	wait_until 5 "a sync of the log" just_synced
fi
n=$(log_records "$LOG")
wait_until 5 "a new record in the log" at_least_records $((n + 1))
VISIBLE=$(log_records "$LOG")
abort_fs
has_error() { [[ -n $(results error) ]]; }
wait_until 10 "status to report the failing log" has_error
note "status: $(results error)"
# Records go on being appended while the disk is read-only: all kept.
grown() {
	local n
	n=$(results records)
	[[ -z $n ]] || ((n >= VISIBLE + 8))
}
wait_until 10 "8 more records while the disk is read-only" grown
[[ $(results records_dropped) == 0 ]] || fail "records were dropped while memory holds them: $(ctl status --json)"
recover long
((ON_DISK < VISIBLE)) || fail "the abort lost no written record ($ON_DISK on disk, $VISIBLE written): nothing was tested"
((ON_DISK + DROPPED >= VISIBLE)) ||
	fail "$((VISIBLE - ON_DISK)) records written before the abort are not on disk, and records_dropped is $DROPPED"
check_counted long
note "ok: the abort took $((VISIBLE - ON_DISK)) written records; all $DROPPED lost records counted"
