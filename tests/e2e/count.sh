#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A program records a known number of events and returns from main: the trace holds exactly
# those events, per thread, in order, and the threads created are the threads joined.
. "$(dirname "$0")/lib.sh"

threads=4 events=50000
out=$(traced "$WORK/t" "$TESTBIN/count_events" $threads $events) || fail "count_events failed"
[ "$out" = "shared=$(( (threads + 1) * events / 10 ))" ] || fail "wrong program output: $out"
summary=$($CHECK "$WORK/t" --processes 1 --threads $((threads + 1)) --counter-seq i=$events \
	--calls pthread_create=$threads --calls pthread_join=$threads \
	--calls pthread_mutex_lock=$(( (threads + 1) * events / 10 )) \
	--calls pthread_mutex_unlock=$(( (threads + 1) * events / 10 )) \
	--regions tenth=$(( (threads + 1) * events / 10 )) --joined-all --no-lost) ||
	fail "check_trace: $summary"
echo "$summary"

# Small rings: the same exact content through many sealed chunks and writer drains.
rm -rf "$WORK/t"
LIBTRACE_BUFFER_SIZE=64K traced "$WORK/t" "$TESTBIN/count_events" $threads $events >/dev/null ||
	fail "count_events failed with small rings"
summary=$($CHECK "$WORK/t" --threads $((threads + 1)) --counter-seq i=$events --joined-all \
	--no-lost) || fail "small rings: $summary"

# The clock fallback gives the same content.
rm -rf "$WORK/t"
LIBTRACE_CLOCK=monotonic traced "$WORK/t" "$TESTBIN/count_events" 2 1000 >/dev/null ||
	fail "count_events failed with CLOCK_MONOTONIC"
grep -q '^clock monotonic' "$WORK"/t/*/meta || fail "meta does not name the monotonic clock"
$CHECK "$WORK/t" --threads 3 --counter-seq i=1000 --joined-all --no-lost >/dev/null ||
	fail "CLOCK_MONOTONIC trace"
echo "ok"
