#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A log that takes nothing holds no thread of soakd's (log.h):
#   1. journald stopped (SIGSTOP) while soakd sends it an interval entry
#      every 100 ms: soakctl still answers at once and intervals.log keeps
#      its pace; once journald goes on, every interval's entry reaches the
#      journal;
#      and with journald well but stderr a pipe nobody reads, every
#      interval's entry reaches the journal during the run, none held
#      behind stderr's lines;
#   2. stderr a pipe nobody reads, with the live table on (a terminal held
#      with Ctrl-S): the same, and once the pipe is read again every row
#      of the table is there, in order, then the run's summary.  (What a
#      longer stall drops is test-log's.)
# Without the log's own thread, the loop blocked in the send: soakctl timed
# out and no interval was recorded until the log took something again.
source "$(dirname "$0")/lib.sh"

need_root "a mount namespace with a private journald"
need_cmd unshare journalctl python3
JOURNALD=/lib/systemd/systemd-journald
[[ -x $JOURNALD ]] || skip_unless_strict "$JOURNALD is not installed"
[[ -d /run/log && -d /var/log/journal ]] ||
	skip_unless_strict "/run/log or /var/log/journal missing (no mount points for the private journald)"

# config FILE DURATION N: N workloads on files, intervals of 100 ms.
config() {
	python3 - "$1" "$2" "$WORK" "$3" <<'PY'
import json, sys
path, duration, work, n = sys.argv[1:5]
workloads = [{"name": f"w{i}", "type": "device", "model": "pattern",
              "targets": [f"{work}/w{i}.dat"], "file_size": "4MiB", "read_pct": 70,
              "block_size": "4KiB", "queue_depth": 4, "rate": 200} for i in range(int(n))]
json.dump({"run": {"name": "logstall", "duration": duration, "interval": "100ms",
                   "on_finish": "exit"}, "workloads": workloads}, open(path, "w"))
PY
}

# intervals STATE: interval records in the run's log so far.
intervals() {
	local n
	n=$(grep -c '"type":"interval"' "$1/logstall/intervals.log" 2>/dev/null) || true
	echo "${n:-0}"
}

# responsive WHAT STATE SECONDS: for SECONDS, soakctl status answers
# within 2 s each time and intervals.log grows by at least 3 records a
# second (each workload makes 10).
responsive() {
	local what=$1 state=$2 secs=$3 before after t0 t1 i
	before=$(intervals "$state")
	for ((i = 0; i < secs; i++)); do
		t0=$(now_ns)
		timeout 2 "$SOAKCTL" --socket "$SOCK" status >/dev/null ||
			fail "$what: soakctl status did not answer within 2 s"
		t1=$(now_ns)
		note "$what: status answered in $(((t1 - t0) / 1000000)) ms"
		sleep 1
	done
	after=$(intervals "$state")
	((after - before >= 3 * secs)) ||
		fail "$what: intervals.log went from $before to $after records in ${secs}s"
	note "$what: intervals.log went from $before to $after records in ${secs}s"
}

################ 1. journald stopped
JOURNAL_DIR="$WORK/journal-root"
mkdir "$JOURNAL_DIR"
config "$WORK/j.json" 12s 4
config "$WORK/b.json" 8s 16
sed -i 's/"name": "logstall"/"name": "logstall-b"/' "$WORK/b.json"
cat >"$WORK/inner.sh" <<'INNER'
set -euo pipefail
source "$SRCDIR/tests/integration/journallib.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "# $*"; }
now_ns() { date +%s%N; }
journald_start
"$SOAKD" --config "$WORK/j.json" --socket "$SOCK" --state-dir "$WORK/state-j" --no-table \
	>"$WORK/soakd-j.log" 2>&1 &
pid=$!
trap 'kill -CONT $JOURNALD_PID; kill -KILL $pid 2>/dev/null; kill -TERM $JOURNALD_PID; wait' EXIT
for ((i = 0; i < 200; i++)); do
	(($(intervals "$WORK/state-j") >= 10)) && break
	sleep 0.1
done
(($(intervals "$WORK/state-j") >= 10)) || fail "no 10 intervals in 20 s: $(tail -5 "$WORK/soakd-j.log")"
kill -STOP "$JOURNALD_PID"
note "journald (pid $JOURNALD_PID) stopped"
# Its socket's queue fills within a few entries; then 4 s with it full.
sleep 1
responsive "journald stopped" "$WORK/state-j" 4
kill -CONT "$JOURNALD_PID"
note "journald goes on"
rc=0
timeout 30 tail --pid="$pid" -f /dev/null || fail "soakd did not end its run"
wait "$pid" || rc=$?
((rc == 0)) || fail "soakd exited $rc: $(tail -5 "$WORK/soakd-j.log")"

# 1b. journald well, stderr a pipe nobody reads (the live table on): the
# journal entries do not wait behind stderr's lines.
mkfifo "$WORK/fifo"
exec 7<>"$WORK/fifo"
"$SOAKD" --config "$WORK/b.json" --socket "$SOCK" --state-dir "$WORK/state-b" \
	>"$WORK/soakd-b.out" 2>&7 &
pid=$!
sleep 9 # the run's 8 s, stderr's pipe full after 2
cat <&7 >/dev/null &
drain=$!
trap 'kill -KILL $pid $drain 2>/dev/null; kill -TERM $JOURNALD_PID; wait' EXIT
timeout 30 tail --pid="$pid" -f /dev/null || fail "soakd did not end its run beside a full stderr"
rc=0
wait "$pid" || rc=$?
((rc == 0)) || fail "soakd exited $rc beside a full stderr"
kill "$drain" 2>/dev/null || true
trap - EXIT
journald_stop
INNER
export WORK JOURNAL_DIR JOURNALD SRCDIR SOAKD SOAKCTL SOCK
export -f intervals responsive
timeout 120 unshare --mount --propagation private bash "$WORK/inner.sh" ||
	fail "soakd beside a stopped journald failed (exit $?)"
[[ -d $JOURNAL_DIR/journal ]] || fail "journald wrote no journal under $JOURNAL_DIR"
# every_interval_journaled RUN STATE: each interval record of RUN's log has
# its journal entry.
every_interval_journaled() {
	journalctl -D "$JOURNAL_DIR/journal" -o json SOAK_EVENT=interval "SOAK_RUN=$1" \
		>"$WORK/entries-$1.json" 2>"$WORK/journalctl.log" || fail "journalctl failed"
	python3 - "$WORK/entries-$1.json" "$2/$1/intervals.log" <<'PY' || fail "$1: journal entries against intervals.log"
import json, sys
entries = {(e["SOAK_WORKLOAD"], e["SOAK_OP"], e["SOAK_INTERVAL_END_S"])
           for e in map(json.loads, filter(str.strip, open(sys.argv[1])))}
# Each line of the run's log is "CRC32 JSON".
records = [json.loads(l.partition(" ")[2]) for l in open(sys.argv[2]) if '"type":"interval"' in l]
want = {(r["workload"], op, "%.3f" % (r["end_ns"] / 1e9)) for r in records for op in r["ops"]}
missing = want - entries
if missing:
    sys.exit(f"{len(missing)} of {len(want)} intervals' ops have no journal entry: {sorted(missing)[:5]}")
print(f"# every one of {len(want)} intervals' ops reached the journal")
PY
}
every_interval_journaled logstall "$WORK/state-j"
every_interval_journaled logstall-b "$WORK/state-b"

################ 2. stderr a pipe nobody reads
config "$WORK/p.json" 16s 16
python3 - "$SOAKD" "$SOAKCTL" "$SOCK" "$WORK" <<'PY' || fail "soakd with a stderr nobody reads"
import fcntl, json, os, re, subprocess, sys, termios, time, struct
soakd, soakctl, sock, work = sys.argv[1:5]
F_SETPIPE_SZ = 1031
r, w = os.pipe()
fcntl.fcntl(w, F_SETPIPE_SZ, 4096)
p = subprocess.Popen([soakd, "--config", f"{work}/p.json", "--socket", sock,
                      "--state-dir", f"{work}/state-p"], stdin=subprocess.DEVNULL,
                     stdout=open(f"{work}/p.out", "w"), stderr=w)
os.close(w)
def queued():
    return struct.unpack("i", fcntl.ioctl(r, termios.FIONREAD, b"\0\0\0\0"))[0]
def intervals():
    try:
        return sum('"type":"interval"' in l for l in open(f"{work}/state-p/logstall/intervals.log"))
    except FileNotFoundError:
        return 0
try:
    deadline = time.monotonic() + 20
    # Full when the next line does not fit: a write of a line is whole.
    while queued() < 4096 - 512 and time.monotonic() < deadline:
        time.sleep(0.1)
    if queued() < 4096 - 512:
        sys.exit(f"the pipe never filled: {queued()} bytes")
    print(f"# the pipe is full: {queued()} bytes nobody reads", flush=True)
    time.sleep(1)
    before = intervals()
    for i in range(4):
        t0 = time.monotonic()
        try:
            subprocess.run([soakctl, "--socket", sock, "status"], stdout=subprocess.DEVNULL,
                           check=True, timeout=2)
        except subprocess.TimeoutExpired:
            sys.exit("soakctl status did not answer within 2 s")
        print(f"# status answered in {(time.monotonic() - t0) * 1000:.0f} ms", flush=True)
        time.sleep(1)
    after = intervals()
    if after - before < 12:
        sys.exit(f"intervals.log went from {before} to {after} records in 4 s")
    print(f"# intervals.log went from {before} to {after} records in 4 s", flush=True)
    time.sleep(2)
    text = b""
    os.set_blocking(r, False)
    deadline = time.monotonic() + 30
    while p.poll() is None and time.monotonic() < deadline:
        try:
            text += os.read(r, 65536)
        except BlockingIOError:
            time.sleep(0.05)
    while True:
        try:
            chunk = os.read(r, 65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        text += chunk
    if p.poll() is None:
        sys.exit("soakd did not end its 16 s run within 30 s of the pipe being read")
    if p.returncode != 0:
        sys.exit(f"soakd exited {p.returncode}: {text[-2000:].decode(errors='replace')}")
    lines = text.decode(errors="replace").splitlines()
    if any("were dropped" in l for l in lines):
        sys.exit("rows were dropped in a stall of seconds: "
                 + next(l for l in lines if "were dropped" in l))
    rows = [l for l in lines if re.match(r"\s*[0-9.]+s w[0-9]+ ", l)]
    records = intervals()
    # A row per op of each interval: reads and writes.
    if len(rows) != 2 * records:
        sys.exit(f"{len(rows)} table rows for {records} interval records (2 ops each)")
    ends = {}
    for l in rows:
        t, name = float(l.split()[0][:-1]), l.split()[1]
        if t < ends.get(name, 0):
            sys.exit(f"rows of {name} out of order at {t} s")
        ends[name] = t
    print(f"# all {len(rows)} table rows arrived, in order, for {records} interval records")
    if not any(l.startswith("summary of run") for l in lines):
        sys.exit("no summary after the run: " + "\n".join(lines[-20:]))
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
PY
note "ok"
