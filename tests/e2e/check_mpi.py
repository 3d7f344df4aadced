#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_mpi.py TRACE DUMP OUT RANKS - an MPI trace against the program's own ground truth.

TRACE is the trace directory, DUMP what trace-dump printed of it, OUT the program's output
with one line per rank "truth RANK sends=N send_bytes=B recvs=N recv_bytes=B colls=N"
(tests/programs/mpi_patterns.c and .f90), RANKS the size of MPI_COMM_WORLD.  Checks that
every process directory says its rank (meta mpi_rank, mpi_size), that each rank's
messages, bytes and collectives in the trace equal the program's counts, and that every send
is matched by exactly one receive (by communicator, ranks translated through the recorded
communicator members, tag, bytes).  Exits non-zero with the first difference."""
import collections
import glob
import os
import sys


def main():
    trace, dump, out, nranks = sys.argv[1:5]
    nranks = int(nranks)
    rank_of = {}
    for meta in glob.glob(os.path.join(trace, '*', 'meta')):
        size = None
        for line in open(meta, errors='replace'):
            if line.startswith('mpi_rank '):
                rank_of[os.path.basename(os.path.dirname(meta))] = int(line.split()[1])
            elif line.startswith('mpi_size '):
                size = int(line.split()[1])
        assert size == nranks, '%s: mpi_size %s' % (meta, size)
    assert sorted(rank_of.values()) == list(range(nranks)), 'ranks %s' % rank_of
    truth = {}
    for line in open(out):
        f = line.split()
        if f[:1] == ['truth']:
            truth[int(f[1])] = {k: int(v) for k, v in (x.split('=') for x in f[2:])}
    assert sorted(truth) == list(range(nranks)), 'truth lines of ranks %s' % sorted(truth)
    got = {r: collections.Counter() for r in range(nranks)}
    members = {1: list(range(nranks))}  # communicator id -> world ranks
    sends, recvs = [], []
    for line in open(dump):
        f = line.split()
        if len(f) < 4 or f[3] not in ('MPI_P2P', 'MPI_COLL', 'MPI_COMM'):
            continue
        rank = rank_of[f[0]]
        kv = dict(x.split('=', 1) for x in f[4:] if '=' in x)
        if f[3] == 'MPI_COMM':
            members[int(kv['comm'], 16)] = [int(x) for x in kv['ranks'].split(',')][:int(kv['size'])]
            continue
        if f[3] == 'MPI_COLL':
            if int(kv['op']) < 17:  # not a communicator's creation
                got[rank]['colls'] += 1
            continue
        kind, comm, tag, nbytes = f[4], int(kv['comm'], 16), int(kv['tag']), int(kv['bytes'])
        if kind in ('send', 'isend'):
            got[rank]['sends'] += 1
            got[rank]['send_bytes'] += nbytes
            sends.append((comm, rank, int(kv['peer']), tag, nbytes))
        elif kind in ('recv', 'irecv_done'):
            got[rank]['recvs'] += 1
            got[rank]['recv_bytes'] += nbytes
            recvs.append((comm, int(kv['peer']), rank, tag, nbytes))
    for r in range(nranks):
        for k in ('sends', 'send_bytes', 'recvs', 'recv_bytes', 'colls'):
            assert got[r][k] == truth[r][k], 'rank %d: %s %d in the trace, %d in the program' % (
                r, k, got[r][k], truth[r][k])
    # Match: a send (comm, from world rank, to comm rank) with a receive (comm, from comm
    # rank, at world rank), both translated to world ranks.
    world = lambda comm, r: members[comm][r]
    s = collections.Counter((c, a, world(c, p), t, n) for c, a, p, t, n in sends)
    q = collections.Counter((c, world(c, p), b, t, n) for c, p, b, t, n in recvs)
    assert s == q, 'unmatched: sends %s, receives %s' % (dict(s - q), dict(q - s))
    print('%d messages, each send matched by its receive; per-rank counts and bytes equal the '
          "program's; %d communicators" % (sum(s.values()), len(members)))


if __name__ == '__main__':
    try:
        main()
    except AssertionError as e:
        sys.exit('check_mpi: %s' % e)
