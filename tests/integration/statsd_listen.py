#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# A StatsD server's receiving end for tests: binds UDP on 127.0.0.1 (an
# ephemeral port, written to PORT_FILE once listening) and appends every
# datagram to OUT as one JSON line {"t": seconds, "size": bytes, "lines": [...]}.
# Runs until SIGTERM.
import json
import os
import signal
import socket
import sys
import time

# Killed by the test when it is done: that is a normal end.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

port_file, out = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 0))
with open(port_file + ".tmp", "w") as f:
    f.write(str(sock.getsockname()[1]))
os.rename(port_file + ".tmp", port_file)
with open(out, "a") as f:
    while True:
        data = sock.recv(65536)
        f.write(json.dumps({"t": time.time(), "size": len(data),
                            "lines": data.decode().split("\n")}) + "\n")
        f.flush()
