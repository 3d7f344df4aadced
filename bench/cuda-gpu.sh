#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/cuda-gpu.sh - what tracing adds to a CUDA call on the host, with an NVIDIA GPU:
# bench/cuda_launch.cu (empty-kernel launches, 4 KiB synchronous copies, cudaMalloc +
# cudaFree).  Built with the shared cudart, it runs untraced, traced through CUPTI (the
# default), traced by the cudart wrappers (LIBTRACE_CUPTI=off) and preloaded with the CUDA
# module off (LIBTRACE_MODULES=pthread); built with the static cudart (nvcc's default),
# untraced and traced through CUPTI.  Each round runs the six in a shuffled order (seeded
# by the round); the table gives the median over the rounds of each run's median, in ns
# per call.
#
#   bench/cuda-gpu.sh [BUILD_DIR] [ROUNDS] [ITERS]        (defaults: build, 5, 20000)
#
# Needs nvcc and a GPU (exit 2 without); bench/gpu.sh measures the wrappers without one.
set -eu
build=$(cd "${1:-build}" && pwd)
rounds=${2:-5}
iters=${3:-20000}
lib=$build/libtrace.so
dump=$build/trace-dump
src=$(cd "$(dirname "$0")" && pwd)
[ -f "$lib" ] && [ -x "$dump" ] || { echo "build the project first ($build)" >&2; exit 2; }
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
[ -x "$nvcc" ] || { echo "cuda-gpu.sh: nvcc not found" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-cuda.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp
for cudart in shared static; do
	"$nvcc" -O2 -cudart $cudart -I"$src" -o "$tmp/cuda_launch_$cudart" "$src/cuda_launch.cu"
done
"$tmp/cuda_launch_shared" 10 1 >"$tmp/probe" || { cat "$tmp/probe" >&2; exit 2; }

run() {
	local cfg=$1 dir=$out/libtrace-bench-cuda-$$ envs=() prog=$tmp/cuda_launch_shared
	case $cfg in
	untraced) envs+=(LD_PRELOAD=) ;;
	cupti) envs+=(LD_PRELOAD="$lib") ;;
	wrappers) envs+=(LD_PRELOAD="$lib" LIBTRACE_CUPTI=off) ;;
	module-off) envs+=(LD_PRELOAD="$lib" LIBTRACE_MODULES=pthread) ;;
	static-untraced) envs+=(LD_PRELOAD=) prog=$tmp/cuda_launch_static ;;
	static-cupti) envs+=(LD_PRELOAD="$lib") prog=$tmp/cuda_launch_static ;;
	esac
	rm -rf "$dir"
	env "${envs[@]}" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$prog" "$iters" 11 >"$tmp/run.out"
	sed -n "s|^\(.*[^ ]\) *median *\([0-9.]*\) ns.*|$cfg\t\1\t\2|p" "$tmp/run.out" >>"$tmp/results"
	grep '^#' "$tmp/run.out" >"$tmp/header" || true
	if [ "${cfg%untraced}" = "$cfg" ]; then
		grep -a '^gpu' "$dir"/*/meta | sed "s|^|$cfg: |" >"$tmp/$cfg.gpu" || true
		"$dump" --stats "$dir" >"$tmp/$cfg.stats" 2>&1 || echo "cuda-gpu.sh: no trace from $cfg" >&2
	fi
	rm -rf "$dir"
}

cfgs="untraced cupti wrappers module-off static-untraced static-cupti"
shuffle='import random, sys; c = sys.argv[2:]; random.Random(int(sys.argv[1])).shuffle(c); print(*c)'
for round in $(seq "$rounds"); do
	for cfg in $(python3 -c "$shuffle" "$round" $cfgs); do
		run $cfg
	done
done

python3 - "$tmp" "$rounds" "$iters" <<'PY'
import collections, statistics, sys
tmp, rounds, iters = sys.argv[1:]
res, names = collections.defaultdict(list), []
for line in open(f"{tmp}/results"):
    cfg, name, ns = line.rstrip("\n").split("\t")
    res[(cfg, name)].append(float(ns))
    if name not in names:
        names.append(name)
cfgs = ("untraced", "cupti", "wrappers", "module-off", "static-untraced", "static-cupti")
print(f"CUDA calls on the host, {open(f'{tmp}/header').read().strip().lstrip('# ')}: median of "
      f"{rounds} rounds, each the median of 11 repetitions of {iters} iterations")
print(f"  {'shared cudart, ns per call':<34}" + "".join(f"{c:>11}" for c in cfgs[:4]) +
      "   added: cupti wrappers module-off")
for name in names:
    m = [statistics.median(res[(c, name)]) for c in cfgs]
    print(f"  {name:<34}" + "".join(f"{v:11.1f}" for v in m[:4]) +
          f"   {m[1] - m[0]:+13.1f} {m[2] - m[0]:+8.1f} {m[3] - m[0]:+10.1f}")
print(f"  {'static cudart, ns per call':<34}{'untraced':>11}{'cupti':>11}   added")
for name in names:
    m = [statistics.median(res[(c, name)]) for c in cfgs[4:]]
    print(f"  {name:<34}{m[0]:11.1f}{m[1]:11.1f}   {m[1] - m[0]:+7.1f}")
for name in names:
    for c in cfgs:
        print(f"    rounds {c:<16} {name:<34} {', '.join(f'{v:.1f}' for v in res[(c, name)])}")
for cfg in cfgs[1:]:
    try:
        print(open(f"{tmp}/{cfg}.gpu").read().strip())
    except OSError:
        pass
PY
