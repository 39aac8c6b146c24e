#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A reload that changes the workloads loads new probes for the new set of
# devices; a device both sets watch keeps its kernel totals and the
# interval in progress (before, its read total fell from thousands to what
# the new programs saw since the reload), and so does a device that
# "all_devices" found, no workload's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"

need_loop_devices
make_loop LOOP 64M
make_loop LOOP2 64M
make_loop LOOP3 64M
DEV=$(basename "$LOOP")

# config [SECOND]: reads on LOOP; with SECOND, a workload on LOOP2 too.
config() {
	local second=""
	[[ -z ${1:-} ]] || second=",
   {\"name\": \"more\", \"type\": \"device\", \"model\": \"pattern\", \"targets\": [\"$LOOP2\"],
    \"read_pct\": 100, \"block_size\": \"4KiB\", \"rate\": 100, \"autostart\": false}"
	cat >"$WORK/reload.json" <<JSON
{"run": {"name": "trace-reload", "duration": "60s", "interval": "500ms", "on_finish": "idle",
         "trace": {"blk": true, "all_devices": true}},
 "workloads": [
   {"name": "reads", "type": "device", "model": "pattern", "targets": ["$LOOP"],
    "read_pct": 100, "block_size": "4KiB", "queue_depth": 4, "rate": 2000}$second]}
JSON
}
config
start_soakd --config "$WORK/reload.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
require_probes blk
APP_BASE=0
wait_until 10 "3000 reads" app_grew_by reads read 3000
dd if="$LOOP3" of=/dev/null bs=4k count=500 iflag=direct status=none
config more
ctl reload >"$WORK/reload.out" 2>&1 || fail "the reload failed: $(cat "$WORK/reload.out")"
APP_BASE=$(app_count reads read)
wait_until 10 "1000 more reads" app_grew_by reads read 1000
ctl stop reads >/dev/null || fail "soakctl stop reads failed"
wait_until 10 "reads to stop" workload_is reads stopped
cat >"$WORK/totals.py" <<'PY'
import json, sys
dump = json.load(open(sys.argv[1]))
k = dump["kernel"]["blk"][sys.argv[2]]["ops"]["read"]["count"]
a = next(w for w in dump["workloads"] if w["name"] == "reads")["ops"]["read"]["count"]
print(f"# {sys.argv[2]} read: kernel {k}, soakd {a}")
assert a >= 4000, a
assert abs(k - a) <= 0.01 * a, f"kernel counted {k} reads, soakd {a}"
found = dump["kernel"]["blk"].get(sys.argv[3], {}).get("ops", {}).get("read", {}).get("count", 0)
print(f"# {sys.argv[3]}, found by all_devices: {found} reads")
assert found == 500, f"{sys.argv[3]}: {found} reads of 500"
PY
# The probes' last ticks come after the workload's: polled.
totals_agree() {
	dump_json "$WORK/dump.json"
	python3 "$WORK/totals.py" "$WORK/dump.json" "$DEV" "$(basename "$LOOP3")" >"$WORK/totals.out" 2>&1
}
for ((i = 0; i < 50; i++)); do
	totals_agree && break
	sleep 0.1
done
totals_agree || fail "kernel totals across the reload: $(cat "$WORK/totals.out")"
cat "$WORK/totals.out"
stop_soakd 20
# The interval records go on without a hole at the reload.
python3 - "$WORK"/state/trace-reload/intervals.log <<'PY' || fail "interval records across the reload"
import json, sys
k = a = 0
for line in open(sys.argv[1]).read().splitlines()[1:]:
    r = json.loads(line.split(" ", 1)[1])
    if r.get("type") == "interval" and r.get("workload") == "reads":
        a += r["ops"]["read"]["count"]
        k += r.get("kernel", {}).get("blk", {}).get("read", {}).get("count", 0)
print(f"# records: kernel {k}, soakd {a}")
assert abs(k - a) <= 0.01 * a + 10, f"records: kernel {k}, soakd {a}"
PY
note "ok"
