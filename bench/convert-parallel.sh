#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/convert-parallel.sh - trace2otf2's speed-up with -j N and under an MPI launcher.
#
#   bench/convert-parallel.sh [BUILD_DIR] [ROUNDS] [SHAPES] [RANKS] [FORMATS]
#   (defaults: build, 5, "8x3000000 16x1000000 64x250000", "1 2 4", "otf2 paraver")
#
# SHAPES: PROCESSESxRECORDS, a trace of that many processes (bench_event --record, region
# enter/leave only, one thread each) of that many records.  Each is converted to each
# format serially, with -j N and with mpirun -np N for each N of RANKS, ROUNDS times,
# alternating; prints the median wall time of each and its ratio to the serial one.  Every
# parallel OTF2 archive is checked to hold the events of the serial one (otf2-print, mapped
# ids), every Paraver trace to be the serial one byte for byte.  The
# MPI runs need Open MPI and libtrace-convert-mpi-openmpi.so (left out without them).
set -eu
build=${1:-build}
rounds=${2:-5}
shapes=${3:-8x3000000 16x1000000 64x250000}
ranks=${4:-1 2 4}
formats=${5:-otf2 paraver}
conv=$(cd "$build" && pwd)/trace2otf2
lib=$(cd "$build" && pwd)/libtrace.so
[ -x "$conv" ] && [ -x "$build/bench/bench_event" ] || { echo "build the project first ($build)" >&2; exit 2; }
mpirun=(mpirun.openmpi --allow-run-as-root --oversubscribe)
ways=(j)
[ -f "$build/libtrace-convert-mpi-openmpi.so" ] && command -v mpirun.openmpi >/dev/null && ways+=(mpi)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-cpar.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for s in $shapes; do
	procs=${s%x*} records=${s#*x}
	for _ in $(seq "$procs"); do
		LD_PRELOAD=$lib LIBTRACE_OUTPUT=$tmp/t$s LIBTRACE_QUIET=1 "$build/bench/bench_event" --record "$records" >/dev/null
	done
done

# wall OUT CMD...: runs CMD, appends its wall time (s) to OUT.
wall() {
	local out=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; echo "failed: $*" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}' >>"$out"
}

for r in $(seq "$rounds"); do
	for f in $formats; do
		for s in $shapes; do
			rm -rf "$tmp/a$s.$f.serial"*
			wall "$tmp/r$s.$f.serial" "$conv" -q -f "$f" "$tmp/t$s" -o "$tmp/a$s.$f.serial"
			for n in $ranks; do
				for w in "${ways[@]}"; do
					rm -rf "$tmp/a$s.$f.$w$n"*
					if [ $w = j ]; then
						wall "$tmp/r$s.$f.$w$n" "$conv" -q -f "$f" -j "$n" "$tmp/t$s" -o "$tmp/a$s.$f.$w$n"
					else
						wall "$tmp/r$s.$f.$w$n" "${mpirun[@]}" -np "$n" "$conv" -q -f "$f" "$tmp/t$s" -o "$tmp/a$s.$f.$w$n"
					fi
				done
			done
		done
	done
done
for s in $shapes; do
	for f in $formats; do
		[ $f = otf2 ] && otf2-print "$tmp/a$s.$f.serial/traces.otf2" | grep -v '^Trace identifier' >"$tmp/serial.txt"
		for n in $ranks; do
			for w in "${ways[@]}"; do
				if [ $f = otf2 ]; then
					otf2-print "$tmp/a$s.$f.$w$n/traces.otf2" | grep -v '^Trace identifier' | cmp -s - "$tmp/serial.txt"
				else
					cmp -s "$tmp/a$s.$f.$w$n.prv" "$tmp/a$s.$f.serial.prv"
				fi || { echo "$s, $f, $w $n: not the serial conversion's output" >&2; exit 1; }
			done
		done
	done
done

echo "trace2otf2 in $tmp, median of $rounds (machine: $(nproc) CPUs, $(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1)):"
printf '%-8s %-14s %10s %10s' format shape records serial
for n in $ranks; do for w in "${ways[@]}"; do
	[ $w = j ] && printf ' %16s' "-j $n" || printf ' %16s' "mpirun -np $n"
done; done
echo
med() { sort -n "$1" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
for f in $formats; do
	for s in $shapes; do
		rec=$("$conv" "$tmp/t$s" -o "$tmp/count" 2>&1 | sed -n 's/.* events from \([0-9]*\) records.*/\1/p')
		rm -rf "$tmp/count"
		ser=$(med "$tmp/r$s.$f.serial")
		printf '%-8s %-14s %10s %9.3fs' "$f" "$s" "$rec" "$ser"
		for n in $ranks; do
			for w in "${ways[@]}"; do
				m=$(med "$tmp/r$s.$f.$w$n")
				printf ' %8.3fs %5.2fx' "$m" "$(echo "$m $ser" | awk '{print $1 / $2}')"
			done
		done
		echo
	done
done
echo "(the ratio is the parallel wall time over the serial one; every output equals the serial one's)"
