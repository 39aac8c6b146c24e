#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Runs a command and writes its rusage, once it has been waited for, to a file:

    rusage.py OUT PIDFILE COMMAND [ARG...]

PIDFILE gets the command's pid (the command itself, not a wrapper, so
signals sent to it reach it).  OUT gets one line, "user_s sys_s nvcsw nivcsw
maxrss_kib", from wait4: all threads of the command, including those that
have exited (which /proc/PID/task no longer shows), and its waited-for
children.  Exits with the command's status (128+N for signal N).
"""
import os
import sys

out, pidfile, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        print(f"rusage.py: cannot run {argv[0]}: {e}", file=sys.stderr)
        os._exit(127)
with open(pidfile, "w") as f:
    f.write(f"{pid}\n")
while True:
    try:
        _, status, ru = os.wait4(pid, 0)
        break
    except InterruptedError:
        continue
with open(out, "w") as f:
    f.write(f"{ru.ru_utime:.6f} {ru.ru_stime:.6f} {ru.ru_nvcsw} {ru.ru_nivcsw} {ru.ru_maxrss}\n")
sys.exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status))
