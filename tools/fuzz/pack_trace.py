#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""pack_trace.py PROCESS_DIR OUT - packs a process directory of a trace into one input of
the reader's fuzz target (fuzz_reader.c): u16 meta length, u32 ring length, meta, ring,
events.  Files are cut to keep inputs small (the fuzzer mutates from there)."""
import os
import struct
import sys


def read(path, limit):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except FileNotFoundError:
        return b""


def main():
    src, out = sys.argv[1], sys.argv[2]
    meta = read(os.path.join(src, "meta"), 65535)
    ring = read(os.path.join(src, "ring"), 28672)
    events = read(os.path.join(src, "events"), 28672)
    with open(out, "wb") as f:
        f.write(struct.pack("<HI", len(meta), len(ring)) + meta + ring + events)


if __name__ == "__main__":
    main()
