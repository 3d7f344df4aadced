#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_otf2.py - reads an OTF2 archive with python3-otf2 (independent of our writer) and
checks its structure, then the ground truth the caller knows about the traced program.

    check_otf2.py ARCHIVE/traces.otf2 [expectations...]

Structure (always): every event's references resolve; per location, the events counted
equal the declared number, time stamps never decrease and stay inside the clock
properties, Enter/Leave are balanced and matched (per task, where task events say which task
a location runs: otf2_tasks.py); ThreadBegin follows the ThreadCreate of
the same (contingent, sequence), ThreadWait follows the ThreadEnd; acquired locks are
released by the location that acquired them, with the order number of that acquisition.

Expectations:
    --locations N          CPU thread locations
    --processes N          PROCESS location groups
    --created N            ThreadBegin events (threads created while traced)
    --waited N             ThreadWait events
    --kind KIND=N          total events of that kind (Enter, ThreadAcquireLock, Metric...)
    --enters REGION=N      Enter events of the region named REGION
    --outer REGEX          every thread's first region after ThreadBegin matches REGEX
    --outer-has REGEX      at least one thread's first region matches REGEX
    --no-outer REGEX       no region name matches REGEX (e.g. a bare address)
    --markers CATEGORY=N   markers of that category in the marker file (N may be '+')
    --location-name REGEX  a thread location's name matches REGEX
Prints a summary per location; exits 1 with the reasons when anything fails.
"""
import collections
import os
import re
import subprocess
import sys

import otf2
from otf2_tasks import TaskStacks


def fail(msgs):
    for m in msgs:
        print("check_otf2: " + m, file=sys.stderr)
    sys.exit(1)


def read_markers(anchor):
    """(category, text) of every marker.  python3-otf2's marker reader fails on OTF2 3.0.2
    (an enum comparison inside its error handling), so this asks otf2-marker."""
    if not os.path.exists(re.sub(r"\.otf2$", ".marker", anchor)):
        return []  # OTF2 writes the file only when there are markers
    text = subprocess.run(["otf2-marker", anchor], check=True, capture_output=True,
                          text=True).stdout
    out, category = [], None
    for line in text.splitlines():
        m = re.match(r'MARKER_DEF .*Category: "([^"]*)"', line)
        if m:
            category = m.group(1)
            continue
        m = re.match(r'MARKER .*Text: "(.*)"$', line)
        if m:
            out.append((category, m.group(1)))
    return out


def main(argv):
    if len(argv) < 2:
        fail([__doc__])
    anchor = argv[1]
    expect = argv[2:]
    errors = []
    kinds = collections.Counter()
    per_loc = collections.defaultdict(collections.Counter)
    enters = collections.Counter()
    outer = {}  # location -> first region entered after ThreadBegin
    after_begin = set()
    tasks = TaskStacks()
    cc_kinds = collections.Counter()
    last_time = {}
    created, ended = set(), set()
    begins = waits = 0
    held = collections.defaultdict(dict)  # location -> lock id -> count
    with otf2.reader.open(anchor) as tr:
        d = tr.definitions
        cp = d.clock_properties
        lo, hi = cp.global_offset, cp.global_offset + cp.trace_length
        locations = [l for l in d.locations if l.type == otf2.LocationType.CPU_THREAD]
        groups = [g for g in d.location_groups if g.location_group_type == otf2.LocationGroupType.PROCESS]
        region_names = [r.name for r in d.regions]
        for loc, ev in tr.events:
            kind = type(ev).__name__
            if kind in ("CallingContextEnter", "CallingContextLeave"):
                # an archive with stack samples: the region is its context's
                cc_kinds[kind] += 1
                ev.region = ev.calling_context.region
                kind = kind[len("CallingContext"):]
            kinds[kind] += 1
            per_loc[loc][kind] += 1
            t = ev.time
            if loc in last_time and t < last_time[loc]:
                errors.append("%s: time goes back (%d < %d)" % (loc.name, t, last_time[loc]))
            last_time[loc] = t
            if not lo <= t <= hi:
                errors.append("%s: time %d outside the clock properties [%d, %d]" % (loc.name, t, lo, hi))
            if tasks.event(loc, kind, ev):
                pass
            elif kind == "Enter":
                tasks.stack(loc).append(ev.region)
                enters[ev.region.name] += 1
                if loc in after_begin:
                    outer[loc] = ev.region.name
                    after_begin.discard(loc)
            elif kind == "Leave":
                stack = tasks.stack(loc)
                if not stack:
                    errors.append("%s: Leave %s without Enter" % (loc.name, ev.region.name))
                elif stack[-1] != ev.region:
                    errors.append("%s: Leave %s, but %s is open" % (loc.name, ev.region.name, stack[-1].name))
                else:
                    stack.pop()
            elif kind == "ThreadCreate":
                created.add((ev.thread_contingent, ev.sequence_count))
            elif kind == "ThreadBegin":
                begins += 1
                after_begin.add(loc)
                if (ev.thread_contingent, ev.sequence_count) not in created:
                    errors.append("%s: ThreadBegin %d without ThreadCreate" % (loc.name, ev.sequence_count))
            elif kind == "ThreadEnd":
                ended.add((ev.thread_contingent, ev.sequence_count))
            elif kind == "ThreadWait":
                waits += 1
                if (ev.thread_contingent, ev.sequence_count) not in ended:
                    errors.append("%s: ThreadWait %d before its ThreadEnd" % (loc.name, ev.sequence_count))
            elif kind == "ThreadAcquireLock":
                held[loc].setdefault(ev.lock_id, []).append(ev.acquisition_order)
            elif kind == "ThreadReleaseLock":
                orders = held[loc].get(ev.lock_id)
                if not orders:
                    errors.append("%s: ThreadReleaseLock of lock %d it does not hold" % (loc.name, ev.lock_id))
                elif ev.acquisition_order not in orders:
                    errors.append("%s: lock %d released as acquisition #%d, held as %s" % (
                        loc.name, ev.lock_id, ev.acquisition_order, orders))
                else:
                    orders.remove(ev.acquisition_order)
        for loc in locations:
            n = sum(per_loc[loc].values())
            if n != loc.number_of_events:
                errors.append("%s: %d events counted, %d declared" % (loc.name, n, loc.number_of_events))
            if tasks.left_open(loc):
                errors.append("%s: %d regions never left" % (loc.name, tasks.left_open(loc)))
            print("%-28s %8d  %s" % (loc.name, n, ", ".join("%s=%d" % kv for kv in sorted(per_loc[loc].items()))))
    errors += tasks.finish()
    if cc_kinds and (kinds["Enter"] != cc_kinds["CallingContextEnter"] or
                     kinds["Leave"] != cc_kinds["CallingContextLeave"]):
        errors.append("Enter/Leave beside CallingContextEnter/Leave: OTF2 allows one or the other")
    markers = read_markers(anchor)
    mcount = collections.Counter(c for c, _ in markers)
    for c, text in markers:
        print("marker [%s] %s" % (c, text))
    print("total: %d events on %d locations in %d processes; %d regions; markers %s" % (
        sum(kinds.values()), len(locations), len(groups), len(region_names), dict(mcount)))

    i = 0
    while i < len(expect):
        opt, val = expect[i], expect[i + 1] if i + 1 < len(expect) else None
        i += 2
        if val is None:
            errors.append("option %s needs a value" % opt)
        elif opt == "--locations":
            if len(locations) != int(val):
                errors.append("%d thread locations, expected %s" % (len(locations), val))
        elif opt == "--processes":
            if len(groups) != int(val):
                errors.append("%d processes, expected %s" % (len(groups), val))
        elif opt == "--created":
            if begins != int(val):
                errors.append("%d ThreadBegin, expected %s" % (begins, val))
        elif opt == "--waited":
            if waits != int(val):
                errors.append("%d ThreadWait, expected %s" % (waits, val))
        elif opt == "--kind":
            k, n = val.split("=")
            if kinds[k] != int(n):
                errors.append("%d %s events, expected %s" % (kinds[k], k, n))
        elif opt == "--enters":
            k, n = val.rsplit("=", 1)
            if enters[k] != int(n):
                errors.append("%d Enter of %s, expected %s" % (enters[k], k, n))
        elif opt == "--outer":
            if not outer:
                errors.append("no thread has a region after ThreadBegin")
            for loc, name in outer.items():
                if not re.fullmatch(val, name):
                    errors.append("%s: outermost region %r does not match %r" % (loc.name, name, val))
        elif opt == "--outer-has":
            if not any(re.fullmatch(val, n) for n in outer.values()):
                errors.append("no outermost region matches %r (have %s)" % (val, sorted(set(outer.values()))))
        elif opt == "--no-outer":
            bad = [n for n in region_names if re.fullmatch(val, n)]
            if bad:
                errors.append("regions named %s match %r" % (bad, val))
        elif opt == "--location-name":
            if not any(re.fullmatch(val, l.name) for l in locations):
                errors.append("no location named like %r (have %s)" % (val, [l.name for l in locations]))
        elif opt == "--markers":
            k, n = val.rsplit("=", 1)
            if (n == "+" and mcount[k] == 0) or (n != "+" and mcount[k] != int(n)):
                errors.append("%d markers [%s], expected %s" % (mcount[k], k, n))
        else:
            errors.append("unknown option " + opt)
    if errors:
        fail(errors)
    print("check_otf2: ok")


if __name__ == "__main__":
    try:
        main(sys.argv)
    except SystemExit:
        raise
    except Exception as e:  # a reader exception is a failed check, not a crash
        fail(["reading the archive failed: %r" % e])
