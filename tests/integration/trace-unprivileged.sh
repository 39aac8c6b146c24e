#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd without the privilege to load BPF: as nobody with no capabilities
# it runs its workload to the end and reports both probe families
# unavailable, saying why; asking for tracing is refused with that reason.
# As nobody with only CAP_BPF and CAP_PERFMON (what a unit would grant),
# the probes load and count.
source "$(dirname "$0")/lib.sh"

need_root "switching to nobody"
need_cmd setpriv python3
id nobody >/dev/null 2>&1 || skip_unless_strict "no user nobody"
group=$(id -gn nobody)

# nobody's corner of the work directory: config, data, socket, state.
HOME_DIR="$WORK/nobody"
mkdir "$HOME_DIR"
chown nobody "$HOME_DIR"
chmod 755 "$WORK"
SOCK="$HOME_DIR/soakd.sock"
CFG="$HOME_DIR/run.json"
cat >"$CFG" <<EOF
{"run": {"name": "unprivileged", "duration": "3s", "interval": "1s", "on_finish": "idle"},
 "workloads": [{"name": "file", "type": "device", "targets": ["$HOME_DIR/data"],
                "file_size": "8MiB", "read_pct": 100, "rate": 300}]}
EOF
chmod 644 "$CFG"
# The soakd binary must be reachable by nobody.
setpriv --reuid=nobody --regid="$group" --clear-groups test -x "$SOAKD" ||
	skip "nobody cannot run $SOAKD (a build directory under a private home?)"

# run_as_nobody CAPS: soakd as nobody with the ambient capabilities CAPS
# ("-all" for none).
run_as_nobody() {
	local caps=$1
	rm -rf "$HOME_DIR/state" "$SOCK"
	if [[ $caps == -all ]]; then
		start_soakd_as setpriv --reuid=nobody --regid="$group" --clear-groups --inh-caps=-all
	else
		start_soakd_as setpriv --reuid=nobody --regid="$group" --clear-groups \
			--inh-caps="-all,$caps" --ambient-caps="$caps"
	fi
	wait_until 15 "the control socket" ctl_answers
	wait_until 20 "the workload to finish" workload_is file finished
}
start_soakd_as() {
	spawn "$SOAKD_LOG" "$@" "$SOAKD" --config "$CFG" --socket "$SOCK" \
		--state-dir "$HOME_DIR/state" --no-table
	SOAKD_PID=$SPAWNED
	note "soakd as nobody via $* (pid $SOAKD_PID)"
}

run_as_nobody -all
ctl trace >"$WORK/trace.txt" || fail "soakctl trace failed: $(cat "$WORK/trace.txt")"
note "$(cat "$WORK/trace.txt")"
for family in blk tcp; do
	grep -q "^$family: unavailable (no permission to load BPF tracing programs: .*CAP_BPF" \
		"$WORK/trace.txt" || fail "expected $family unavailable for lack of permission: $(cat "$WORK/trace.txt")"
done
rc=0
ctl trace on >"$WORK/on.txt" 2>&1 || rc=$?
((rc == 1)) || fail "trace on exited $rc as nobody: $(cat "$WORK/on.txt")"
grep -q "kernel tracing is unavailable: blk: no permission" "$WORK/on.txt" ||
	fail "trace on said: $(cat "$WORK/on.txt")"
kill -HUP "$SOAKD_PID"
wait_until 5 "the SIGHUP log line" grep -q "SIGHUP received: kernel tracing is unavailable" "$SOAKD_LOG"
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
python3 - "$WORK/dump.json" <<'EOF' || fail "dump as nobody: $(cat "$WORK/dump.json")"
import json, sys
dump = json.load(open(sys.argv[1]))
reads = dump["workloads"][0]["ops"]["read"]["count"]
print(f"# the workload read {reads} times as nobody")
assert reads >= 890, reads
assert dump["kernel"]["blk"] == {} and dump["kernel"]["tcp"] == {}, dump["kernel"]
states = {p["name"]: (p["state"], p.get("reason", "")) for p in dump["kernel"]["probes"]}
assert all(s == "unavailable" and "permission" in r for s, r in states.values()), states
causes = {p["name"]: p.get("cause") for p in dump["kernel"]["probes"]}
assert all(c == "privilege" for c in causes.values()), causes
EOF
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd as nobody exited $SOAKD_RC: $(cat "$SOAKD_LOG")"

# Least privilege: CAP_BPF and CAP_PERFMON are enough to trace.
if ! setpriv --reuid=nobody --regid="$group" --clear-groups --inh-caps=-all,+bpf,+perfmon \
	--ambient-caps=+bpf,+perfmon true 2>/dev/null; then
	[[ ${SOAKD_TEST_STRICT:-0} != 1 ]] ||
		fail "setpriv cannot grant CAP_BPF and CAP_PERFMON, although SOAKD_TEST_STRICT=1"
	note "this setpriv or kernel cannot grant CAP_BPF and CAP_PERFMON; least-privilege part skipped"
	exit 0
fi
run_as_nobody +bpf,+perfmon
[[ $(ctl trace | grep '^blk:') == "blk: on" ]] || fail "with CAP_BPF and CAP_PERFMON: $(ctl trace)"
ctl dump --format json >"$WORK/dump.json" || fail "dump failed"
python3 - "$WORK/dump.json" <<'EOF' || fail "dump with CAP_BPF+CAP_PERFMON: $(cat "$WORK/dump.json")"
import json, sys
blk = json.load(open(sys.argv[1]))["kernel"]["blk"]
reads = sum(d["ops"].get("read", {}).get("count", 0) for d in blk.values())
print(f"# as nobody with CAP_BPF and CAP_PERFMON: {reads} reads traced on {sorted(blk)}")
assert reads > 0, blk
EOF
stop_soakd 20
note "ok"
