#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""compare_otf2.py - do two OTF2 archives hold the same events?

    compare_otf2.py A B

Reads both with python3-otf2 (which applies each location's mapping tables, so ids are the
archives' global ones) and compares, location by location, every event: its type, time and
every attribute with definitions resolved to what they name (a region's name, a string's
text...).  Lock ids are compared by the order in which they first appear (locations by id,
then events in order), since a parallel conversion numbers locks by converter rank.
Prints the events per location and "compare_otf2: same", or what differs and exits 1.
"""
import sys

import otf2


def value(v):
    """A definition as what it names, plain values as they are."""
    for attr in ('name', 'text'):
        if hasattr(v, attr) and not isinstance(v, (str, bytes)):
            x = getattr(v, attr)
            return '%s(%s)' % (type(v).__name__, value(x))
    if isinstance(v, (list, tuple)):
        return '[%s]' % ', '.join(value(x) for x in v)
    if isinstance(v, dict):
        return '{%s}' % ', '.join('%s: %s' % (value(k), value(x)) for k, x in sorted(
            v.items(), key=lambda kv: repr(kv[0])))
    return repr(v)


def load(path):
    by_loc = {}
    with otf2.reader.open(path) as r:
        for loc, ev in r.events:
            fields = []
            for k, v in sorted(vars(ev).items()):
                if k in ('time', 'location'):
                    continue
                fields.append((k, v))
            by_loc.setdefault(loc._ref, (loc.name, []))[1].append(
                (type(ev).__name__, ev.time, fields))
    # Lock ids by first appearance.
    locks = {}
    out = {}
    for ref in sorted(by_loc):
        name, evs = by_loc[ref]
        rows = []
        for kind, t, fields in evs:
            shown = []
            for k, v in fields:
                if k == 'lock_id':
                    v = locks.setdefault(v, len(locks))
                    shown.append((k, 'lock#%d' % v))
                else:
                    shown.append((k, value(v)))
            rows.append((kind, t, tuple(shown)))
        out[ref] = (name, rows)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    bad = 0
    if sorted(a) != sorted(b):
        print('locations differ: %s vs %s' % (sorted(a), sorted(b)))
        bad = 1
    for ref in sorted(set(a) & set(b)):
        (na, ea), (nb, eb) = a[ref], b[ref]
        print('location %d %s: %d events' % (ref, na, len(ea)))
        if na != nb:
            print('  name differs: %r vs %r' % (na, nb))
            bad = 1
        if len(ea) != len(eb):
            print('  %d events vs %d' % (len(ea), len(eb)))
            bad = 1
        for i, (x, y) in enumerate(zip(ea, eb)):
            if x != y:
                print('  event %d differs:\n    %r\n    %r' % (i, x, y))
                bad = 1
                break
    if not a:
        print('no events at all')
        bad = 1
    print('compare_otf2: %s' % ('DIFFERENT' if bad else 'same'))
    sys.exit(bad)


if __name__ == '__main__':
    main()
