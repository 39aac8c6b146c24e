#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# One block device named by two workloads: the first holds it exclusively
# for writing, and the second's open fails with EBUSY, which the kernel
# gives for a mount or a RAID as well.  The refusal names the workload of
# this run that holds it, not "another program": at a run's start (two
# workloads on one device), and in a reload that moves the device from one
# workload to another (the reload prepares what it adds before it stops
# what it removes).  The move then works in two reloads.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

new_loop 64M
LOOP=$NEW_LOOP

# config FILE NAME...: a run with the named workloads writing $LOOP, and
# "f" on a file so that the run goes on without them.
config() {
	local file=$1 sep="" n
	shift
	{
		printf '{"run": {"name": "m", "interval": "1s", "on_finish": "idle"},\n "workloads": [\n'
		printf '  {"name": "f", "type": "device", "model": "pattern", "targets": ["%s"],
   "file_size": "8MiB", "read_pct": 100, "block_size": "4KiB", "rate": 100}' "$WORK/f.dat"
		for n in "$@"; do
			printf ',\n  {"name": "%s", "type": "device", "model": "pattern",
   "targets": [{"path": "%s", "destroy_data": true}], "read_pct": 50,
   "block_size": "4KiB", "queue_depth": 4, "rate": 200}' "$n" "$LOOP"
		done
		printf ']}\n'
	} >"$file"
}

# 1. Two workloads on one device at the start: refused, naming the first.
config "$WORK/two.json" a b
rc=0
timeout 60 "$SOAKD" --config "$WORK/two.json" --socket "$SOCK" --state-dir "$WORK/state2" \
	--no-table >"$WORK/two.log" 2>&1 || rc=$?
((rc != 0)) || fail "soakd started two workloads writing $LOOP"
grep -q "$LOOP is held for writing by workload \"a\" of this run" "$WORK/two.log" ||
	fail "the refusal does not name workload a: $(grep -i 'busy\|in use\|held' "$WORK/two.log" | head -3)"
grep -q "another program" "$WORK/two.log" && fail "the refusal still blames another program"

# 2. A reload that moves the device from a to b: refused, naming a; a runs on.
config "$WORK/m.json" a
start_soakd --config "$WORK/m.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "a to run" workload_is a running
config "$WORK/m.json" b
rc=0
ctl reload >"$WORK/reload.out" 2>&1 || rc=$?
((rc == 1)) || fail "the reload moving $LOOP to b exited $rc: $(cat "$WORK/reload.out")"
grep -q "$LOOP is held for writing by workload \"a\" of this run" "$WORK/reload.out" ||
	fail "the refusal does not name workload a: $(cat "$WORK/reload.out")"
grep -q "in two reloads" "$WORK/reload.out" || fail "the refusal does not say how: $(cat "$WORK/reload.out")"
workload_is a running || fail "a does not run on after the refused reload"

# 3. In two reloads: a removed, then b added on the device.
config "$WORK/m.json"
ctl reload >"$WORK/reload.out" 2>&1 || fail "the reload removing a failed: $(cat "$WORK/reload.out")"
config "$WORK/m.json" b
ctl reload >"$WORK/reload.out" 2>&1 || fail "the reload adding b on $LOOP failed: $(cat "$WORK/reload.out")"
wait_until 30 "b to run" workload_is b running
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
note "a device two workloads name: refused naming the holder; moved in two reloads"
note "ok"
