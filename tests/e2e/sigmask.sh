#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Threads that start with a signal mask of their own (pthread_attr_setsigmask_np, empty),
# signalled as they start, with a handler that calls sem_post: the thread registers inside
# the handler, which may have interrupted malloc.  The program counts the allocations made
# inside its handler (its own malloc family stands before the C library's): there must be
# none, since one that lands while malloc's lock is held waits forever.  30 runs, each
# within 60 s, every thread in the trace.  Before the fix the registration called calloc
# (41 allocations in a run of 80 threads here; a hang in 4 of 45 runs of the sweep).
. "$(dirname "$0")/lib.sh"

runs=${SIGMASK_RUNS:-30}
for i in $(seq 1 "$runs"); do
	rm -rf "$WORK/t"
	depth=1
	[ $((i % 3)) = 0 ] && depth=4 # deeper call sites note the thread's stack too
	timeout 60 env LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/t" LIBTRACE_QUIET=1 \
		LIBTRACE_CALLSITE_DEPTH=$depth "$TESTBIN/sigmask_start" 5 16 3 >"$WORK/out" 2>&1
	s=$?
	[ $s = 124 ] && fail "run $i: hung (killed after 60 s)"
	[ $s = 0 ] || fail "run $i (call-site depth $depth): exit status $s: $(cat "$WORK/out")"
	"$DUMP" --stats "$WORK/t" >"$WORK/stats" 2>"$WORK/err" || fail "run $i: trace-dump: $(head -3 "$WORK/err")"
	n=$(grep -c 'THREAD_BEGIN=1' "$WORK/stats")
	[ "$n" = 81 ] || fail "run $i: $n threads in the trace, expected 81: $(cat "$WORK/stats")"
done
echo "$runs runs: no hang, no allocation in a handler, 81 threads each"
echo ok
