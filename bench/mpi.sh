#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/mpi.sh - what tracing adds to MPI calls: bench/mpi_latency.c (osu_latency-style
# ping-pong of 0, 8, 1024 and 65536 bytes between 2 ranks, then MPI_Barrier and an 8-byte
# MPI_Allreduce), untraced and traced through libtrace.so and the companion library, with
# Open MPI and with MPICH (each when its bench program, companion and launcher are there).
#
#   bench/mpi.sh [BUILD_DIR] [ROUNDS] [ITERS]        (defaults: build, 5, 10000)
#
# Each round runs, one after the other so that machine noise hits them alike, every MPI
# untraced then traced, 2 ranks each (mpirun.openmpi -np 2 with its default binding, one
# core per rank; mpiexec.mpich -n 2, unbound); each run reports per measurement the median
# of 11 repetitions of ITERS round trips or calls (ITERS / 10 at 64 KiB); the table gives the
# median over the rounds, the traced/untraced ratio and the time added per MPI call: a
# one-way trip has one MPI_Send and one MPI_Recv on its critical path, so half of what it
# gained; a collective call, all of it.  "best rounds" does the same with the fastest round
# of each (other load only ever adds time: on a busy machine it is the steadier figure).
# Traces go to /dev/shm when it exists (about 150 MB per traced run); the record counts are
# the last traced run's (trace-dump --stats).
set -eu
build=${1:-build}
rounds=${2:-5}
iters=${3:-10000}
build=$(cd "$build" && pwd)
lib=$build/libtrace.so
dump=$build/trace-dump
[ -f "$lib" ] && [ -x "$dump" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp
# The BLAS and OpenMP runtimes stay out of the way (nothing here uses them).
export OMP_NUM_THREADS=1

abis=()
for abi in openmpi mpich; do
	prog=$build/bench/bench_mpi_latency_$abi
	launcher=mpirun.openmpi
	[ $abi = mpich ] && launcher=mpiexec.mpich
	if [ -x "$prog" ] && [ -f "$build/libtrace-mpi-$abi.so" ] && command -v $launcher >/dev/null; then
		abis+=("$abi")
	else
		echo "mpi.sh: $abi left out (bench_mpi_latency_$abi, libtrace-mpi-$abi.so or $launcher missing)" >&2
	fi
done
[ ${#abis[@]} -gt 0 ] || exit 2

# run ABI CFG: one run; appends "ABI/CFG<TAB>name<TAB>us" per result line, the header to
# $tmp/ABI.header and, traced, the record counts to $tmp/ABI.stats.
run() {
	local abi=$1 cfg=$2 dir=$out/libtrace-bench-mpi-$$ launch
	local prog=$build/bench/bench_mpi_latency_$abi comp=$build/libtrace-mpi-$abi.so
	rm -rf "$dir"
	if [ $abi = openmpi ]; then
		launch=(mpirun.openmpi --allow-run-as-root -np 2 -x OMP_NUM_THREADS)
		[ $cfg = traced ] && launch+=(-x "LD_PRELOAD=$lib:$comp" -x "LIBTRACE_OUTPUT=$dir" -x LIBTRACE_QUIET=1)
	else
		launch=(mpiexec.mpich -n 2)
		[ $cfg = traced ] && launch+=(-env LD_PRELOAD "$lib:$comp" -env LIBTRACE_OUTPUT "$dir" -env LIBTRACE_QUIET 1)
	fi
	"${launch[@]}" "$prog" "$iters" 11 >"$tmp/run.out"
	sed -n "s/^\(.*[^ ]\) *median *\([0-9.]*\) us.*/$abi\/$cfg\t\1\t\2/p" "$tmp/run.out" >>"$tmp/results"
	grep '^#' "$tmp/run.out" >"$tmp/$abi.header" || true
	if [ $cfg = traced ]; then
		"$dump" --stats "$dir" >"$tmp/$abi.stats" 2>&1 || echo "mpi.sh: no trace from the traced $abi run" >&2
	fi
	rm -rf "$dir"
}

cut -d' ' -f1-3 /proc/loadavg >"$tmp/load.start"
for _ in $(seq "$rounds"); do
	for abi in "${abis[@]}"; do
		run $abi plain
		run $abi traced
	done
done

cut -d' ' -f1-3 /proc/loadavg >"$tmp/load.end"

PYTHONPATH="$(dirname "$0")" python3 - "$tmp" "$rounds" "$iters" "$(getconf _NPROCESSORS_ONLN)" "${abis[@]}" <<'PY'
import collections, os, re, sys
import results
tmp, rounds, iters, ncpu, abis = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
res, med, names = results.read(tmp)
print(f"MPI calls, 2 ranks, untraced and traced (libtrace.so + companion): median of {rounds} "
      f"rounds, each the median of 11 repetitions of {iters} iterations")
load = lambda w: results.load(tmp, w)
print(f"{ncpu} CPUs; load average {load('start')} before, {load('end')} after (busy-polling "
      "ranks suffer from any other load)")
for abi in abis:
    header = open(os.path.join(tmp, f'{abi}.header')).read().strip().lstrip('# ')
    print(f"\n{header}")
    print(f"  {'':<28} {'untraced':>10} {'traced':>10} {'ratio':>7} {'added per MPI call':>20}"
          f"   {'best rounds: added':>18}")
    for name in names:
        p, t = med.get((f'{abi}/plain', name)), med.get((f'{abi}/traced', name))
        if p is None or t is None:
            continue
        # One way = one MPI_Send + one MPI_Recv on the critical path; a collective, one call.
        calls = 2 if name.startswith('pingpong') else 1
        label = name + (' (one way)' if calls == 2 else '')
        bp, bt = min(res[(f'{abi}/plain', name)]), min(res[(f'{abi}/traced', name)])
        print(f"  {label:<28} {p:7.3f} us {t:7.3f} us {t / p:6.2f}x {(t - p) * 1e3 / calls:+14.0f} ns"
              f"   {(bt - bp) * 1e3 / calls:+15.0f} ns")
    for cfg in ('plain', 'traced'):
        for name in names:
            v = res.get((f'{abi}/{cfg}', name), [])
            print(f"    rounds {cfg:<6} {name:<20} {', '.join(f'{x:.3f}' for x in v)}")
    f = os.path.join(tmp, f'{abi}.stats')
    if os.path.exists(f):
        kinds = collections.Counter()
        for line in open(f):
            for k, v in re.findall(r'(\w+)=(\d+)', line):
                kinds[k] += int(v)
        print(f"  records, last traced run (both ranks): {kinds['records']} in all, "
              f"MPI_ENTER={kinds['MPI_ENTER']} MPI_P2P={kinds['MPI_P2P']} "
              f"MPI_COLL={kinds['MPI_COLL']}, lost={kinds['lost']}")
PY
