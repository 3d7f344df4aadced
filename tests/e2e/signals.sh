#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Signal handlers that call traced functions (sem_post, trylock, ltr_marker) while threads
# start and end, 64 at a time, each signalled as it starts, under a 10 kHz timer: 30 runs,
# none may hang (a one-in-five hang passes 30 runs once in a thousand), every trace whole.
. "$(dirname "$0")/lib.sh"
runs=${SIGNAL_STORM_RUNS:-30}
for i in $(seq 1 "$runs"); do
	rm -rf "$WORK/storm.trace"
	timeout 60 env LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/storm.trace" LIBTRACE_QUIET=1 \
		"$TESTBIN/signal_storm" 20 64 >"$WORK/out" 2>&1
	status=$?
	[ $status = 124 ] && fail "run $i hung (killed after 60 s)"
	[ $status = 0 ] || fail "run $i: exit status $status: $(head -3 "$WORK/out")"
	grep -qx done "$WORK/out" || fail "run $i: $(cat "$WORK/out")"
done
# The last run's trace: 1 + 20 x 64 threads, nothing lost, readable.
summary=$($CHECK "$WORK/storm.trace" --threads $((1 + 20 * 64)) --no-lost) || fail "$summary"
echo "$summary"
echo "ok: $runs runs, no hang"
