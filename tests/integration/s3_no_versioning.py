#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""An S3 endpoint without versioning, for obj-s3-versioning.sh: any bucket
lists as empty, and PutBucketVersioning answers 501 NotImplemented (as
S3 gateways over plain file systems do).  Usage: s3_no_versioning.py PORT"""

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

EMPTY = (b'<?xml version="1.0" encoding="UTF-8"?>'
         b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
         b'<Name>b</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated>'
         b'</ListBucketResult>')
NOT_IMPLEMENTED = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code>'
                   b'<Message>A header you provided implies functionality that is not '
                   b'implemented</Message></Error>')


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(200, EMPTY)

    def do_PUT(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if "versioning" in self.path.split("?", 1)[-1]:
            self.answer(501, NOT_IMPLEMENTED)
        else:
            self.answer(200, b"")

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
