#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_prefix.py DUMP MIRROR THREADS [SKIP...] - after a kill, each thread's "spin" values in
trace-dump's output DUMP are a gap-free, duplicate-free prefix 0..k-1 with k at least the
count that thread mirrored into the MIRROR file, minus one.  Thread i of the trace uses
mirror slot i; SKIP lists threads that record nothing (a hog)."""
import collections
import struct
import sys

dump, mirror_file, nthreads = sys.argv[1], sys.argv[2], int(sys.argv[3])
skip = {int(x) for x in sys.argv[4:]}
seqs = collections.defaultdict(list)
for line in open(dump):
    f = line.split()
    if f[3] == 'COUNTER' and f[4] == '"spin"':
        seqs[int(f[1])].append(int(f[5].split('=')[1]))
data = open(mirror_file, 'rb').read()
mirrored = [struct.unpack_from('<Q', data, 8 * i)[0] for i in range(nthreads)]
ok = True
for th in range(nthreads):
    if th in skip:
        continue
    vals = seqs.get(th, [])
    if vals != list(range(len(vals))):
        print(f"thread {th}: not a gap-free prefix", file=sys.stderr)
        ok = False
    if len(vals) < mirrored[th] - 1 or mirrored[th] == 0:
        print(f"thread {th}: {len(vals)} values, mirrored {mirrored[th]}", file=sys.stderr)
        ok = False
    print(f"thread {th}: {len(vals)} values recorded, {mirrored[th]} mirrored")
sys.exit(0 if ok else 1)
