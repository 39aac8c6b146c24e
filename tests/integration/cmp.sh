#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakctl cmp RUN_A RUN_B (issue 19) on recorded runs: three short real
# runs of one workload on a RAM-backed loop device, two alike and one with
# the device throttled (a blkio cgroup's read and write IOPS limit, below
# the workload's rate).  cmp of the alike runs marks no change and exits 0;
# cmp against the throttled run marks throughput and latency as changed
# beyond the runs' own slice-to-slice noise and exits 3, in text, JSON and
# the HTML section.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

BLKIO=/sys/fs/cgroup/blkio
[[ -w $BLKIO/cgroup.procs ]] || skip_unless_strict "no cgroup v1 blkio controller at $BLKIO to throttle a device"

new_loop 64M
majmin=$(lsblk -dno MAJ:MIN "$NEW_LOOP" | tr -d ' ')

# run NAME [THROTTLE_IOPS]: a 6 s run recorded in $WORK/state/NAME.
run() {
	local name=$1 iops=${2:-}
	cat >"$WORK/$name.json" <<JSON
{"run": {"name": "$name", "duration": "6s", "interval": "1s", "slice": "1s", "on_finish": "idle"},
 "workloads": [{"name": "w", "type": "device", "model": "pattern", "autostart": false,
                "targets": [{"path": "$NEW_LOOP", "destroy_data": true}], "read_pct": 70,
                "block_size": "4KiB", "access": "random", "queue_depth": 16, "rate": 600,
                "max_lag": "30s", "schedule": [{"scale": 1, "for": "6s"}]}]}
JSON
	start_soakd --config "$WORK/$name.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 15 "the control socket" ctl_answers
	if [[ -n $iops ]]; then
		local cg=$BLKIO/soakd-test-cmp.$$
		mkdir -p "$cg"
		on_exit rmdir "$cg"
		echo "$majmin $iops" >"$cg/blkio.throttle.read_iops_device"
		echo "$majmin $iops" >"$cg/blkio.throttle.write_iops_device"
		# Every thread of soakd, io_uring's workers among them, moves.
		echo "$SOAKD_PID" >"$cg/cgroup.procs"
		note "soakd throttled to $iops read and $iops write IOPS on $NEW_LOOP ($majmin)"
	fi
	ctl start >/dev/null || fail "start $name failed"
	wait_until 40 "run $name to finish" workload_is w finished
	stop_soakd 20
	((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC in run $name"
	if [[ -n $iops ]]; then
		echo "$SOAKD_PID" >/dev/null  # soakd is gone; the cgroup is empty again
	fi
}
run a1
run a2
run slow 150

cmp_runs() { timeout 60 "$SOAKCTL" cmp "$@"; }

rc=0
cmp_runs "$WORK/state/a1" "$WORK/state/a2" >"$WORK/alike.txt" 2>&1 || rc=$?
cat "$WORK/alike.txt"
((rc == 0)) || fail "cmp of two alike runs: exit $rc"
! grep -q CHANGED "$WORK/alike.txt" || fail "cmp of two alike runs marked a change"

rc=0
cmp_runs "$WORK/state/a1" "$WORK/state/slow/intervals.log" --html "$WORK/cmp.html" \
	>"$WORK/slow.txt" 2>&1 || rc=$?
cat "$WORK/slow.txt"
((rc == 3)) || fail "cmp against the throttled run: exit $rc, not 3"
grep -Eq '^w +read +ops/s .*CHANGED' "$WORK/slow.txt" || fail "read throughput not marked as changed"
grep -Eq '^w +read +p99 µs .*CHANGED' "$WORK/slow.txt" || fail "read p99 not marked as changed"

rc=0
cmp_runs --format json "$WORK/state/a1" "$WORK/state/slow" >"$WORK/slow.json" || rc=$?
((rc == 3)) || fail "cmp --format json: exit $rc"
python3 - "$WORK/slow.json" "$WORK/cmp.html" <<'PY' || fail "cmp's JSON and HTML"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["significant"] is True, doc["significant"]
read = doc["workloads"][0]["ops"]["read"]
for stat in ("rate", "p50", "p99", "p999"):
    for key in ("a", "b", "change", "change_pct", "noise", "significant"):
        assert key in read[stat], (stat, key)
assert read["rate"]["significant"] and read["rate"]["b"] < read["rate"]["a"] * 0.5, read["rate"]
assert read["p99"]["significant"] and read["p99"]["b"] > read["p99"]["a"], read["p99"]
assert abs(read["rate"]["change"]) > read["rate"]["noise"], read["rate"]
assert read["count"]["a"] > read["count"]["b"], read["count"]
html = open(sys.argv[2]).read()
assert 'id="cmp" data-changed="yes"' in html
assert 'data-k="w/read/rate.a"' in html and "CHANGED" in html
print(f"# read: {read['rate']['a']:.1f} -> {read['rate']['b']:.1f} ops/s "
      f"(noise {read['rate']['noise']:.2f}), p99 {read['p99']['a']:.0f} -> {read['p99']['b']:.0f} µs")
PY

# Usage errors.
rc=0
out=$(timeout 10 "$SOAKCTL" cmp "$WORK/state/a1" 2>&1) || rc=$?
((rc == 64)) && [[ $out == *"cmp needs two runs"* ]] || fail "cmp with one run: exit $rc: $out"
rc=0
out=$(timeout 10 "$SOAKCTL" cmp "$WORK/state/a1" "$WORK/nope" 2>&1) || rc=$?
((rc == 1)) && [[ $out == *"$WORK/nope"* ]] || fail "cmp of a missing run: exit $rc: $out"
note "ok"
