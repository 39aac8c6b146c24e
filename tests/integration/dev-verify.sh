#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Device data verification (issue 15) on a real loop device over a file,
# damaged behind soakd's back while it runs a mix of reads and writes:
#   - before any damage, every block read back checks out: no failure of
#     any class over tens of thousands of blocks;
#   - bytes changed at a known offset: "corrupt", with that offset, in the
#     log, in status and the dump, and the block saved in the run directory;
#   - another block's contents copied over a block: "misdirected";
#   - half a block put back from before soakd's last write of it: "torn";
#   - a whole block put back from before that write (a lost write): "stale";
#   - the op's corrupt is the failures' sum, and the CSV dump agrees.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

new_loop 16M
LOOP=$NEW_LOOP
BACKING=$(losetup -n -O BACK-FILE "$LOOP" | sed 's/ (deleted)$//')
CFG="$WORK/verify.json"
cat >"$CFG" <<EOF
{"run": {"name": "verify", "duration": "60s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "v", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 80,
                "block_size": "4KiB", "queue_depth": 4, "rate": 3000,
                "verify": true, "fill": true, "flush_interval": "250ms"}]}
EOF
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 30 "the control socket" ctl_answers
RUN="$WORK/state/verify"
MAP="$RUN/verify-v-0.map"
[[ -f $MAP && -f $RUN/verify-v-0.state ]] || fail "no verify state in the run directory"
(($(stat -c %s "$MAP") == 4096)) || fail "the map is not one byte per 4 KiB block"

# Clean first: tens of thousands of blocks read back, none failed.
checked_total() {
	ctl status --json | python3 -c '
import json, sys
ops = json.load(sys.stdin)["workloads"][0]["ops"]
v = [op.get("verify_total", {}) for op in ops.values()]
print(sum(x.get("checked", 0) for x in v),
      sum(x.get(k, 0) for x in v for k in ("corrupt", "stale", "misdirected", "torn", "foreign")))'
}
enough_checked() { read -r c f < <(checked_total); ((c >= 20000)); }
wait_until 30 "20000 blocks checked" enough_checked
read -r c f < <(checked_total)
((f == 0)) || fail "$f failures on an undamaged device ($c blocks checked)"
note "undamaged: $c blocks checked, no failure"

python3 "$SRCDIR/tests/integration/verify_inject.py" "$BACKING" "$MAP" "$SOAKCTL" "$SOCK" \
	"$SOAKD_LOG" corrupt misdirected torn stale || fail "a kind of damage was not reported"
ls "$RUN"/verify-v-0-corrupt-*.block >/dev/null 2>&1 || fail "no corrupt block saved in $RUN"
for f in "$RUN"/verify-v-0-*.block; do
	(($(stat -c %s "$f") == 4096)) || fail "$f is not a whole block"
done

ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
ctl dump --format csv >"$WORK/dump.csv" || fail "CSV dump failed"
python3 - "$WORK/dump.json" "$WORK/dump.csv" <<'PY' || fail "the dump does not add up"
import csv, json, sys
ops = json.load(open(sys.argv[1]))["workloads"][0]["ops"]
read = ops["read"]
v = read["verify"]
for k in ("corrupt", "misdirected", "torn", "stale"):
    if v[k] < 1:
        sys.exit(f"dump: verify.{k} = {v[k]}")
fails = sum(v[k] for k in ("corrupt", "stale", "misdirected", "torn", "foreign"))
if read["corrupt"] != fails:
    sys.exit(f"dump: op corrupt {read['corrupt']} is not the failures' sum {fails}")
rows = [r for r in csv.DictReader(open(sys.argv[2])) if r["op"] == "read"]
# The CSV's columns: object and device classes in one list, the device's
# CRC class as verify_corrupt (corrupt is the op's).
csv_fails = sum(int(r[k]) for r in rows
                for k in ("verify_corrupt", "stale", "misdirected", "torn", "foreign"))
if csv_fails != fails or sum(int(r["checked"]) for r in rows) != v["checked"]:
    sys.exit(f"CSV: {csv_fails} failures, the dump {fails}")
print(f"# dump: {v}")
PY
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
note "ok"
