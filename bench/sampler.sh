#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/sampler.sh - what the sampler thread costs a CPU-bound program at the default period
# (LIBTRACE_SAMPLE_PERIOD=10ms, every sampler this machine has a source for).
#
#   bench/sampler.sh [BUILD_DIR] [ROUNDS] [THREADS] [ITERATIONS]   (build, 11, nproc, 2e8)
#
# Round after round (so that machine noise hits them alike) it runs bench_sampler untraced,
# traced with the sampler thread off (LIBTRACE_SAMPLE_PERIOD=0) and traced with it on, and
# prints the median wall time of each, what the sampler adds over tracing without it, and the
# CPU time the tracer's own threads (sampler and writer) used, median per run.  THREADS
# defaults to one per CPU: the sampler then has to take its time from the program.
set -eu
build=${1:-build}
rounds=${2:-11}
threads=${3:-$(nproc)}
iters=${4:-200000000}
lib=$(cd "$build" && pwd)/libtrace.so
prog=$build/bench/bench_sampler
[ -f "$lib" ] && [ -x "$prog" ] || { echo "build the project with -DLIBTRACE_BENCH=ON first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-sampler.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp

run() { # NAME ENV...: one run, "NAME wall other_ms" appended to the results
	local name=$1
	shift
	local dir=$out/libtrace-bench-sampler-$$
	rm -rf "$dir"
	echo "$name $(env "$@" "$prog" "$threads" "$iters")" >>"$tmp/results"
	rm -rf "$dir"
}
for r in $(seq "$rounds"); do
	run plain
	run off LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$out/libtrace-bench-sampler-$$" LIBTRACE_QUIET=1 LIBTRACE_SAMPLE_PERIOD=0
	run on LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$out/libtrace-bench-sampler-$$" LIBTRACE_QUIET=1
done
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo "bench_sampler: $threads threads x $iters iterations, $rounds rounds, medians"
printf '%-34s %10s %16s\n' "" "wall (s)" "tracer CPU (ms)"
for n in plain off on; do
	w=$(awk -v n=$n '$1 == n {print $2}' "$tmp/results" | median)
	c=$(awk -v n=$n '$1 == n {print $3}' "$tmp/results" | median)
	eval "w_$n=$w"
	case $n in
	plain) label="untraced" ;;
	off) label="traced, LIBTRACE_SAMPLE_PERIOD=0" ;;
	on) label="traced, samplers at 10 ms" ;;
	esac
	printf '%-34s %10.4f %16.1f\n' "$label" "$w" "$c"
done
awk -v p="$w_plain" -v f="$w_off" -v o="$w_on" 'BEGIN {
	printf "sampler thread adds %+.2f %% over tracing without it (%+.2f %% over untraced)\n",
		(o - f) / f * 100, (o - p) / p * 100 }'
