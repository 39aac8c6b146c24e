#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Floods soakd's control socket for ctl-flood.sh.

    ctl_flood.py SOCKET SECONDS CONNECTIONS STATS_JSON [ROLE,ROLE...]

Keeps CONNECTIONS connections open (reopening each one soakd closes or
refuses, at most CONNECT_RATE a second) for SECONDS, each playing a role:

  garbage         sends lines of garbage as fast as soakd takes them, reads the errors
  garbage_noread  the same, never reading: soakd must stop reading and time it out
  half_open       sends the start of a request, then nothing
  silent          connects and says nothing
  slow            a request, one byte per second
  oversized       a line longer than soakd takes
  shut            a request, then shutdown(SHUT_WR), never reading the answer
  pipeline        200 requests in one write, then reads the answers

and writes what happened to STATS_JSON.  Never blocks: every socket is
non-blocking, so a hung soakd shows up as missing answers, not a hung test.

    ctl_flood.py --storm SOCKET SECONDS RATE STATS_JSON

A connection storm instead: RATE connections a second (as many as it can
if that is more) for SECONDS, each sending a few status requests and
closing at once without reading, as a script gone wrong in a loop would;
every hundredth reads its answer, to see what soakd says.
"""
import errno
import json
import os
import selectors
import socket
import sys
import time

ALL_ROLES = ["garbage", "garbage_noread", "half_open", "silent", "slow", "oversized", "shut",
             "pipeline"]
READS = {"garbage", "half_open", "silent", "slow", "oversized", "pipeline"}
SLOW_REQUEST = b'{"cmd":"status"}\n'
CONNECT_RATE = 200


class Conn:
    def __init__(self, sock, role, now):
        self.sock = sock
        self.role = role
        self.opened = now
        self.next_send = now
        self.sent = 0
        self.inbuf = b""
        self.closed_by_soakd = False


def storm(path, seconds, rate, stats_path):
    stats = {"opened": 0, "connect_eagain": 0, "connect_failed": 0, "sampled": 0,
             "sampled_ok": 0, "sampled_refused": 0, "sampled_messages": []}
    requests = b'{"cmd":"status"}\n' * 4
    start = time.monotonic()
    end = start + seconds
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if stats["opened"] + stats["connect_eagain"] >= rate * (now - start):
            time.sleep(0.0005)
            continue
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except BlockingIOError:
            # The listen backlog is full: soakd is behind.
            stats["connect_eagain"] += 1
            s.close()
            continue
        except OSError:
            stats["connect_failed"] += 1
            s.close()
            continue
        stats["opened"] += 1
        try:
            s.send(requests)
        except OSError:
            pass
        if stats["opened"] % 100 == 0:
            stats["sampled"] += 1
            s.setblocking(True)
            s.settimeout(1.0)
            try:
                line = s.makefile("rb").readline()
                reply = json.loads(line) if line else {}
                if reply.get("ok") is True:
                    stats["sampled_ok"] += 1
                elif "budget" in reply.get("error", ""):
                    stats["sampled_refused"] += 1
                msg = reply.get("error")
                if msg and msg not in stats["sampled_messages"] and len(stats["sampled_messages"]) < 3:
                    stats["sampled_messages"].append(msg)
            except (OSError, ValueError):
                pass
        s.close()
    stats["seconds"] = time.monotonic() - start
    with open(stats_path, "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)


def main():
    if sys.argv[1] == "--storm":
        storm(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
        return
    path, seconds, target, stats_path = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    roles = sys.argv[5].split(",") if len(sys.argv) > 5 else ALL_ROLES
    sel = selectors.DefaultSelector()
    conns = []
    stats = {
        "opened": 0, "connect_eagain": 0, "connect_failed": 0, "refused_busy": 0,
        "error_lines": 0, "ok_lines": 0, "over_budget": 0, "closed_by_soakd": {}, "lifetime_max": {},
        "lifetime_min": {}, "still_open_at_end": {}, "busy_messages": [],
    }
    role_i = 0
    start = time.monotonic()
    end = start + seconds

    def closed(c, now):
        if c.closed_by_soakd:
            return
        c.closed_by_soakd = True
        life = now - c.opened
        r = c.role
        stats["closed_by_soakd"][r] = stats["closed_by_soakd"].get(r, 0) + 1
        stats["lifetime_max"][r] = max(stats["lifetime_max"].get(r, 0), life)
        stats["lifetime_min"][r] = min(stats["lifetime_min"].get(r, 1e9), life)

    def drop(c):
        if c.role in READS or c.role == "busy":
            try:
                sel.unregister(c.sock)
            except (KeyError, ValueError):
                pass
        c.sock.close()
        conns.remove(c)

    def send(c, data, now):
        try:
            n = c.sock.send(data)
            c.sent += n
            return n
        except BlockingIOError:
            return 0
        except (BrokenPipeError, ConnectionResetError, OSError):
            closed(c, now)
            return -1

    while time.monotonic() < end:
        now = time.monotonic()
        opened_now = 0
        while len(conns) < target and stats["opened"] < CONNECT_RATE * (now - start) + target:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(path)
            except BlockingIOError:
                # The listen backlog is full: soakd is behind; try later.
                stats["connect_eagain"] += 1
                s.close()
                break
            except OSError as e:
                stats["connect_failed"] += 1
                stats.setdefault("connect_errors", []).append(os.strerror(e.errno or 0))
                s.close()
                break
            # Every connection reads at first, to see a "too many
            # clients"; one that soakd keeps then plays the next role, so
            # that the few a uid may hold play every role.
            c = Conn(s, "busy", now)
            conns.append(c)
            stats["opened"] += 1
            opened_now += 1
            sel.register(s, selectors.EVENT_READ, c)

        for key, _ in sel.select(timeout=0.02):
            c = key.data
            try:
                data = c.sock.recv(65536)
            except BlockingIOError:
                continue
            except (ConnectionResetError, OSError):
                data = b""
            if not data:
                closed(c, time.monotonic())
                drop(c)
                continue
            c.inbuf += data
            *lines, c.inbuf = c.inbuf.split(b"\n")
            for line in lines:
                try:
                    reply = json.loads(line)
                except ValueError:
                    stats.setdefault("bad_json", 0)
                    stats["bad_json"] += 1
                    continue
                if reply.get("ok") is True:
                    stats["ok_lines"] += 1
                else:
                    stats["error_lines"] += 1
                    msg = reply.get("error", "")
                    if "budget" in msg:
                        stats["over_budget"] += 1
                    if "too many" in msg:
                        stats["refused_busy"] += 1
                        if len(stats["busy_messages"]) < 3 and msg not in stats["busy_messages"]:
                            stats["busy_messages"].append(msg)

        now = time.monotonic()
        for c in list(conns):
            if c.closed_by_soakd:
                continue
            if c.role == "busy":
                if now - c.opened > 0.3:
                    c.role = roles[role_i % len(roles)]
                    role_i += 1
                    c.opened = now
                    if c.role not in READS:
                        sel.unregister(c.sock)
                continue
            if now < c.next_send:
                continue
            if c.role in ("garbage", "garbage_noread"):
                send(c, b"this is not json at all\n" * 40, now)
                c.next_send = now + 0.05
            elif c.role == "half_open":
                if c.sent == 0:
                    send(c, b'{"cmd":"sta', now)
                c.next_send = now + 1e9
            elif c.role == "silent":
                c.next_send = now + 1e9
            elif c.role == "slow":
                send(c, SLOW_REQUEST[c.sent % len(SLOW_REQUEST):][:1], now)
                c.next_send = now + 1.0
            elif c.role == "oversized":
                if send(c, b"x" * 65536, now) == 0:
                    c.next_send = now + 0.05
            elif c.role == "shut":
                if send(c, SLOW_REQUEST, now) > 0:
                    c.sock.shutdown(socket.SHUT_WR)
                c.next_send = now + 1e9
            elif c.role == "pipeline":
                if c.sent == 0:
                    send(c, b'{"cmd":"status"}\n' * 200, now)
                c.next_send = now + 1e9
        # Connections that cannot notice soakd closing them (they do not
        # read) are replaced once soakd's timeouts must have closed them.
        for c in list(conns):
            if c.closed_by_soakd or (c.role in ("garbage_noread", "shut") and now - c.opened > 15):
                drop(c)

    for c in list(conns):
        r = c.role
        stats["still_open_at_end"][r] = stats["still_open_at_end"].get(r, 0) + 1
        drop(c)
    with open(stats_path, "w") as f:
        json.dump(stats, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
