#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A test-only output backend (tests/backends/count.c, in trace2otf2-test) counts the events
# the analysis core hands over; the counts must agree with trace-dump's count of the
# records they come from, on a trace of count_events (threads, regions, counters, mutexes).
. "$(dirname "$0")/lib.sh"

CONV=$TESTBIN/trace2otf2-test
[ -x "$CONV" ] || fail "trace2otf2-test was not built"
"$CONV" --help | grep -q '^  count ' || fail "the count backend is not in trace2otf2-test's table"

T=3 N=50
traced "$WORK/t.trace" "$TESTBIN/count_events" $T $N private >/dev/null || fail "count_events failed"
"$CONV" -q -f count "$WORK/t.trace" -o "$WORK/t" || fail "trace2otf2-test -f count: exit status $?"
[ -f "$WORK/t.counts" ] || fail "no t.counts"
cat "$WORK/t.counts"

"$DUMP" "$WORK"/t.trace/*/ >"$WORK/dump" || fail "trace-dump failed"
records() { awk -v t="$1" '$3 == t { n++ } END { print n + 0 }' "$WORK/dump"; }
count() { awk -v k="$1" '$1 == k { print $2 }' "$WORK/t.counts"; }

# An Enter per CALL_ENTER, CALL, REGION_ENTER, and per THREAD_BEGIN (main or the start
# routine); every region is left (the core closes main at the process's end).
enters=$(($(records CALL_ENTER) + $(records CALL) + $(records REGION_ENTER) + $(records THREAD_BEGIN)))
[ "$(count enter)" = "$enters" ] || fail "enter: $(count enter), the records say $enters"
[ "$(count leave)" = "$enters" ] || fail "leave: $(count leave), expected $enters"
[ "$(count enter.user)" = "$(records REGION_ENTER)" ] || fail "enter.user: $(count enter.user)"
[ "$(count metric.counter)" = "$(records COUNTER)" ] ||
	fail "metric.counter: $(count metric.counter), COUNTER $(records COUNTER)"
[ "$(count thread_create)" = "$(records THREAD_CREATE)" ] || fail "thread_create: $(count thread_create)"
[ "$(count thread_create)" = $T ] || fail "thread_create: $(count thread_create), $T threads were created"
[ "$(count thread_begin)" = $T ] || fail "thread_begin: $(count thread_begin)"
[ "$(count thread_end)" = $T ] || fail "thread_end: $(count thread_end)"
[ "$(count locations.thread)" = "$(records THREAD_BEGIN)" ] || fail "locations.thread: $(count locations.thread)"
echo "backend-count: ok"
