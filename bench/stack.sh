#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/stack.sh - what stack sampling costs a compute-bound program: the CPU time of a fixed
# amount of work (tests/programs/stack_split.c's functions, -O2 -fomit-frame-pointer, so
# every sample is unwound through DWARF) untraced, traced without sampling, and traced with
# LIBTRACE_STACK_SAMPLING at 1 ms and 100 us, run after run in turn so that machine noise
# hits them alike (the sampler thread off: LIBTRACE_SAMPLE_PERIOD=0).  The table: the median
# over the rounds of the program thread's own CPU time (the signal handler runs there), the
# ratio to the untraced run, the samples taken, and the CPU time per sample (the sampled
# run's extra CPU over the traced run's, divided by its samples).
#
#   bench/stack.sh [BUILD_DIR] [ROUNDS]      (defaults: build, 7)
set -eu
build=${1:-build}
rounds=${2:-7}
lib=$(cd "$build" && pwd)/libtrace.so
dump=$build/trace-dump
src=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$lib" ] && [ -x "$dump" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-stack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The work: stack_split's rounds, a fixed number of them (the 1st argument is its CPU time
# budget: large, so the rounds alone end it).
cat >"$tmp/work.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
void outer(int k);
int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 400;
	for (long r = 0; r < rounds; r++)
		for (int k = 0; k < 10; k++)
			outer(k);
	struct timespec ts; /* the main thread's own CPU time: the sampler's cost lands there */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	return 0;
}
C
sed 's/^int main(/static int unused_main(/' "$src/tests/programs/stack_split.c" >"$tmp/split.c"
gcc -O2 -g -fomit-frame-pointer -Wno-unused-function "$tmp/work.c" "$tmp/split.c" -o "$tmp/work"
rounds_work=${WORK_ROUNDS:-1500}
run() { # NAME ENV...: appends "NAME cpu_ns samples"
	local name=$1 dir=$tmp/trace
	shift
	rm -rf "$dir"
	local cpu
	cpu=$(env "$@" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 LIBTRACE_SAMPLE_PERIOD=0 \
		"$tmp/work" "$rounds_work")
	local samples=0
	[ -d "$dir" ] && samples=$("$dump" --stats "$dir" | grep -o 'STACK=[0-9]*' |
		awk -F= '{s += $2} END {print s + 0}')
	echo "$name $cpu ${samples:-0}" >>"$tmp/results"
}
for r in $(seq "$rounds"); do
	run plain
	run traced LD_PRELOAD="$lib"
	run sampled-1ms LD_PRELOAD="$lib" LIBTRACE_STACK_SAMPLING=1ms
	run sampled-100us LD_PRELOAD="$lib" LIBTRACE_STACK_SAMPLING=100us
done
python3 - "$tmp/results" "$rounds" <<'PY'
import collections, statistics, sys
cpu, smp = collections.defaultdict(list), collections.defaultdict(list)
for line in open(sys.argv[1]):
    name, c, s = line.split()
    cpu[name].append(int(c))
    smp[name].append(int(s))
base, traced = statistics.median(cpu["plain"]), statistics.median(cpu["traced"])
print(f"stack sampling, {sys.argv[2]} rounds, medians of the main thread's CPU time:")
for name in ("plain", "traced", "sampled-1ms", "sampled-100us"):
    c, s = statistics.median(cpu[name]), statistics.median(smp[name])
    per = f"{(c - traced) / s / 1000:.1f} us/sample" if s else ""
    print(f"  {name:<14} {c / 1e6:8.1f} ms  x{c / base:.3f}  {s:6.0f} samples  {per}")
PY
