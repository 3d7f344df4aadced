#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/gpu.sh - what tracing adds to a GPU runtime call on the host: bench/gpu_calls.c
# (loops of malloc + free, a 4 KiB copy to the device, a kernel launch) through the HIP
# runtime (libamdhip64) and the shared CUDA runtime (libcudart.so), each untraced, traced
# (libtrace.so preloaded, every call recorded by the hip or cuda module's wrappers) and
# preloaded with the module off (LIBTRACE_MODULES=pthread: the wrapper's pass-through).
#
#   bench/gpu.sh [BUILD_DIR] [ROUNDS] [ITERS]        (defaults: build, 5, 20000)
#
# No GPU needed: without one every call fails at once (HIP 101, CUDA 35) and still goes
# through the wrapper and into the runtime, so what tracing adds is what it adds with a
# GPU.  But Debian's HIP 5.2 initialises itself again on every failing call (its ~100
# settings read from the environment into fresh strings, /dev/kfd opened: about 12 us
# here), which buries a wrapper's cost: that runtime's "added" is mostly the process being
# multithreaded once the tracer's writer runs (glibc's malloc leaves its single-thread fast
# path: an idle extra thread alone adds 0.2-0.6 us to such a call here) and noise of
# +-0.5 us; perf puts about 50 ns of it in libtrace.so.  "HIP stub" runs the same program
# against a stand-in libamdhip64.so.5 whose functions only return 101 (found first through
# LD_LIBRARY_PATH): the wrapper's cost alone.  CUDA's failing calls cost a few ns.
# Each round runs every configuration one after the other, so that machine noise hits them
# alike; each run reports the median of 11 repetitions of ITERS iterations (ITERS / 10 with
# the real HIP runtime); the table gives the median over the rounds, in ns per call, and
# the time added per traced call.  Traces go to /dev/shm when it exists.
set -eu
build=${1:-build}
rounds=${2:-5}
iters=${3:-20000}
build=$(cd "$build" && pwd)
lib=$build/libtrace.so
dump=$build/trace-dump
src=$(cd "$(dirname "$0")" && pwd)
[ -f "$lib" ] && [ -x "$dump" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-gpu.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp
cuda_lib=/usr/local/cuda/lib

# The runtimes found: name, program, environment, iterations.
rts=()
cc=(gcc -O2 -I"$src" "$src/gpu_calls.c")
if "${cc[@]}" -DGPU_HIP -o "$tmp/gpu_hip" -lamdhip64 2>"$tmp/cc.log"; then
	mkdir -p "$tmp/stub"
	cat >"$tmp/stub.c" <<'EOF'
/* A stand-in HIP runtime: every call fails at once, as the real one does without a GPU. */
#include <stddef.h>
struct dim3 { unsigned x, y, z; };
int hipMalloc(void **p, size_t n) { (void)p, (void)n; return 101; }
int hipFree(void *p) { (void)p; return 101; }
int hipMemcpy(void *d, const void *s, size_t n, int k) { (void)d, (void)s, (void)n, (void)k; return 101; }
int hipLaunchKernel(const void *f, struct dim3 g, struct dim3 b, void **a, size_t m, void *s)
{ (void)f, (void)g, (void)b, (void)a, (void)m, (void)s; return 101; }
EOF
	# The program binds to the runtime's versioned symbols (hip_4.2): the stub has them.
	echo 'hip_4.2 { global: hipMalloc; hipFree; hipMemcpy; hipLaunchKernel; local: *; };' >"$tmp/stub.map"
	gcc -O2 -shared -fPIC -Wl,-soname,libamdhip64.so.5 -Wl,--version-script="$tmp/stub.map" \
		"$tmp/stub.c" -o "$tmp/stub/libamdhip64.so.5"
	rts+=("HIP" "HIP stub")
else
	echo "gpu.sh: HIP left out (apt-get install libamdhip64-dev): $(head -1 "$tmp/cc.log")" >&2
fi
if [ -f $cuda_lib/libcudart.so ] &&
	"${cc[@]}" -DGPU_CUDA -o "$tmp/gpu_cuda" -L$cuda_lib -Wl,-rpath,$cuda_lib -lcudart 2>"$tmp/cc.log"; then
	rts+=("CUDA")
else
	echo "gpu.sh: CUDA left out (no $cuda_lib/libcudart.so)" >&2
fi
[ ${#rts[@]} -gt 0 ] || exit 2
nm -D "$lib" | grep -q ' T cudaLaunchKernel$' ||
	echo "gpu.sh: $lib wraps no cudaLaunchKernel: CUDA traced = preloaded only" >&2

# run RT CFG: one run; appends "RT/CFG<TAB>name<TAB>ns" per result line, its header line to
# $tmp/RT.header and, traced, the record counts to $tmp/RT.stats.
run() {
	local rt=$1 cfg=$2 dir=$out/libtrace-bench-gpu-$$ n=$iters
	local prog=$tmp/gpu_hip envs=()
	case $rt in
	HIP) n=$((iters / 10)) ;;
	"HIP stub") envs+=(LD_LIBRARY_PATH="$tmp/stub") ;;
	CUDA) prog=$tmp/gpu_cuda ;;
	esac
	# The same variables in every configuration: HIP 5.2 reads its ~100 settings from the
	# environment again on every failing call, and a longer environment alone costs it
	# about 0.5 us per call here.
	case $cfg in
	plain) envs+=(LD_PRELOAD= LIBTRACE_MODULES=all) ;;
	traced) envs+=(LD_PRELOAD="$lib" LIBTRACE_MODULES=all) ;;
	off) envs+=(LD_PRELOAD="$lib" LIBTRACE_MODULES=pthread) ;;
	esac
	rm -rf "$dir"
	env "${envs[@]}" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$prog" "$n" 11 >"$tmp/run.out"
	sed -n "s|^\(.*[^ ]\) *median *\([0-9.]*\) ns.*|$rt/$cfg\t\1\t\2|p" "$tmp/run.out" >>"$tmp/results"
	grep '^#' "$tmp/run.out" >"$tmp/$rt.header" || true
	if [ $cfg = traced ]; then
		"$dump" --stats "$dir" >"$tmp/$rt.stats" 2>&1 || echo "gpu.sh: no trace from $rt traced" >&2
	fi
	rm -rf "$dir"
}

cut -d' ' -f1-3 /proc/loadavg >"$tmp/load.start"
for _ in $(seq "$rounds"); do
	for rt in "${rts[@]}"; do
		for cfg in plain traced off; do
			run "$rt" $cfg
		done
	done
done
cut -d' ' -f1-3 /proc/loadavg >"$tmp/load.end"

PYTHONPATH="$(dirname "$0")" python3 - "$tmp" "$rounds" "$iters" "$(getconf _NPROCESSORS_ONLN)" "${rts[@]}" <<'PY'
import collections, os, re, sys
import results
tmp, rounds, iters, ncpu, rts = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
res, med, names = results.read(tmp)
print(f"GPU runtime calls on the host, no GPU: median of {rounds} rounds, each the median of 11 "
      f"repetitions of {iters} iterations ({int(iters) // 10} with the real HIP runtime)")
load = lambda w: results.load(tmp, w)
print(f"{ncpu} CPUs; load average {load('start')} before, {load('end')} after")
for rt in rts:
    header = open(os.path.join(tmp, f'{rt}.header')).read().strip().lstrip('# ')
    print(f"\n{rt}: {header}")
    print(f"  {'ns per call':<26} {'untraced':>10} {'traced':>10} {'added':>9}   "
          f"{'module off':>10} {'added':>7}")
    for name in names:
        p, t, o = (med.get((f'{rt}/{c}', name)) for c in ('plain', 'traced', 'off'))
        if p is None or t is None or o is None:
            continue
        calls = 2 if name.startswith('Malloc + Free') else 1  # a pair is two calls
        label = name.replace(' (per pair)', ' (per call)')
        p, t, o = p / calls, t / calls, o / calls
        print(f"  {label:<26} {p:10.1f} {t:10.1f} {t - p:+9.1f}   {o:10.1f} {o - p:+7.1f}")
    for cfg in ('plain', 'traced', 'off'):
        for name in names:
            v = res.get((f'{rt}/{cfg}', name), [])
            print(f"    rounds {cfg:<6} {name:<26} {', '.join(f'{x:.1f}' for x in v)}")
    f = os.path.join(tmp, f'{rt}.stats')
    if os.path.exists(f):
        kinds = collections.Counter()
        for line in open(f):
            for k, v in re.findall(r'(\w+)=(\d+)', line):
                kinds[k] += int(v)
        print(f"  records, last traced run: {kinds['records']} in all, GPU_ENTER={kinds['GPU_ENTER']} "
              f"GPU_LEAVE={kinds['GPU_LEAVE']}, lost={kinds['lost']}")
PY
