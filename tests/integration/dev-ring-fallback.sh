#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The device engine on the rings older kernels give.  soakd asks io_uring
# for a single-issuer ring with deferred task work (Linux 6.1), falls back
# to cooperative task work (5.19) and then to a plain ring when the kernel
# refuses the flags with EINVAL.  This kernel has them all, so a shim
# preloaded into soakd (tests/ring_refuse.c) refuses them instead; each
# ring then runs a fixed-rate mix with verification on (its flushes go
# through the ring too), twice: the run and a new run started on the same
# ring.  Every op due is counted, none fails, no block is reported damaged.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/devlib.sh"

[[ -n ${RING_REFUSE:-} && -e $RING_REFUSE ]] ||
	skip_unless_strict "the ring-refuse shim is not built (RING_REFUSE=${RING_REFUSE:-})"

new_loop 64M
LOOP=$NEW_LOOP
cat >"$WORK/ring.json" <<EOF
{"run": {"name": "ring", "duration": "3s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "r", "type": "device", "model": "pattern",
                "targets": [{"path": "$LOOP", "destroy_data": true}], "read_pct": 70,
                "block_size": "4KiB", "queue_depth": 16, "rate": 2000,
                "verify": true, "flush_interval": "200ms"}]}
EOF

# check_run LABEL: the finished run's ops: 6000 due, every one counted,
# none failed, no block found damaged.
check_run() {
	ctl dump --format json >"$WORK/dump.json" || fail "$1: soakctl dump failed"
	python3 - "$1" "$WORK/dump.json" <<'PY' || fail "$1: $(head -c 3000 "$WORK/dump.json")"
import json, sys
label, path = sys.argv[1], sys.argv[2]
ops = json.load(open(path))["workloads"][0]["ops"]
due = sum(ops[op]["count"] + ops[op]["errors"] + ops[op].get("missed", 0)
          for op in ("read", "write"))
assert due == 6000, f"{due} ops counted, 6000 due"
for op in ("read", "write"):
    o = ops[op]
    assert o["errors"] == 0, f"{op}: {o['errors']} errors"
    v = o.get("verify_total", o.get("verify", {}))
    bad = {k: v.get(k, 0) for k in ("corrupt", "stale", "misdirected", "torn", "foreign")}
    assert not any(bad.values()), f"{op}: {bad}"
checked = sum(ops[op].get("verify_total", ops[op].get("verify", {})).get("checked", 0)
              for op in ("read", "write"))
assert checked > 0, "no block was checked"
print(f"# {label}: {ops['read']['count']} reads, {ops['write']['count']} writes, "
      f"{ops['read'].get('missed', 0) + ops['write'].get('missed', 0)} missed, {checked} blocks checked")
PY
}

# ring_case REFUSE EXPECTED_FLAGS LABEL
ring_case() {
	local refuse=$1 want=$2 label=$3
	note "$label: io_uring setup flags $refuse refused"
	SOAKD_ENV=("LD_PRELOAD=$RING_REFUSE" "SOAKD_TEST_RING_REFUSE=$refuse"
		   "ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
	rm -rf "$WORK/state"
	start_soakd --config "$WORK/ring.json" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 20 "the control socket" ctl_answers
	wait_until 30 "the run to finish" workload_is r finished
	grep -q "ring-refuse: refused flags" "$SOAKD_LOG" ||
		fail "$label: the shim refused nothing (is it preloaded?): $(grep ring-refuse "$SOAKD_LOG")"
	grep -q "ring-refuse: set up with flags $want: 0" "$SOAKD_LOG" ||
		fail "$label: soakd did not end with the ring of flags $want: $(grep ring-refuse "$SOAKD_LOG")"
	check_run "$label, first run"
	ctl start --new-run >"$WORK/new-run.out" 2>&1 || fail "$label: start --new-run: $(cat "$WORK/new-run.out")"
	wait_until 20 "the new run to start" workload_is r running
	wait_until 30 "the new run to finish" workload_is r finished
	check_run "$label, new run"
	stop_soakd 20
	((SOAKD_RC == 0)) || fail "$label: soakd exited $SOAKD_RC"
}

# IORING_SETUP_DEFER_TASKRUN (0x2000): cooperative task work, with the
# flag that says it waits (COOP_TASKRUN | TASKRUN_FLAG = 0x300).
ring_case 0x2000 0x300 "no deferred task work (Linux 5.19-6.0)"
# ... and IORING_SETUP_COOP_TASKRUN (0x100) too: a plain ring.
ring_case 0x2100 0 "no cooperative task work (Linux 5.18 and older)"
note "ok"
