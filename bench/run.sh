#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/run.sh - the runtime's speed, measured side by side in one run.
#
#   bench/run.sh [BUILD_DIR] [ROUNDS]        (defaults: build, 5)
#
# Each round runs every configuration once, one after the other, so that machine noise hits
# them alike; each run reports the median of 11 repetitions; the table gives the median
# over the rounds.  The benchmark thread is pinned to CPU 1 (the tracer's writer thread is
# left free); run as root to add SCHED_FIFO.  Traces go to /dev/shm when it exists.
set -eu
build=${1:-build}
rounds=${2:-5}
lib=$(cd "$build" && pwd)/libtrace.so
ev=$build/bench/bench_event
mx=$build/bench/bench_mutex
[ -x "$ev" ] && [ -x "$mx" ] && [ -f "$lib" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp
fifo=()
[ "$(id -u)" = 0 ] && command -v chrt >/dev/null && fifo=(chrt -f 50)

# run NAME ENV... -- CMD...: appends "NAME<TAB>line" for each result line.
run() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local dir=$out/libtrace-bench-$$
	rm -rf "$dir"
	env "${envs[@]}" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "${fifo[@]}" "$@" |
		sed -n "s/^\(.*[^ ]\) *median *\([0-9.]*\) ns.*/$name\t\1\t\2/p" >>"$tmp/results"
	rm -rf "$dir"
}

for r in $(seq "$rounds"); do
	run plain -- "$mx" 10000000 11
	run off LD_PRELOAD="$lib" LIBTRACE_MODULES=user -- "$mx" 10000000 11
	run on LD_PRELOAD="$lib" -- "$mx" 10000000 11
	run traced LD_PRELOAD="$lib" -- "$ev" 4000000 11
done

# Bytes per event on disk: N region events, the whole process directory counted.
n=10000000
dir=$out/libtrace-bench-size-$$
LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$ev" --record $n
events_bytes=$(stat -c %s "$dir"/*/events)
rm -rf "$dir"

python3 - "$tmp/results" "$events_bytes" "$n" <<'PY'
import collections, statistics, sys
res = collections.defaultdict(list)
for line in open(sys.argv[1]):
    cfg, name, v = line.rstrip('\n').split('\t')
    res[(cfg, name)].append(float(v))
med = {k: statistics.median(v) for k, v in res.items()}
def show(label, key):
    v = res[key]
    print(f"  {label:<46} {med[key]:7.2f} ns   (rounds: {', '.join(f'{x:.2f}' for x in v)})")
print("Recorded event (ns per event; floor = rdtsc + 16 B store + release store):")
floor = ('traced', 'floor: rdtsc + 16 B store + release')
for key in sorted(k for k in med if k[0] == 'traced'):
    show(key[1], key)
for key in sorted(k for k in med if k[0] == 'traced' and k != floor):
    print(f"  ratio {key[1]} / floor: {med[key] / med[floor]:.2f}")
for pair, what in (('mutex lock+unlock pair', 'sustained, 10M pairs: the writer must keep up'),
                  ('mutex pair, 50k bursts', 'bursts that fit in the ring: the hot path')):
    print(f"pthread_mutex_lock + unlock pair, {what} (ns per pair):")
    for cfg, label in (('plain', 'not preloaded'), ('off', 'preloaded, pthread module off'),
                       ('on', 'preloaded, traced (3 records, 80 bytes in the ring)')):
        show(label, (cfg, pair))
    print(f"  added with the module off: {(med[('off', pair)] - med[('plain', pair)]) / 2:.2f} ns per wrapped call")
    print(f"  added when traced:         {med[('on', pair)] - med[('plain', pair)]:.2f} ns per pair")
size, n = int(sys.argv[2]), int(sys.argv[3])
print(f"On disk: {size} bytes of events file for {n} region events = {size / n:.2f} bytes per event (packed)")
PY

# Instructions added per wrapped call with the module off, exactly (callgrind).
if command -v valgrind >/dev/null; then
	for cfg in plain off; do
		envs=()
		[ $cfg = off ] && envs=(LD_PRELOAD="$lib" LIBTRACE_MODULES=user LIBTRACE_OUTPUT="$tmp/cg")
		for iters in 100000 200000; do
			env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.$cfg.$iters" \
				"$mx" $iters 1 >/dev/null 2>&1
			grep -m1 '^summary:' "$tmp/cg.$cfg.$iters" | awk '{print $2}' >"$tmp/ir.$cfg.$iters"
		done
	done
	python3 - "$tmp" <<'PY'
import sys
t = sys.argv[1]
ir = lambda c, n: int(open(f"{t}/ir.{c}.{n}").read())
# The benchmark runs iters * 1.1 pairs (warm-up included); two wrapped calls per pair.
per = lambda c: (ir(c, 200000) - ir(c, 100000)) / (100000 * 1.1) / 2
print(f"callgrind: {per('plain'):.1f} instructions per call plain, {per('off'):.1f} preloaded "
      f"with the module off: +{per('off') - per('plain'):.1f} per wrapped call")
PY
else
	echo "callgrind: valgrind not installed, instruction count skipped"
fi
