#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_trace.py - checks a trace through trace-dump's text, independently of the runtime.

Always checked, per thread: records in time order; THREAD_BEGIN first, THREAD_END (when
there) last; CALL_ENTER/CALL_LEAVE and REGION_ENTER/REGION_LEAVE properly nested; per
process: every THREAD_CREATE has the THREAD_BEGIN of the same thread naming its creator as
parent (unless the creation failed), every THREAD_WAIT names a thread that ended.

Expectations given on the command line are checked on top, and a JSON summary is printed.
Exit status 0 when everything holds, 1 otherwise.
"""
import argparse
import collections
import json
import re
import subprocess
import sys

LINE = re.compile(r'^(\S+) (\d+) (\d+) (\S+)(?: (.*))?$')


def parse(dump_cmd):
    out = subprocess.run(dump_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode not in (0,):
        sys.stderr.write(out.stderr)
        raise SystemExit(f"trace-dump failed with status {out.returncode}")
    threads = collections.OrderedDict()
    for n, line in enumerate(out.stdout.splitlines(), 1):
        if line.startswith('#'):
            continue
        m = LINE.match(line)
        if not m:
            raise SystemExit(f"trace-dump line {n} does not parse: {line!r}")
        proc, th, ts, kind, rest = m.groups()
        threads.setdefault((proc, int(th)), []).append((int(ts), kind, rest or ''))
    return threads


def field(rest, name):
    m = re.search(r'(?:^| )' + name + r'=(\S+)', rest)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dump', required=True, help='trace-dump binary')
    ap.add_argument('trace')
    ap.add_argument('--processes', type=int, help='exact number of processes')
    ap.add_argument('--threads', type=int, help='exact number of threads in every process')
    ap.add_argument('--min-threads', type=int, help='at least this many threads in the main process')
    ap.add_argument('--counter-seq',
                    help='NAME=N[@T]: every thread (or exactly T threads) has counter NAME = 0..N-1 in order')
    ap.add_argument('--calls', action='append', default=[],
                    help='FN=N: exactly N calls of FN (CALL_ENTER) over the trace')
    ap.add_argument('--regions', action='append', default=[],
                    help='NAME=N: exactly N REGION_ENTER of NAME over the trace')
    ap.add_argument('--joined-all', action='store_true',
                    help='every created thread was waited for (joined)')
    ap.add_argument('--no-lost', action='store_true', help='no LOST record')
    a = ap.parse_args()

    threads = parse([a.dump, a.trace])
    errors = []

    def err(msg):
        if len(errors) < 50:
            errors.append(msg)

    procs = collections.defaultdict(dict)
    calls = collections.Counter()
    regions = collections.Counter()
    lost = 0
    for (proc, th), recs in threads.items():
        procs[proc][th] = recs
        last = -1
        stack = []
        for i, (ts, kind, rest) in enumerate(recs):
            where = f"{proc} thread {th} record {i} ({kind} {rest})"
            if ts < last:
                err(f"{where}: time goes backwards ({ts} < {last})")
            last = ts
            if i == 0 and kind != 'THREAD_BEGIN':
                err(f"{where}: first record is not THREAD_BEGIN")
            if kind == 'THREAD_BEGIN' and i != 0:
                err(f"{where}: THREAD_BEGIN not first")
            if kind == 'THREAD_END' and i != len(recs) - 1:
                err(f"{where}: THREAD_END not last")
            if kind == 'CALL_ENTER':
                fn = rest.split()[0]
                calls[fn] += 1
                stack.append(('call', fn))
            elif kind == 'CALL':
                calls[rest.split()[0]] += 1
            elif kind == 'CALL_LEAVE':
                fn = rest.split()[0]
                if not stack or stack[-1] != ('call', fn):
                    err(f"{where}: leaves {fn} but the open one is {stack[-1] if stack else None}")
                else:
                    stack.pop()
            elif kind == 'REGION_ENTER':
                regions[rest] += 1
                stack.append(('region', rest))
            elif kind == 'REGION_LEAVE':
                if not stack or stack[-1] != ('region', rest):
                    err(f"{where}: leaves region {rest} but the open one is {stack[-1] if stack else None}")
                else:
                    stack.pop()
            elif kind == 'LOST':
                lost += int(field(rest, 'count') or 0)
        ended = recs and recs[-1][1] == 'THREAD_END'
        if ended and stack:
            err(f"{proc} thread {th}: ended with open {stack}")

    created = 0
    waited = 0
    for proc, ths in procs.items():
        begins = {}
        ends = set()
        for th, recs in ths.items():
            for ts, kind, rest in recs:
                if kind == 'THREAD_BEGIN':
                    begins[th] = int(field(rest, 'parent'))
                if kind == 'THREAD_END':
                    ends.add(th)
        waits = set()
        for th, recs in ths.items():
            failed_create = False
            for i, (ts, kind, rest) in enumerate(recs):
                if kind == 'THREAD_CREATE':
                    child = int(field(rest, 'thread'))
                    # The matching CALL_LEAVE says whether it worked.
                    ok = next((r for t2, k, r in recs[i:] if k == 'CALL_LEAVE'
                               and r.startswith('pthread_create')), 'ret=0')
                    if field(ok, 'ret') != '0':
                        continue
                    created += 1
                    if child not in begins:
                        err(f"{proc}: thread {th} created thread {child}, which never began")
                    elif begins[child] != th:
                        err(f"{proc}: thread {child} names parent {begins[child]}, created by {th}")
                if kind == 'THREAD_WAIT':
                    child = int(field(rest, 'thread'))
                    waits.add(child)
                    waited += 1
                    if child not in ends:
                        err(f"{proc}: thread {th} waited for thread {child}, which never ended")
        if a.joined_all:
            for child, parent in begins.items():
                if parent >= 0 and child not in waits:
                    err(f"{proc}: thread {child} (created by {parent}) was never joined")
        if a.threads is not None and len(ths) != a.threads:
            err(f"{proc}: {len(ths)} threads, expected {a.threads}")

    if a.processes is not None and len(procs) != a.processes:
        err(f"{len(procs)} processes, expected {a.processes}")
    if a.min_threads is not None:
        main_proc = min(procs, key=lambda p: min(t[0][0] for t in procs[p].values()))
        if len(procs[main_proc]) < a.min_threads:
            err(f"{main_proc}: {len(procs[main_proc])} threads, expected at least {a.min_threads}")
    if a.counter_seq:
        name, n = a.counter_seq.split('=')
        n, _, want_threads = n.partition('@')
        n = int(n)
        carrying = 0
        for (proc, th), recs in threads.items():
            vals = [int(field(r, 'value')) for ts, k, r in recs
                    if k == 'COUNTER' and r.startswith(f'"{name}" ')]
            if want_threads and not vals:
                continue
            carrying += 1
            if vals != list(range(n)):
                bad = next((i for i, v in enumerate(vals) if v != i), len(vals))
                err(f"{proc} thread {th}: counter {name}: {len(vals)} values, first wrong at {bad}")
        if want_threads and carrying != int(want_threads):
            err(f"{carrying} threads carry counter {name}, expected {want_threads}")
    for spec in a.calls:
        fn, n = spec.split('=')
        if calls[fn] != int(n):
            err(f"{calls[fn]} calls of {fn}, expected {n}")
    for spec in a.regions:
        name, n = spec.split('=')
        if regions[f'"{name}"'] != int(n):
            err(f"{regions[chr(34) + name + chr(34)]} regions {name}, expected {n}")
    if a.no_lost and lost:
        err(f"{lost} events lost")

    summary = {
        'processes': len(procs),
        'threads': {p: len(t) for p, t in procs.items()},
        'records': sum(len(r) for r in threads.values()),
        'created': created,
        'waited': waited,
        'lost': lost,
        'calls': dict(calls),
        'errors': errors,
    }
    print(json.dumps(summary, sort_keys=True))
    for e in errors:
        print('check_trace:', e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
