#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Under a file size limit (`ulimit -f 5000`, 5,000 KiB) the traced program lives: a write
# past the limit raises SIGXFSZ, whose default action kills, and the tracer's trace files
# must not take the program with them.  Five threads record 700,003 events each (700,028
# for the main thread), far more than 5 MB of trace: the program exits 0, says why the trace
# is short, and every thread's records and lost events add up exactly to what an unlimited
# run records.  The tools under the same limit report a write error instead of dying of
# the signal, and trace-report leaves no cut report.  Before the fix the program was killed
# (status 153) with an empty trace.
. "$(dirname "$0")/lib.sh"
CONVERT=$BUILD/trace2otf2
REPORT=$BUILD/trace-report

traced "$WORK/full" "$TESTBIN/count_events" 4 500000 private >/dev/null 2>&1 || fail "the unlimited run failed"
"$DUMP" --stats "$WORK/full" | awk '{ sub(/records=/, "", $3); print $2, $3 }' >"$WORK/want"
(
	ulimit -f 5000
	traced "$WORK/t" "$TESTBIN/count_events" 4 500000 private >"$WORK/out" 2>"$WORK/err"
)
s=$?
[ $s = 0 ] || fail "under ulimit -f 5000: exit status $s (153: killed by SIGXFSZ): $(cat "$WORK/err")"
grep -q 'file size limit' "$WORK/err" || fail "no word about the file size limit: $(cat "$WORK/err")"
grep -q '^shared=' "$WORK/out" || fail "the program's output is missing"
"$DUMP" --stats "$WORK/t" >"$WORK/stats" 2>"$WORK/dumperr" || fail "trace-dump: $(head -3 "$WORK/dumperr")"
awk '{ r = $3; l = $4; sub(/records=/, "", r); sub(/lost=/, "", l); print $2, r + l }' "$WORK/stats" >"$WORK/got"
cmp -s "$WORK/want" "$WORK/got" ||
	fail "records + lost per thread differ from the unlimited run's records: $(paste "$WORK/want" "$WORK/got")"
lost=$(awk '{ l = $4; sub(/lost=/, "", l); s += l } END { print s + 0 }' "$WORK/stats")
[ "$lost" -gt 0 ] || fail "nothing counted lost: the limit did not bite"
echo "ulimit -f 5000: exit 0; records + $lost lost = every thread's events of the unlimited run"

# The tools under a limit their output passes: an error, not death by SIGXFSZ.
(
	ulimit -f 200
	"$DUMP" "$WORK/full" >"$WORK/dump.txt" 2>"$WORK/err"
)
s=$?
[ $s != 0 ] && [ $s != 153 ] && grep -q 'too large' "$WORK/err" ||
	fail "trace-dump past ulimit -f: status $s: $(cat "$WORK/err")"
if [ -x "$CONVERT" ]; then
	(
		ulimit -f 200
		"$CONVERT" -q "$WORK/full" -o "$WORK/a" 2>"$WORK/err"
	)
	s=$?
	[ $s = 4 ] && grep -q 'file size limit' "$WORK/err" ||
		fail "trace2otf2 past ulimit -f: status $s: $(cat "$WORK/err")"
fi
if [ -x "$REPORT" ]; then
	(
		ulimit -f 1
		"$REPORT" -q --html -o "$WORK/r.html" "$WORK/full" 2>"$WORK/err"
	)
	s=$?
	[ $s = 3 ] && grep -q 'too large' "$WORK/err" || fail "trace-report past ulimit -f: status $s: $(cat "$WORK/err")"
	[ ! -e "$WORK/r.html" ] || fail "trace-report left a cut report"
	ls "$WORK"/r.html.* 2>/dev/null && fail "trace-report left its temporary file"
fi
echo "trace-dump, trace2otf2 and trace-report past ulimit -f: a write error each, no cut report"
echo ok
