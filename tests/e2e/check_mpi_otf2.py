#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_mpi_otf2.py ARCHIVE [--truth OUT --dump DUMP --trace DIR] [--causal]

Reads an OTF2 archive of an MPI program with python3-otf2 (an independent reader) and
checks its MPI events:
  - every MpiSend/MpiIsend is matched by exactly one MpiRecv/MpiIrecv: same communicator,
    sender and receiver (ranks resolved through the communicator's group), tag and
    length; the k-th send of such a channel with the k-th receive posted on it;
  - --causal: no receive ends before its send's call began (clocks aligned), beyond
    --precision NS (default 1000: clocks read on two CPUs of one node, even one clock,
    agree to about 100 ns; aligned clocks of other nodes to half a round trip);
  - --truth OUT: per rank ("MPI Rank N" location groups) the messages and bytes sent and
    received, and the collectives (MpiCollectiveEnd, communicator creation aside), equal
    the program's own counts, lines "truth RANK sends=.. send_bytes=.. recvs=..
    recv_bytes=.. colls=.." of OUT;
  - --dump DUMP --trace DIR: as many MPI-paradigm Enters per rank as trace-dump shows
    MPI_ENTER records.
Exit status 1 with the first problems on stderr.
"""
import argparse
import collections
import glob
import os
import sys

import otf2

ap = argparse.ArgumentParser()
ap.add_argument('archive')
ap.add_argument('--truth')
ap.add_argument('--dump')
ap.add_argument('--trace')
ap.add_argument('--causal', action='store_true')
ap.add_argument('--precision', type=int, default=1000)
args = ap.parse_args()

problems = []


def rank_of(loc):
    name = loc.group.name
    return int(name.split()[-1]) if name.startswith('MPI Rank ') else None


sends = collections.defaultdict(list)  # (comm, from, to, tag) -> [(call start, bytes)]
recvs = collections.defaultdict(list)  # same -> [(posted, completed, bytes)]
call_start = {}                        # location -> when its MPI call began
posted = {}                            # (location, request) -> when the Irecv was posted
got = collections.defaultdict(collections.Counter)
enters = collections.Counter()
skip_ops = {otf2.CollectiveOp.CREATE_HANDLE, otf2.CollectiveOp.DESTROY_HANDLE}
with otf2.reader.open(args.archive) as r:
    groups = sorted(g.name for g in r.definitions.location_groups
                    if g.location_group_type == otf2.LocationGroupType.PROCESS)
    for loc, ev in r.events:
        rank = rank_of(loc)
        if isinstance(ev, otf2.events.Enter) and ev.region.paradigm == otf2.Paradigm.MPI:
            call_start[loc] = ev.time
            enters[rank] += 1
        elif isinstance(ev, (otf2.events.MpiSend, otf2.events.MpiIsend)):
            to = ev.communicator.group.members[ev.receiver]
            sends[(ev.communicator.name, loc, to, ev.msg_tag)].append(
                (call_start.get(loc, ev.time), ev.msg_length))
            got[rank]['sends'] += 1
            got[rank]['send_bytes'] += ev.msg_length
        elif isinstance(ev, otf2.events.MpiIrecvRequest):
            posted[(loc, ev.request_id)] = ev.time
        elif isinstance(ev, (otf2.events.MpiRecv, otf2.events.MpiIrecv)):
            frm = ev.communicator.group.members[ev.sender]
            when = (posted.pop((loc, ev.request_id), None) if isinstance(ev, otf2.events.MpiIrecv)
                    else call_start.get(loc))
            if when is None:
                problems.append('%s: a receive at %d without its posting' % (loc.group.name, ev.time))
                when = ev.time
            recvs[(ev.communicator.name, frm, loc, ev.msg_tag)].append((when, ev.time, ev.msg_length))
            got[rank]['recvs'] += 1
            got[rank]['recv_bytes'] += ev.msg_length
        elif isinstance(ev, otf2.events.MpiCollectiveEnd):
            if ev.collective_op not in skip_ops:
                got[rank]['colls'] += 1

nmsg = late = 0
for key in set(sends) | set(recvs):
    s, q = sends.get(key, []), sorted(recvs.get(key, []))
    comm, frm, to, tag = key
    if len(s) != len(q):
        problems.append('%s: %s -> %s tag %d: %d sends, %d receives' % (
            comm, frm.group.name, to.group.name, tag, len(s), len(q)))
        continue
    for (start, n), (_, done, m) in zip(s, q):
        nmsg += 1
        if n != m:
            problems.append('%s: %s -> %s tag %d: %d bytes sent, %d received' % (
                comm, frm.group.name, to.group.name, tag, n, m))
        if done + args.precision < start:
            late += 1
            if args.causal and late <= 5:
                problems.append('%s: %s -> %s tag %d: received at %d, %d ns before the send began' % (
                    comm, frm.group.name, to.group.name, tag, done, start - done))
if args.truth:
    truth = {}
    for line in open(args.truth):
        f = line.split()
        if f and f[0] == 'truth':
            truth[int(f[1])] = {k: int(v) for k, v in (x.split('=') for x in f[2:])}
    if groups != ['MPI Rank %d' % i for i in sorted(truth)]:
        problems.append('location groups %s' % groups)
    for rank, want in sorted(truth.items()):
        for k, v in want.items():
            if got[rank][k] != v:
                problems.append('MPI Rank %d: %s %d in the archive, %d in the program' % (rank, k, got[rank][k], v))
if args.dump and args.trace:
    ranks = {}
    for meta in glob.glob(os.path.join(args.trace, '*', 'meta')):
        for line in open(meta, errors='replace'):
            if line.startswith('mpi_rank '):
                ranks[os.path.basename(os.path.dirname(meta))] = int(line.split()[1])
    want = collections.Counter(ranks[l.split()[0]] for l in open(args.dump) if l.split()[3:4] == ['MPI_ENTER'])
    if enters != want:
        problems.append('MPI Enters per rank %s, MPI_ENTER records %s' % (dict(enters), dict(want)))
if nmsg == 0:
    problems.append('no MPI message in the archive')
for p in problems[:20]:
    print('check_mpi_otf2: %s: %s' % (args.archive, p), file=sys.stderr)
if problems:
    sys.exit(1)
print('check_mpi_otf2: %d messages matched (%d received over %d ns before their send began), %d MPI Enters, ranks %s'
      % (nmsg, late, args.precision, sum(enters.values()), ', '.join('%d: %s' % (r, dict(c)) for r, c in sorted(got.items()))))
