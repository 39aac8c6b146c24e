#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A device that fails its I/O: a loop device over a sparse file on a full
# tmpfs, so every write that needs a new block fails (ENOSPC from the
# device) while reads succeed.  This kernel has no device-mapper for an
# `error` or `flakey` target; the loop device's failures reach soakd the
# same way, as failed completions.  soakd must live, count each failed
# write as an error of the write op (not of reads), log the first few and
# say the rest are only counted, record every interval, and fail a report
# that judges the writes.
source "$(dirname "$0")/lib.sh"
need_root "loop devices and a tmpfs"
need_cmd losetup python3 mount umount
[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"

FS="$WORK/fs"
mkdir -p "$FS"
mount -t tmpfs -o size=1m soakd-eio "$FS" || skip_unless_strict "cannot mount a tmpfs"
on_exit umount -l "$FS"
truncate -s 64M "$FS/disk.img"
dd if=/dev/zero of="$FS/fill" bs=4k 2>/dev/null || true # the tmpfs is now full
LOOP=$(losetup --direct-io=on -f --show "$FS/disk.img" 2>"$WORK/losetup.err") ||
	skip_unless_strict "losetup cannot attach: $(cat "$WORK/losetup.err")"
on_exit losetup -d "$LOOP"

CFG="$WORK/errors.json"
cat >"$CFG" <<EOF
{"run": {"name": "errors", "duration": "4s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "e", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "queue_depth": 8, "rate": 500}]}
EOF
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 20 "the workload to finish" workload_is e finished
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "dump --format csv failed"
# The failed writes fail a report that judges writes however fast the few
# served ones were (ACT certifies nothing past an I/O error); the reads,
# judged by default, pass.  Limits no latency can reach: errors alone fail.
report_of() { # SOURCE... -> exit status in rc, text in $WORK/report.txt
	rc=0
	"$@" --thresholds 1,8,5000 --limits -,-,100 >"$WORK/report.txt" 2>&1 || rc=$?
}
report_of ctl report
grep -q '^e read: PASS$' "$WORK/report.txt" && passed_or_starved "$rc" "$WORK/report.txt" ||
	fail "report of the reads exited $rc: $(cat "$WORK/report.txt")"
report_of ctl report --op write
((rc == 3)) && grep -Eq '^e write: FAIL \((.*; )?[0-9]+ failed ops(;.*)?\)$' "$WORK/report.txt" &&
	grep -q '^verdict: FAIL$' "$WORK/report.txt" ||
	fail "report --op write exited $rc without failing on errors: $(cat "$WORK/report.txt")"
stop_soakd 10
report_of "$SOAKCTL" report --run-dir "$WORK/state/errors" --op write
((rc == 3)) && grep -Eq '^e write: FAIL \((.*; )?[0-9]+ failed ops(;.*)?\)$' "$WORK/report.txt" ||
	fail "report --run-dir --op write exited $rc without failing on errors: $(cat "$WORK/report.txt")"
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
python3 - "$WORK/dump.json" <<'EOF' || fail "errors were not counted where they belong"
import json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
r, w = ops["read"], ops["write"]
if r["errors"] != 0:
    sys.exit(f"reads counted {r['errors']} errors; the device only fails writes")
# A failed op is an error, not a completion: count is what was served.
if w["errors"] < 800 or w["count"] > 0.1 * w["errors"]:
    sys.exit(f"writes: {w['count']} served, {w['errors']} failed; nearly all should fail")
if w["rate_achieved"] > 0.1 * w["rate_target"]:
    sys.exit(f"writes: {w['rate_achieved']}/s achieved of {w['rate_target']}/s, yet they fail")
print(f"reads {r['count']} ok; writes {w['count']} served, {w['errors']} failed")
EOF
# count + errors + missed = scheduled on a failing device too.
python3 "$(dirname "$0")/acct_check.py" "$WORK/dump.json" "$WORK/dump.csv" e 2000 --rate 500 ||
	fail "not every scheduled op is accounted for: $(cat "$WORK/dump.csv")"
n=$(grep -c 'write of 4096 bytes at offset .* failed' "$SOAKD_LOG" || true)
((n >= 1 && n <= 5)) || fail "expected 1 to 5 logged write failures, found $n"
grep -q 'further errors are counted, not logged' "$SOAKD_LOG" || fail "no note that further errors are only counted"
[[ $(grep -c '"type":"interval"' "$WORK/state/errors/intervals.log") -ge 4 ]] ||
	fail "intervals missing from the log"
note "ok"
