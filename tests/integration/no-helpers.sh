#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soakd starts no helper processes (SECURITY.md, "What runs as root"):
# under strace, which sees every clone, fork and exec of soakd and of
# anything it would start, a run with the block probes, a Prometheus
# textfile and a StatsD export, dumps (on dumper threads), a report,
# tracing switched off and on, a reload and a stop creates threads only
# (every clone has CLONE_THREAD) and executes nothing but soakd itself.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/trace-lib.sh"
need_cmd strace python3
need_loop_devices
make_loop DEV 64M

spawn "$WORK/listen.log" python3 "$SRCDIR/tests/integration/statsd_listen.py" \
	"$WORK/port" "$WORK/statsd.jsonl"
wait_until 10 "the StatsD listener" test -s "$WORK/port"
PORT=$(cat "$WORK/port")
mkdir "$WORK/prom"

CFG="$WORK/helpers.json"
cat >"$CFG" <<EOF
{"run": {"name": "helpers", "duration": "5m", "interval": "1s", "on_finish": "idle",
         "trace": {"blk": true},
         "exports": {"prometheus": {"textfile": "$WORK/prom/soakd.prom"},
                     "statsd": {"address": "127.0.0.1:$PORT"}}},
 "workloads": [
   {"name": "w", "type": "device", "model": "pattern",
    "targets": [{"path": "$DEV", "destroy_data": true}],
    "read_pct": 70, "block_size": "4KiB", "queue_depth": 8, "rate": 500}]}
EOF

# LeakSanitizer cannot run under ptrace (and would clone a tracer of its
# own at exit): off for this run only.
spawn "$SOAKD_LOG" env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
	strace -f -qq --seccomp-bpf -e signal=none -o "$WORK/strace.txt" \
	-e trace=clone,clone3,fork,vfork,execve,execveat \
	"$SOAKD" --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
STRACE=$SPAWNED
wait_until 30 "the control socket" ctl_answers
wait_until 15 "the workload" workload_is w running
children=$(cat "/proc/$STRACE/task/$STRACE/children")
soakd_pid=${children% }
[[ $soakd_pid =~ ^[0-9]+$ ]] || fail "strace (pid $STRACE) has children '$children', expected soakd alone"
note "soakd is pid $soakd_pid, under strace"
wait_until 15 "the Prometheus textfile" test -s "$WORK/prom/soakd.prom"
wait_until 15 "a StatsD packet" test -s "$WORK/statsd.jsonl"

ctl dump --format csv >"$WORK/dump.csv" || fail "dump --format csv failed"
ctl dump --format json >"$WORK/dump.json" || fail "dump --format json failed"
rc=0
ctl report >"$WORK/report.txt" || rc=$?
((rc == 0 || rc == 3)) || fail "report failed (exit $rc)"   # 3: the verdict is FAIL
ctl trace >"$WORK/trace.txt" || fail "trace failed"
note "probes: $(tr '\n' ' ' <"$WORK/trace.txt")"
if grep -q '^blk: on' "$WORK/trace.txt"; then
	ctl trace off >/dev/null || fail "trace off failed"
	ctl trace on >/dev/null || fail "trace on failed"
fi
ctl reload >/dev/null || fail "reload failed"
ctl stop >/dev/null || fail "stop failed"
ctl status >/dev/null || fail "status failed"

# Threads soakd has now, for the record.
note "threads: $(cat /proc/"$soakd_pid"/task/*/comm | sort | uniq -c | tr -s ' \n' ' ')"
kill -TERM "$soakd_pid"
wait_until 20 "soakd and strace to exit" not_alive "$STRACE"
rc=0
wait "$STRACE" || rc=$?
((rc == 0)) || fail "soakd (under strace) exited $rc"

python3 - "$WORK/strace.txt" "$soakd_pid" "$SOAKD" <<'PY' || fail "soakd started a process"
import re, sys

trace, soakd_pid, soakd = sys.argv[1], sys.argv[2], sys.argv[3]
lines = [l.rstrip("\n") for l in open(trace) if l.strip()]
problems, threads, execs = [], 0, 0
for line in lines:
    pid, _, call = line.partition(" ")
    call = call.strip()
    if call.startswith("+++") or call.startswith("---") or call.startswith("<..."):
        continue
    name = call.split("(", 1)[0]
    if name in ("execve", "execveat"):
        execs += 1
        if pid != soakd_pid or soakd not in call or execs > 1:
            problems.append(f"an exec: {line}")
    elif name in ("clone", "clone3"):
        if "CLONE_THREAD" in call:
            threads += 1
        else:
            problems.append(f"a clone that is not a thread: {line}")
    elif name in ("fork", "vfork"):
        problems.append(f"a {name}: {line}")
pids = {l.split(" ", 1)[0] for l in lines}
print(f"# strace: {len(lines)} lines, {threads} threads created, {execs} exec, "
      f"{len(pids)} task ids")
if execs != 1:
    problems.append(f"{execs} execs seen, expected soakd's own only: is strace working?")
if threads < 2:
    problems.append(f"only {threads} threads created: is strace seeing clones?")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY
