#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The control socket's time limits and its answer to running out of file
# descriptors, on a real soakd and measured (SECURITY.md, "Limits against
# misuse"; test-ctl_server checks the same limits at their edges with an
# injected clock).  Run together, so the test takes about a minute:
# - a client that connects and says nothing is closed after 30 s;
# - a client that asks for a large dump (streamed by a dumper thread) and
#   never reads it is closed after 60 s without progress, while status
#   keeps answering within a second;
# - a client that takes its dump 20000 bytes every 25 s is closed after
#   60 s of soakd waiting in all for 64 KiB of it (a trickle is not
#   progress enough to hold a dumper);
# - with soakd's RLIMIT_NOFILE lowered (prlimit) under a flood of
#   connections, accepting pauses: the pause is logged about once a second,
#   the main thread does not spin, and once descriptors are free again the
#   waiting connections are answered.
source "$(dirname "$0")/lib.sh"
need_cmd python3

CFG="$WORK/limits.json"
write_file_config "$CFG" limits w 10m idle 50
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
LOG="$WORK/state/limits/intervals.log"
has_interval() { grep -q '"type":"interval"' "$LOG" 2>/dev/null; }
wait_until 15 "a first interval on disk" has_interval
# Half a day of intervals: a CSV dump of a few MiB, far more than the
# socket's buffers hold.
python3 "$SRCDIR/tests/integration/gen_runlog.py" --as synthetic "$LOG" 43200 >/dev/null ||
	fail "cannot generate the log"

python3 - "$SOCK" "$SOAKD_PID" "$SOAKD_LOG" <<'PY' || fail "control socket limits"
import json, os, resource, select, socket, sys, threading, time

path, pid, soakd_log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
problems = []
TICK = os.sysconf("SC_CLK_TCK")
PAUSE_LINE = b"cannot accept a connection; pausing for a second"


def connect(rcvbuf=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.settimeout(5)
    s.connect(path)
    return s


def wait_closed(s, limit_s):
    """The monotonic time at which soakd closed its end (read nothing), or None."""
    p = select.poll()
    p.register(s, select.POLLRDHUP)
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if p.poll(100):
            return time.monotonic()
    return None


def status_seconds():
    t = time.monotonic()
    s = connect()
    s.sendall(b'{"cmd":"status"}\n')
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    s.close()
    if json.loads(buf).get("ok") is not True:
        problems.append(f"status: {buf[:200]!r}")
    return time.monotonic() - t


def main_thread_ticks():
    with open(f"/proc/{pid}/task/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])   # utime, stime


def pause_lines():
    with open(soakd_log, "rb") as f:
        return f.read().count(PAUSE_LINE)


results = {}


def idle_client():
    s = connect()
    t = time.monotonic()
    closed = wait_closed(s, 45)
    results["idle"] = None if closed is None else closed - t
    s.close()


def slow_reader():
    s = connect(rcvbuf=4096)
    s.sendall(b'{"cmd":"dump","format":"csv","workload":"synthetic"}\n')
    t = time.monotonic()
    closed = wait_closed(s, 90)
    results["slow"] = None if closed is None else closed - t
    got = b""
    s.settimeout(5)
    while True:
        try:
            chunk = s.recv(1 << 20)
        except (socket.timeout, ConnectionResetError):
            break
        if not chunk:
            break
        got += chunk
    results["slow_bytes"] = got
    s.close()


def trickle_reader():
    """Takes its dump 20000 bytes every 25 s: progress, each time freeing
    room for soakd to send more, but under 64 KiB a minute; soakd gives
    up after 60 s of waiting in all for 64 KiB.  (A few bytes at a time
    would free no room: the socket's buffers hold the dump's writes whole,
    16 KiB or more each.)"""
    s = connect(rcvbuf=4096)
    s.sendall(b'{"cmd":"dump","format":"csv","workload":"synthetic"}\n')
    t = time.monotonic()
    p = select.poll()
    p.register(s, select.POLLRDHUP)
    got = 0
    results["trickle"] = None
    while time.monotonic() < t + 100:
        if p.poll(25000):
            results["trickle"] = time.monotonic() - t
            break
        want = 20000
        while want > 0:
            chunk = s.recv(want)
            if not chunk:
                break
            got += len(chunk)
            want -= len(chunk)
    results["trickle_bytes"] = got
    s.close()


threads = [threading.Thread(target=idle_client), threading.Thread(target=slow_reader),
           threading.Thread(target=trickle_reader)]
for t in threads:
    t.start()
time.sleep(1)   # both connected; the dump's writer is blocked by now

# Out of file descriptors: two more than soakd holds, then a flood.
soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
held = len(os.listdir(f"/proc/{pid}/fd"))
before = pause_lines()
resource.prlimit(pid, resource.RLIMIT_NOFILE, (held + 2, hard))
flood = []
try:
    for _ in range(40):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:
            s.close()
            continue
        flood.append(s)
    ticks0, t0 = main_thread_ticks(), time.monotonic()
    time.sleep(5)
    cpu = (main_thread_ticks() - ticks0) / TICK / (time.monotonic() - t0)
    paused = pause_lines() - before
finally:
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
print(f"# out of descriptors (limit {held + 2}), {len(flood)} connections: main thread "
      f"{cpu:.1%} of a core, the pause logged {paused} times in 5 s")
if cpu > 0.2:
    problems.append(f"out of descriptors: soakd's main thread took {cpu:.0%} of a core")
if not 2 <= paused <= 8:
    problems.append(f"out of descriptors: the pause was logged {paused} times in 5 s "
                    "(once a second expected)")
# Accepting resumes: the last connection of the flood, which waited, is answered.
last = flood[-1]
last.setblocking(True)
last.settimeout(5)
t = time.monotonic()
try:
    last.sendall(b'{"cmd":"status"}\n')
    reply = last.recv(65536)
except OSError as e:
    reply = repr(e).encode()
if not reply.startswith(b'{"ok":true'):
    problems.append(f"after the descriptors came back, a waiting connection got {reply[:200]!r}")
else:
    print(f"# a connection that waited answered {time.monotonic() - t:.2f} s after its request")
for s in flood:
    s.close()

# Others are served while the slow reader holds its dump.
slowest = 0.0
while threads[1].is_alive() or threads[2].is_alive():
    slowest = max(slowest, status_seconds())
    time.sleep(1)
for t in threads:
    t.join()
print(f"# idle client closed after {results['idle']} s; the dump's reader that never read "
      f"closed after {results['slow']} s, {len(results['slow_bytes'])} bytes of it sent; "
      f"status meanwhile within {slowest:.2f} s")
if results["idle"] is None or not 29.5 <= results["idle"] <= 33:
    problems.append(f"idle client closed after {results['idle']} s, expected 30 s")
if results["slow"] is None or not 59 <= results["slow"] <= 66:
    problems.append(f"a client that takes no answer closed after {results['slow']} s, "
                    "expected 60 s")
print(f"# the reader taking 20000 bytes every 25 s closed after {results['trickle']} s, "
      f"{results['trickle_bytes']} bytes read")
if results["trickle"] is None or not 59 <= results["trickle"] <= 75:
    problems.append(f"a client taking its dump 20000 bytes every 25 s closed after "
                    f"{results['trickle']} s, expected about 60 s")
if results["slow_bytes"].endswith(b"\n"):
    problems.append("the reader that never read got a whole dump: the test's dump is too small")
if slowest >= 1:
    problems.append(f"status took {slowest:.2f} s while a client held a dump unread")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY

workload_is w running || fail "the workload is not running after the control socket's limits"
stop_soakd 20
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC"
