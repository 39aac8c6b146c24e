#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The control socket under misuse: garbage, unknown commands, wrong argument
# types, unknown workloads, an oversized line, truncated requests and idle
# clients.  Every bad request gets {"ok":false,"error":...} (an oversized
# one may instead close the connection, after an error line if any), and
# soakd keeps answering everyone else.  soakctl's own errors are readable.
source "$(dirname "$0")/lib.sh"

need_cmd python3

# Help texts are printed as they are written: no printf escapes left in.
for prog in "$SOAKCTL" "$SOAKD"; do
	"$prog" --help >"$WORK/help.txt" 2>&1 || fail "$prog --help exited $?"
	grep -n '%%\|\\n' "$WORK/help.txt" && fail "$prog --help prints escapes literally"
done

CFG="$WORK/ctl.json"
write_file_config "$CFG" ctl small 60s idle 100
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state"
wait_until 15 "the control socket" ctl_answers

python3 - "$SOCK" <<'PY' || fail "raw protocol checks failed"
import json, socket, sys, time

path = sys.argv[1]
MAX_LINE = 64 * 1024
problems = []


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    return s


def read_until_eof_or_lines(s, want_lines, deadline_s=5):
    """Read until want_lines lines arrived (None: until EOF).  Returns
    (lines, closed) where closed says whether the peer closed or reset."""
    buf, closed = b"", False
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if want_lines is not None and buf.count(b"\n") >= want_lines:
            break
        s.settimeout(max(0.05, end - time.monotonic()))
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except (ConnectionResetError, BrokenPipeError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        buf += chunk
    lines = [l for l in buf.split(b"\n") if l]
    return [l.decode("utf-8", "replace") for l in lines], closed


def expect_error(label, payload, mention=None):
    s = connect()
    s.sendall(payload)
    lines, _ = read_until_eof_or_lines(s, 1)
    s.close()
    if not lines:
        problems.append(f"{label}: no response")
        return
    try:
        reply = json.loads(lines[0])
    except ValueError:
        problems.append(f"{label}: response is not JSON: {lines[0][:200]!r}")
        return
    if reply.get("ok") is not False or not isinstance(reply.get("error"), str) or not reply["error"]:
        problems.append(f"{label}: expected ok:false with an error message, got {reply}")
    elif mention and mention not in reply["error"]:
        problems.append(f"{label}: error does not mention {mention!r}: {reply['error']!r}")
    else:
        print(f"# {label}: {reply['error']}")


expect_error("garbage", b"this is not json\n")
expect_error("not an object", b"[1, 2, 3]\n")
expect_error("unknown command", b'{"cmd":"frobnicate"}\n', "frobnicate")
expect_error("no command", b'{"workloads":["small"]}\n')
expect_error("wrong argument type", b'{"cmd":"start","workloads":"small"}\n')
expect_error("unknown workload", b'{"cmd":"stop","workloads":["no-such-workload"]}\n',
             "no-such-workload")
expect_error("unknown dump format", b'{"cmd":"dump","format":"xml"}\n')

# An oversized line: an error line and/or the connection closed, promptly.
s = connect()
try:
    s.sendall(b'{"cmd":"status","pad":"' + b"x" * (MAX_LINE + 4096) + b'"}\n')
except (BrokenPipeError, ConnectionResetError):
    pass
lines, closed = read_until_eof_or_lines(s, None)
s.close()
if not closed:
    problems.append("oversized line: connection still open after 5 s")
for line in lines:
    try:
        reply = json.loads(line)
    except ValueError:
        problems.append(f"oversized line: response is not JSON: {line[:200]!r}")
        continue
    if reply.get("ok") is not False or not reply.get("error"):
        problems.append(f"oversized line: expected ok:false, got {reply}")
print(f"# oversized line: {len(lines)} response line(s), then closed")

# Two requests in one write: two answers, in order.
s = connect()
s.sendall(b'{"cmd":"status"}\n{"cmd":"frobnicate"}\n')
lines, _ = read_until_eof_or_lines(s, 2)
s.close()
replies = [json.loads(l) for l in lines]
if [r.get("ok") for r in replies] != [True, False]:
    problems.append(f"pipelined requests: expected ok true then false, got {replies}")

# A request, then half-close: answered, then closed.
s = connect()
s.sendall(b'{"cmd":"status"}\n')
s.shutdown(socket.SHUT_WR)
lines, closed = read_until_eof_or_lines(s, None)
s.close()
if len(lines) != 1 or json.loads(lines[0]).get("ok") is not True or not closed:
    problems.append(f"request then half-close: expected one ok:true line then EOF, got {lines}, closed={closed}")

# A truncated request, then half-close: an error or a plain close, never a hang.
s = connect()
s.sendall(b'{"cmd":"sta')
s.shutdown(socket.SHUT_WR)
lines, closed = read_until_eof_or_lines(s, None)
s.close()
if not closed:
    problems.append("truncated request then half-close: connection still open after 5 s")
for line in lines:
    if json.loads(line).get("ok") is not False:
        problems.append(f"truncated request then half-close: expected ok:false, got {line}")

# An idle client must not hold up anyone else.
idle = connect()
s = connect()
s.sendall(b'{"cmd":"status"}\n')
lines, _ = read_until_eof_or_lines(s, 1)
s.close()
idle.close()
if not lines or json.loads(lines[0]).get("ok") is not True:
    problems.append(f"status while another client sits idle: got {lines}")

if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY

# Still alive and answering.
workload_state small >/dev/null || fail "soakd does not answer status after the bad requests"

# soakctl: errors for people.
rc=0
out=$(timeout 10 "$SOAKCTL" --socket "$WORK/no-such.sock" status 2>&1) || rc=$?
((rc != 0)) || fail "soakctl against a missing socket exited 0"
[[ $out == *"cannot connect"* ]] || fail "soakctl against a missing socket said: $out"
note "missing socket: $out"

rc=0
out=$(ctl stop no-such-workload 2>&1) || rc=$?
((rc != 0)) || fail "soakctl stop no-such-workload exited 0"
[[ $out == *no-such-workload* ]] || fail "soakctl stop no-such-workload said: $out"
note "unknown workload: $out"

rc=0
out=$(timeout 10 "$SOAKCTL" --socket "$SOCK" frobnicate 2>&1) || rc=$?
((rc != 0)) || fail "soakctl frobnicate exited 0"
note "unknown command: $out"

# "debug stall", the watchdog test's hang, exists only in builds with
# -Dtest_hooks=true (SECURITY.md): any other soakd answers it as unknown,
# at once, and does not stall.
hooks=$(meson introspect --buildoptions "$BUILDDIR" | python3 -c '
import json, sys
print(next((o["value"] for o in json.load(sys.stdin) if o["name"] == "test_hooks"), "absent"))')
if [[ $hooks == False ]]; then
	rc=0
	t0=$(now_ns)
	out=$(timeout 10 "$SOAKCTL" --socket "$SOCK" debug stall 5s 2>&1) || rc=$?
	((rc != 0)) || fail "soakctl debug stall exited 0 on a soakd built without test hooks: $out"
	[[ $out == *"unknown command 'debug'"* ]] ||
		fail "soakctl debug stall on a soakd built without test hooks said: $out"
	ctl status >/dev/null || fail "status failed after debug stall"
	ms=$((($(now_ns) - t0) / 1000000))
	((ms < 2000)) || fail "debug stall and a status took $ms ms: the loop stalled"
	grep -q 'main loop stalls' "$SOAKD_LOG" && fail "soakd logged a stall it should not have"
	note "debug without test hooks: $out"
else
	note "this build has test_hooks=$hooks: the debug command is not checked here"
fi

stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"
note "ok"
