#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/spawn.sh - what the tracer adds to starting a thread and to forking.
#
#   bench/spawn.sh [BUILD_DIR] [ROUNDS] [THREADS] [FORKS] [OTHER_LIB]   (build, 11, 20000, 200)
#
# Round after round it runs bench_spawn untraced, and traced with BUILD_DIR's libtrace.so
# (and with OTHER_LIB, another build's libtrace.so, when given: a before/after comparison on
# one machine), and prints the median of each and the ratio to untraced.
set -eu
build=${1:-build}
rounds=${2:-11}
threads=${3:-20000}
forks=${4:-200}
other=${5:-}
lib=$(cd "$build" && pwd)/libtrace.so
prog=$build/bench/bench_spawn
[ -f "$lib" ] && [ -x "$prog" ] || { echo "build the project with -DLIBTRACE_BENCH=ON first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-spawn.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
run() { # NAME LIB: one run appended to the results ("NAME thread_ns fork_us")
	local out
	if [ -z "$2" ]; then
		out=$("$prog" "$threads" "$forks")
	else
		out=$(LD_PRELOAD=$2 LIBTRACE_OUTPUT=$tmp/trace LIBTRACE_QUIET=1 "$prog" "$threads" "$forks")
		rm -rf "$tmp/trace"
	fi
	echo "$1 $(awk '{print $2, $4}' <<<"$out")" >>"$tmp/results"
}
for r in $(seq "$rounds"); do
	run plain ""
	run traced "$lib"
	[ -z "$other" ] || run other "$other"
done
python3 - "$tmp/results" "$threads" "$forks" "$rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for name in ("plain", "traced", "other"):
    r = [(float(a), float(b)) for n, a, b in rows if n == name]
    if r:
        med[name] = (statistics.median(x for x, _ in r), statistics.median(y for _, y in r))
print("bench_spawn: %s thread create+join pairs, %s forks, %s rounds, medians" % tuple(sys.argv[2:5]))
for name, label in (("plain", "untraced"), ("traced", "traced"), ("other", "traced, other build")):
    if name in med:
        t, f = med[name]
        print("  %-22s %8.0f ns per thread  x%.2f   %8.1f us per fork  x%.2f" % (
            label, t, t / med["plain"][0], f, f / med["plain"][1]))
PY
