#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device data verification after a host restart (issue 15).  A host that
# goes down takes the page cache with it: of the generation map and the
# ring of unflushed writes (both mapped files in the run directory) some
# pages reach the disk and some do not, in no known order.  What that can
# leave is made here by hand after a SIGKILL: map bytes one write ahead of
# the device (the map page was written back, the write and its ring entry
# were not), and an empty ring.
#   - restarted on the same boot, soakd trusts the map (a SIGKILL leaves the
#     page cache whole) and reports those blocks as stale: what the planted
#     state means when nothing says the host restarted;
#   - restarted as after a reboot (a time namespace whose boot time is
#     another, and another kernel boot id bound over /proc's), soakd sees that its state was not closed cleanly under
#     another boot, reads every block back once and takes the generation of
#     this run it holds as the truth: no failure, then or after.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"
need_cmd unshare
unshare --time --monotonic -1 --boottime -1 --fork true 2>/dev/null ||
	skip "this kernel or unshare cannot make a time namespace (unshare --time failed)"

new_loop 8M
CFG="$WORK/reboot.json"
cat >"$CFG" <<EOF
{"run": {"name": "reboot", "duration": "600s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "r", "type": "device", "model": "pattern",
                "targets": [{"path": "$NEW_LOOP", "destroy_data": true}], "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 8, "rate": 3000,
                "verify": true, "fill": true, "flush_interval": "200ms"}]}
EOF
RUN="$WORK/state/reboot"
INNER_PID="$WORK/inner.pid"
# lib.sh stops unshare, not the soakd inside it: a test that fails while
# it runs leaves it to this.
on_exit "p=\$(cat '$INNER_PID' 2>/dev/null) && [[ \$(cat /proc/\$p/comm 2>/dev/null) == soakd ]] &&
	kill -KILL \$p"

totals() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
s = lambda *ks: sum(x.get(k, 0) for x in v for k in ks)
print(s("checked"), s("corrupt", "stale", "misdirected", "torn", "foreign"), s("stale"))'
}
CHECKED=0
progressed() {
	local c f s
	read -r c f s < <(totals) || return 1
	((c >= CHECKED + 10000))
}
STALE0=0
stale_seen() {
	local c f s
	read -r c f s < <(totals) || return 1
	((s > STALE0))
}

# plant N: N map bytes one write ahead of what the device holds, and the
# ring emptied (its tail moved to its head).
plant() {
	python3 - "$RUN/verify-r-0.map" "$RUN/verify-r-0.state" "$1" <<'PY'
import random, struct, sys
mp, st, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
gens = bytearray(open(mp, "rb").read())
for b in random.Random(n).sample(range(len(gens)), n):
    gens[b] = 1 if gens[b] in (0, 255) else gens[b] + 1
open(mp, "r+b").write(gens)
with open(st, "r+b") as f:
    f.seek(56)
    head = f.read(8)
    f.seek(64)
    f.write(head)
PY
}

start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 60 "the control socket" ctl_answers
wait_until 60 "10000 blocks checked" progressed
kill -KILL "$SOAKD_PID"
wait_soakd_exit 20

# The same boot: the planted blocks are lost writes as far as soakd knows.
plant 20
SOAKD_LOG="$WORK/soakd.same-boot.log"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 60 "the control socket (same boot)" ctl_answers
read -r CHECKED f STALE0 < <(totals)
wait_until 60 "the planted blocks reported stale" stale_seen
grep -q "the host restarted" "$SOAKD_LOG" && fail "a restart on the same boot was taken for a host restart"
note "same boot: the planted blocks are reported stale"
kill -KILL "$SOAKD_PID"
wait_soakd_exit 20

# Another boot: nothing of the state is trusted, nothing fails.
plant 20
SOAKD_LOG="$WORK/soakd.rebooted.log"
up=$(cut -d. -f1 /proc/uptime)
((up > 10)) || skip "the machine booted $up s ago: a time namespace cannot look like another boot"
# And the kernel's boot id of another boot, which soakd reads first (a
# file bound over /proc's, in a mount namespace of its own).
cat /proc/sys/kernel/random/uuid >"$WORK/boot_id"
spawn "$SOAKD_LOG" unshare --time --monotonic $((1 - up)) --boottime $((1 - up)) --mount --fork \
	sh -c 'mount --bind "$2" /proc/sys/kernel/random/boot_id || exit 125
	       echo $$ >"$1"; shift 2; exec "$@"' sh "$INNER_PID" "$WORK/boot_id" \
	"$SOAKD" --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
SOAKD_PID=$SPAWNED
wait_until 60 "the control socket (rebooted)" ctl_answers
grep -q "the host restarted since the verify state was last synced" "$SOAKD_LOG" ||
	fail "the restart under another boot was not noticed"
line=$(grep -h "verify on resume (full, after a host restart)" "$SOAKD_LOG" | tail -1)
[[ $line == *"2048 blocks checked, 0 failed, 2048 were uncertain"* ]] || fail "rebooted: $line"
read -r c0 f0 s0 < <(totals)
CHECKED=$c0
wait_until 60 "10000 more blocks checked" progressed
read -r c f s < <(totals)
((f == f0)) || fail "$((f - f0)) failures after the restart under another boot"
grep -h "verify: .* block at offset" "$SOAKD_LOG" && fail "failures logged after the host restart"
note "another boot: $line; then $((c - c0)) blocks checked, no failure"
kill -TERM "$(cat "$INNER_PID")"
wait_soakd_exit 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
