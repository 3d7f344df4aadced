#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/viewers.sh - what the outputs for viewers without Vampir cost on a large trace.
#
#   bench/viewers.sh [BUILD_DIR] [ROUNDS] [THREADS] [ITERATIONS]
#   (defaults: build, 5, 4, 300000)
#
# Traces count_events THREADS ITERATIONS (mutex calls and annotated regions: about 9
# events per iteration and thread), then times, ROUNDS times alternating: trace-report's
# table, trace-report --tree, trace-report --html, trace2otf2 --format=otf2 and
# --format=chrome.  Prints the median wall time and peak memory of each, its ratio to the
# table's (or the OTF2 conversion's), and the size of what it wrote.
set -eu
build=${1:-build}
rounds=${2:-5}
threads=${3:-4}
iters=${4:-300000}
b=$(cd "$build" && pwd)
[ -x "$b/trace-report" ] && [ -x "$b/tests/count_events" ] || { echo "build the project first ($build)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-bench-viewers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
LD_PRELOAD=$b/libtrace.so LIBTRACE_OUTPUT=$tmp/t LIBTRACE_QUIET=1 "$b/tests/count_events" "$threads" "$iters" >/dev/null
events=$("$b/trace-report" -q --json "$tmp/t" | sed -n 's/^ *"events": \([0-9]*\),*$/\1/p' | head -1)

names=(table tree html otf2 chrome)
cmd() {
	case $1 in
	table) echo "$b/trace-report -q -o $tmp/out.txt $tmp/t" ;;
	tree) echo "$b/trace-report -q --tree -o $tmp/out.tree $tmp/t" ;;
	html) echo "$b/trace-report -q --html -o $tmp/out.html $tmp/t" ;;
	otf2) echo "$b/trace2otf2 -q -o $tmp/out.otf2 $tmp/t" ;;
	chrome) echo "$b/trace2otf2 -q -f chrome -o $tmp/out $tmp/t" ;;
	esac
}
for r in $(seq "$rounds"); do
	for n in "${names[@]}"; do
		rm -rf "$tmp/out"*
		# shellcheck disable=SC2046
		/usr/bin/time -f "%e %M" -o "$tmp/time" $(cmd "$n")
		cat "$tmp/time" >>"$tmp/r.$n"
		case $n in
		html) stat -c %s "$tmp/out.html" >"$tmp/size.$n" ;;
		chrome) stat -c %s "$tmp/out.json" >"$tmp/size.$n" ;;
		otf2) du -sb "$tmp/out.otf2" | cut -f1 >"$tmp/size.$n" ;;
		*) stat -c %s "$tmp/out".* >"$tmp/size.$n" ;;
		esac
	done
done
med() { sort -n | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
echo "count_events $threads $iters: $events events; median of $rounds (machine: $(nproc) CPUs, $(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1)):"
printf '%-8s %9s %8s %10s %12s\n' output time ratio "max RSS" written
t_table=$(cut -d' ' -f1 "$tmp/r.table" | med)
t_otf2=$(cut -d' ' -f1 "$tmp/r.otf2" | med)
for n in "${names[@]}"; do
	t=$(cut -d' ' -f1 "$tmp/r.$n" | med)
	m=$(cut -d' ' -f2 "$tmp/r.$n" | med)
	case $n in otf2 | chrome) base=$t_otf2 ;; *) base=$t_table ;; esac
	printf '%-8s %8.2fs %7.2fx %8.1f MB %12s\n' "$n" "$t" "$(echo "$t $base" | awk '{print ($2 > 0) ? $1 / $2 : 0}')" \
		"$(echo "$m" | awk '{print $1 / 1024}')" "$(cat "$tmp/size.$n") B"
done
