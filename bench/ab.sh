#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/ab.sh - two builds' runtimes side by side: is the hot path of B slower than A's?
#
#   bench/ab.sh BUILD_A BUILD_B [ROUNDS]        (default: 7 rounds)
#
# Both libraries run the same benchmark programs (B's), alternating A and B within every
# round, so that machine noise hits both alike.  Each run reports the median of 11
# repetitions; the table gives, per configuration, the median over the rounds and B/A.
# Configurations: the mutex lock+unlock pair not preloaded (the machine's own noise),
# preloaded with the pthread module off (a disabled module's cost), traced; the recorded
# event and the annotation API's regions (bench_event).  The sustained mutex loop (10M
# pairs: the writer thread must keep up) swings by 2x from round to round on a small VM;
# the 50k bursts are the hot path.
set -eu
[ $# -ge 2 ] || { sed -n '3,12p' "$0" >&2; exit 2; }
rounds=${3:-7}
libs=()
for b in "$1" "$2"; do
	[ -f "$b/libtrace.so" ] || { echo "bench/ab.sh: no libtrace.so in $b" >&2; exit 2; }
	libs+=("$(cd "$b" && pwd)/libtrace.so")
done
ev=$2/bench/bench_event
mx=$2/bench/bench_mutex
[ -x "$ev" ] && [ -x "$mx" ] || { echo "bench/ab.sh: build the benchmarks in $2" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-ab.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp

# run TAG ENV... -- CMD...: appends "TAG<TAB>name<TAB>median" for each result line.
run() {
	local tag=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	local dir=$out/libtrace-ab-$$
	rm -rf "$dir"
	env "${envs[@]}" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$@" |
		sed -n "s/^\(.*[^ ]\) *median *\([0-9.]*\) ns.*/$tag\t\1\t\2/p" >>"$tmp/results"
	rm -rf "$dir"
}

for r in $(seq "$rounds"); do
	for i in 0 1; do
		ab=$([ $i = 0 ] && echo A || echo B)
		lib=${libs[$i]}
		run "$ab plain" -- "$mx" 10000000 11
		run "$ab off" LD_PRELOAD="$lib" LIBTRACE_MODULES=user -- "$mx" 10000000 11
		run "$ab on" LD_PRELOAD="$lib" -- "$mx" 10000000 11
		run "$ab traced" LD_PRELOAD="$lib" -- "$ev" 4000000 11
	done
done

echo "A: ${libs[0]}"
echo "B: ${libs[1]}"
python3 - "$tmp/results" "$rounds" <<'PY'
import collections, statistics, sys
res = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tag, name, v = line.rstrip('\n').split('\t')
    ab, cfg = tag.split(' ')
    res[(cfg, name, ab)].append(float(v))
label = {'plain': 'not preloaded', 'off': 'pthread module off', 'on': 'traced', 'traced': 'traced'}
print(f"ns, median of {sys.argv[2]} rounds (each round's values in brackets)")
print(f"  {'':<58} {'A':>8} {'B':>8}   B/A")
for cfg, name in sorted({(c, n) for c, n, _ in res}):
    a = statistics.median(res[(cfg, name, 'A')])
    b = statistics.median(res[(cfg, name, 'B')])
    print(f"  {name + ', ' + label[cfg]:<58} {a:8.2f} {b:8.2f}  {b / a:5.2f}")
    for ab in 'AB':
        print(f"  {'':<4}{ab}: [{', '.join(f'{x:.1f}' for x in res[(cfg, name, ab)])}]")
PY
