#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device data verification across power cuts (issue 15), on faultdev: a
# loop device over a FUSE disk image of the tests' own whose writes stay in
# a volatile cache until a flush (tests/faultdev, faultlib.sh).
#   - an honest device: soakd is killed mid-run, the cache is lost (a power
#     cut), soakd restarts and reads every block back ("verify_on_resume":
#     "full"): the writes lost were all after the last completed flush, so
#     none is a failure (they are uncertain); no false positive after that;
#   - a device that lies about its flushes: flushes are acknowledged but
#     their blocks stay volatile (faultdev lists them as doomed); after the
#     cut, soakd reports every one of them as a failure (a lost flushed
#     write: stale), and nothing else;
#   - "fua": true: every completed write survives the cut, none is a failure
#     and none uncertain but those in flight at the kill.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/faultlib.sh"

faultdev_start 8M
faultdev_loop
LOOP=$FAULTDEV_LOOP
CFG="$WORK/powercut.json"
cat >"$CFG" <<EOF
{"run": {"name": "powercut", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "p", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 50,
                "block_size": "4KiB", "queue_depth": 8, "rate": 2000,
                "verify": true, "fill": true, "flush_interval": "200ms",
                "verify_on_resume": "full"}]}
EOF

totals() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
s = lambda *ks: sum(x.get(k, 0) for x in v for k in ks)
print(s("checked"), s("corrupt", "stale", "misdirected", "torn", "foreign"), s("uncertain"))'
}
CHECKED=0
progressed() {
	local c f u
	read -r c f u < <(totals) || return 1
	((c >= CHECKED + 5000))
}
start() {
	SOAKD_LOG="$WORK/soakd.$1.log"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 120 "the control socket ($1)" ctl_answers
	wait_until 60 "5000 more blocks checked ($1)" progressed
	read -r CHECKED f u < <(totals)
}
kill_soakd() {
	kill -KILL "$SOAKD_PID"
	wait_soakd_exit 20
}
resume_line() { grep -h "verify on resume (full): .* blocks checked" "$SOAKD_LOG" | tail -1; }

# --- an honest device --------------------------------------------------------
start first
((f == 0)) || fail "$f failures before any fault"
dirty=$(faultdev_stat dirty_blocks)
kill_soakd
faultdev_powercut
[[ $FAULTDEV_LOOP == "$LOOP" ]] || skip_unless_strict "the loop device came back as $FAULTDEV_LOOP, not $LOOP"
start honest
grep -q "resuming run powercut" "$SOAKD_LOG" || fail "soakd did not resume the run"
line=$(resume_line)
[[ -n $line ]] || fail "no full check on resume in the log"
note "$dirty blocks were in the cache at the cut; $line"
[[ $line == *", 0 failed, "* ]] || fail "unflushed writes lost at the cut reported as failures: $line"
if grep -h "verify: .* block at offset" "$WORK"/soakd.*.log >"$WORK/false.txt"; then
	fail "false positives: $(head -3 "$WORK/false.txt")"
fi

# --- a device that lies about flushes -----------------------------------------
# Two flushes lie: their blocks stay volatile (doomed), also when written
# again after the lie, until an honest flush persists them.  A lie dooms
# every block dirty at the time, also writes of the next epoch that soakd
# has not flushed yet: after two more flushes (the first surely completed
# in soakd when the second reaches faultdev), soakd has seen each of them
# flushed.  soakd is killed mid-run: what the cut loses of what soakd saw
# flushed is exactly the doomed blocks, rewritten since or not.
faultdev_cmd lie 2 all
lied_twice() { (($(faultdev_stat lies) >= 2)); }
wait_until 30 "two lying flushes" lied_twice
FLUSHES=$(faultdev_stat flushes)
flushed_since() { (($(faultdev_stat flushes) >= FLUSHES + 2)); }
wait_until 30 "two honest flushes after the lies" flushed_since
kill_soakd
faultdev_doomed >"$WORK/doomed.txt"
doomed=$(faultdev_stat doomed_blocks)
((doomed > 0)) || fail "faultdev lied about no block"
faultdev_powercut
SOAKD_LOG="$WORK/soakd.liar.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 120 "the control socket (liar)" ctl_answers
line=$(resume_line)
note "$doomed blocks doomed by lying flushes; $line"
failed=$(sed -n 's/.*, \([0-9]*\) failed, .*/\1/p' <<<"$line")
[[ $failed == "$doomed" ]] || fail "$doomed flushed writes were lost, soakd reported $failed"
python3 - "$WORK/doomed.txt" "$SOAKD_LOG" <<'PY' || fail "a failure reported outside the lost blocks"
import re, sys
ranges = []
for line in open(sys.argv[1]):
    if line.strip():
        off, length = (int(x, 0) for x in line.split()[:2])
        ranges.append((off, off + length))
found = [int(m.group(2)) for m in re.finditer(r"verify: (\w+) block at offset (\d+)", open(sys.argv[2]).read())]
outside = [o for o in found if not any(a <= o < b for a, b in ranges)]
if not found or outside:
    sys.exit(f"{len(found)} failures logged, outside the doomed blocks: {outside[:5]}")
print(f"# {len(found)} failures logged, each a block the lying flushes lost")
PY
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# --- "fua": true on an honest device -------------------------------------------
# Every write is durable when it completes (the loop device does not claim
# FUA: the block layer sends faultdev the write, then a flush), flushes are
# an hour apart: the cut loses no acknowledged write, and only the writes in
# flight at the kill (at most one per slot) may be uncertain.
QD=8
sed -e 's/"flush_interval": "200ms"/"flush_interval": "1h", "fua": true/' \
	-e 's/"name": "powercut"/"name": "powercut-fua"/' "$CFG" >"$WORK/fua.json"
CFG="$WORK/fua.json"
CHECKED=0
start fua
((f == 0)) || fail "$f failures before the cut (fua)"
kill_soakd
faultdev_powercut
start fua-after
grep -q "resuming run powercut-fua" "$SOAKD_LOG" || fail "soakd did not resume the fua run"
line=$(resume_line)
unflushed=$(sed -n 's/.*: \([0-9]*\) blocks were written after the last completed flush.*/\1/p' \
	"$SOAKD_LOG" | tail -1)
note "fua: ${unflushed:-0} blocks in flight at the kill; $line"
[[ $line == *", 0 failed, "* ]] || fail "fua: acknowledged writes lost at the cut: $line"
uncertain=$(sed -n 's/.*, \([0-9]*\) were uncertain.*/\1/p' <<<"$line")
((${unflushed:-0} <= QD && ${uncertain:-0} <= QD)) ||
	fail "fua: ${unflushed:-0} blocks left uncertain by the cut, though at most $QD writes were in flight"
if grep -h "verify: .* block at offset" "$WORK"/soakd.fua*.log >"$WORK/false.txt"; then
	fail "fua: false positives: $(head -3 "$WORK/false.txt")"
fi
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC (fua)"
note "ok"
