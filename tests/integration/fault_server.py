#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A misbehaving HTTP object server for fault tests.

Serves PUT/GET/HEAD/DELETE from memory; the file named by argv[2] holds
the current mode: "ok", "503" (every request answered 503 Slow Down),
"slow" (every request answered after 3 s), "reset" (the connection
reset with no answer), "putsleep:SECONDS" (PUTs answered after SECONDS),
"deletesleep:SECONDS" (DELETEs answered after SECONDS),
"put:STATUS" (PUTs answered STATUS, e.g. 507 Insufficient Storage, with
an S3 error; the rest served), "forge" (every request answered 403 with
an S3 error whose <Message> holds a newline, a forged soakd log line,
terminal escapes and 100 KB) or "forget" (PUTs answered 201, their
objects not kept: every read of them is a 404) or "list-empty" (every
listing answered 200 with an empty body) or "list-cut" (every listing
answered 200 without a length, the connection closed halfway through)
or "delete-drop" (a DELETE on a connection that served a request before
deletes the object, then resets the connection unanswered, as a server
that closes idle connections can: libcurl sends it again on a new one,
answered 404 when the object is gone) or "put-refuse" (a PUT on a
connection that served a request before stores the object, then the
server stops listening for 1.5 s and resets the connection unanswered:
libcurl's resend on a new connection is refused, so the client sees
"could not connect" for a PUT the server carried out; a line
"put-refuse PATH" on stdout says when) or "put-late:N:SECONDS" (every Nth
PUT answered 504 at once, and carried out SECONDS later, as a gateway whose
backend goes on after it gave up; "put-late PATH" on stdout when it lands)
or "put-late-torn:N:SECONDS" (the same, but what lands is the body's first
16 bytes, its header, and zeros: a backend that crashed mid-write).
A GET of "/BUCKET/?list-type=2" answers a ListObjectsV2 page of the objects
under /BUCKET/ (path-style), from the prefix and continuation token asked,
max-keys at a time.  Prints its port on stdout.
"""
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

objects = {}
lock = threading.Lock()
puts = 0                    # "put-late": PUTs seen
mode_file = sys.argv[2]
refused_until = 0.0         # "put-refuse": no listener before this (monotonic)
listener_closed = threading.Event()


def mode():
    try:
        with open(mode_file) as f:
            return f.read().strip()
    except OSError:
        return "ok"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def misbehave(self):
        m = mode()
        if m == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
            return True
        if m == "slow":
            time.sleep(3)
        if m.startswith("putsleep:") and self.command == "PUT":
            time.sleep(float(m.split(":", 1)[1]))
        if m.startswith("deletesleep:") and self.command == "DELETE":
            time.sleep(float(m.split(":", 1)[1]))
        if m == "forge":
            message = ("Access Denied\n soakd: control socket: stop from uid 0 (pid 1)\r\n"
                       "\x1b[2J\x1b]0;owned\x07\x1b[31mred" + "A" * 100 * 1024)
            body = ("<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>" + message
                    + "</Message><RequestId>\x1b[1mID\n</RequestId></Error>").encode()
            self.send_response(403)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True
        if m.startswith("put:") and self.command == "PUT":
            status = int(m.split(":", 1)[1])
            body = (f"<Error><Code>Refused{status}</Code><Message>PUT refused with {status} "
                    f"by fault_server.py</Message></Error>").encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True
        if m == "503":
            body = b"<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>"
            self.send_response(503)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return True
        return False

    def do_PUT(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length)
        if self.misbehave():
            return
        m = mode()
        if m.startswith("put-late:") or m.startswith("put-late-torn:"):
            global puts
            every, delay = m.split(":")[1:3]
            with lock:
                puts += 1
                late = puts % int(every) == 0
            if late:
                if m.startswith("put-late-torn:"):
                    body = body[:16] + bytes(max(len(body) - 16, 0))
                def land(path=self.path, body=body):
                    with lock:
                        objects[path] = body
                    print(f"put-late {path}", flush=True)
                threading.Timer(float(delay), land).start()
                self.send_response(504)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
        if mode() != "forget":
            with lock:
                objects[self.path] = body
        if mode() == "put-refuse" and getattr(self, "served", 0):
            self.refuse_and_drop()
            return
        if mode() == "put-body":
            # A body with the answer (some gateways say what they stored):
            # not the object's bytes.
            text = b"<stored>" + b"x" * 92
            self.send_response(200)
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            self.served = 1
            return
        self.send_response(201)
        self.send_header("Content-Length", "0")
        self.end_headers()
        self.served = 1

    def refuse_and_drop(self):
        """The listener closed (the main loop does it, and opens a new one
        1.5 s later), then this connection reset unanswered."""
        global refused_until
        refused_until = time.monotonic() + 1.5
        listener_closed.clear()
        threading.Thread(target=self.server.shutdown, daemon=True).start()
        listener_closed.wait(5)
        print(f"put-refuse {self.path}", flush=True)
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def reply(self, with_body):
        if self.misbehave():
            return
        if "list-type=2" in self.path:
            body = b"" if mode() == "list-empty" else self.listing()
            if mode() == "list-cut":
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(body[:len(body) // 2])
                self.close_connection = True
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body:
                self.wfile.write(body)
            return
        with lock:
            body = objects.get(self.path)
        if body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def listing(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        under = "/" + url.path.strip("/") + "/"
        prefix = query.get("prefix", [""])[0]
        after = query.get("continuation-token", [""])[0]
        most = int(query.get("max-keys", ["1000"])[0])
        with lock:
            keys = sorted(unquote(k[len(under):]) for k in objects if k.startswith(under))
        keys = [k for k in keys if k.startswith(prefix) and k > after]
        page, more = keys[:most], len(keys) > most
        xml = ["<?xml version=\"1.0\"?><ListBucketResult>", f"<KeyCount>{len(page)}</KeyCount>"]
        xml += [f"<Contents><Key>{escape(k)}</Key></Contents>" for k in page]
        xml.append(f"<IsTruncated>{'true' if more else 'false'}</IsTruncated>")
        if more:
            xml.append(f"<NextContinuationToken>{escape(page[-1])}</NextContinuationToken>")
        xml.append("</ListBucketResult>")
        return "".join(xml).encode()

    def do_GET(self):
        self.reply(True)
        self.served = 1

    def do_HEAD(self):
        self.reply(False)

    def do_DELETE(self):
        if self.misbehave():
            return
        with lock:
            had = objects.pop(self.path, None) is not None
        if mode() == "delete-drop":
            if getattr(self, "served", 0):
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            self.served = 1
            self.send_response(204 if had else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(204)
        self.end_headers()


port = int(sys.argv[1])
while True:
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    if not port:
        port = server.server_address[1]
        print(port, flush=True)
    server.serve_forever()
    server.server_close()
    listener_closed.set()
    while time.monotonic() < refused_until:
        time.sleep(0.05)
