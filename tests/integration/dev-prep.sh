#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd --prep zeroes then salts a whole device, as ACT's act_prep does:
#   - refused without --destroy-data on a device holding ext4, which stays
#     intact; refused on a mounted device even with it;
#   - with it: the ext4 signature is gone and every block holds distinct,
#     incompressible data; progress is logged per phase and sent to systemd
#     as STATUS= (with EXTEND_TIMEOUT_USEC=, so a long prep before READY=1
#     does not time out);
#   - on a device throttled to a few MiB/s (block cgroup), progress lines
#     come every few seconds, and SIGTERM stops the prep early;
#   - a workload's "prep": true preps its devices before READY=1, and a
#     reload that gives it another device preps that one alone.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

NOTIFY="$WORK/notify.sock"
spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/notify_listen.py" \
	"$NOTIFY" "$WORK/notify.jsonl"
wait_until 10 "the notify socket" test -S "$NOTIFY"

# run_logged LOG COMMAND...: in the foreground, bounded; PREP_RC.
run_logged() {
	local log=$1
	shift
	PREP_RC=0
	timeout 60 env "NOTIFY_SOCKET=$NOTIFY" "$@" >"$log" 2>&1 || PREP_RC=$?
}
# prep LOG ARGS...: soakd ARGS (--prep ...).
prep() {
	local log=$1
	shift
	run_logged "$log" "$SOAKD" "$@"
}

# check_salted DEVICE: every 4 KiB block non-zero and distinct, and the data
# incompressible.
check_salted() {
	python3 - "$1" <<'PY' || fail "$1 does not look salted"
import hashlib, os, sys, zlib
fd = os.open(sys.argv[1], os.O_RDONLY)
data = b""
while True:
    chunk = os.read(fd, 1 << 20)
    if not chunk:
        break
    data += chunk
os.close(fd)
blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
zero = bytes(4096)
zeros = sum(1 for b in blocks if b == zero)
distinct = len({hashlib.sha1(b).digest() for b in blocks})
ratio = len(zlib.compress(data[:8 << 20], 6)) / min(len(data), 8 << 20)
print(f"# {sys.argv[1]}: {len(blocks)} blocks, {zeros} all-zero, {distinct} distinct,"
      f" compresses to {ratio:.3f}")
if zeros or distinct != len(blocks) or ratio < 0.99:
    sys.exit("not random-looking")
PY
}

# --- refused without --destroy-data; the data stays ---
new_loop 64M
DEV=$NEW_LOOP
mkfs.ext4 -q -F -L soak-prep "$DEV" || fail "mkfs.ext4 $DEV failed"
prep "$WORK/refused.log" --prep "$DEV"
((PREP_RC == 1)) || fail "--prep without --destroy-data exited $PREP_RC: $(cat "$WORK/refused.log")"
grep -q "refusing to write to $DEV: it holds an ext4 filesystem.*give --destroy-data" \
	"$WORK/refused.log" || fail "refusal: $(cat "$WORK/refused.log")"
[[ $(signature_of "$DEV") == ext4 ]] || fail "ext4 on $DEV is gone after a refusal"
note "refused: $(grep -o 'refusing.*' "$WORK/refused.log")"

# --- prepped with --destroy-data ---
prep "$WORK/prep.log" --prep "$DEV" --destroy-data
((PREP_RC == 0)) || fail "--prep --destroy-data exited $PREP_RC: $(cat "$WORK/prep.log")"
for line in "prep $DEV: zeroing 64.0 MiB" "prep $DEV: zeroed 64.0 MiB in" \
	"prep $DEV: salting 64.0 MiB" "prep $DEV: salted 64.0 MiB in" \
	"prep $DEV: done: zeroed and salted in"; do
	grep -qF "$line" "$WORK/prep.log" || fail "no \"$line\" in: $(cat "$WORK/prep.log")"
done
sed 's/^/# /' "$WORK/prep.log"
sig=$(signature_of "$DEV")
[[ -z $sig ]] || fail "libblkid still finds '$sig' on $DEV after prep"
check_salted "$DEV"
python3 - "$WORK/notify.jsonl" "$DEV" <<'PY' || fail "notifications: $(cat "$WORK/notify.jsonl")"
import json, sys
lines = [l for r in map(json.loads, open(sys.argv[1])) for l in r["msg"].split("\n")]
status = [l for l in lines if l.startswith("STATUS=prep: ")]
if not status or not status[-1].endswith(f"{sys.argv[2]} done"):
    sys.exit(f"STATUS lines: {status}")
if not any(l.startswith("EXTEND_TIMEOUT_USEC=") for l in lines):
    sys.exit("no EXTEND_TIMEOUT_USEC=")
print(f"# {len(status)} STATUS= lines, the last: {status[-1]}")
PY

# --- a mounted device: refused even with --destroy-data ---
new_loop 64M
MOUNTED=$NEW_LOOP
mkfs.ext4 -q -F "$MOUNTED" || fail "mkfs.ext4 $MOUNTED failed"
mount_on "$MOUNTED" "$WORK/mnt"
prep "$WORK/mounted.log" --prep "$MOUNTED" --destroy-data
((PREP_RC == 1)) || fail "--prep of a mounted device exited $PREP_RC: $(cat "$WORK/mounted.log")"
grep -q "refusing to write to $MOUNTED: it is mounted on $WORK/mnt" "$WORK/mounted.log" ||
	fail "mounted: $(cat "$WORK/mounted.log")"
# All devices are checked before any is written.
prep "$WORK/two.log" --prep "$DEV" --prep "$MOUNTED" --destroy-data
((PREP_RC == 1)) || fail "--prep of a good and a mounted device exited $PREP_RC"
grep -q "prep $DEV: zeroing" "$WORK/two.log" && fail "$DEV was written before $MOUNTED was refused"

# --- progress every few seconds, and SIGTERM, on a throttled device ---
if blk_cgroup_try; then
	group=$BLK_CG
	# 2 x 64 MiB at what the throttle lets through (it counts a loop
	# device's writes about twice here): some 10 s, progress every 5 s.
	blk_limit "$DEV" wbps=$((24 << 20))
	start=$(now_ns)
	run_logged "$WORK/slow.log" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group" \
		"$SOAKD" --prep "$DEV" --destroy-data
	secs=$((($(now_ns) - start) / 1000000000))
	((PREP_RC == 0)) || fail "throttled prep exited $PREP_RC: $(cat "$WORK/slow.log")"
	if ((secs < 6)); then
		note "the blkio throttle did not slow the loop device ($secs s): no progress lines to see"
	else
		n=$(grep -cE "prep $DEV: (zeroing|salting) [0-9]+% \(.* of 64.0 MiB\) at [0-9]+ MiB/s, about .* left" \
			"$WORK/slow.log" || true)
		((n >= 1)) || fail "no periodic progress line in $secs s: $(cat "$WORK/slow.log")"
		note "throttled prep: $secs s, $n progress lines, e.g. $(grep -m1 -o 'prep.*left' "$WORK/slow.log")"

		# SIGTERM stops it between writes.
		spawn "$WORK/term.log" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$group" \
			"$SOAKD" --prep "$DEV" --destroy-data
		pid=$SPAWNED
		wait_until 20 "the prep to start zeroing" grep -q "prep $DEV: zeroing" "$WORK/term.log"
		kill -TERM "$pid"
		wait_until 10 "the prep to stop after SIGTERM" not_alive "$pid"
		rc=0
		wait "$pid" || rc=$?
		((rc == 1)) || fail "prep exited $rc after SIGTERM: $(cat "$WORK/term.log")"
		grep -q "prep interrupted: soakd is stopping ($DEV zeroing" "$WORK/term.log" ||
			fail "after SIGTERM: $(cat "$WORK/term.log")"
		note "SIGTERM: $(grep -o 'prep interrupted.*' "$WORK/term.log")"
	fi
else
	note "no block cgroup (v2 io or v1 blkio) here: skipping the throttled-progress case"
fi

# --- "prep": true in a workload: before READY=1 ---
new_loop 64M
FRESH=$NEW_LOOP
cat >"$WORK/workload.json" <<EOF
{
  "run": {"name": "dev-prep", "duration": "1s", "interval": "1s", "on_finish": "exit"},
  "workloads": [
    {"name": "w", "type": "device", "model": "pattern", "prep": true,
     "targets": [{"path": "$FRESH", "destroy_data": true}],
     "read_pct": 70, "block_size": "4KiB", "queue_depth": 4, "rate": 100}
  ]
}
EOF
: >"$WORK/notify.jsonl"
SOAKD_ENV=("NOTIFY_SOCKET=$NOTIFY")
start_soakd --config "$WORK/workload.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
soakd_pid=$SOAKD_PID
wait_soakd_exit 60
((SOAKD_RC == 0)) || fail "the workload with prep exited $SOAKD_RC"
grep -q "prep $FRESH: done" "$SOAKD_LOG" || fail "no prep in: $(cat "$SOAKD_LOG")"
check_salted "$FRESH"
python3 - "$WORK/notify.jsonl" "$soakd_pid" <<'PY' || fail "notifications: $(cat "$WORK/notify.jsonl")"
import json, sys
pid = int(sys.argv[2])
lines = [l for r in map(json.loads, open(sys.argv[1])) if r["pid"] == pid
         for l in r["msg"].split("\n")]
ready = lines.index("READY=1") if "READY=1" in lines else None
prep = [i for i, l in enumerate(lines) if l.startswith("STATUS=prep: ")]
if ready is None or not prep or max(prep) > ready:
    sys.exit(f"expected STATUS=prep lines before READY=1: {lines[:12]}")
print(f"# {len(prep)} STATUS=prep lines, then READY=1")
PY

# The same workload on a device holding ext4 without destroy_data: refused
# before anything is written.
mkfs.ext4 -q -F "$FRESH" || fail "mkfs.ext4 $FRESH failed"
sed -i 's/, "destroy_data": true//' "$WORK/workload.json"
rc=0
timeout 60 "$SOAKD" --config "$WORK/workload.json" --socket "$SOCK" --state-dir "$WORK/state" \
	--no-table >"$WORK/refused-workload.log" 2>&1 || rc=$?
((rc == 1)) || fail "prep of an ext4 device without destroy_data exited $rc"
grep -q "refusing to write to $FRESH: it holds an ext4 filesystem" "$WORK/refused-workload.log" ||
	fail "workload prep refusal: $(cat "$WORK/refused-workload.log")"
[[ $(signature_of "$FRESH") == ext4 ]] || fail "ext4 on $FRESH is gone after a refusal"

# A reload that gives a prepped workload a second device: the new device
# is prepped, the one the run has aged is not (a replacement was prepped
# not at all: the new device ran unprepped).
new_loop 32M
AGED=$NEW_LOOP
new_loop 32M
ADDED=$NEW_LOOP
prep_config() {
	cat >"$WORK/reload.json" <<EOF
{"run": {"name": "prep-reload", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "p", "type": "device", "model": "pattern", "prep": true, "targets": [$1],
   "read_pct": 70, "block_size": "4KiB", "queue_depth": 4, "rate": 100}]}
EOF
}
aged="{\"path\": \"$AGED\", \"destroy_data\": true}"
prep_config "$aged"
SOAKD_ENV=()
SOAKD_LOG="$WORK/soakd.reload.log"
start_soakd --config "$WORK/reload.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
wait_until 30 "p to run" workload_is p running
grep -q "prep $AGED: done" "$SOAKD_LOG" || fail "$AGED was not prepped at start: $(cat "$SOAKD_LOG")"
prep_config "$aged, {\"path\": \"$ADDED\", \"destroy_data\": true}"
ctl reload >"$WORK/reload.out" 2>&1 || fail "the reload adding $ADDED failed: $(cat "$WORK/reload.out")"
wait_until 10 "p to run on both" workload_is p running
grep -q "prep $ADDED: done" "$SOAKD_LOG" || fail "the reload did not prep $ADDED: $(tail -n 12 "$SOAKD_LOG")"
(($(grep -c "prep $AGED: done" "$SOAKD_LOG") == 1)) || fail "the reload prepped $AGED again"
stop_soakd 20
((SOAKD_RC == 0)) || fail "the prep reload run exited $SOAKD_RC"
check_salted "$ADDED"
# A verified workload with prep: a reload drops its second device, the
# next brings it back.  The run verified that device before (its state
# is in the run directory): it is not prepped again, which would wipe
# every block the state says was written, and its check finds none
# damaged.
new_loop 32M
V1=$NEW_LOOP
new_loop 32M
V2=$NEW_LOOP
vprep_config() {
	cat >"$WORK/vreload.json" <<EOF
{"run": {"name": "vprep", "interval": "1s", "on_finish": "idle"},
 "workloads": [
  {"name": "v", "type": "device", "model": "pattern", "prep": true, "targets": [$1],
   "read_pct": 50, "block_size": "4KiB", "queue_depth": 4, "rate": 200,
   "verify": true, "fill": true, "pre_read": false, "verify_on_resume": "full"}]}
EOF
}
v1="{\"path\": \"$V1\", \"destroy_data\": true}"
v2="{\"path\": \"$V2\", \"destroy_data\": true}"
vprep_config "$v1, $v2"
SOAKD_LOG="$WORK/soakd.vreload.log"
start_soakd --config "$WORK/vreload.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 60 "the control socket" ctl_answers
wait_until 60 "v to run" workload_is v running
sleep 2
vprep_config "$v1"
ctl reload >"$WORK/vreload1.out" 2>&1 || fail "the reload dropping $V2 failed: $(cat "$WORK/vreload1.out")"
wait_until 10 "v to run on $V1" workload_is v running
sleep 1
vprep_config "$v1, $v2"
ctl reload >"$WORK/vreload2.out" 2>&1 || fail "the reload bringing $V2 back failed: $(cat "$WORK/vreload2.out")"
wait_until 30 "v to run on both again" workload_is v running
sleep 2
stop_soakd 20
((SOAKD_RC == 0)) || fail "the verified prep run exited $SOAKD_RC: $(tail -n 5 "$SOAKD_LOG")"
(($(grep -c "prep $V2: done" "$SOAKD_LOG") == 1)) ||
	fail "$V2, verified by the run, was prepped again when it came back"
grep -q "$V2: verify on resume (full): [0-9]* blocks checked, 0 failed" "$SOAKD_LOG" ||
	fail "$V2's check when it came back: $(grep "$V2: verify on resume" "$SOAKD_LOG")"
note "ok"
