#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_kokkos.py - checks the Kokkos part of an OTF2 archive, read with python3-otf2,
against what the traced program did.

    check_kokkos.py ARCHIVE/traces.otf2 [expectations...]

Always: every region of paradigm KOKKOS is entered and left in order on its location; a
kernel (role PARALLEL) and a fence (BARRIER) carry a KokkosDevice attribute; allocations
and deallocations carry KokkosLabel, KokkosBytes and KokkosAddress, each deallocation
matches the live allocation of its address in label and size, or none (memory allocated
before Kokkos loaded the tool: counted, not subtracted); every "Kokkos <space> memory"
metric value equals the bytes then allocated in that space, of the allocations seen.
Named as Score-P names Kokkos: the paradigm "KOKKOS", the source file "KOKKOS" of every
Kokkos region, each Kokkos region in one region group of paradigm KOKKOS ("Kokkos
parallel_for", "Kokkos profile regions", "Kokkos deep copy"...).

Expectations (NAME is a region name; repeatable):
    --enters NAME=N         Enter events of region NAME (of any paradigm)
    --matching REGEX=N      Enter events of the regions whose whole name matches REGEX
    --role NAME=ROLE        region NAME has that OTF2 role (PARALLEL, BARRIER, CODE...)
    --inside NAME=PARENT    every Enter of NAME has PARENT as the region right around it
    --nested REGEX=PARENT:N N Enters of regions matching REGEX right inside PARENT
    --device NAME=TEXT      every Enter of NAME carries KokkosDevice TEXT
    --alloc LABEL=BYTES:N   N allocations of the View LABEL, each of BYTES bytes
    --freed LABEL=N         N deallocations of LABEL
    --copy SRC:DST=BYTES:N  N deep copies from View SRC to View DST, each of BYTES bytes
    --property KEY=VALUE    archive property KEY (e.g. KOKKOS::CASE) has VALUE
    --live SPACE=BYTES      the last "Kokkos SPACE memory" value
    --peak SPACE=BYTES      the highest "Kokkos SPACE memory" value
    --unseen-frees N=BYTES  N deallocations, of BYTES in all, whose allocation was never seen
Prints a summary; exits 1 with the reasons when anything fails.
"""
import collections
import re
import sys

import _otf2
import otf2


def fail(msgs):
    for m in msgs:
        print("check_kokkos: " + m, file=sys.stderr)
    sys.exit(1)


def attrs(ev):
    return {a.name: v for a, v in (ev.attributes or {}).items()}


def split(val, sep="="):
    k, _, v = val.rpartition(sep)
    if not k:
        raise ValueError("expected KEY%sVALUE" % sep)
    return k, v


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        fail([__doc__])
    anchor = argv[1]
    exp = collections.defaultdict(list)
    it = iter(argv[2:])
    for opt in it:
        try:
            exp[opt].append(split(next(it)))
        except (StopIteration, ValueError) as e:
            fail(["%s: %s" % (opt, e)])
    errors = []
    enters = collections.Counter()
    roles = {}
    parents = collections.defaultdict(set)
    with_device = 0
    nested = collections.Counter()  # (region, region around it) -> Enters
    devices = collections.defaultdict(set)
    allocs = collections.defaultdict(list)
    freed = collections.Counter()
    copies = collections.defaultdict(list)
    live = {}  # address -> (label, bytes, space)
    space_bytes = collections.Counter()
    peak = {}
    unseen = [0, 0]  # deallocations whose allocation was never seen, their bytes
    last_metric = {}
    stacks = collections.defaultdict(list)
    with otf2.reader.open(anchor) as tr:
        props = {n: _otf2.Reader_GetProperty(tr.handle, n)
                 for n in _otf2.Reader_GetPropertyNames(tr.handle)}
        defs = tr.definitions
        names = [p.name for p in defs.paradigms if p.paradigm == otf2.Paradigm.KOKKOS]
        kregions = [r for r in defs.regions if r.paradigm == otf2.Paradigm.KOKKOS]
        if kregions and names != ["KOKKOS"]:
            errors.append("the Kokkos paradigm is named %r, not 'KOKKOS' (Score-P's)" % names)
        in_groups = collections.Counter()
        for g in defs.groups:
            if g.group_type == otf2.GroupType.REGIONS:
                if g.paradigm != otf2.Paradigm.KOKKOS or not g.name.startswith("Kokkos "):
                    errors.append("region group %r of paradigm %s" % (g.name, g.paradigm))
                in_groups.update(r.name for r in g.members)
        for r in kregions:
            f = r.source_file
            if f != "KOKKOS":
                errors.append("Kokkos region %r: source file %r, not 'KOKKOS'" % (r.name, f))
            if in_groups[r.name] != 1:
                errors.append("Kokkos region %r in %d region groups, not 1" % (
                    r.name, in_groups[r.name]))
        for loc, ev in tr.events:
            kind = type(ev).__name__
            if kind == "Enter":
                r = ev.region
                a = attrs(ev)
                enters[r.name] += 1
                roles[r.name] = str(r.region_role).split(".")[-1]
                st = stacks[loc]
                parents[r.name].add(st[-1].name if st else None)
                nested[(r.name, st[-1].name if st else None)] += 1
                st.append(r)
                if r.paradigm != otf2.Paradigm.KOKKOS:
                    continue
                role = r.region_role
                if role in (otf2.RegionRole.PARALLEL, otf2.RegionRole.BARRIER):
                    if "KokkosDevice" not in a:
                        errors.append("%s: no KokkosDevice attribute" % r.name)
                    else:
                        devices[r.name].add(a["KokkosDevice"])
                        with_device += 1
                elif role in (otf2.RegionRole.ALLOCATE, otf2.RegionRole.DEALLOCATE):
                    try:
                        label, size, addr = a["KokkosLabel"], a["KokkosBytes"], a["KokkosAddress"]
                    except KeyError as e:
                        errors.append("%s without %s" % (r.name, e))
                        continue
                    space = r.name.split(" ", 2)[2]
                    if role == otf2.RegionRole.ALLOCATE:
                        allocs[label].append(size)
                        live[addr] = (label, size, space)
                        space_bytes[space] += size
                    else:
                        freed[label] += 1
                        if addr not in live:
                            unseen[0] += 1
                            unseen[1] += size
                        elif live[addr] != (label, size, space):
                            errors.append("deallocation of %r (%d bytes at 0x%x) does not match "
                                          "the live allocation %r" % (label, size, addr,
                                                                      live[addr]))
                        else:
                            del live[addr]
                            space_bytes[space] -= size
                elif role == otf2.RegionRole.DATA_TRANSFER:
                    copies[(a.get("KokkosSource"), a.get("KokkosDestination"))].append(
                        a.get("KokkosBytes"))
            elif kind == "Leave":
                st = stacks[loc]
                if not st or st[-1] != ev.region:
                    errors.append("%s: Leave of %r does not match %r" % (
                        loc.name, ev.region.name, st[-1].name if st else None))
                else:
                    st.pop()
            elif kind == "Metric":
                for m, v in zip(ev.metric.members, ev.values):
                    if m.name.startswith("Kokkos ") and m.name.endswith(" memory"):
                        space = m.name[len("Kokkos "):-len(" memory")]
                        last_metric[space] = v
                        peak[space] = max(peak.get(space, v), v)
                        if v != space_bytes[space]:
                            errors.append("metric %r = %d, but %d bytes are allocated" % (
                                m.name, v, space_bytes[space]))
    for name, n in exp["--enters"]:
        if enters[name] != int(n):
            errors.append("%d Enters of %r, expected %s" % (enters[name], name, n))
    for rx, n in exp["--matching"]:
        got = sum(c for name, c in enters.items() if re.fullmatch(rx, name))
        if got != int(n):
            errors.append("%d Enters of regions matching %r, expected %s" % (got, rx, n))
    for name, role in exp["--role"]:
        if roles.get(name) != role:
            errors.append("role of %r is %s, expected %s" % (name, roles.get(name), role))
    for name, parent in exp["--inside"]:
        if parents[name] != {parent}:
            errors.append("%r entered inside %s, expected only %r" % (
                name, sorted(map(str, parents[name])), parent))
    for rx, spec in exp["--nested"]:
        parent, n = spec.rsplit(":", 1)
        got = sum(c for (name, p), c in nested.items() if p == parent and re.fullmatch(rx, name))
        if got != int(n):
            errors.append("%d Enters matching %r inside %r, expected %s" % (got, rx, parent, n))
    for name, text in exp["--device"]:
        if devices[name] != {text}:
            errors.append("KokkosDevice of %r: %s, expected %r" % (name, sorted(devices[name]),
                                                                   text))
    for label, spec in exp["--alloc"]:
        size, n = spec.split(":")
        if allocs[label] != [int(size)] * int(n):
            errors.append("allocations of %r: %s, expected %s x %s bytes" % (
                label, allocs[label], n, size))
    for label, n in exp["--freed"]:
        if freed[label] != int(n):
            errors.append("%d deallocations of %r, expected %s" % (freed[label], label, n))
    for pair, spec in exp["--copy"]:
        src, dst = pair.split(":")
        size, n = spec.split(":")
        if copies[(src, dst)] != [int(size)] * int(n):
            errors.append("deep copies %s -> %s: %s, expected %s x %s bytes" % (
                src, dst, copies[(src, dst)], n, size))
    for key, value in exp["--property"]:
        if props.get(key) != value:
            errors.append("property %s = %r, expected %r" % (key, props.get(key), value))
    for space, n in exp["--live"]:
        if last_metric.get(space) != int(n):
            errors.append("last Kokkos %s memory value %s, expected %s" % (
                space, last_metric.get(space), n))
    for space, n in exp["--peak"]:
        if peak.get(space) != int(n):
            errors.append("highest Kokkos %s memory value %s, expected %s" % (
                space, peak.get(space), n))
    for n, size in exp["--unseen-frees"]:
        if unseen != [int(n), int(size)]:
            errors.append("%d deallocations (%d bytes) of memory never seen allocated, "
                          "expected %s (%s bytes)" % (unseen[0], unseen[1], n, size))
    for loc, st in stacks.items():
        if st:
            errors.append("%s: regions left open: %s" % (loc.name, [r.name for r in st]))
    kokkos = sum(n for name, n in enters.items() if name in roles)
    print("kokkos: %d Enters, %d kernels/fences with devices, %d allocations, %d deep copies, "
          "%d properties" % (kokkos, with_device,
                             sum(len(v) for v in allocs.values()),
                             sum(len(v) for v in copies.values()), len(props)))
    if errors:
        fail(errors)
    print("check_kokkos: ok")


if __name__ == "__main__":
    main(sys.argv)
