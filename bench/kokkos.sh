#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/kokkos.sh - what tracing adds to a Kokkos kernel (Debian's Kokkos, Serial backend).
#
#   bench/kokkos.sh [BUILD_DIR] [ROUNDS]    (defaults: build, 5)
#
# Builds bench/kokkos.cpp against Debian's Kokkos (libtrilinos-kokkos-dev) and
# bench/kokkos_null_tool.c (callbacks that do nothing), then runs, round after round, with
# no tool ("plain"), with the null tool ("null": what Kokkos itself spends once any tool is
# loaded, with the global fencing off as libtrace turns it off on host backends), and with
# libtrace.so preloaded and nothing else set ("libtrace"); then libtrace with
# LIBTRACE_KOKKOS_FENCE=on, for what Kokkos's fences cost.  Each run reports the median of 11
# repetitions; the table gives the median over the rounds, what libtrace adds to the plain
# run, and what its callbacks add to the null tool's (the callbacks' own cost).
set -eu
build=${1:-build}
rounds=${2:-5}
lib=$(cd "$build" && pwd)/libtrace.so
src=$(cd "$(dirname "$0")" && pwd)
[ -f "$lib" ] || { echo "build the project first ($build)" >&2; exit 2; }
[ -f /usr/include/trilinos/Kokkos_Core.hpp ] ||
	{ echo "kokkos.sh: Debian's Kokkos is missing (apt-get install libtrilinos-kokkos-dev)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-kokkos.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=/dev/shm
[ -d $out ] && [ -w $out ] || out=$tmp
g++ -O2 -std=c++14 -isystem /usr/include/trilinos -I"$src" "$src/kokkos.cpp" -o "$tmp/kokkos" \
	-ltrilinos_kokkoscore
gcc -O2 -shared -fPIC "$src/kokkos_null_tool.c" -o "$tmp/libnull.so"
unset KOKKOS_TOOLS_LIBS KOKKOS_PROFILE_LIBRARY

run() { # CFG ENV...
	local cfg=$1
	shift
	local dir=$out/libtrace-bench-kokkos-$$
	rm -rf "$dir"
	env "$@" LIBTRACE_OUTPUT="$dir" LIBTRACE_QUIET=1 "$tmp/kokkos" 200000 11 |
		sed -n "s|^\(.*[^ ]\) *median *\([0-9.]*\) ns.*|$cfg\t\1\t\2|p" >>"$tmp/results"
	rm -rf "$dir"
}
for r in $(seq "$rounds"); do
	run plain
	run null KOKKOS_PROFILE_LIBRARY="$tmp/libnull.so" NULL_TOOL_NO_FENCE=1
	run libtrace LD_PRELOAD="$lib"
	run fenced LD_PRELOAD="$lib" LIBTRACE_KOKKOS_FENCE=on
done
python3 - "$tmp/results" "$rounds" <<'PY'
import collections, statistics, sys
res, names = collections.defaultdict(list), []
for line in open(sys.argv[1]):
    cfg, name, v = line.rstrip('\n').split('\t')
    res[(cfg, name)].append(float(v))
    if name not in names:
        names.append(name)
m = {k: statistics.median(v) for k, v in res.items()}
print(f"Kokkos 3.4 Serial, ns per kernel or region pair (median of {sys.argv[2]} rounds, "
      "each the median of 11 repetitions)")
print(f"{'':<28}{'plain':>9}{'null tool':>11}{'libtrace':>10}{'added':>9}{'callbacks':>11}"
      f"{'fenced':>9}")
for n in names:
    p, z, t, f = (m[(c, n)] for c in ('plain', 'null', 'libtrace', 'fenced'))
    print(f"{n:<28}{p:9.1f}{z:11.1f}{t:10.1f}{t - p:+9.1f}{t - z:+11.1f}{f:9.1f}")
print("added: libtrace - plain; callbacks: libtrace - null tool; fenced: libtrace with "
      "LIBTRACE_KOKKOS_FENCE=on")
for cfg in ('plain', 'null', 'libtrace', 'fenced'):
    for n in names:
        print(f"  rounds {cfg:<8} {n:<26} " + ', '.join(f"{x:.1f}" for x in res[(cfg, n)]))
PY
