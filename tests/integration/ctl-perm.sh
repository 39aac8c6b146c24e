#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Who may do what over the control socket.  soakd binds its socket 0660 and
# gives it to group soakd; a peer that is neither root nor in that group
# (nobody, with the socket made world-connectable for the test) may read
# status, dumps and the tracing state, but start, stop and trace on/off are
# refused with "permission denied: ... needs root or membership of group
# soakd"; a member of the group (a system user made for the test) may
# start and stop; with "ctl": {"read_only_for_all": false} the stranger may
# not even read.  Changes of state are logged with the peer's uid.
source "$(dirname "$0")/lib.sh"

need_root "creating a group and a user, switching users"
need_cmd setpriv groupadd groupdel useradd userdel stat python3
id nobody >/dev/null 2>&1 || skip_unless_strict "no user nobody"

# The group: made for the test unless the machine has one (then it stays).
if getent group soakd >/dev/null; then
	note "group soakd exists already; the test uses it and leaves it"
else
	groupadd --system soakd || fail "groupadd soakd failed"
	on_exit groupdel soakd
fi
OPERATOR="soakd-op-$$"
useradd --system --no-create-home --shell /usr/sbin/nologin --gid nogroup --groups soakd \
	"$OPERATOR" || fail "useradd $OPERATOR failed"
on_exit userdel "$OPERATOR"

as_nobody=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups)
as_operator=(setpriv --reuid="$OPERATOR" --regid=nogroup --init-groups)
"${as_nobody[@]}" test -x "$SOAKCTL" || skip "nobody cannot run $SOAKCTL (a private build directory?)"
chmod 755 "$WORK"

CFG="$WORK/perm.json"
write_perm_config() {
	cat >"$CFG" <<EOF
{
  "run": {"name": "perm", "duration": "60s", "interval": "1s", "on_finish": "idle"$1},
  "workloads": [
    {"name": "small", "type": "device", "model": "pattern", "targets": ["$WORK/small.dat"],
     "file_size": "8MiB", "read_pct": 100, "block_size": "4KiB", "rate": 200}
  ]
}
EOF
}
write_perm_config ""
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
wait_until 10 "workload small to run" workload_is small running

# The socket as soakd bound it: 0660, group soakd.
perms=$(stat -c '%a %G' "$SOCK")
[[ $perms == "660 soakd" ]] || fail "the socket is '$perms', expected '660 soakd'"
grep -q "control socket $SOCK: mode 0660, group soakd" "$SOAKD_LOG" ||
	fail "soakd did not say it gave the socket to group soakd"
note "socket: $perms"

# run_as WHO... -- SOAKCTL ARGS: its output in OUT, exit status in RC.
run_as() {
	local -n who=$1
	RC=0
	OUT=$(timeout 20 "${who[@]}" "$SOAKCTL" --socket "$SOCK" "${@:2}" 2>&1) || RC=$?
}
expect_ok() {
	run_as "$@"
	((RC == 0)) || fail "$1: soakctl ${*:2} exited $RC: $OUT"
	note "$1: soakctl ${*:2}: ok"
}
# expect_refused WHO CMD ARGS...: exit 1 and the permission message.
expect_refused() {
	run_as "$@"
	local what=$2
	[[ $2 == trace ]] && what="trace $3"
	((RC == 1)) || fail "$1: soakctl ${*:2} exited $RC (expected 1, refused): $OUT"
	[[ $OUT == *"permission denied: $what needs root or membership of group soakd"* ]] ||
		fail "$1: soakctl ${*:2} said: $OUT"
	note "$1: soakctl ${*:2}: $OUT"
}

# Without access to the socket file, nobody cannot even connect.
run_as as_nobody status
((RC != 0)) || fail "nobody reached a 0660 socket: $OUT"
note "as_nobody: status on the 0660 socket: $OUT"

# World-connectable: nobody reads, but changes nothing.
chmod 0666 "$SOCK"
expect_ok as_nobody status
expect_ok as_nobody dump --format json
expect_ok as_nobody trace
expect_refused as_nobody stop small
expect_refused as_nobody stop
expect_refused as_nobody start small
expect_refused as_nobody trace on
expect_refused as_nobody trace off
expect_refused as_nobody reload
[[ $(workload_state small) == running ]] || fail "small is no longer running after nobody's attempts"
grep -q "refused stop from uid $(id -u nobody)" "$SOAKD_LOG" || fail "the refusal was not logged"

# A member of group soakd (a supplementary group, not its primary one)
# drives the run, and is named in the log.
expect_ok as_operator stop small
wait_until 10 "small to stop" workload_is small stopped
expect_ok as_operator start small
wait_until 10 "small to run again" workload_is small running
grep -q "control socket: stop from uid $(id -u "$OPERATOR")" "$SOAKD_LOG" ||
	fail "the operator's stop was not logged with its uid"
# Root, of course.
ctl stop small >/dev/null || fail "root cannot stop small"
wait_until 10 "small to stop" workload_is small stopped

# A connection's rights are fixed when it connects: root's connection,
# kept by a process that then becomes nobody, still starts and stops;
# nobody's own connection, and one nobody made and passed to root
# (SCM_RIGHTS), may not.
python3 - "$SOCK" "$(id -u nobody)" "$(id -g nobody)" <<'PY' || fail "rights of a passed connection"
import json, os, socket, sys

path, uid, gid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def ask(s, req):
    s.sendall(json.dumps(req).encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return json.loads(buf)


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    return s


roots = connect()
parent_end, child_end = socket.socketpair()
pid = os.fork()
if pid == 0:
    status = 1
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        own = connect()
        refused = ask(own, {"cmd": "start", "workloads": ["small"]})
        kept = ask(roots, {"cmd": "start", "workloads": ["small"]})
        print(f"# as nobody, own connection: {refused}; root's connection: {kept}")
        passed = connect()
        socket.send_fds(child_end, [b"x"], [passed.fileno()])
        ok = refused.get("ok") is False and "permission denied" in refused.get("error", "")
        ok = ok and kept.get("ok") is True
        status = 0 if ok else 1
    finally:
        os._exit(status)
_, fds, _, _ = socket.recv_fds(parent_end, 1, 1)
_, child_status = os.waitpid(pid, 0)
theirs = socket.socket(fileno=fds[0])
theirs.settimeout(10)
reply = ask(theirs, {"cmd": "stop", "workloads": ["small"]})
print(f"# as root, on nobody's connection: {reply}")
if child_status != 0:
    sys.exit("nobody was refused on root's connection, or allowed on its own")
if reply.get("ok") is not False or "permission denied" not in reply.get("error", ""):
    sys.exit(f"root on nobody's connection stopped a workload: {reply}")
PY
wait_until 10 "small to run (started on root's connection)" workload_is small running

# Signals: the kernel lets only root (and soakd's own user) signal soakd.
rc=0
"${as_nobody[@]}" kill -HUP "$SOAKD_PID" 2>"$WORK/kill.txt" || rc=$?
((rc != 0)) && grep -q 'Operation not permitted' "$WORK/kill.txt" ||
	fail "nobody signalled soakd (exit $rc): $(cat "$WORK/kill.txt")"
is_alive "$SOAKD_PID" || fail "soakd died"
note "nobody: kill -HUP soakd: $(cat "$WORK/kill.txt")"
stop_soakd 10

# "read_only_for_all": false: the stranger may not read either.
write_perm_config ', "ctl": {"read_only_for_all": false}'
rm -rf "$WORK/state"
start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
wait_until 15 "the control socket" ctl_answers
chmod 0666 "$SOCK"
run_as as_nobody status
((RC == 1)) || fail "nobody: status with read_only_for_all false exited $RC: $OUT"
[[ $OUT == *"permission denied: status needs root or membership of group soakd"*read_only_for_all* ]] ||
	fail "nobody: status with read_only_for_all false said: $OUT"
note "as_nobody: status with read_only_for_all false: $OUT"
expect_refused as_nobody stop
expect_ok as_operator status
stop_soakd 10
((SOAKD_RC == 0)) || fail "soakd exited $SOAKD_RC after SIGTERM"

# Without the group, soakd says who may connect.
if [[ ${_cleanups[*]} == *"groupdel soakd"* ]]; then
	userdel "$OPERATOR" && groupdel soakd || fail "cannot remove the test's group"
	_cleanups=("${_cleanups[@]/userdel $OPERATOR/true}")
	_cleanups=("${_cleanups[@]/groupdel soakd/true}")
	write_perm_config ""
	rm -rf "$WORK/state"
	start_soakd --config "$CFG" --socket "$SOCK" --state-dir "$WORK/state" --no-table
	wait_until 15 "the control socket" ctl_answers
	grep -q "group soakd does not exist, so only root and soakd's own user may connect" \
		"$SOAKD_LOG" || fail "soakd did not say that group soakd is missing"
	[[ $(stat -c '%a' "$SOCK") == 660 ]] || fail "the socket is not 0660 without the group"
	chmod 0666 "$SOCK"
	expect_refused as_nobody stop
	stop_soakd 10
fi
note "ok"
