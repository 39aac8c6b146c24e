#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A reload that adds a device workload on a device that has stopped
# answering.  Before writing to a device soakd reads its first blocks to
# look for data on it; a read the device never answers held soakd's main
# loop (status, the watchdog, the other workloads' intervals) for as long
# as the device stalled.  The read is now given up after 8 s: the reload is
# refused, naming the device and why, soakd answers again at once (a retry
# while that read waits is refused at once), and the
# running workload loses no interval.  Once the device answers, the same
# reload is taken.  Then a reload that meets two stalled devices (a
# replacement, and the old definition put back) waits about 8 s, not 16.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/faultlib.sh"

fault_device 16M
CFG="$WORK/probe-stall.json"

# config [DEVICE]: workload f on a file; with DEVICE, s on that device too.
config() {
	local s=""
	[[ -z ${1:-} ]] || s=",
  {\"name\": \"s\", \"type\": \"device\", \"model\": \"pattern\",
   \"targets\": [{\"path\": \"$1\", \"destroy_data\": true}], \"read_pct\": 0,
   \"block_size\": \"4KiB\", \"access\": \"random\", \"queue_depth\": 1, \"rate\": 10}"
	cat >"$CFG" <<JSON
{"run": {"name": "probe-stall", "interval": "1s"},
 "workloads": [
  {"name": "f", "type": "device", "model": "pattern", "targets": ["$WORK/f.dat"],
   "file_size": "4MiB", "read_pct": 50, "block_size": "4KiB", "access": "random",
   "queue_depth": 1, "rate": 100}$s]}
JSON
}
intervals_of_f() {
	grep -c '"type":"interval","workload":"f"' "$WORK/state/probe-stall/intervals.log" 2>/dev/null || true
}

config
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 15 "workload f to run" workload_is f running

on_exit faultdev_cmd unstall
# Nothing of the device cached: the probe has to read it.
blockdev --flushbufs "$FAULTDEV_LOOP" || fail "cannot drop $FAULTDEV_LOOP's buffers"
faultdev_cmd stall
config "$FAULTDEV_LOOP"
before=$(intervals_of_f)
# refused_reload WHAT: a reload that must be refused; out is what soakctl
# said, took_ms how long it took.
refused_reload() {
	local t0
	t0=$(now_ns)
	out=$(timeout 60 "$SOAKCTL" --socket "$SOCK" --timeout 30 reload 2>&1) &&
		fail "$1 added a workload on a device that does not answer: $out"
	took_ms=$((($(now_ns) - t0) / 1000000))
	note "$1 refused after $took_ms ms: $out"
}
refused_reload "the reload"
grep -q "$FAULTDEV_LOOP.*did not answer a read of its first blocks .* within 8 s" <<<"$out" ||
	fail "the refusal does not say $FAULTDEV_LOOP did not answer: $out"
((took_ms < 20000)) || fail "the reload took $took_ms ms"
[[ $(workload_state s) == absent ]] || fail "s exists after a refused reload"
[[ $(workload_state f) == running ]] || fail "f is $(workload_state f) after the refused reload"
# f's intervals of the seconds soakd waited are all there, once written.
wait_until 5 "f's intervals of the wait" \
	eval '(($(intervals_of_f) >= before + took_ms / 1000))'

# Tried again while the first read still waits: refused at once, without
# another 8 s on soakd's loop and another thread waiting on the device.
refused_reload "the second reload"
grep -q "$FAULTDEV_LOOP.*has not yet answered an earlier read of its first blocks" <<<"$out" ||
	fail "the second refusal does not say the earlier read is unanswered: $out"
((took_ms < 4000)) || fail "the second reload took $took_ms ms"

faultdev_cmd unstall
# The reads waiting on the device end as it answers; until the first one
# has, soakd says to try again.
reload_taken() { out=$(ctl reload 2>&1) || [[ $out != *"has not yet answered"* ]]; }
wait_until 10 "the earlier read to be answered" reload_taken
[[ $out == *"s: running (added)"* ]] || fail "the reload once the device answers failed: $out"
grep -qx 's: running (added)' <<<"$out" || fail "s was not added: $out"
wait_until 15 "s to write" eval '(($(ctl status --json | python3 -c "
import json, sys
w = next(w for w in json.load(sys.stdin)[\"workloads\"] if w[\"name\"] == \"s\")
print(sum(o[\"count_total\"] for o in w[\"ops\"].values()))") > 10))'

# A reload that meets two stalled devices: s (stopped, on the device) is
# replaced by s on a second loop device over the same image.  The
# replacement's read is given up after 8 s, and the reload puts s back on
# its old device, whose read would hold soakd's loop 8 s more (one more
# stalled device, 8 s more: past systemd's watchdog with four).  A reload's
# devices share the 8 s, each still allowed half a second.
ctl stop s >/dev/null || fail "cannot stop s"
wait_until 10 "s to stop" workload_is s stopped
LOOP2=$(losetup --direct-io=on -f --show "$FAULTDEV_MNT/disk.img") ||
	fail "cannot attach a second loop device over $FAULTDEV_MNT/disk.img"
on_exit losetup -d "$LOOP2"
note "second loop device $LOOP2 over the same image"
blockdev --flushbufs "$FAULTDEV_LOOP" "$LOOP2" || fail "cannot drop the loop devices' buffers"
faultdev_cmd stall
config "$LOOP2"
refused_reload "the reload onto $LOOP2"
grep -q "$LOOP2.*did not answer a read of its first blocks .* within 8 s" <<<"$out" ||
	fail "the refusal does not say $LOOP2 did not answer: $out"
grep -q "could not go on under its old definition either and failed" <<<"$out" ||
	fail "the refusal does not say s could not be put back: $out"
# The 8 s, the restore's half second, and the stop and release around.
((took_ms < 12000)) || fail "the reload that met two stalled devices took $took_ms ms"
reason=$(ctl status --json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == "s")
print(w["state"], w.get("reason", ""))')
note "s after it: $reason"
[[ $reason == failed*"$FAULTDEV_LOOP"*"within 0.5 s (what was left"* ]] ||
	fail "s is not failed for its own device's half second: $reason"
faultdev_cmd unstall
[[ $(workload_state f) == running ]] || fail "f is $(workload_state f) after the second stall"

stop_soakd 20
# s failed: the run's result says so.
((SOAKD_RC == 3)) || fail "soakd exited $SOAKD_RC, not 3 (a workload failed)"
