#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_gpu_otf2.py - reads an OTF2 archive with python3-otf2 (independent of our writer) and
checks what it says about CUDA and HIP, the way Score-P writes it: host calls as regions of
paradigm CUDA/HIP, device streams as ACCELERATOR_STREAM locations, copies as RMA operations.

    check_gpu_otf2.py ARCHIVE/traces.otf2 [expectations...]

Prints, per location, its GPU regions (paradigm CUDA or HIP) in Enter/Leave order.  Checks
always: GPU regions are entered and left in nesting order on every location; API calls sit
on CPU threads; kernels, copies and sets on ACCELERATOR_STREAM locations of ACCELERATOR
location groups created by a process, whose times never go back; every RmaGet/RmaPut sits
inside a copy region of its stream, with the copy's bytes and correlation id (its matching
id), is completed (RmaOpCompleteBlocking) before the region ends, and its remote is, in the
window's group, the thread whose call has that correlation id.

Expectations:
    --expect-calls NAME=N[,NAME=N...]   host calls of that function
    --expect-threads N       threads that made GPU calls
    --expect-streams N       GPU stream locations
    --expect-kernels N       kernels on the streams
    --expect-copies KIND=N[:BYTES][,...]  device copies by direction (H2D, D2H, D2D, H2H,
                             P2P) or SET, with their bytes in total
    --device-inside-host     every device operation starts after the Enter of the call with
                             its correlation id, and ends before the Leave of the first
                             synchronising call (a *Synchronize, a synchronous copy, a device
                             reset) the same thread made from that Enter on, on the same
                             stream or on all (a host-to-device cudaMemcpy does not wait for
                             its own transfer); without one, it ends after the call's Enter
    --expect-error CODE      every GPU call's Leave says it returned CODE (GpuResult)
    --expect-leaks N         "GPU memory never freed" markers
Exits 1 with the reasons when anything fails; the last line is "check_gpu_otf2: ok".
"""
import argparse
import collections
import re
import sys

import otf2

from check_otf2 import read_markers

GPU = {otf2.Paradigm.CUDA, otf2.Paradigm.HIP}
STREAM = otf2.LocationType.GPU  # python3-otf2's name of ACCELERATOR_STREAM
COPY_KINDS = {"HtoD": "H2D", "DtoH": "D2H", "DtoD": "D2D", "HtoH": "H2H", "PtoP": "P2P"}
SYNC = re.compile(r"(cuda|hip)(Device|Stream|Event|Thread|Ctx)Synchronize|(cuda|hip)Memcpy"
                  r"(ToSymbol|FromSymbol|2D|3D|Peer)?|(cuda|hip)DeviceReset|"
                  r"cu(Ctx|Stream|Event)Synchronize(_v2)?|cuMemcpy(HtoD|DtoH|DtoD)?(_v2)?")


def attrs(ev):
    return {a.name: v for a, v in (ev.attributes or {}).items()}


class Op:
    """A GPU region instance: a host call or a device operation."""

    def __init__(self, loc, ev):
        self.loc, self.region, self.enter, self.leave = loc, ev.region, ev.time, None
        self.attrs, self.leave_attrs, self.rma = attrs(ev), {}, []

    @property
    def corr(self):
        return self.attrs.get("GpuCorrelationId")

    def describe(self):
        a = dict(self.attrs)
        a.pop("CallSite", None)
        a.update(self.leave_attrs)
        extra = " ".join("%s=%s" % kv for kv in a.items())
        return "%s [%d .. %s] %s" % (self.region.name, self.enter,
                                     "open" if self.leave is None else self.leave, extra)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("anchor")
    p.add_argument("--expect-calls", action="append", default=[])
    p.add_argument("--expect-threads", type=int)
    p.add_argument("--expect-streams", type=int)
    p.add_argument("--expect-kernels", type=int)
    p.add_argument("--expect-copies")
    p.add_argument("--device-inside-host", action="store_true")
    p.add_argument("--expect-error", type=int)
    p.add_argument("--expect-leaks", type=int)
    return p.parse_args(argv)


def read(anchor, errors):
    """The GPU regions of every location, in Enter order: {location: [Op]}."""
    ops = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    last = {}
    with otf2.reader.open(anchor) as tr:
        for loc in tr.definitions.locations:
            if loc.type == STREAM:
                g = loc.group
                if g.location_group_type != otf2.LocationGroupType.ACCELERATOR:
                    errors.append("%s: a stream outside an ACCELERATOR location group" % loc.name)
                elif g.creating_location_group is None or (
                        g.creating_location_group.location_group_type != otf2.LocationGroupType.PROCESS):
                    errors.append("%s: its context %r was created by no process" % (loc.name, g.name))
        for loc, ev in tr.events:
            kind = type(ev).__name__
            stack = stacks[loc]
            if kind in ("Enter", "Leave") and ev.region.paradigm not in GPU:
                continue
            if loc.type == STREAM:
                if ev.time < last.get(loc, 0):
                    errors.append("%s: time goes back to %d after %d" % (loc.name, ev.time, last[loc]))
                last[loc] = ev.time
            if kind == "Enter":
                op = Op(loc, ev)
                device = ev.region.region_role in (otf2.RegionRole.FUNCTION, otf2.RegionRole.DATA_TRANSFER)
                if loc.type == STREAM and not device:
                    errors.append("%s: %s (role %s) on a GPU stream" % (loc.name, ev.region.name,
                                                                        ev.region.region_role))
                elif loc.type == otf2.LocationType.CPU_THREAD and ev.region.region_role == otf2.RegionRole.FUNCTION:
                    errors.append("%s: kernel %s on a CPU thread" % (loc.name, ev.region.name))
                elif loc.type not in (STREAM, otf2.LocationType.CPU_THREAD):
                    errors.append("%s: GPU region %s on a location of type %s" % (loc.name, ev.region.name, loc.type))
                ops[loc].append(op)
                stack.append(op)
            elif kind == "Leave":
                if not stack or stack[-1].region != ev.region:
                    errors.append("%s: Leave %s, but %s is open" % (
                        loc.name, ev.region.name, stack[-1].region.name if stack else "nothing"))
                    continue
                op = stack.pop()
                op.leave, op.leave_attrs = ev.time, attrs(ev)
                for r in op.rma:
                    if not r["done"]:
                        errors.append("%s: %s %s: its RMA operation never completed" % (
                            loc.name, op.region.name, op.corr))
            elif kind in ("RmaGet", "RmaPut"):
                if loc.type != STREAM or not stack:
                    errors.append("%s: %s outside a device copy" % (loc.name, kind))
                    continue
                op = stack[-1]
                if ev.matching_id != op.corr or ev.bytes != op.attrs.get("GpuBytes"):
                    errors.append("%s: %s of %d bytes, matching %d, inside %s" % (
                        loc.name, kind, ev.bytes, ev.matching_id, op.describe()))
                members = ev.win.comm.group.members
                op.rma.append({"kind": kind, "done": False, "bytes": ev.bytes,
                               "remote": members[ev.remote] if ev.remote < len(members) else None})
            elif kind == "RmaOpCompleteBlocking":
                pending = [r for o in stack for r in o.rma if not r["done"]]
                if not pending or stack[-1].corr != ev.matching_id:
                    errors.append("%s: RmaOpCompleteBlocking %d of no open RMA operation" % (
                        loc.name, ev.matching_id))
                else:
                    pending[-1]["done"] = True
    for loc, stack in stacks.items():
        for op in stack:
            errors.append("%s: %s never left" % (loc.name, op.region.name))
    return ops


def process(loc):
    """The process (location group) of a thread, or of a stream's context."""
    g = loc.group
    return g.creating_location_group if loc.type == STREAM else g


def copy_kind(op):
    if op.region.region_role == otf2.RegionRole.DATA_TRANSFER and "GpuCopyKind" not in op.attrs:
        return "SET"
    return COPY_KINDS.get(op.attrs.get("GpuCopyKind"), op.attrs.get("GpuCopyKind"))


def main(argv):
    opts = parse_args(argv)
    errors = []
    ops = read(opts.anchor, errors)
    host = {loc: o for loc, o in ops.items() if loc.type != STREAM}
    device = {loc: o for loc, o in ops.items() if loc.type == STREAM}
    calls = collections.Counter(op.region.name for o in host.values() for op in o)
    # correlation ids are a process's own
    by_corr = {(process(op.loc), op.corr): op for o in host.values() for op in o if op.corr}
    kernels = sum(op.region.region_role == otf2.RegionRole.FUNCTION for o in device.values() for op in o)
    copies = collections.defaultdict(lambda: [0, 0])
    for loc, o in sorted(ops.items(), key=lambda kv: kv[0].name):
        print("%s (%s, %d GPU regions)" % (loc.name, "stream" if loc.type == STREAM else "thread", len(o)))
        for op in o:
            print("    " + op.describe())
    for loc, o in device.items():
        for op in o:
            if op.region.region_role == otf2.RegionRole.DATA_TRANSFER:
                c = copies[copy_kind(op)]
                c[0] += 1
                c[1] += op.attrs.get("GpuBytes", 0)
            call = by_corr.get((process(loc), op.corr))
            for r in op.rma:
                if call and r["remote"] != call.loc:
                    errors.append("%s: %s of %s: remote %s, but %s made the call" % (
                        loc.name, r["kind"], op.describe(), r["remote"] and r["remote"].name, call.loc.name))
            if opts.device_inside_host:
                inside(op, call, host, errors)
    print("check_gpu_otf2: %d calls on %d threads, %d kernels, copies %s on %d streams" % (
        sum(calls.values()), len(host), kernels, {k: tuple(v) for k, v in copies.items()}, len(device)))

    for spec in opts.expect_calls:
        for item in spec.split(","):
            name, n = item.rsplit("=", 1)
            if calls[name] != int(n):
                errors.append("%d calls of %s, expected %s" % (calls[name], name, n))
    if opts.expect_threads is not None and len(host) != opts.expect_threads:
        errors.append("%d threads made GPU calls, expected %d" % (len(host), opts.expect_threads))
    if opts.expect_streams is not None and len(device) != opts.expect_streams:
        errors.append("%d GPU streams, expected %d" % (len(device), opts.expect_streams))
    if opts.expect_kernels is not None and kernels != opts.expect_kernels:
        errors.append("%d kernels, expected %d" % (kernels, opts.expect_kernels))
    if opts.expect_copies:
        for item in opts.expect_copies.split(","):
            kind, want = item.split("=")
            n, _, nbytes = want.partition(":")
            got = copies.get(kind, [0, 0])
            if got[0] != int(n) or (nbytes and got[1] != int(nbytes)):
                errors.append("%s copies: %d of %d bytes, expected %s" % (kind, got[0], got[1], want))
    if opts.expect_error is not None:
        for o in host.values():
            for op in o:
                if "libtrace:closed_by_converter" in op.leave_attrs:
                    continue  # it never returned
                if op.leave_attrs.get("GpuResult", 0) != opts.expect_error:
                    errors.append("%s: %s returned %s, expected %d" % (
                        op.loc.name, op.describe(), op.leave_attrs.get("GpuResult", 0), opts.expect_error))
    if opts.expect_leaks is not None:
        leaks = [t for c, t in read_markers(opts.anchor) if c == "GPU memory never freed"]
        for t in leaks:
            print("leak: " + t)
        if len(leaks) != opts.expect_leaks:
            errors.append("%d GPU leak markers, expected %d" % (len(leaks), opts.expect_leaks))
    for e in errors[:30]:
        print("check_gpu_otf2: " + e, file=sys.stderr)
    if errors:
        sys.exit(1)
    print("check_gpu_otf2: ok")


def inside(op, call, host, errors):
    """--device-inside-host for device operation op, asked for by host call `call`."""
    where = "%s: %s" % (op.loc.name, op.describe())
    if call is None:
        errors.append("%s: no host call has its correlation id" % where)
        return
    if op.enter < call.enter:
        errors.append("%s: starts before its call %s entered" % (where, call.describe()))
    stream = call.attrs.get("GpuStream")
    for s in host[call.loc]:
        if s.enter < call.enter or not SYNC.fullmatch(s.region.name):
            continue
        if s is call and call.attrs.get("GpuCopyKind") == "HtoD":
            # A synchronous copy from pageable host memory returns once the data is staged
            # for DMA; the transfer to the device may end later (CUDA's documented
            # behaviour, seen on an H200: up to 1.1 us after the return for 4 KiB).
            continue
        waits_for = s.attrs.get("GpuStream")
        if waits_for and stream and waits_for != stream:
            continue  # a wait for another stream
        if s.leave is not None and op.leave is not None and op.leave > s.leave:
            errors.append("%s: ends after %s returned" % (where, s.describe()))
        return


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except SystemExit:
        raise
    except Exception as e:  # a reader exception is a failed check, not a crash
        print("check_gpu_otf2: reading the archive failed: %r" % e, file=sys.stderr)
        sys.exit(1)
