# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the trace-*.sh tests (the kernel probes); sourced after lib.sh,
# never run.  RAM-backed loop devices, reading the kernel section of a
# dump, and skipping with soakd's own reason when BPF cannot load here
# (failing when soakd's own programs are at fault).

need_loop_devices() {
	need_root "loop devices and BPF"
	need_cmd losetup python3
	[[ -e /dev/loop-control ]] || skip_unless_strict "no /dev/loop-control (loop driver not available)"
	# Loop devices left behind by a run that was SIGKILLed (backing file gone).
	local dev back
	while read -r dev back; do
		[[ $back == /dev/shm/soakd-trace.* ]] || continue
		[[ -e $back ]] || losetup -d "$dev" 2>/dev/null || true
	done < <(losetup -l -n -O NAME,BACK-FILE 2>/dev/null | sed 's/ (deleted)$//')
}

# make_loop VAR SIZE: a loop device with direct I/O over a file in
# /dev/shm, its path in VAR.  Not in a $(...): the cleanup must be
# registered in the test's own shell.
make_loop() {
	local backing dev
	backing=$(mktemp /dev/shm/soakd-trace.XXXXXX)
	on_exit rm -f "$backing"
	truncate -s "$2" "$backing"
	dev=$(losetup --direct-io=on -f --show "$backing" 2>"$WORK/losetup.err") ||
		skip_unless_strict "losetup cannot attach a loop device: $(cat "$WORK/losetup.err")"
	on_exit losetup -d "$dev"
	printf -v "$1" '%s' "$dev"
}

dump_json() { ctl dump --format json >"$1" || fail "soakctl dump --format json failed"; }

# probe_state FAMILY: on, off or unavailable, from soakctl trace.
probe_state() {
	ctl trace | awk -v f="$1" -F': ' '$1 == f { split($2, a, " "); print a[1] }'
}

# probe_cause FAMILY: why the family is unavailable (privilege, kernel,
# verifier, error; empty when it is not), then its reason, from a dump.
probe_cause() {
	ctl dump --format json | python3 -c '
import json, sys
probes = json.load(sys.stdin)["kernel"]["probes"]
p = next((p for p in probes if p["name"] == sys.argv[1]), {})
print(p.get("cause", ""))
print(p.get("reason", ""))' "$1"
}

# bpf_unavailable FAMILY CAUSE REASON: the family did not load, which ends
# the test.  It skips only when the machine cannot trace (no privilege, no
# BTF, a missing tracepoint: cause privilege or kernel), and even then fails
# under SOAKD_TEST_STRICT; a program the verifier rejected or any other
# error is soakd's fault and fails, with soakd's log (the verifier's
# verdict is in it) shown.
bpf_unavailable() {
	case $2 in
	privilege | kernel) skip_unless_strict "BPF probes ($1) cannot load here ($2): $3" ;;
	*) fail "$1 probes failed to load (${2:-no cause given}), which is soakd's fault: $3" ;;
	esac
}

# require_probes FAMILY: returns when the family loaded, else bpf_unavailable.
require_probes() {
	local line cause reason
	line=$(ctl trace | grep "^$1: ") || fail "soakctl trace does not list $1: $(ctl trace 2>&1)"
	[[ $line == "$1: unavailable"* ]] || return 0
	{ read -r cause && read -r reason; } < <(probe_cause "$1")
	bpf_unavailable "$1" "$cause" "$reason"
}

# kernel_blk DUMP DEVICE OP FIELD: a number from kernel.blk (0 when the
# device or op is absent).  FIELD: count, or latency_us.p50 and the like.
kernel_blk() {
	python3 - "$@" <<'EOF'
import json, sys
dump, dev, op, field = sys.argv[1:5]
v = json.load(open(dump))["kernel"]["blk"].get(dev, {}).get("ops", {}).get(op, {})
for part in field.split("."):
    v = v.get(part, 0) if isinstance(v, dict) else 0
print(v)
EOF
}

# app_op DUMP WORKLOAD OP FIELD: the same for a workload's op.
app_op() {
	python3 - "$@" <<'EOF'
import json, sys
dump, name, op, field = sys.argv[1:5]
w = next((w for w in json.load(open(dump))["workloads"] if w["name"] == name), {})
v = w.get("ops", {}).get(op, {})
for part in field.split("."):
    v = v.get(part, 0) if isinstance(v, dict) else 0
print(v)
EOF
}

# live_count DEVICE OP / app_count WORKLOAD OP: from a fresh dump.
live_count() {
	dump_json "$WORK/live.json"
	kernel_blk "$WORK/live.json" "$1" "$2" count
}
app_count() {
	dump_json "$WORK/live.json"
	app_op "$WORK/live.json" "$1" "$2" count
}

# app_grew_by WORKLOAD OP N: for wait_until, after APP_BASE=$(app_count ...).
app_grew_by() { (($(app_count "$1" "$2") >= APP_BASE + $3)); }
kernel_grew() { (($(live_count "$1" "$2") > KERNEL_BASE)); }
