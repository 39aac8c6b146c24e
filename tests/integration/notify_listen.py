#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Stand-in for systemd's notification socket.

notify_listen.py SOCKET OUT binds an AF_UNIX datagram socket at SOCKET with
SO_PASSCRED, as systemd does, and appends one JSON line per datagram to OUT:
{"t": seconds since start (monotonic), "pid": sender's pid, "msg": text}.
On SIGTERM it reads whatever is still queued and exits, so nothing a
process sent before it exited is lost.  File descriptors passed along
(systemd-notify's BARRIER=1 sends one) are closed.
"""
import array
import json
import os
import select
import signal
import socket
import struct
import sys
import time

SCM_CREDENTIALS = getattr(socket, "SCM_CREDENTIALS", 2)
SO_PASSCRED = getattr(socket, "SO_PASSCRED", 16)


def main():
    path, out_path = sys.argv[1], sys.argv[2]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, SO_PASSCRED, 1)
    sock.bind(path)
    sock.setblocking(False)
    start = time.monotonic()
    stopping = False

    def on_term(signum, frame):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, on_term)
    with open(out_path, "a", buffering=1) as out:
        while True:
            try:
                ready, _, _ = select.select([sock], [], [], 0.1)
            except InterruptedError:
                ready = [sock]
            if not ready and stopping:
                break
            if not ready:
                continue
            try:
                data, ancdata, _, _ = sock.recvmsg(
                    65536, socket.CMSG_SPACE(12) + socket.CMSG_SPACE(4 * 16))
            except BlockingIOError:
                continue
            pid = None
            for level, kind, payload in ancdata:
                if level == socket.SOL_SOCKET and kind == SCM_CREDENTIALS:
                    pid = struct.unpack("iII", payload[:12])[0]
                elif level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds = array.array("i")
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                    for fd in fds:
                        os.close(fd)
            record = {"t": round(time.monotonic() - start, 3), "pid": pid,
                      "msg": data.decode("utf-8", "replace")}
            out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
