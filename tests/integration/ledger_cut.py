#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Where to cut an object ledger journal so that the server holds what its
lost records announced (obj-ledger.sh parts 9 and 10).

usage: ledger_cut.py overwrite JOURNAL
       ledger_cut.py host JOURNAL

The journal is 48-byte records (daemon/object/obj_ledger_int.h, struct
rec), the first a header.  An intent (R_INTEND_PUT or R_INTEND_DELETE) the
server acknowledged (an R_ACK of its slot before another intent) is of one
of three kinds: "new" (a PUT of a slot with no acknowledged object),
"overwrite" (a PUT of one that has one) or "delete".

overwrite: prints the byte offset of the last acknowledged overwrite's
intent, or -1 when there is none.
host: prints the byte offset of the earliest of the last acknowledged
intent of each kind, the number of records and the highest name number a
PUT before that offset intended; or -1, the kinds found and 0 when a kind
is missing.
"""
import struct
import sys

REC = 48
R_INTEND_PUT, R_INTEND_DELETE, R_ACK, R_ABORT = 3, 4, 5, 6


def records(data):
    """(type, slot) of each record after the header."""
    return [struct.unpack_from("<IBBHII", data, o)[1:5:3]
            for o in range(REC, len(data) - REC + 1, REC)]


def acknowledged(recs):
    """(kind, index) of each acknowledged intent, in order."""
    acked, pending = set(), {}
    for i, (typ, slot) in enumerate(recs):
        if typ in (R_INTEND_PUT, R_INTEND_DELETE):
            kind = ("delete" if typ == R_INTEND_DELETE
                    else "overwrite" if slot in acked else "new")
            pending[slot] = (kind, i)
        elif typ == R_ACK and slot in pending:
            kind, at = pending.pop(slot)
            yield kind, at
            if kind == "delete":
                acked.discard(slot)
            else:
                acked.add(slot)
        elif typ == R_ABORT:
            pending.pop(slot, None)


def offset(i):
    return REC * (i + 1)


def main():
    what, path = sys.argv[1:3]
    data = open(path, "rb").read()
    recs = records(data)
    last = {kind: i for kind, i in acknowledged(recs)}
    if what == "overwrite":
        print(offset(last["overwrite"]) if "overwrite" in last else -1)
    elif what == "host":
        if len(last) < 3:
            print(-1, " ".join(sorted(last)), 0)
            return
        cut = min(last.values())
        known = max(struct.unpack_from("<Q", data, offset(i) + 16)[0]
                    for i in range(cut) if recs[i][0] == R_INTEND_PUT)
        print(offset(cut), len(recs), known)
    else:
        sys.exit(f"unknown mode {what!r}")


if __name__ == "__main__":
    main()
