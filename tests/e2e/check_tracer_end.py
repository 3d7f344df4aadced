#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tracer's own end is not the program's time (tests/e2e/tracer-end.sh).

  check_tracer_end.py TRACE_DIR PRV OTF2_ANCHOR REPORT_JSON

TRACE_DIR's one process says in its meta file when the tracer began its end (`ending`) and
when the process ended (`end`).  In the Paraver trace the main thread must be Running until
no later than that stamp, then in Extrae's flushing (event 40000003 1, state I/O) until the
end; no other thread runs past it.  In the OTF2 archive the main thread's ProgramEnd is at
the stamp and no thread has an event after it; the profile's threads end there too and it
says how long the tracer's end took.
"""
import glob
import json
import os
import re
import sys

import otf2


def die(msg):
    print("check_tracer_end: " + msg, file=sys.stderr)
    sys.exit(1)


def meta(trace):
    dirs = [d for d in glob.glob(os.path.join(trace, "*")) if os.path.isfile(d + "/meta")]
    if len(dirs) != 1:
        die("%s: expected one process directory, found %d" % (trace, len(dirs)))
    syncs, ending, end, hz = [], None, None, None
    with open(dirs[0] + "/meta") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "sync":
                syncs.append((int(w[1]), int(w[2])))
            elif w[0] == "ending":
                ending = int(w[1])
            elif w[0] == "end":
                end = int(w[1])
            elif w[0] == "clock_hz":
                hz = float(w[1])
    if ending is None or end is None:
        die("meta: no 'ending' or no 'end' line (the tracer's end is not told apart)")
    if not ending < end:
        die("meta: ending %d not before end %d" % (ending, end))
    (t0, n0), (t1, n1) = syncs[0], syncs[-1]
    per = (n1 - n0) / (t1 - t0) if t1 > t0 else 1e9 / hz

    def ns(t):
        return n1 + (t - t1) * per

    return ns(ending), ns(end)


def check_prv(path):
    states, events = {}, {}
    with open(path) as f:
        head = f.readline()
        m = re.search(r"\):(\d+)(_ns)?:", head)
        total = int(m.group(1)) if m else None
        for line in f:
            w = line.rstrip("\n").split(":")
            if w[0] == "1":
                states.setdefault(int(w[4]), []).append((int(w[5]), int(w[6]), int(w[7])))
            elif w[0] == "2":
                th, t = int(w[4]), int(w[5])
                for i in range(6, len(w) - 1, 2):
                    events.setdefault(int(w[i]), []).append((th, t, int(w[i + 1])))
    if total is None:
        die("%s: no duration in the header" % path)
    flush = sorted(events.get(40000003, []))
    if [(th, v) for th, _, v in flush] != [(1, 1), (1, 0)]:
        die("%s: Flushing Traces (40000003) should begin and end once on the main thread: %s"
            % (path, flush))
    begin, finish = flush[0][1], flush[1][1]
    if finish != total:
        die("%s: the flushing ends at %d, the trace at %d" % (path, finish, total))
    app_end = [t for th, t, v in events.get(40000001, []) if th == 1 and v == 0]
    if app_end != [begin]:
        die("%s: the application should end where the flushing begins (%d): %s"
            % (path, begin, app_end))
    io = [s for s in states.get(1, []) if s[2] == 12]
    if io != [(begin, finish, 12)]:
        die("%s: the main thread should be in I/O from %d to %d: %s" % (path, begin, finish, io))
    useful = {}
    for th, recs in states.items():
        for b, e, s in recs:
            if s == 1:
                useful[th] = useful.get(th, 0) + e - b
                if e > begin:
                    die("%s: thread %d Running until %d, after the tracer's end began (%d)"
                        % (path, th, e, begin))
    return begin, finish, useful


def check_otf2(anchor, ending_ns, end_ns):
    pend, last = None, {}
    with otf2.reader.open(anchor) as tr:
        for loc, ev in tr.events:
            if loc.type != otf2.LocationType.CPU_THREAD:
                continue
            last[loc.name] = max(last.get(loc.name, 0), ev.time)
            if isinstance(ev, otf2.events.ProgramEnd):
                pend = ev.time
    if pend is None:
        die("%s: no ProgramEnd" % anchor)
    if abs(pend - ending_ns) > 2000:
        die("%s: ProgramEnd at %d, the tracer's end began at %.0f" % (anchor, pend, ending_ns))
    late = {n: t for n, t in last.items() if t > pend}
    if late:
        die("%s: events after ProgramEnd (%d): %s" % (anchor, pend, late))
    return pend


def main():
    if len(sys.argv) != 5:
        die("usage: check_tracer_end.py TRACE_DIR PRV OTF2_ANCHOR REPORT_JSON")
    trace, prv, anchor, report = sys.argv[1:]
    ending_ns, end_ns = meta(trace)
    begin, finish, useful = check_prv(prv)
    tail = end_ns - ending_ns
    if abs((finish - begin) - tail) > 2000:
        die("%s: flushing lasts %d ns, the meta files say %.0f" % (prv, finish - begin, tail))
    check_otf2(anchor, ending_ns, end_ns)
    with open(report) as f:
        run = json.load(f)["runs"][0]
    said = run["metadata"]["tracer_end_ns"]
    if abs(said - tail) > 2000:
        die("%s: tracer_end_ns %d, the meta file says %.0f" % (report, said, tail))
    print("ok: the tracer's end %.3f ms of %.3f ms, main thread useful %.3f ms"
          % (tail / 1e6, finish / 1e6, useful.get(1, 0) / 1e6))


main()
