#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/throw.sh - C++ exceptions under the tracer with call sites on: a throw/catch through
# 10 frames must run within 5 % of its untraced speed (libtrace.so never depends on
# libunwind, which would take over the unwinder), and call-site capture must add nothing a
# throw can feel.
#
#   bench/throw.sh [BUILD_DIR] [ROUNDS] [ITERS]      (defaults: build, 7, 200000)
#
# Round after round it runs bench_throw untraced and traced with LIBTRACE_CALLSITE_DEPTH
# 0, 1 (the default) and 8, and with stack sampling at 1 ms (libunwind loaded: it must not
# become the program's unwinder); each run prints the median of 11 repetitions of two loops (the
# bare throw/catch, and one with a traced mutex lock and unlock per throw); the table gives
# the median over the rounds and each configuration's ratio to the untraced run.
set -eu
build=${1:-build}
rounds=${2:-7}
iters=${3:-200000}
lib=$(cd "$build" && pwd)/libtrace.so
prog=$build/bench/bench_throw
[ -f "$lib" ] && [ -x "$prog" ] || { echo "build the project with -DLIBTRACE_BENCH=ON first ($build)" >&2; exit 2; }
readelf -d "$lib" | grep -q 'NEEDED.*libunwind' && echo "warning: $lib depends on libunwind" >&2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-throw.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp

run() { # NAME ENV...: one run; appends "NAME<TAB>loop<TAB>ns" per loop
	local name=$1 dir=$out/libtrace-bench-throw-$$
	shift
	rm -rf "$dir"
	env "$@" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$prog" "$iters" 11 |
		sed -n "s/^\(.*[^ ]\) *median *\([0-9.]*\) ns.*/$name\t\1\t\2/p" >>"$tmp/results"
	rm -rf "$dir"
}
for r in $(seq "$rounds"); do
	run plain
	run depth0 LD_PRELOAD="$lib" LIBTRACE_CALLSITE_DEPTH=0
	run depth1 LD_PRELOAD="$lib" LIBTRACE_CALLSITE_DEPTH=1
	run depth8 LD_PRELOAD="$lib" LIBTRACE_CALLSITE_DEPTH=8
	run sampled LD_PRELOAD="$lib" LIBTRACE_STACK_SAMPLING=1ms
done
python3 - "$tmp/results" "$rounds" <<'PY'
import collections, statistics, sys
res = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cfg, loop, v = line.rstrip('\n').split('\t')
    res[(cfg, loop)].append(float(v))
print(f"bench_throw, {sys.argv[2]} rounds, medians in ns per throw (ratio to untraced):")
for loop in dict.fromkeys(k[1] for k in res):
    print(f"  {loop}")
    base = statistics.median(res[('plain', loop)])
    for cfg, label in (('plain', 'not preloaded'), ('depth0', 'traced, call sites off'),
                       ('depth1', 'traced, call sites depth 1 (default)'),
                       ('depth8', 'traced, call sites depth 8'),
                       ('sampled', 'traced, stacks sampled every 1 ms')):
        m = statistics.median(res[(cfg, loop)])
        print(f"    {label:<40} {m:9.1f}  x{m / base:.3f}   "
              f"(rounds: {', '.join(f'{x:.0f}' for x in res[(cfg, loop)])})")
PY
