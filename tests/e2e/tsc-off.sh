#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A program that turns the TSC off (prctl PR_SET_TSC, PR_TSC_SIGSEGV), or enters seccomp's
# strict mode, and goes on calling traced functions.  rdtsc, and the vDSO's clock_gettime
# which reads the TSC, raise SIGSEGV after it: the traced program must run as untraced.
# With the TSC off the clock goes over to the clock_gettime system call: every call of both
# threads is in the trace, each thread's times increasing, and the archive is valid.  In
# strict mode a thread may make no system call of the tracer's: it ends its part of the
# trace at the call (THREAD_END, its earlier calls all there) and is not traced after it.
# Before the fix both died of SIGSEGV at the first traced call after the prctl.
. "$(dirname "$0")/lib.sh"
CONVERT=$BUILD/trace2otf2

"$TESTBIN/tsc_off" tsc 10 >/dev/null 2>&1 || skip "PR_SET_TSC does not work here, untraced"
"$TESTBIN/tsc_off" seccomp 10 >/dev/null 2>&1 || skip "seccomp's strict mode does not work here, untraced"

for clock in auto monotonic; do
	rm -rf "$WORK/t"
	LIBTRACE_CLOCK=$clock traced "$WORK/t" "$TESTBIN/tsc_off" tsc 20000 >"$WORK/out" 2>"$WORK/err"
	s=$?
	[ $s = 0 ] && grep -qx ok "$WORK/out" || fail "TSC off (clock $clock): exit status $s: $(cat "$WORK/err")"
	"$DUMP" "$WORK/t" >"$WORK/dump" 2>"$WORK/dumperr" || fail "trace-dump: $(head -3 "$WORK/dumperr")"
	for th in 0 1; do
		n=$(awk -v th=$th '$2 == th && $4 == "CALL"' "$WORK/dump" | wc -l)
		[ "$n" = 40000 ] || fail "TSC off (clock $clock): thread $th has $n calls, expected 40000"
	done
	back=$(awk '{ if (($2 in last) && $3 < last[$2]) n++; last[$2] = $3 } END { print n + 0 }' "$WORK/dump")
	[ "$back" = 0 ] || fail "TSC off (clock $clock): $back records earlier than the one before on their thread"
	if [ -x "$CONVERT" ] && command -v otf2-print >/dev/null; then
		"$CONVERT" -q "$WORK/t" -o "$WORK/a.$clock" 2>"$WORK/err" || fail "trace2otf2: $(cat "$WORK/err")"
		otf2-print -Werror "$WORK/a.$clock/traces.otf2" >/dev/null 2>&1 || fail "otf2-print -Werror rejects the archive"
	fi
done
echo "TSC off: exit 0, 40000 calls on each thread, times increasing, archive valid (clock auto and monotonic)"

rm -rf "$WORK/t"
traced "$WORK/t" "$TESTBIN/tsc_off" seccomp 20000 >"$WORK/out" 2>"$WORK/err"
s=$?
[ $s = 0 ] && grep -qx 'strict ok' "$WORK/out" && grep -qx ok "$WORK/out" ||
	fail "seccomp strict: exit status $s: $(cat "$WORK/out" "$WORK/err")"
"$DUMP" --stats "$WORK/t" >"$WORK/stats" 2>"$WORK/dumperr" || fail "trace-dump: $(head -3 "$WORK/dumperr")"
grep -q '^[^ ]* 0 .* CALL=40000 ' "$WORK/stats" || fail "the main thread's 40000 calls: $(cat "$WORK/stats")"
grep -q '^[^ ]* 1 .*THREAD_END=1 CALL=40000 ' "$WORK/stats" ||
	fail "the strict thread: its 40000 calls before the prctl and its end: $(cat "$WORK/stats")"
echo "seccomp strict: exit 0; the thread's calls before strict mode and its end in the trace"
echo ok
