#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A module added as one file (tests/modules/testmod.c) plus one line of a build: the test
# copy of the runtime (libtrace_testmod.so, the same objects as libtrace.so and that file)
# traces a program through it.  Its wrapper's records are in the trace (trace-dump), its
# thread-start hook marked both threads, its thread-end and process-end hooks wrote their
# meta lines, and the runtime's own modules still record (pthread_create).
. "$(dirname "$0")/lib.sh"

LIB=$BUILD/tests/libtrace_testmod.so
[ -f "$LIB" ] || fail "no $LIB"
n=25
out=$(LIBTRACE_SAMPLE_PERIOD=0 traced "$WORK/t" "$TESTBIN/testmod_prog" $n) ||
	fail "testmod_prog failed"
[ "$out" = "sum=$((2 * n * n))" ] || fail "wrong program output: $out"
meta=$(echo "$WORK"/t/*/meta)
[ -f "$meta" ] || fail "no meta file"
dump=$("$DUMP" "$WORK/t") || fail "trace-dump failed"
enters=$(grep -c 'REGION_ENTER.*testmod_work' <<<"$dump")
leaves=$(grep -c 'REGION_LEAVE.*testmod_work' <<<"$dump")
[ "$enters" = $((2 * n)) ] && [ "$leaves" = $((2 * n)) ] ||
	fail "testmod_work regions: $enters enters, $leaves leaves (want $((2 * n)) each)"
marks=$(grep -c 'MARKER.*testmod thread start' <<<"$dump")
[ "$marks" = 2 ] || fail "thread-start hook: $marks markers (want 2)"
grep -q 'pthread_create' <<<"$dump" || fail "the pthread module did not record"
grep -q "^testmod_end $((2 * n))\$" "$meta" || fail "process-end hook: $(grep testmod_end "$meta")"
grep -q "^testmod_thread 1 $n\$" "$meta" || fail "thread-end hook: $(grep testmod_thread "$meta")"

# Adding it touched only its own file and its build line: libtrace.so has no trace of it.
if nm -D "$BUILD/libtrace.so" | grep -q ' testmod_work$'; then
	fail "libtrace.so wraps testmod_work"
fi
echo "ok: $enters calls recorded through the test module, hooks ran"
