#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A resumed run's block device must be the one it began on.  A disk
# swapped for another that takes its name, or a loop device attached to
# another file, passes every safety check (nothing on it, nothing mounted)
# and would be written as the run's own: its results and verify state are
# the old device's.  Here a loop device is attached to another file of the
# same size between two starts: the resume is refused, naming what differs
# (the backing file); with the first file back, the run resumes, and
# with that file renamed (the same inode) it resumes too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

new_loop 16M
L=$NEW_LOOP
FIRST=$(losetup -n -O BACK-FILE "$L")
SECOND=$(mktemp "$DEV_BACKING_DIR/$DEV_PREFIX.XXXXXX")
on_exit rm -f "$SECOND"
truncate -s 16M "$SECOND"
cat >"$WORK/s.json" <<EOF
{"run": {"name": "swapped", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern", "targets": ["$L"],
                "read_pct": 50, "block_size": "4KiB", "queue_depth": 4, "rate": 200}]}
EOF
# attach FILE: L over FILE, under the same name.
attach() {
	losetup -d "$L" || fail "cannot detach $L"
	losetup --direct-io=on "$L" "$1" || fail "cannot attach $L to $1"
}

start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "w to run" workload_is w running
ticks() { (($(grep -c '"type":"interval"' "$WORK/state/swapped/intervals.log" 2>/dev/null || true) >= 2)); }
wait_until 30 "2 intervals" ticks
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

attach "$SECOND"
SOAKD_LOG="$WORK/soakd.swapped.log"
start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_soakd_exit 30
((SOAKD_RC != 0)) || fail "soakd resumed the run on another device: $(tail -5 "$SOAKD_LOG")"
line=$(grep -F "$L is not the device this run began on" "$SOAKD_LOG") ||
	fail "no word of the device swapped: $(tail -5 "$SOAKD_LOG")"
[[ $line == *"its backing file \"$SECOND\" is another file"*"than the run's \"$FIRST\""* ]] ||
	fail "the refusal does not say what differs: $line"
[[ $line == *"--new-run"* ]] || fail "the refusal does not say what to do: $line"
note "refused: ${line#*: }"

attach "$FIRST"
SOAKD_LOG="$WORK/soakd.back.log"
start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket (resumed)" ctl_answers
grep -q "resuming run swapped" "$SOAKD_LOG" || fail "the run did not resume on its device: $(tail -5 "$SOAKD_LOG")"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# The same file under another name is the same device.
mv "$FIRST" "$FIRST.renamed" || fail "cannot rename $FIRST"
on_exit rm -f "$FIRST.renamed"
SOAKD_LOG="$WORK/soakd.renamed.log"
start_soakd --config "$WORK/s.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket (renamed)" ctl_answers
grep -q "resuming run swapped" "$SOAKD_LOG" ||
	fail "the run did not resume on its renamed backing file: $(tail -5 "$SOAKD_LOG")"
stop_soakd 30
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
