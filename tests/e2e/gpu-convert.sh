#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 and trace-dump on GPU records (format 1.5), without a GPU: trace directories
# written here from format.h alone (an independent writer), with what a CUDA program under
# CUPTI leaves: two threads' API calls with their arguments and error codes, allocations of
# which one is never freed, the device's kernels, copies and sets on two streams, handed
# over late and out of order, one starting before the previous one on its stream ended and
# one ending before it started.  The OTF2 archive passes otf2-print -Werror, check_otf2.py
# and check_gpu_otf2.py (calls, kernels, copies and bytes, RMA sides, the device inside its
# host calls, the leak); the Paraver trace passes check_prv.py with the GPU's event types,
# stream threads and host-to-device communications.  Then what a GPU-less machine gives
# (every call of the shared cudart returns 35) and a device record outside its host call,
# which the checker must refuse.
. "$(dirname "$0")/lib.sh"
need_converter
GPUCHECK="/usr/bin/python3 $SRC/tests/e2e/check_gpu_otf2.py"

# The call sites are return addresses inside main of a real program, so that the converter
# names them as it names other call sites.
exe=$TESTBIN/count_events
main_off=$(nm "$exe" 2>/dev/null | awk '$3 == "main" { print $1 }')
[ -n "$main_off" ] || main_off=0
# Kernel names are demangled where the converter has libbfd's demangler.
vecadd='vecAdd(float*, float*, float*, int)'
"$CONVERT" --help | grep -q 'has no libbfd' && vecadd=_Z6vecAddPfS_S_i

cat >"$WORK/mk_gpu_trace.py" <<'PY'
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


main()
PY
for v in cupti nogpu late; do
	python3 "$WORK/mk_gpu_trace.py" "$WORK/$v" "$exe" "$main_off" $v || fail "writing the $v trace"
done

# ---- trace-dump prints the new records readably ----
"$DUMP" "$WORK/cupti" >"$WORK/dump" || fail "trace-dump: exit status $?"
for n in GPU_ENTER=17 GPU_LEAVE=16 GPU_ACTIVITY=7; do
	got=$(grep -c " ${n%=*} " "$WORK/dump")
	[ "$got" = "${n#*=}" ] || fail "trace-dump: $got ${n%=*} records, expected ${n#*=}"
done
for line in 'GPU_ENTER cupti-runtime launch "cudaLaunchKernel" corr=5 grid=4x1x1 block=256x1x1 shared=0 stream=0x51 kernel="_Z6vecAddPfS_S_i"' \
	'GPU_ENTER cupti-runtime alloc "cudaMalloc" corr=2 bytes=8192 mem="device" at=0x' \
	'GPU_LEAVE cupti-runtime alloc rc=2' 'GPU_LEAVE cupti-runtime alloc rc=0 made=0xe000' \
	'GPU_ENTER cupti-runtime copy "cudaMemcpy" corr=4 bytes=4096 dst=0xd000 src=0x7ff000 kind=HtoD' \
	'GPU_ACTIVITY copy HtoD device=0 context=1 stream=7 corr=4 start=8000 end=11000 duration=3000 bytes=4096' \
	'GPU_ACTIVITY kernel "_Z5scalePfi" device=0 context=1 stream=8 corr=12 start=48000 end=60000 duration=12000 grid=2x2x1 block=128x1x1'; do
	grep -qF "$line" "$WORK/dump" || fail "trace-dump: no line with: $line"
done
echo "trace-dump: $(grep -c ' GPU_' "$WORK/dump") GPU records printed"

# ---- OTF2 ----
converted "$WORK/cupti" "$WORK/cupti.otf2" --processes 1 --locations 2 --created 1 --waited 1 \
	--kind RmaGet=2 --kind RmaPut=1 --kind RmaOpCompleteBlocking=3 \
	--enters cudaMalloc=3 --enters "$vecadd=1" \
	--markers 'GPU memory never freed=1'
$GPUCHECK "$WORK/cupti.otf2/traces.otf2" --expect-threads 2 --expect-streams 2 --expect-kernels 2 \
	--expect-calls cudaMalloc=3,cudaMallocManaged=1,cudaFree=3,cudaMemcpy=1,cudaMemcpyAsync=3 \
	--expect-calls cudaMemsetAsync=1,cudaLaunchKernel=2,cudaStreamSynchronize=1,cudaDeviceSynchronize=2 \
	--expect-copies H2D=2:4608,D2H=1:4096,D2D=1:1024,SET=1:2048 \
	--device-inside-host --expect-leaks 1 >"$WORK/gpu.log" 2>&1 || {
	tail -20 "$WORK/gpu.log" >&2
	fail "check_gpu_otf2 cupti"
}
tail -1 "$WORK/gpu.log" | grep -qx 'check_gpu_otf2: ok' || fail "check_gpu_otf2 printed no verdict"
# The stream operations ordered in time, the RMA remote the thread that asked.
grep -A3 '^CUDA\[0:1\] stream 7 ' "$WORK/gpu.log" | grep -q 'cudaMemcpy DtoH \[5000030000 \.\. 5000033000\]' ||
	fail "the copy that started before the kernel ended was not moved to its end: $(cat "$WORK/gpu.log")"
grep -A4 '^CUDA\[0:1\] stream 8 ' "$WORK/gpu.log" | grep -q 'cudaMemset \[5000045000 \.\. 5000045000\]' ||
	fail "the set that ended before it started was not given its start"
grep -q 'cudaDeviceSynchronize \[5000066000 \.\. 5000080000\] .*libtrace:closed_by_converter=1' "$WORK/gpu.log" ||
	fail "the call open at its thread's end was not closed there by the converter"
otf2-print -I "$WORK/cupti.otf2/traces.otf2" >"$WORK/info"
grep -A1 'Property name *LIBTRACE::GPU$' "$WORK/info" | grep -q 'cupti 12040' &&
	grep -A1 'Property name *LIBTRACE::GPU_CLOCK$' "$WORK/info" | grep -q 'sync' ||
	fail "the meta keys gpu and gpu_clock are not archive properties: $(grep Property "$WORK/info")"
# The converter's summary: the operations moved, the leak with its call site, the layer off.
rm -rf "$WORK/summary.otf2"
"$CONVERT" "$WORK/cupti" -o "$WORK/summary.otf2" 2>"$WORK/summary" || fail "trace2otf2 cupti: exit status $?"
grep -q '7 GPU operations (2 moved to keep their stream in order)' "$WORK/summary" &&
	grep -q '^trace2otf2: device memory never freed: 1 allocation, 8192 bytes$' "$WORK/summary" &&
	grep -q '^trace2otf2:   8192 bytes of device memory at 0xe000, by cudaMalloc at ' "$WORK/summary" &&
	grep -q '^trace2otf2: gpu hip: libamdhip64.so not found$' "$WORK/summary" ||
	fail "the summary lacks the GPU lines: $(cat "$WORK/summary")"
if [ "$main_off" != 0 ]; then
	grep -q 'by cudaMalloc at main\b' "$WORK/summary" || fail "the leak's call site is not main: $(cat "$WORK/summary")"
fi
echo "summary: $(grep -c . "$WORK/summary") lines, the leak and its call site named"

# ---- Paraver ----
"$CONVERT" -q -f paraver "$WORK/cupti" -o "$WORK/cupti.prv" || fail "trace2otf2 -f paraver: exit status $?"
/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/cupti.prv" --expect-tasks 1 --expect-threads 4 \
	--expect-events '63000000:*=17' --expect-events 63000000:11=3 --expect-events 63100000:1=2 \
	--expect-events 63100000:3=4 --expect-events 63100000:34=1 --expect-events '63000006:*=2' \
	--expect-comms-tag 3=7 --expect-comms-tag 1=1 --expect-state 'Memory transfer' --expect-state Idle \
	--expect-state 'Allocating memory' --expect-label 63000006=vecAdd --expect-label 63000000=cudaMallocManaged \
	--expect-label 69000019=8192 || fail "check_prv cupti"
grep -qx 'CUDA\[0:1\] stream 8' "$WORK/cupti.row" || fail "no stream thread in the .row"

# ---- no GPU: the shared cudart's calls, each returning 35 ----
converted "$WORK/nogpu" "$WORK/nogpu.otf2" --processes 1 --locations 2
$GPUCHECK "$WORK/nogpu.otf2/traces.otf2" --expect-threads 2 --expect-streams 0 --expect-kernels 0 \
	--expect-error 35 --expect-leaks 0 --expect-calls cudaMalloc=3,cudaLaunchKernel=2 >"$WORK/gpu.log" 2>&1 || {
	tail -20 "$WORK/gpu.log" >&2
	fail "check_gpu_otf2 nogpu"
}
"$CONVERT" -q -f paraver "$WORK/nogpu" -o "$WORK/nogpu.prv" || fail "trace2otf2 -f paraver nogpu"
/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/nogpu.prv" --expect-threads 2 \
	--expect-events '69100018:35=16' || fail "check_prv nogpu"

# ---- the checker fails where it must ----
converted "$WORK/late" "$WORK/late.otf2" --processes 1
$GPUCHECK "$WORK/late.otf2/traces.otf2" --device-inside-host >"$WORK/gpu.log" 2>&1 &&
	fail "check_gpu_otf2 accepts a kernel that ends after its stream was synchronised"
grep -q 'vecAdd.*ends after cudaStreamSynchronize' "$WORK/gpu.log" || fail "no clear message: $(tail -3 "$WORK/gpu.log")"
$GPUCHECK "$WORK/cupti.otf2/traces.otf2" --expect-kernels 3 --expect-error 35 >"$WORK/gpu.log" 2>&1 &&
	fail "check_gpu_otf2 accepts wrong expectations"
grep -q '2 kernels, expected 3' "$WORK/gpu.log" || fail "no clear message: $(tail -3 "$WORK/gpu.log")"
echo ok
