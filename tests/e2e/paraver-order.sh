#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Paraver's threads are numbered as Extrae numbers them: in the order the process made
# them, which for an OpenMP team is its thread numbers (THREAD 1.1.N is OpenMP thread
# N-1), the same every run.  Each thread of an 8-thread team records its OpenMP thread
# number as a counter; ten runs with gcc's libgomp (and LLVM's libomp when clang can link
# it) must each put value N-1 on THREAD 1.1.N.  Before, the threads came in the order of
# their first records, another each run (rows 0 1 3 4 5 6 7 2 in one of five runs).
. "$(dirname "$0")/lib.sh"
export LIBTRACE_SAMPLE_PERIOD=0
[ -x "$CONVERT" ] || skip "trace2otf2 was not built"
cat >"$WORK/order.c" <<'C'
#include <omp.h>
#include "libtrace/annotate.h"
int main(void)
{
#pragma omp parallel num_threads(8)
	ltr_counter("omp_thread", omp_get_thread_num());
	return 0;
}
C
compilers=()
gcc -fopenmp -I"$SRC/include" "$WORK/order.c" -o "$WORK/order-gcc" -L"$BUILD" -ltrace-annotate \
	-Wl,-rpath,"$BUILD" 2>/dev/null && compilers+=(gcc)
clang -fopenmp=libomp -I"$SRC/include" "$WORK/order.c" -o "$WORK/order-clang" -L"$BUILD" \
	-ltrace-annotate -Wl,-rpath,"$BUILD" 2>/dev/null && compilers+=(clang)
[ ${#compilers[@]} -gt 0 ] || skip "neither gcc nor clang builds an OpenMP program"
for c in "${compilers[@]}"; do
	for run in $(seq 10); do
		t=$WORK/$c.$run
		traced "$t" "$WORK/order-$c" || fail "$c run $run: the program failed"
		"$CONVERT" -q -f paraver "$t" -o "$t/p" || fail "$c run $run: trace2otf2 -f paraver"
		type=$(awk '$3 == "omp_thread" { print $2 }' "$t/p.pcf")
		[ -n "$type" ] || fail "$c run $run: no omp_thread counter in the .pcf"
		# "task.thread value" of each counter record, one per thread.
		awk -F: -v ty="$type" '$1 == 2 { for (i = 7; i < NF; i += 2) if ($i == ty) print $4 "." $5, $(i + 1) }' \
			"$t/p.prv" | sort -t. -k2n >"$t/seen"
		[ "$(wc -l <"$t/seen")" = 8 ] || fail "$c run $run: $(wc -l <"$t/seen") counter records"
		awk '{ split($1, a, "."); if (a[2] != $2 + 1) { print "THREAD 1." $1 " is OpenMP thread " $2; bad = 1 } } END { exit bad }' \
			"$t/seen" || fail "$c run $run: threads out of OpenMP order"
		[ "$(grep -c '^THREAD 1\.1\.' "$t/p.row")" = 8 ] || fail "$c run $run: .row names"
	done
	echo "$c: 10 runs, THREAD 1.1.N is OpenMP thread N-1 in each"
done
echo "paraver-order: ok"
