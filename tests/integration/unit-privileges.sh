#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd works with no more than soakd.service grants: root with only the
# capabilities of its CapabilityBoundingSet= (read from the unit), no new
# privileges, and a 64 KiB RLIMIT_MEMLOCK that it may not raise (no
# CAP_SYS_RESOURCE, as on these machines).  With that it preps a loop
# device, runs a rate-scheduled workload on it (destroy_data) and one on a
# regular file, loads the block-layer probes and counts the device's
# requests, and still refuses to write to a mounted device.  Without
# CAP_SYS_NICE it says once that the workload threads keep their priority.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_cmd setpriv prlimit

caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$SRCDIR/units/soakd.service")
[[ -n $caps ]] || fail "soakd.service has no CapabilityBoundingSet="
bounding="-all"
for cap in $caps; do
	cap=${cap#CAP_}
	bounding+=",+${cap,,}"
done
note "the unit's capabilities: $caps"
# "${CONFINED[@]}" COMMAND...: as soakd.service would run it; each execs the
# next, so the pid is the command's.
CONFINED=(prlimit --memlock=65536:65536 -- setpriv --bounding-set="$bounding" --inh-caps=-all
	--no-new-privs --)

new_loop 64M
DEV=$NEW_LOOP
"${CONFINED[@]}" true 2>"$WORK/setpriv.err" || skip_unless_strict "setpriv cannot confine here: $(cat "$WORK/setpriv.err")"
"${CONFINED[@]}" "$SOAKD" --prep "$DEV" >"$WORK/prep.log" 2>&1 || fail "prep failed: $(cat "$WORK/prep.log")"
note "prep of $DEV with the unit's capabilities: ok"

CFG="$WORK/caps.json"
cat >"$CFG" <<EOF
{
  "run": {"name": "caps", "duration": "4s", "interval": "1s", "on_finish": "idle",
          "trace": {"blk": true}},
  "workloads": [
    {"name": "dev", "type": "device", "targets": [{"path": "$DEV", "destroy_data": true}],
     "read_pct": 50, "block_size": "4KiB", "queue_depth": 8, "rate": 500},
    {"name": "file", "type": "device", "targets": ["$WORK/file.dat"], "file_size": "8MiB",
     "read_pct": 50, "block_size": "4KiB", "queue_depth": 8, "rate": 200}
  ]
}
EOF
SOAKD_ENV=()
spawn "$SOAKD_LOG" "${CONFINED[@]}" "$SOAKD" --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" \
	--no-table
SOAKD_PID=$SPAWNED
wait_until 15 "the control socket" ctl_answers

# The process has exactly the unit's capabilities (prlimit and setpriv exec
# into soakd, so the pid is soakd's).
declare -A CAP_BIT=([CAP_CHOWN]=0 [CAP_DAC_OVERRIDE]=1 [CAP_FOWNER]=3 [CAP_IPC_LOCK]=14
	[CAP_SYS_RAWIO]=17 [CAP_SYS_ADMIN]=21 [CAP_SYS_RESOURCE]=24 [CAP_PERFMON]=38 [CAP_BPF]=39)
want=0
for cap in $caps; do
	[[ -n ${CAP_BIT[$cap]:-} ]] || fail "the test does not know $cap's bit"
	want=$((want | (1 << CAP_BIT[$cap])))
done
eff=$((16#$(awk '/^CapEff:/ {print $2}' "/proc/$SOAKD_PID/status")))
((eff == want)) || fail "soakd runs with CapEff $(printf %x $eff), expected $(printf %x $want)"
note "soakd's CapEff: $(printf %016x $eff)"

wait_until 20 "workload dev to finish" workload_is dev finished
wait_until 20 "workload file to finish" workload_is file finished
dump_json "$WORK/dump.json"
for w in dev file; do
	for op in read write; do
		count=$(app_op "$WORK/dump.json" "$w" "$op" count)
		errors=$(app_op "$WORK/dump.json" "$w" "$op" errors)
		((count > 0 && errors == 0)) || fail "$w $op: $count ops, $errors errors"
	done
done
note "workloads on $DEV and on a file: ok"
# Without CAP_SYS_NICE (nor LimitNICE=, which the unit adds) the workload
# threads cannot be raised to nice -10: one notice says so, for both
# workloads, and they ran all the same (above).
notices=$(grep -c "cannot raise the workload threads' priority" "$SOAKD_LOG" || true)
((notices == 1)) || fail "$notices notices of the workload threads' priority, expected 1: $(cat "$SOAKD_LOG")"
note "without CAP_SYS_NICE: $(grep -m1 "cannot raise the workload threads' priority" "$SOAKD_LOG")"

line=$(ctl trace | grep '^blk: ')
if [[ $line == "blk: unavailable"* ]]; then
	# Say whether full root could have: then the unit's set is too small.
	note "block probes unavailable with the unit's capabilities: $line"
	grep -q "CAP_BPF" <<<"$caps" || fail "the unit lacks CAP_BPF"
	{ read -r cause && read -r reason; } < <(probe_cause blk)
	bpf_unavailable blk "$cause" "$reason"
fi
kcount=$(kernel_blk "$WORK/dump.json" "$(basename "$DEV")" write count)
((kcount > 0)) || fail "the block probes counted no writes on $DEV: $(ctl trace)"
note "block probes with the unit's capabilities: $line; $kcount writes counted on $DEV"
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"

# The refusals do not depend on privileges either.
new_loop 32M
mkfs.ext4 -q "$NEW_LOOP" || fail "mkfs.ext4 failed"
mount_on "$NEW_LOOP" "$WORK/mnt"
rc=0
"${CONFINED[@]}" "$SOAKD" --prep "$NEW_LOOP" --destroy-data >"$WORK/refused.log" 2>&1 || rc=$?
((rc != 0)) && grep -q "refusing to write to $NEW_LOOP" "$WORK/refused.log" ||
	fail "prep of a mounted device: exit $rc: $(cat "$WORK/refused.log")"
note "a mounted device is still refused: $(grep -m1 refusing "$WORK/refused.log")"
note "ok"
