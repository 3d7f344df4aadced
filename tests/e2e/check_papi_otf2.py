#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_papi_otf2.py DUMP ARCHIVE - does each Metric event name what was measured?

DUMP is trace-dump's output of the trace that ARCHIVE was converted from.  Per process, in
time order: each PAPI reading (a COUNTERS record: its events and values), each counter of
the annotation API (COUNTER: name, value) and each sampled metric (METRIC: name, value)
must be a Metric event of the archive whose class has those members, with those values
(python3-otf2 reads the events through their locations' mapping tables).  Prints the
number of events checked; exits 1 with the first differences.
"""
import collections
import re
import sys

import otf2


def expected(dump):
    """process -> [(member names, values)] in the order of the trace."""
    want = collections.defaultdict(list)
    for line in open(dump):
        f = line.split()
        if len(f) < 4:
            continue
        proc = f[0].split(".")[-1]
        if f[3] == "COUNTERS":
            pairs = [kv.split("=") for kv in f[4:]]
            want[proc].append((tuple(k for k, _ in pairs), tuple(int(v) for _, v in pairs)))
        elif f[3] in ("COUNTER", "METRIC"):
            m = re.search(r'"([^"]*)" value=(-?\d+)', line)
            if m:
                want[proc].append(((m.group(1),), (int(m.group(2)),)))
    return want


def main():
    want = expected(sys.argv[1])
    got = collections.defaultdict(list)
    with otf2.reader.open(sys.argv[2]) as tr:
        events = []
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.Metric):
                members = tuple(m.name for m in ev.metric.members)
                pid = re.search(r"\[(\d+)\]", loc.group.name).group(1)
                events.append((ev.time, pid, members, tuple(int(v) for v in ev.values)))
        for t, pid, members, values in sorted(events):
            got[pid].append((members, values))
    problems = []
    for pid in sorted(set(want) | set(got)):
        if sorted(want[pid]) != sorted(got[pid]):
            problems.append("process %s:\n  the trace  %s\n  the archive %s"
                            % (pid, want[pid], got[pid]))
    if not any(want.values()):
        problems.append("no reading in the trace: nothing is checked")
    if problems:
        sys.exit("\n".join(problems))
    print("%d Metric events, each with the members and values of its reading"
          % sum(len(v) for v in got.values()))


if __name__ == "__main__":
    main()
