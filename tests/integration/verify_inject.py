#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Damage a verified loop device behind soakd's back, one kind at a time,
and wait for soakd to report each where it happened (dev-verify.sh).

usage: verify_inject.py BACKING MAP SOAKCTL SOCKET LOG KIND...

BACKING is the loop device's file, MAP soakd's generation map of it (one
byte a 4 KiB block).  For each KIND (corrupt, misdirected, torn, stale) a
block is damaged; the device keeps running a mix of reads and writes, so a
write may overwrite the damage before a read sees it: then another block
is tried.  A kind is found when its class's count grows and soakd's log
names, with that class, the offset of a block damaged for it.  Any such
block counts, not only the last: a read may find an earlier one after its
attempt gave up, and soakd logs only the first few failures of a class,
so a later block could then never be named.
"""
import json
import os
import random
import subprocess
import sys
import time

B = 4096
backing, map_path, soakctl, sock, log = sys.argv[1:6]
kinds = sys.argv[6:]
fd = os.open(backing, os.O_RDWR)
n_blocks = os.path.getsize(map_path)
rng = random.Random(15)


def gen(b):
    with open(map_path, "rb") as m:
        m.seek(b)
        return m.read(1)[0]


def counts():
    out = subprocess.run([soakctl, "--socket", sock, "status", "--json"], check=True,
                         capture_output=True, timeout=20).stdout
    total = {}
    for op in json.loads(out)["workloads"][0]["ops"].values():
        for k, v in op.get("verify_total", {}).items():
            total[k] = total.get(k, 0) + v
    return total


def read_block(b):
    return os.pread(fd, B, b * B)


def write_block(b, data):
    assert len(data) == B
    os.pwrite(fd, data, b * B)


def next_gen(g):
    return 1 if g in (0, 255) else g + 1


def just_rewritten():
    """A block soakd wrote once in the last moment, with its contents from
    before that write (their header's generation the map's old one)."""
    with open(map_path, "rb") as m:
        before = m.read()
    snap = os.pread(fd, n_blocks * B, 0)
    time.sleep(0.2)
    with open(map_path, "rb") as m:
        after = m.read()
    cands = [b for b in range(8, n_blocks - 8)
             if after[b] == next_gen(before[b]) and snap[b * B:b * B + 8] == b"SOAKVFY1"
             and snap[b * B + 48] == before[b]]
    rng.shuffle(cands)
    for b in cands:
        cur = read_block(b)
        # The write has landed, and nothing since.
        if cur[48] == after[b] and gen(b) == after[b]:
            return b, snap[b * B:(b + 1) * B], cur
    return None, None, None


def damage(kind):
    """Damages one block; returns its offset, or None to try again."""
    b = rng.randrange(8, n_blocks - 8)
    if kind == "corrupt":
        data = bytearray(read_block(b))
        data[1000:1008] = b"soakd!!!"
        write_block(b, bytes(data))
    elif kind == "misdirected":
        # Another block's current contents, at b.
        write_block(b, read_block(b + 3))
    elif kind in ("stale", "torn"):
        b, old, new = just_rewritten()
        if b is None:
            return None
        # A lost write: the block from before it, or half of it.
        write_block(b, old if kind == "stale" else new[:B // 2] + old[B // 2:])
    return b * B


def found(kind, offsets, before, limit=8):
    """Waits for the class count to grow and the log to name one of the
    offsets damaged for this kind; returns that offset, or None."""
    end = time.time() + limit
    needles = {f"verify: {kind} block at offset {o}:": o for o in offsets}
    while time.time() < end:
        if counts().get(kind, 0) > before:
            text = open(log, errors="replace").read()
            for needle, o in needles.items():
                if needle in text:
                    return o
        time.sleep(0.1)
    return None


status = 0
for kind in kinds:
    ok = False
    before = counts().get(kind, 0)
    offsets = []
    for attempt in range(20):
        offset = damage(kind)
        if offset is None:
            continue
        offsets.append(offset)
        offset = found(kind, offsets, before)
        if offset is not None:
            print(f"# {kind}: reported at offset {offset} (attempt {attempt + 1})")
            ok = True
            break
    if not ok:
        print(f"{kind}: never reported in 20 attempts", file=sys.stderr)
        status = 1
sys.exit(status)
