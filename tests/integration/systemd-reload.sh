#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# systemctl reload soakd (issue 8, point 2), through soakd.service's
# ExecReload=: the configuration file is edited in place, one workload's
# definition changed and one left alone.  The reload succeeds; the kept
# workload runs on with its counts (not reset, no stop in its records),
# the changed one starts over under its new rate.  Then bad files: a
# syntax error and a bad value make systemctl reload fail, with
# FILE:LINE:COLUMN in the journal (and from soakctl reload), and soakd runs
# on with the configuration it had.  Last, a reload whose new workload
# fills its device for verification for longer than a minute: systemctl
# reload waits for it and succeeds (soakd extends systemd's reload timeout
# and pings the watchdog meanwhile; soakctl in ExecReload= does not give up
# first, as it did after 60 s).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/systemd-lib.sh"
source "$(dirname "$0")/devlib.sh"

ct_loop LOOP 64M
ct_loop LOOP2 64M
# "slow"'s device: 68 MiB filled at 1 MiB/s in phase 3.
FILL_MIB=68
ct_loop LOOP3 ${FILL_MIB}M
ct_prepare
# Shorter than phase 3's fill: systemd's reload timeout holds only while
# soakd extends it (EXTEND_TIMEOUT_USEC=, from the fill's progress).
ct_dropin reload-timeout "[Service]
TimeoutStartSec=40s"
config() { run_config reload "$(dev_workload keep "$LOOP" 200)" "$(dev_workload change "$LOOP2" "$1")"; }
ct_config "$(config 100)"
ct_boot
ct_wait_running 60

ct_systemctl start soakd.socket soakd.service || fail "soakd.service does not start"
MAIN=$(ct_main_pid)
INVOCATION=$(ct_invocation)
LOG="$CT_ROOT/var/lib/soakd/reload/intervals.log"
keep_intervals() { ct_intervals "$LOG" keep; }
at_least() { (($(keep_intervals) >= $1)); }
wait_until 20 "3 intervals of workload keep" at_least 3

# op_total WORKLOAD FIELD: the sum over its ops of count, or of rate_target.
op_total() {
	ct_soakctl dump --format json | python3 -c '
import json, sys
w = next(w for w in json.load(sys.stdin)["workloads"] if w["name"] == sys.argv[1])
print(round(sum(o[sys.argv[2]] for o in w["ops"].values())))' "$1" "$2"
}
state_of() {
	ct_soakctl status --json | python3 -c '
import json, sys
print(next(w["state"] for w in json.load(sys.stdin)["workloads"] if w["name"] == sys.argv[1]))' "$1"
}

# 1. A good edit: "change" goes from 100 to 150 ops/s, "keep" is untouched.
keep_before=$(op_total keep count)
ct_config "$(config 150)"
ct_systemctl reload soakd.service 2>"$WORK/reload.err" ||
	fail "systemctl reload failed on a good file: $(cat "$WORK/reload.err")"
keep_after=$(op_total keep count)
note "keep: $keep_before ops before the reload, $keep_after just after"
((keep_after >= keep_before)) || fail "keep's count went back from $keep_before to $keep_after"
[[ $(ct_main_pid) == "$MAIN" && $(ct_invocation) == "$INVOCATION" && $(ct_prop NRestarts) == 0 ]] ||
	fail "the reload restarted soakd (pid $MAIN -> $(ct_main_pid))"
[[ $(ct_prop ActiveState) == active ]] || fail "soakd.service is $(ct_prop ActiveState) after the reload"
ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$INVOCATION" >"$WORK/journal.txt"
grep -q 'configuration reloaded: kept \["keep"\], replaced \["change"\], added \[\], removed \[\]' \
	"$WORK/journal.txt" || fail "the journal does not say what the reload kept and replaced: $(grep -i reload "$WORK/journal.txt")"
ct_journal -o cat -u soakd.service >"$WORK/unit.txt"
grep -q 'Reloaded soakd.service' "$WORK/unit.txt" || fail "systemd did not log the reload"
change_target() { [[ $(op_total change rate_target) == 150 ]]; }
wait_until 10 "workload change to run at its new 150 ops/s" change_target
[[ $(state_of keep) == running && $(state_of change) == running ]] ||
	fail "after the reload: keep $(state_of keep), change $(state_of change)"
n=$(keep_intervals)
wait_until 20 "keep to go on recording" at_least $((n + 2))
keep_later=$(op_total keep count)
# 200 ops/s went on through the reload: its total only grows, by its rate.
((keep_later > keep_after)) || fail "keep stopped counting after the reload ($keep_after -> $keep_later)"
python3 - "$LOG" <<'PY' || fail "keep's records across the reload"
import json, sys
recs = [json.loads(l.split(" ", 1)[1]) for l in open(sys.argv[1]).read().splitlines()[1:]]
keep = [r for r in recs if r.get("workload") == "keep"]
states = [r["state"] for r in keep if r["type"] == "state"]
if states != ["running"]:
    sys.exit(f"keep's state records: {states}: it was stopped or restarted")
iv = [r for r in keep if r["type"] == "interval"]
for a, b in zip(iv, iv[1:]):
    if b["start_ns"] != a["end_ns"]:
        sys.exit(f"keep's intervals do not tile: {a['end_ns']} then {b['start_ns']}")
change = [r["state"] + ("/" + r["reason"] if r["reason"] else "") for r in recs
          if r.get("workload") == "change" and r["type"] == "state"]
if len(change) < 3 or not change[1].startswith("stopped"):
    sys.exit(f"change's state records: {change}: it was not stopped and started again")
reloads = [r for r in recs if r["type"] == "reload"]
if len(reloads) != 1 or reloads[0]["kept"] != ["keep"] or reloads[0]["replaced"] != ["change"]:
    sys.exit(f"reload records: {reloads}")
print(f"# keep: {len(iv)} intervals tiling its run through the reload; change: {change}")
PY

# 2. Bad files: systemctl reload fails, the journal says where, and soakd
# runs on with what it had.
# bad_reload NAME TEXT PATTERN: reload TEXT; PATTERN locates the error.
bad_reload() {
	local name=$1 text=$2 pattern=$3 line cursor rc=0
	ct_config "$text"
	line=$(grep -n -- "$pattern" "$CT_ROOT$CT_CONFIG" | head -n1 | cut -d: -f1)
	[[ -n $line ]] || fail "$name: the test's pattern is not in the file"
	cursor=$(ct_cursor)
	ct_systemctl reload soakd.service >"$WORK/$name.out" 2>&1 || rc=$?
	((rc != 0)) || fail "$name: systemctl reload succeeded on a bad file"
	[[ $(ct_prop ActiveState) == active && $(ct_main_pid) == "$MAIN" ]] ||
		fail "$name: soakd.service is $(ct_prop ActiveState), pid $(ct_main_pid), after a bad reload"
	ct_journal -o cat -u soakd.service --after-cursor="$cursor" >"$WORK/$name.journal"
	grep -q "reload refused: $CT_CONFIG:$line:[0-9][0-9]*: " "$WORK/$name.journal" ||
		fail "$name: no '$CT_CONFIG:$line:COLUMN: ...' error in the journal: $(cat "$WORK/$name.journal")"
	note "$name: $(grep -m1 'reload refused' "$WORK/$name.journal")"
	# soakctl reload itself: exit 1 and the same location.
	rc=0
	ct_soakctl reload >"$WORK/$name.ctl" 2>&1 || rc=$?
	((rc == 1)) && grep -q "$CT_CONFIG:$line:[0-9][0-9]*: " "$WORK/$name.ctl" ||
		fail "$name: soakctl reload exited $rc: $(cat "$WORK/$name.ctl")"
}
bad_reload syntax "$(config 150 | sed 's/"rate": 150,/"rate": 150/')" '"rate": 150 "schedule"'
bad_reload value "$(config 150 | sed 's/"rate": 150,/"rate": -5,/')" '"rate": -5,'

# Both still run, with the configuration they had.
[[ $(state_of keep) == running && $(state_of change) == running ]] ||
	fail "after bad reloads: keep $(state_of keep), change $(state_of change)"
[[ $(op_total change rate_target) == 150 ]] || fail "change's target moved to $(op_total change rate_target)"
keep_bad=$(op_total keep count)
wait_until 10 "keep to go on counting after the bad reloads" \
	eval '(($(op_total keep count) > keep_bad))'
grep -c '"type":"reload"' "$LOG" | grep -qx 1 || fail "a bad reload was recorded in the run's log"

# 3. A reload that prepares for longer than a minute: "slow" is added on a
# third device, which it fills for verification before it starts, held to
# 1 MiB/s by a block cgroup around soakd (a cgroup v1 blkio one on these
# machines, beside the container's own v2 tree).  systemctl reload waits
# for the fill (its timeout, extended by soakd as the fill
# goes: 40 s by the drop-in above) and succeeds; keep records its
# intervals all along.
blk_cgroup
host_pid=$(head -n1 "$CT_CGROUP/system.slice/soakd.service/cgroup.procs" 2>/dev/null) ||
	fail "soakd.service's cgroup is not where systemd in the container puts it"
blk_join "$host_pid"
blk_limit "$LOOP3" wbps=$((1 << 20))
slow=$(dev_workload slow "$LOOP3" 50 70 '"verify": true, "fill": true, "pre_read": false')
ct_config "$(run_config reload "$(dev_workload keep "$LOOP" 200)" "$(dev_workload change "$LOOP2" 150)" "$slow")"
keep_before=$(keep_intervals)
t0=$(now_ns)
in_ct timeout 300 systemctl --no-pager reload soakd.service >"$WORK/slow.out" 2>&1 ||
	fail "systemctl reload failed while slow filled its device: $(cat "$WORK/slow.out")
$(ct_journal -o cat -u soakd.service | tail -n 8)"
took=$((($(now_ns) - t0) / 1000000000))
note "the reload that filled $FILL_MIB MiB took $took s"
# Less would not show that nothing gives up after a minute.
((took > 60)) || fail "the fill took only $took s: the device was not held to 1 MiB/s"
[[ $(ct_main_pid) == "$MAIN" && $(ct_prop NRestarts) == 0 && $(ct_prop ActiveState) == active ]] ||
	fail "after the long reload: soakd.service $(ct_prop ActiveState), pid $(ct_main_pid) (was $MAIN)"
[[ $(state_of slow) == running && $(state_of keep) == running ]] ||
	fail "after the long reload: slow $(state_of slow), keep $(state_of keep)"
# One record a second through the fill, not one for the whole of it.
gained=$(($(keep_intervals) - keep_before))
((gained >= took - 5)) || fail "keep recorded $gained intervals during a reload of $took s"
grep -c '"type":"reload"' "$LOG" | grep -qx 2 || fail "the long reload was not recorded once in the run's log"
note "ok"
