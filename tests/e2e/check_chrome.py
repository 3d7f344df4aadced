#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_chrome.py - is a Trace Event JSON file what trace2otf2 --format=chrome promises?

    check_chrome.py FILE.json [--otf2 traces.otf2] [--expect-flows CAT=N ...]
                              [--min-duration NS] [--window FROM_NS TO_NS]

Parses FILE strictly (RFC 8259: no NaN, no duplicate keys) and checks it on its own:
- the object form {"traceEvents": [...]}, each event with a known phase, integer pid and tid,
  a time (microseconds, at most three decimals: whole nanoseconds) that is not negative;
- every pid has a process_name and every tid a thread_name (metadata events);
- per thread, regions are begin and end events ("B", "E"), each end with its begin's name
  and an args object: the ends are written in the order they end (never going back), at
  one time an end before the next begin, and the regions they make nest: two of one thread
  are disjoint or one holds the other; a region of no duration is an instant event ("i")
  whose category is not "marker";
- per thread and name, counter and instant events never go back in time;
- every flow has one start ("s") and one end ("f") with its id, the end not before the
  start, the start inside a region of its thread.
With --otf2, the archive converted from the same trace (read with python3-otf2) is the truth:
per location (matched by process and location name) the B/E regions are its regions,
Enter to Leave, with the same names and times to the nanosecond (--min-duration, --window:
less what those leave out, cut to the window; a message whose other end lies outside the
window keeps one end).  --expect-flows: at least N flows of CAT.
Prints a line per thread and "check_chrome: ok", or the problems and exits 1.
"""
import collections
import decimal
import json
import sys


def ns(v):
    """A time in microseconds (a Decimal) as whole nanoseconds; None when it is not one."""
    n = v * 1000
    if n != n.to_integral_value():
        return None
    return int(n)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %s" % keys)
    return dict(pairs)


def bad_constant(name):
    raise ValueError("%s is not JSON" % name)


def otf2_regions(anchor, min_dur, window):
    """Per (process, location) name: a Counter of (region, start, end) as the chrome file must
    hold them."""
    import otf2
    out = collections.defaultdict(collections.Counter)
    stacks = collections.defaultdict(list)
    with otf2.reader.open(anchor) as tr:
        origin = tr.definitions.clock_properties.global_offset  # the first event
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.Enter):
                stacks[loc].append((ev.region.name, ev.time))
            elif isinstance(ev, otf2.events.Leave) and stacks[loc]:
                name, start = stacks[loc].pop()
                end = ev.time
                if window:
                    lo, hi = origin + window[0], origin + window[1]
                    if end < lo or start > hi:
                        continue
                    start, end = max(start, lo), min(end, hi)
                if min_dur and end - start < min_dur:
                    continue
                g = loc.group  # a GPU context's streams belong to its process
                while g.location_group_type != otf2.LocationGroupType.PROCESS and \
                        g.creating_location_group is not None:
                    g = g.creating_location_group
                key = (g.name, loc.name)
                out[key][(name, start, end)] += 1
    return out, origin


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    path = args.pop(0)
    anchor, expect, min_dur, window = None, {}, 0, None
    while args:
        a = args.pop(0)
        if a == "--otf2":
            anchor = args.pop(0)
        elif a == "--expect-flows":
            cat, n = args.pop(0).split("=")
            expect[cat] = int(n)
        elif a == "--min-duration":
            min_dur = int(args.pop(0))
        elif a == "--window":
            window = (int(args.pop(0)), int(args.pop(0)))
        else:
            sys.exit("check_chrome: unknown argument %s" % a)
    errors = []
    with open(path, "rb") as f:
        doc = json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates,
                         parse_float=decimal.Decimal, parse_constant=bad_constant)
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        sys.exit("check_chrome: %s: not an object with a traceEvents array" % path)
    events = doc["traceEvents"]
    pnames, tnames = {}, {}
    used = set()
    xs = collections.defaultdict(list)
    opened = collections.defaultdict(list)
    last = {}
    flows = collections.defaultdict(dict)
    for i, e in enumerate(events):
        where = "traceEvents[%d]" % i
        ph = e.get("ph")
        if ph not in ("B", "E", "M", "C", "i", "s", "f"):
            errors.append("%s: phase %r" % (where, ph))
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errors.append("%s: pid and tid must be integers" % where)
            continue
        key = (e["pid"], e["tid"])
        if ph == "M":
            if e.get("name") == "process_name":
                pnames[e["pid"]] = e["args"]["name"]
            elif e.get("name") == "thread_name":
                tnames[key] = e["args"]["name"]
            continue
        used.add(key)
        t = ns(decimal.Decimal(e["ts"]))
        if t is None or t < 0:
            errors.append("%s: ts %s is not whole nanoseconds >= 0" % (where, e["ts"]))
            continue
        if ph == "B":
            if not isinstance(e.get("name"), str):
                errors.append("%s: a begin needs a name" % where)
            opened[key].append((t, e.get("name"), i))
        elif ph == "E":
            if not opened[key]:
                errors.append("%s: an end with no region open" % where)
                continue
            bt, name, bi = opened[key].pop()
            if e.get("name") != name or not isinstance(e.get("args"), dict):
                errors.append("%s: the end of %r is named %r, or has no args" % (
                    where, name, e.get("name")))
            if t < bt:
                errors.append("%s: %r ends at %d before it begins (%d)" % (where, name, t, bt))
            xs[key].append((bt, t, name, bi, i))
        elif ph == "i" and e.get("cat") != "marker":  # a region of no duration
            if not isinstance(e.get("name"), str) or not isinstance(e.get("args"), dict):
                errors.append("%s: a region of no duration needs a name and args" % where)
            xs[key].append((t, t, e.get("name"), i, i))
        elif ph in ("C", "i"):
            k = (key, ph, e.get("name"))
            if k in last and t < last[k]:
                errors.append("%s: %s %r goes back in time" % (where, ph, e.get("name")))
            last[k] = t
        else:
            fid = (e.get("cat"), e.get("id"))
            if ph in flows[fid]:
                errors.append("%s: a second %r of flow %s" % (where, ph, fid))
            flows[fid][ph] = (key, t)
    for key in sorted(used):
        if key[0] not in pnames:
            errors.append("pid %d has no process_name" % key[0])
        if key not in tnames:
            errors.append("pid %d tid %d has no thread_name" % key)
    for key, lst in sorted(opened.items()):
        if lst:
            errors.append("%s: %d regions never end, such as %r" % (tnames.get(key), len(lst),
                                                                    lst[-1][1]))
    # Per thread: regions in the order they end, an end before a begin at one time, nested.
    for key, lst in sorted(xs.items()):
        for a, b in zip(lst, lst[1:]):
            if b[1] < a[1]:
                errors.append("%s: %r ends at %d before %r (%d), written after it" % (
                    tnames.get(key), b[2], b[1], a[2], a[1]))
                break
        first_begin = {}  # time: the first begin written then, of a region that lasts
        for b in lst:
            if b[1] > b[0] and b[3] < first_begin.get(b[0], (len(events),))[0]:
                first_begin[b[0]] = (b[3], b[2])
        for a in lst:
            bi, bname = first_begin.get(a[1], (len(events), None))
            if bi < a[4] and bi != a[3] and a[1] > a[0]:
                errors.append("%s: %r begins at %d before %r ends then" % (
                    tnames.get(key), bname, a[1], a[2]))
                break
        open_ = []
        for s, e, name, _, _ in sorted(lst, key=lambda x: (x[0], -x[1])):
            while open_ and open_[-1][1] <= s:
                open_.pop()
            if open_ and e > open_[-1][1]:
                errors.append("%s: %r [%d, %d] overlaps %r [%d, %d] without nesting" % (
                    tnames.get(key), name, s, e, open_[-1][2], open_[-1][0], open_[-1][1]))
                break
            open_.append((s, e, name))
    # Flows.
    per_cat = collections.Counter()
    for (cat, fid), ends in flows.items():
        if set(ends) != {"s", "f"}:
            if window and cat == "message":  # its other end is in another process
                continue
            errors.append("flow %s %s has only %s" % (cat, fid, sorted(ends)))
            continue
        (sk, st), (fk, ft) = ends["s"], ends["f"]
        if ft < st:
            errors.append("flow %s %s ends at %d before it starts at %d" % (cat, fid, ft, st))
        if not any(s <= st <= e for s, e, _, _, _ in xs.get(sk, [])):
            errors.append("flow %s %s starts outside any slice of %s" % (cat, fid, tnames.get(sk)))
        per_cat[cat] += 1
    for cat, n in expect.items():
        if per_cat[cat] < n:
            errors.append("%d flows of %s, expected at least %d" % (per_cat[cat], cat, n))
    # Against the archive.
    if anchor:
        truth, _ = otf2_regions(anchor, min_dur, window)
        mine = collections.defaultdict(collections.Counter)
        for key, lst in xs.items():
            for s, e, name, _, _ in lst:
                mine[(pnames.get(key[0]), tnames.get(key))][(name, s, e)] += 1
        for loc in sorted(set(truth) | set(mine), key=str):
            a, b = truth.get(loc, collections.Counter()), mine.get(loc, collections.Counter())
            if a != b:
                extra, missing = b - a, a - b
                errors.append("%s: %d regions not in the archive (%s), %d missing (%s)" % (
                    loc, sum(extra.values()), list(extra)[:3], sum(missing.values()),
                    list(missing)[:3]))
    for key, lst in sorted(xs.items()):
        print("%-40s %6d regions" % ("%s / %s" % (pnames.get(key[0]), tnames.get(key)),
                                             len(lst)))
    print("flows: %s" % dict(sorted(per_cat.items())))
    if errors:
        for e in errors[:30]:
            print("check_chrome: %s" % e)
        sys.exit(1)
    print("check_chrome: ok")


if __name__ == "__main__":
    main()
