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

for v in cupti nogpu late; do
	python3 "$SRC/tests/e2e/mk_gpu_trace.py" "$WORK/$v" "$exe" "$main_off" $v || fail "writing the $v trace"
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
