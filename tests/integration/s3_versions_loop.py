#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""An S3 endpoint with versioning whose version listing never ends, for
obj-s3-sweep.sh, obj-sweep-stop.sh and obj-list-memory.sh.  Objects are
kept in memory (PUT, GET, HEAD, DELETE); PutBucketVersioning answers 200;
ListObjectsV2 lists nothing.  Every "?versions" listing answers
IsTruncated true with one entry that is not soakd's and, by the mode
file's word:
  "stuck":        the same NextKeyMarker and NextVersionIdMarker every time
                  (a server ignoring key-marker); the key marker holds a
                  newline and terminal escapes;
  "endless":      markers that move on every time, for ever;
  "endless-list": the same, and ListObjectsV2 too never ends: every page
                  truncated, with a token that moves on;
  "huge-list":    as "endless", and the first ListObjectsV2 with a prefix
                  (not the probe's) is huge: 8 pages
                  of 131072 keys of thread 0 under the prefix asked for
                  (sequential names: PREFIX + "t0-" + 12 digits), 10 MiB
                  a page; later ones list nothing;
  "hold-delete":  as "endless", and every DELETE is held 30 s before its
                  answer (a cleanup that cannot end).
Each version listing adds one to the count in COUNT_FILE, each
ListObjectsV2 page one to the count in COUNT_FILE.list, each DELETE one to
the count in COUNT_FILE.delete.  Prints its port.
Usage: s3_versions_loop.py MODE_FILE COUNT_FILE"""

import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

mode_file, count_file = sys.argv[1:3]
objects = {}
lock = threading.Lock()
listings = 0
list_pages = 0
deletes = 0
huge_served = False
HUGE_PAGES, HUGE_KEYS = 8, 131072

EMPTY = (b'<?xml version="1.0" encoding="UTF-8"?>'
         b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
         b'<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>'
         b'</ListBucketResult>')


def mode():
    with open(mode_file) as f:
        return f.read().strip()


def count(path, n):
    with open(path + ".tmp", "w") as f:
        f.write(f"{n}\n")
    os.replace(path + ".tmp", path)


def list_page(query):
    """A ListObjectsV2 page, by the mode."""
    global list_pages, huge_served
    q = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    token = q.get("continuation-token", "")
    with lock:
        list_pages += 1
        count(count_file + ".list", list_pages)
        page = None
        if mode() == "endless-list":
            page = (int(token[1:]) + 1 if token.startswith("e") else 0, None)
        elif mode() == "huge-list" and (token.startswith("h") or
                                        (q.get("prefix") and not huge_served)):
            huge_served = True
            page = (int(token[1:]) + 1 if token.startswith("h") else 0, q.get("prefix", ""))
    if page is None:
        return EMPTY
    n, prefix = page
    if prefix is None:
        return ('<?xml version="1.0" encoding="UTF-8"?>'
                '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                '<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>true</IsTruncated>'
                f'<NextContinuationToken>e{n}</NextContinuationToken>'
                '</ListBucketResult>').encode()
    first = n * HUGE_KEYS
    keys = "".join(f"<Contents><Key>{prefix}t0-{i:012d}</Key><Size>1</Size></Contents>"
                   for i in range(first + 1, first + HUGE_KEYS + 1))
    more = n + 1 < HUGE_PAGES
    return ('<?xml version="1.0" encoding="UTF-8"?>'
            '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
            f'<Name>b</Name><KeyCount>{HUGE_KEYS}</KeyCount>'
            f'<IsTruncated>{"true" if more else "false"}</IsTruncated>'
            + (f'<NextContinuationToken>h{n}</NextContinuationToken>' if more else "")
            + keys + '</ListBucketResult>').encode()


def versions_page(n):
    if mode() == "stuck":
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
                count(count_file, n)
            self.answer(200, versions_page(n), with_body=with_body)
        elif "list-type=2" in query:
            self.answer(200, list_page(query), with_body=with_body)
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
        global deletes
        with lock:
            deletes += 1
            count(count_file + ".delete", deletes)
        if mode() == "hold-delete":
            time.sleep(30)
        with lock:
            objects.pop(self.path.partition("?")[0], None)
        self.answer(204)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
