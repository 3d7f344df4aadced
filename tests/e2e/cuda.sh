#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# CUDA without a GPU: the real CUDA 13 runtime fails every device call here (35, no
# driver), and every call is still recorded.
#  1. tests/programs/cuda_calls.cu built with `nvcc -cudart shared`, 3 host threads x 2
#     rounds: same output traced and untraced; CUPTI (the real libcupti) says why it is
#     off and the cudart wrappers record; each thread's records hold exactly the program's
#     calls in program order, with their arguments (bytes, direction, grid and block, the
#     kernels' names) and return code 35; converted, the archive and the Paraver trace
#     pass the independent readers and check_gpu_otf2.py finds the same calls.
#  2. The static build (nvcc's default): the program is unchanged, nothing is recorded of
#     CUDA (its cudart is invisible without CUPTI) and the meta file says why.
#  3. LIBTRACE_MODULES without cuda: no GPU record; LIBTRACE_CUPTI=off: the wrappers still
#     record and CUPTI is never loaded.  LIBTRACE_MIN_DURATION leaves out the short calls
#     that give the device no work, and counts them; the rest stays.
#  4. No undefined CUDA, CUPTI or HIP symbol in libtrace.so: LD_BIND_NOW=1 runs of programs
#     without CUDA work.
#  5. The name filters: LIBTRACE_EXCLUDE over call and kernel names, and LIBTRACE_INCLUDE
#     keeping one kernel's launches alone, each run held against the unfiltered one
#     (gpu_filters in lib.sh).
#  6. tests/programs/cuda_async.cu (tools/gpu-check.sh's graphs and pinned copies), shared
#     cudart: it stops at its first failed calls, the same traced, and those 7 calls are
#     recorded in order with their error.
. "$(dirname "$0")/lib.sh"
SHARED=$TESTBIN/cuda_calls_shared
STATIC=$TESTBIN/cuda_calls_static
[ -x "$SHARED" ] && [ -x "$STATIC" ] || skip "the CUDA test programs were not built (no nvcc)"
mkdir -p "$WORK/in"
THREADS=3
ROUNDS=2

# ---- 4. no GPU symbol is a link-time dependency ----
no_gpu_dependency

# ---- 1. shared cudart ----
same_behaviour shared "$SHARED" $THREADS $ROUNDS
T=$WORK/shared.trace
grep -aq '^gpu_off cupti ' "$T"/*/meta || fail "the meta file does not say why CUPTI is off"
echo "CUPTI: $(grep -a '^gpu_off cupti ' "$T"/*/meta | head -1)"
"$DUMP" "$T" >"$WORK/shared.dump" || fail "trace-dump failed"
/usr/bin/python3 - "$WORK/shared.dump" $THREADS $ROUNDS <<'EOF' || fail "the recorded CUDA calls are not the program's"
import re, sys
dump, threads, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
N = 1024 * 4
# The calls of one round of cuda_calls.cu, in program order: name, op, what must be shown.
ROUND = [("cudaMalloc", "alloc", "bytes=4096"), ("cudaMalloc", "alloc", "bytes=4096"),
         ("cudaMalloc", "alloc", "bytes=8192"), ("cudaStreamCreate", "call", ""),
         ("cudaEventCreate", "call", ""), ("cudaMemcpy", "copy", "bytes=4096 .*kind=HtoD"),
         ("cudaMemsetAsync", "set", "bytes=4096"),
         ("__cudaLaunchKernel", "launch", 'grid=4x1x1 block=256x1x1 .*kernel="_Z3addPfPKfi"'),
         ("cudaLaunchKernel", "launch", 'grid=8x1x1 block=128x1x1 .*kernel="_Z5scalePffi"'),
         ("cudaEventRecord", "call", ""), ("cudaEventSynchronize", "sync", ""),
         ("cudaStreamSynchronize", "sync", ""), ("cudaMemcpyAsync", "copy", "bytes=4096 .*kind=DtoH"),
         ("cudaDeviceSynchronize", "sync", ""), ("cudaEventDestroy", "call", ""),
         ("cudaStreamDestroy", "call", ""), ("cudaFree", "free", ""), ("cudaFree", "free", "")]
calls = {}  # thread -> [(name, op, line, rc)]
open_call = {}
for line in open(dump):
    f = line.split()
    if len(f) < 4 or f[3] not in ("GPU_ENTER", "GPU_LEAVE"):
        continue
    th = int(f[1])
    if f[3] == "GPU_ENTER":
        assert th not in open_call, "nested call on thread %d: %s" % (th, line)
        open_call[th] = (f[6].strip('"'), f[5], line)
    else:
        name, op, enter = open_call.pop(th)
        assert f[5] == op, "LEAVE op %s after %s" % (f[5], enter)
        rc = int(re.search(r"rc=(-?\d+)", line).group(1))
        calls.setdefault(th, []).append((name, op, enter, rc))
assert not open_call, "calls left open: %s" % open_call
main = calls.pop(0, [])
assert [c[0] for c in main] == ["cudaGetDeviceCount"], "main thread: %s" % [c[0] for c in main]
assert len(calls) == threads, "%d threads with CUDA calls, expected %d" % (len(calls), threads)
for th, seq in sorted(calls.items()):
    want = ROUND * rounds
    assert len(seq) == len(want), "thread %d: %d calls, expected %d" % (th, len(seq), len(want))
    for (name, op, line, rc), (wname, wop, pattern) in zip(seq, want):
        assert (name, op) == (wname, wop), "thread %d: %s %s where %s %s was made" % (th, name, op, wname, wop)
        assert re.search(pattern, line), "thread %d: %s lacks %s: %s" % (th, name, pattern, line)
        assert rc == 35, "thread %d: %s returned %d, the program saw 35" % (th, name, rc)
        assert "cudart" in line and " at=0x" in line, "no call site: " + line
print("%d threads x %d calls, in program order, with their arguments and error 35" % (threads, len(ROUND) * rounds))
EOF
if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null && /usr/bin/python3 -c 'import otf2' 2>/dev/null; then
	calls=$((THREADS * ROUNDS))
	converted "$T" "$WORK/shared.otf2"
	/usr/bin/python3 "$SRC/tests/e2e/check_gpu_otf2.py" "$WORK/shared.otf2/traces.otf2" \
		--expect-threads $((THREADS + 1)) --expect-error 35 \
		--expect-calls "cudaMalloc=$((3 * calls)),cudaFree=$((2 * calls)),cudaMemcpy=$calls,cudaMemcpyAsync=$calls,__cudaLaunchKernel=$calls,cudaLaunchKernel=$calls,cudaDeviceSynchronize=$calls" \
		>"$WORK/gpu.log" 2>&1 || {
		cat "$WORK/gpu.log" >&2
		fail "check_gpu_otf2"
	}
	echo "OTF2: $(tail -1 "$WORK/gpu.log")"
	"$CONVERT" -q -f paraver -o "$WORK/shared" "$T" || fail "Paraver conversion failed"
	/usr/bin/python3 "$SRC/tests/e2e/check_prv.py" "$WORK/shared.prv" >/dev/null ||
		fail "check_prv rejects the Paraver trace"
	grep -q 'CUDA' "$WORK/shared.pcf" || fail "the .pcf names no CUDA event type"
	echo "Paraver: accepted by check_prv.py"
fi

# ---- 2. static cudart ----
same_behaviour static "$STATIC" $THREADS 1
"$DUMP" "$WORK/static.trace" | grep -q GPU_ && fail "records of a static cudart without CUPTI?"
grep -aq '^gpu_off cupti no\\x20CUDA\\x20driver' "$WORK"/static.trace/*/meta ||
	fail "the meta file does not say why the static cudart's calls are not recorded"
echo "static cudart: program unchanged, nothing recorded, the meta file says why"

# ---- 3. module off; CUPTI off ----
LIBTRACE_MODULES=pthread traced "$WORK/nomod" "$SHARED" 2 1 >/dev/null || fail "run without the cuda module"
"$DUMP" "$WORK/nomod" | grep -q GPU_ && fail "GPU records with LIBTRACE_MODULES=pthread"
LIBTRACE_CUPTI=off traced "$WORK/nocupti" "$SHARED" 2 1 >/dev/null || fail "run with LIBTRACE_CUPTI=off"
n=$("$DUMP" "$WORK/nocupti" | grep -c GPU_ENTER)
# cudaGetDeviceCount, then 18 calls per thread and round
[ "$n" -eq 37 ] || fail "LIBTRACE_CUPTI=off: $n calls recorded, expected 37"
grep -aq 'gpu_off cupti' "$WORK"/nocupti/*/meta && fail "LIBTRACE_CUPTI=off still tried CUPTI"
echo "modules without cuda: nothing recorded; LIBTRACE_CUPTI=off: the wrappers record, no CUPTI"

# ---- 3b. LIBTRACE_MIN_DURATION: short plain calls and syncs go, the device's work stays ----
# Without a driver every call returns at once: of each thread's 18 calls the 8 that give
# the device no work (stream and event management, the three synchronisations) leave no
# records and are counted; its allocations, frees, copies, sets and launches stay.
LIBTRACE_MIN_DURATION=1ms LIBTRACE_CUPTI=off traced "$WORK/short" "$SHARED" 2 1 >/dev/null ||
	fail "run with LIBTRACE_MIN_DURATION"
kept=$("$DUMP" "$WORK/short" | awk '$4 == "GPU_ENTER" && $2 != 0 { print $6 }' | sort | uniq -c |
	awk '{ printf "%s=%s ", $2, $1 }')
[ "$kept" = "alloc=6 copy=4 free=4 launch=4 set=2 " ] || fail "LIBTRACE_MIN_DURATION kept: $kept"
short=$(grep -ah '^dropped [12] 0 ' "$WORK"/short/*/meta | awk '{ s += $4 } END { print s }')
[ "$short" = 16 ] || fail "LIBTRACE_MIN_DURATION: $short short calls counted, expected 16"
echo "min-duration: kept $kept; 16 short calls counted"

# ---- 5. name filters ----
gpu_filters cuda 'cudaMemcpy*,_Z5scale*' "$SHARED" 2 1

# ---- 6. asynchronous CUDA, no GPU: the first calls fail, the program stops there ----
ASYNC=$TESTBIN/cuda_async_shared
[ -x "$ASYNC" ] || fail "cuda_async_shared was not built beside the other CUDA programs"
same_behaviour async "$ASYNC" 3
calls=$("$DUMP" "$WORK/async.trace" | awk '$4 == "GPU_ENTER" { printf "%s ", $7 }')
want='"cudaMallocHost" "cudaMalloc" "cudaMalloc" "cudaStreamCreate" "cudaStreamCreate" '
want+='"cudaStreamCreate" "cudaEventCreate" '
[ "$calls" = "$want" ] || fail "cuda_async: recorded $calls"
rcs=$("$DUMP" "$WORK/async.trace" | awk '$4 == "GPU_LEAVE"' | grep -c ' rc=35\b')
[ "$rcs" = 7 ] || fail "cuda_async: $rcs of 7 calls failed with 35"
echo "cuda_async: its 7 calls recorded in order, each failed with 35"
echo ok
