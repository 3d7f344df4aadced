#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""mk_gpu_trace.py OUT EXE MAIN_OFF VARIANT - writes a trace directory with what a CUDA
program under CUPTI leaves (VARIANT cupti), a GPU-less machine (nogpu) or a device record
outside its host call (late), from format.h alone: e2e.gpu-convert and e2e.convert-parallel."""
import os, random, struct, sys

# format.h, as the runtime writes it
ENTER, LEAVE, ACT, BEGIN, END, CREATE, WAIT = 40, 41, 42, 2, 3, 4, 5
CALL_ENTER, CALL_LEAVE = 7, 8
F_CALLSITE = 0x80
CUDART, CUPTI_RT, HIP = 0, 1, 3
OP = dict(call=0, alloc=1, free=2, copy=3, set=4, launch=5, sync=6)
HTOD, DTOH, DTOD = 1, 2, 3
KERNEL, COPY, SET = 0, 1, 2
M = (1 << 64) - 1


def chunk_check(magic, hsize, thread, tid, seq, cap):
    h = 0x9e3779b97f4a7c15
    h ^= (magic + (hsize << 32)) & M
    h = h * 0xff51afd7ed558ccd & M
    h ^= thread + (tid << 32)
    h = h * 0xc4ceb9fe1a85ec53 & M
    h ^= seq
    h = h * 0xff51afd7ed558ccd & M
    h ^= cap
    h = h * 0xc4ceb9fe1a85ec53 & M
    return (h ^ (h >> 32)) & 0xffffffff


def rec(ts, typ, sub=0, arg=0, words=(), callsite=0):
    words = list(words) + ([callsite] if callsite else [])
    typ |= F_CALLSITE if callsite else 0
    return struct.pack("<QBBHI", ts, typ, 2 + len(words), sub, arg) + b"".join(
        struct.pack("<Q", w & M) for w in words)


def write_process(d, pid, meta_lines, threads):
    """threads: {index: (tid, [record bytes])}: one chunk each, ended (LT_CHUNK_LAST)."""
    os.makedirs(d)
    with open(os.path.join(d, "meta"), "w") as f:
        f.write("\n".join(meta_lines) + "\n")
    out = struct.pack("<8sHHIIIQQ", b"LIBTRACE", 1, 5, 40, pid, 0, 0, 0).ljust(4096, b"\0")
    for index, (tid, recs) in sorted(threads.items()):
        body = b"".join(recs)
        cap = 64 + len(body)
        hdr = struct.pack("<IIIIQQQQIIII", 0x4b43544c, 64, index, tid, 0, cap, len(body), 0, 1,
                          chunk_check(0x4b43544c, 64, index, tid, 0, cap), 2, 0)
        out += hdr + body
    with open(os.path.join(d, "events"), "wb") as f:
        f.write(out)


def esc(s):
    return "".join("\\x%02x" % ord(c) if ord(c) < 0x21 or c in "\\\x7f" else c for c in s)


def main():
    out, exe, main_off, variant = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), sys.argv[4]
    T0, REAL = 5_000_000_000, 1_700_000_000_000_000_000
    base = 0x555500000000
    site = base + main_off + 8  # a return address inside main
    strings = {}

    def sid(text):
        return strings.setdefault(text, len(strings) + 1)

    ok = variant != "nogpu"
    api = CUPTI_RT if ok else CUDART

    def call(t, recs, at, name, op, corr, args=(), rc=0, made=0, dur=1000, cs=0):
        """A GPU call: its ENTER at `at`, its LEAVE `dur` later (None: never)."""
        if not ok:
            rc, made, corr = 35, 0, 0  # cudaErrorInsufficientDriver, as without a GPU
        sub = api | OP[op] << 4
        recs.append(rec(T0 + at, ENTER, sub, sid(name), [corr] + list(args), cs))
        if dur is not None:
            recs.append(rec(T0 + at + dur, LEAVE, sub, rc & 0xffffffff, [made] if made else []))

    t0, t1 = [], []
    t0.append(rec(T0 + 1000, BEGIN, 0, 0, [0, 0xffffffff << 32 | 4242]))
    call(0, t0, 2000, "cudaMalloc", "alloc", 1, [4096, 0], made=0xd000, cs=site)
    call(0, t0, 4000, "cudaMalloc", "alloc", 2, [8192, 0], made=0xe000, cs=site)
    call(0, t0, 6000, "cudaMalloc", "alloc", 3, [1 << 40, 0], rc=2, dur=500, cs=site)
    call(0, t0, 7000, "cudaMemcpy", "copy", 4, [4096, 0xd000, 0x7ff000, HTOD, 0], dur=5000)
    dims = [4 | 1 << 32, 1 | 256 << 32, 1 | 1 << 32]
    call(0, t0, 13000, "cudaLaunchKernel", "launch", 5, dims + [0, 0x51, sid("_Z6vecAddPfS_S_i")])
    call(0, t0, 15000, "cudaMemcpyAsync", "copy", 6, [4096, 0x7ff000, 0xd000, DTOH, 0x51])
    call(0, t0, 17000, "cudaStreamSynchronize", "sync", 7, [0x51], dur=17000)
    t0.append(rec(T0 + 35000, CALL_ENTER, 0, 0, [], site))  # pthread_create
    t0.append(rec(T0 + 35100, CREATE, 0, 1))
    t0.append(rec(T0 + 35500, CALL_LEAVE, 0, 0))
    call(0, t0, 36000, "cudaFree", "free", 8, [0xd000, 0], cs=site)
    call(0, t0, 38000, "cudaFree", "free", 9, [0xbad, 0], rc=1, dur=500, cs=site)
    t0.append(rec(T0 + 39000, CALL_ENTER, 1, 0, [1], site))  # pthread_join
    t0.append(rec(T0 + 90000, WAIT, 0, 1))
    t0.append(rec(T0 + 90100, CALL_LEAVE, 1, 0))
    t0.append(rec(T0 + 95000, END, 0, 0))

    t1.append(rec(T0 + 40000, BEGIN, 0, 1, [0, 0 << 32 | 4243]))
    call(1, t1, 41000, "cudaMallocManaged", "alloc", 10, [2048, 2], made=0xf000, cs=site)
    call(1, t1, 43000, "cudaMemsetAsync", "set", 11, [2048, 0xf000, 0, 0x52])
    dims = [2 | 2 << 32, 1 | 128 << 32, 1 | 1 << 32]
    call(1, t1, 46000, "cudaLaunchKernel", "launch", 12, dims + [0, 0x52, sid("_Z5scalePfi")])
    call(1, t1, 49000, "cudaMemcpyAsync", "copy", 14, [1024, 0xf400, 0xf000, DTOD, 0x52])
    call(1, t1, 50200, "cudaMemcpyAsync", "copy", 17, [512, 0xf800, 0x7ff800, HTOD, 0x52], dur=500)
    call(1, t1, 51000, "cudaDeviceSynchronize", "sync", 15, [], dur=12000)
    call(1, t1, 64000, "cudaFree", "free", 13, [0xf000, 2], cs=site)
    call(1, t1, 66000, "cudaDeviceSynchronize", "sync", 16, [], dur=None)  # left open
    if ok:  # the device's records, as CUPTI hands them over: late, out of order
        ctx = 0 << 32 | 1
        acts = [
            (COPY, HTOD, 8000, 11000, 7, 4, [4096]),
            (KERNEL, sid("_Z6vecAddPfS_S_i"), 15000, 30000, 7, 5, [4 | 1 << 32, 1 | 256 << 32, 1 | 1 << 32]),
            (COPY, DTOH, 29000, 33000, 7, 6, [4096]),  # starts before the kernel ended
            (SET, 0, 45000, 44800, 8, 11, [2048]),  # ends before it started
            (KERNEL, sid("_Z5scalePfi"), 48000, 60000, 8, 12, [2 | 2 << 32, 1 | 128 << 32, 1 | 1 << 32]),
            (COPY, DTOD, 61000, 62000, 8, 14, [1024]),
            (COPY, HTOD, 62200, 62800, 8, 17, [512]),
        ]
        if variant == "late":  # a kernel that ends after the synchronisation returned
            acts[1] = acts[1][:3] + (36000,) + acts[1][4:]
        random.Random(7).shuffle(acts)
        for i, (kind, arg, s, e, stream, corr, rest) in enumerate(acts):
            t1.append(rec(T0 + 70000 + i, ACT, kind, arg, [T0 + s, T0 + e, ctx, stream, corr] + rest))
    t1.append(rec(T0 + 80000, END, 0, 1))

    meta = ["libtrace-meta 1.5", "pid 4242", "ppid 1", "host gpuhost", "exe " + esc(exe),
            "arg " + esc(exe), "clock monotonic", "clock_hz 1000000000",
            "sync %d %d %d" % (T0, T0, REAL),
            "map %x %x 0 %s" % (base, base + 0x100000, esc(exe)), "callsite_depth 1"]
    if ok:
        meta += ["gpu cupti 12040", "gpu_clock sync", "gpu_off hip " + esc("libamdhip64.so not found")]
    else:
        meta += ["gpu_off cupti " + esc("libcupti.so not found: the shared CUDA runtime's calls only")]
    meta += ["string %d %s" % (i, esc(s)) for s, i in strings.items()]
    meta += ["sync %d %d %d" % (T0 + 100000, T0 + 100000, REAL + 100000), "end %d exit" % (T0 + 100000)]
    write_process(os.path.join(out, "gpuhost.4242"), 4242, meta, {0: (4242, t0), 1: (4243, t1)})


if __name__ == "__main__":
    main()
