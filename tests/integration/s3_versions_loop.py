#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""An S3 endpoint with versioning whose version listing never ends, for
obj-s3-sweep.sh.  Objects are kept in memory (PUT, GET, HEAD, DELETE);
PutBucketVersioning answers 200; ListObjectsV2 lists nothing.  Every
"?versions" listing answers IsTruncated true with one entry that is not
soakd's and, by the mode file's word:
  "stuck":   the same NextKeyMarker and NextVersionIdMarker every time
             (a server ignoring key-marker); the key marker holds a
             newline and terminal escapes;
  "endless": markers that move on every time, for ever.
Each version listing adds one to the count in COUNT_FILE.  Prints its port.
Usage: s3_versions_loop.py MODE_FILE COUNT_FILE"""

import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

mode_file, count_file = sys.argv[1:3]
objects = {}
lock = threading.Lock()
listings = 0

EMPTY = (b'<?xml version="1.0" encoding="UTF-8"?>'
         b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
         b'<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>'
         b'</ListBucketResult>')


def versions_page(n):
    with open(mode_file) as f:
        mode = f.read().strip()
    if mode == "stuck":
        key, vid = "other/stuck\n\x1b[31mkey", "v-stuck"
    else:
        key, vid = f"other/endless-{n:09d}", f"v-{n}"
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            '<ListVersionsResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            '<Name>b</Name><IsTruncated>true</IsTruncated>'
            f'<NextKeyMarker>{key}</NextKeyMarker>'
            f'<NextVersionIdMarker>{vid}</NextVersionIdMarker>'
            f'<Version><Key>other/x</Key><VersionId>v{n}</VersionId></Version>'
            '</ListVersionsResult>').encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=(), with_body=True):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if with_body:
            self.wfile.write(body)

    def read(self, with_body):
        global listings
        path, _, query = self.path.partition("?")
        if "versions" in query.split("&") or "versions=" in query:
            with lock:
                listings += 1
                n = listings
                with open(count_file + ".tmp", "w") as f:
                    f.write(f"{n}\n")
                os.replace(count_file + ".tmp", count_file)
            self.answer(200, versions_page(n), with_body=with_body)
        elif "list-type=2" in query:
            self.answer(200, EMPTY, with_body=with_body)
        else:
            with lock:
                body = objects.get(path)
            if body is None:
                self.answer(404, b"<Error><Code>NoSuchKey</Code><Message>none</Message></Error>",
                            with_body=with_body)
            else:
                self.answer(200, body, [("ETag", '"e"'), ("x-amz-version-id", "v1")],
                            with_body=with_body)

    def do_GET(self):
        self.read(True)

    def do_HEAD(self):
        self.read(False)

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path, _, query = self.path.partition("?")
        if not query and path.count("/") > 1:
            with lock:
                objects[path] = body
        self.answer(200, headers=[("ETag", '"e"'), ("x-amz-version-id", "v1")])

    def do_DELETE(self):
        with lock:
            objects.pop(self.path.partition("?")[0], None)
        self.answer(204)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
