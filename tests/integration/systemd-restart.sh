#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A restart resumes the run (issue 8, point 5): "systemctl kill -s SIGKILL
# soakd" mid-run; Restart=on-failure starts soakd again (RestartSec=1 in a
# drop-in, to be quick), it resumes the same run in the same directory,
# and no recorded interval is lost: every record written before the kill
# is still there unchanged, a gap record marks the restart, and the
# interval records tile run time with no hole (the interval in progress at
# the kill is run again).  Then a reboot: the enabled unit starts at boot
# and resumes the run once more.  The dump agrees with the records.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/systemd-lib.sh"

ct_loop LOOP 64M
ct_prepare
ct_config "$(run_config restart "$(dev_workload dev "$LOOP" 200)")"
ct_dropin restart "[Service]
RestartSec=1"
ct_boot
ct_wait_running 60

# As the README says: enabled, so that it also comes back after a reboot.
ct_systemctl enable --now soakd.socket soakd.service >"$WORK/enable.log" 2>&1 ||
	fail "systemctl enable --now: $(cat "$WORK/enable.log")"
FIRST_PID=$(ct_main_pid)
FIRST_INVOCATION=$(ct_invocation)
RUN_DIR="$CT_ROOT/var/lib/soakd/restart"
LOG="$RUN_DIR/intervals.log"
intervals() { ct_intervals "$LOG"; }
at_least() { (($(intervals) >= $1)); }
wait_until 20 "4 interval records" at_least 4
# Mid-interval, not on a tick.
sleep 0.4

ct_systemctl kill -s SIGKILL soakd.service || fail "systemctl kill -s SIGKILL soakd.service"
# The kill is done when soakd's pid is gone; its file is final from then
# until the restart a second later.
wait_until 10 "soakd (pid $FIRST_PID in the container) to die" \
	eval '! in_ct test -e /proc/'"$FIRST_PID"
cp "$LOG" "$WORK/before.log"
before=$(grep -c '"type":"interval"' "$WORK/before.log" || true)
note "SIGKILLed soakd (pid $FIRST_PID) with $before interval records on disk"

restarted() {
	local pid
	[[ $(ct_prop ActiveState) == active ]] || return 1
	pid=$(ct_main_pid)
	[[ -n $pid && $pid != 0 && $pid != "$FIRST_PID" ]]
}
t0=$(now_ns)
wait_until 20 "systemd to restart soakd.service" restarted
note "restarted in $((($(now_ns) - t0) / 1000000)) ms: pid $(ct_main_pid), NRestarts=$(ct_prop NRestarts)"
[[ $(ct_prop NRestarts) == 1 ]] || fail "NRestarts=$(ct_prop NRestarts), expected 1"
INVOCATION=$(ct_invocation)
[[ $INVOCATION != "$FIRST_INVOCATION" ]] || fail "the same invocation id after the restart"

# systemd saw the kill, and soakd said it resumed the run.
ct_journal -o cat -u soakd.service >"$WORK/unit.journal"
grep -q 'Main process exited, code=killed, status=9/KILL' "$WORK/unit.journal" ||
	fail "the journal does not show soakd killed by SIGKILL"
ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$INVOCATION" >"$WORK/resumed.journal"
grep -q '^resuming run restart at' "$WORK/resumed.journal" ||
	fail "soakd did not say it resumed run restart: $(head -n 20 "$WORK/resumed.journal")"
note "$(grep -m1 '^resuming run restart at' "$WORK/resumed.journal")"

wait_until 20 "3 more interval records after the restart" at_least $((before + 3))

# A reboot: poweroff stops soakd cleanly, and at boot the enabled unit
# starts it again, on the same run.
t0=$(now_ns)
ct_poweroff 60
ct_boot
ct_wait_running 60
wait_until 20 "soakd.service to start at boot" ct_active_is active
note "rebooted: soakd.service active $((($(now_ns) - t0) / 1000000)) ms after the poweroff began"
ct_journal -o cat "_SYSTEMD_INVOCATION_ID=$(ct_invocation)" >"$WORK/boot.journal"
grep -q '^resuming run restart at' "$WORK/boot.journal" ||
	fail "after the reboot soakd did not resume run restart: $(head -n 20 "$WORK/boot.journal")"
note "$(grep -m1 '^resuming run restart at' "$WORK/boot.journal")"
n=$(intervals)
wait_until 20 "2 interval records after the reboot" at_least $((n + 2))
# Stop the workload so that the dump and the records can be compared.
ct_soakctl stop dev >/dev/null || fail "soakctl stop dev"
stopped() {
	grep -q '"type":"state","workload":"dev","state":"stopped"' "$LOG" 2>/dev/null
}
wait_until 10 "workload dev to stop" stopped
ct_soakctl dump --format json >"$WORK/dump.json" || fail "soakctl dump failed"
ls "$CT_ROOT/var/lib/soakd" >"$WORK/runs"
[[ $(cat "$WORK/runs") == restart ]] || fail "run directories: $(cat "$WORK/runs"), expected restart alone"

python3 - "$WORK/before.log" "$LOG" "$WORK/dump.json" <<'PY' || fail "intervals across the restart"
import json, sys

def records(path):
    out = []
    for line in open(path).read().splitlines()[1:]:
        try:
            out.append(json.loads(line.split(" ", 1)[1]))
        except (IndexError, ValueError):
            pass  # a line torn by the kill
    return out

before, after = records(sys.argv[1]), records(sys.argv[2])
if after[:len(before)] != before:
    sys.exit("records written before the kill were lost or changed")
gaps = [r for r in after if r["type"] == "gap"]
if len(gaps) != 2:
    sys.exit(f"{len(gaps)} gap records, expected 2 (the kill, the reboot)")
starts = [r for r in after if r["type"] == "start"]
if len(starts) != 3 or {r["run"] for r in starts} != {"restart"} or \
        not all(r.get("resumed") for r in starts[1:]):
    sys.exit(f"start records: {starts}")

problems, prev_end, after_gap, n = [], None, False, 0
for r in after:
    if r["type"] == "gap":
        if r["run_ns"] != prev_end:
            problems.append(f"the gap is at run time {r['run_ns']}, the last interval ended at {prev_end}")
        after_gap = True
        continue
    if r["type"] != "interval" or r["workload"] != "dev":
        continue
    n += 1
    if prev_end is not None:
        hole = r["start_ns"] - prev_end
        # Across the restart, soakd's start-up (well under an interval)
        # passes before the first op; elsewhere intervals tile exactly.
        limit = 500_000_000 if after_gap else 0
        if not 0 <= hole <= limit:
            problems.append(f"interval {r['start_ns']}..{r['end_ns']} follows one ending at {prev_end}")
    prev_end, after_gap = r["end_ns"], False
if problems:
    sys.exit("\n".join(problems))

logged = sum(op["count"] for r in after if r["type"] == "interval" for op in r["ops"].values())
dump = json.load(open(sys.argv[3]))
dev = next(w for w in dump["workloads"] if w["name"] == "dev")
dumped = sum(op["count"] for op in dev["ops"].values())
if dumped != logged:
    sys.exit(f"the dump counts {dumped} ops, the interval records {logged}")
run_s = prev_end / 1e9
# 200 ops/s over the run time covered, less the interval cut short by the
# stop.
if not 200 * (run_s - 1) * 0.95 <= dumped <= 200 * run_s * 1.02:
    sys.exit(f"{dumped} ops over {run_s:.1f} s of run time at 200 ops/s")
print(f"# {n} interval records tile {run_s:.1f} s of run time across the kill and the reboot"
      f" ({len([r for r in before if r['type'] == 'interval'])} before the kill);"
      f" down {gaps[0]['down_ns'] / 1e9:.2f} s, then {gaps[1]['down_ns'] / 1e9:.2f} s;"
      f" {dumped} ops, dump and records agree")
PY
note "ok"
