#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/maps.sh - what a process with many code mappings costs the tools: a real trace of
# count_events (THREADS threads, each start routine resolved through the maps), its meta
# file given LINES more map lines (in address order, as /proc/self/maps has them, over 100
# library paths), then trace-dump, trace-report and trace2otf2 timed on it.
#
#   bench/maps.sh [BUILD_DIR] [LINES] [THREADS] [ROUNDS]   (defaults: build, 3000000, 64, 3)
#   BASE=OTHER_BUILD bench/maps.sh ...                      the same for another build's tools
#
# Prints, per tool, the median wall time over the rounds and the microseconds per map line.
set -eu
build=$(cd "${1:-build}" && pwd)
lines=${2:-3000000}
threads=${3:-64}
rounds=${4:-3}
. "$(dirname "$0")/common.sh"
bench_scratch maps
LD_PRELOAD=$build/libtrace.so LIBTRACE_OUTPUT=$tmp/t LIBTRACE_QUIET=1 \
	"$build/tests/count_events" "$threads" 100 private >/dev/null
dir=$(ls -d "$tmp"/t/*/)
python3 - "$dir/meta" "$lines" <<'PY'
import sys
with open(sys.argv[1], "a") as f:
    for i in range(int(sys.argv[2])):
        lo = 0x100000000 + i * 0x2000
        f.write("map %x %x 0 /usr/lib/libbench%d.so\n" % (lo, lo + 0x1000, i % 100))
PY
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
run() { # run NAME BUILD ARGS...: the median seconds of ROUNDS runs
	local name=$1 b=$2
	shift 2
	for _ in $(seq "$rounds"); do
		rm -rf "$tmp/out"
		local t0 t1
		t0=$(date +%s.%N)
		"$b/$name" "$@" >/dev/null 2>&1 || true
		t1=$(date +%s.%N)
		awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
	done | median
}
for b in "$build" ${BASE:+"$(cd "$BASE" && pwd)"}; do
	echo "tools of $b ($lines map lines, $threads threads, median of $rounds):"
	for tool in trace-dump trace-report trace2otf2; do
		args=("$dir")
		[ "$tool" = trace2otf2 ] && args=(-q "$dir" -o "$tmp/out")
		s=$(run "$tool" "$b" "${args[@]}")
		printf '  %-13s %7.2f s  %6.2f us a line\n' "$tool" "$s" "$(awk -v s="$s" -v n="$lines" 'BEGIN { print s * 1e6 / n }')"
	done
done
