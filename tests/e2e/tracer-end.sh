#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The tracer's own end (its modules' end, the last copies, the trim, after the program
# returned or called exit) is not the program's time: the meta file says when it began
# (`ending`), Paraver paints it as Extrae paints its flushing (event 40000003, state I/O)
# so that efficiency.cfg's useful time ends with the program, OTF2's ProgramEnd is there
# and no thread has an event after it, and trace-report counts it in no thread, saying how
# long it took (check_tracer_end.py).  Before, the main thread was Running until the end.
. "$(dirname "$0")/lib.sh"
export LIBTRACE_SAMPLE_PERIOD=0
[ -x "$CONVERT" ] || skip "trace2otf2 was not built (no OTF2: apt-get install libotf2-trace-dev)"
/usr/bin/python3 -c 'import otf2' 2>/dev/null || skip "python3-otf2 missing (apt-get install python3-otf2)"

# check NAME PROGRAM ARGS...: traces it, converts it both ways, profiles it, checks.
check() {
	local name=$1
	shift
	local t=$WORK/$name
	traced "$t" "$@" >/dev/null || fail "$name: the traced program failed"
	"$CONVERT" -q "$t" -o "$t.otf2" || fail "$name: trace2otf2 failed"
	"$CONVERT" -q --format=paraver "$t" -o "$t" || fail "$name: trace2otf2 -f paraver failed"
	"$BUILD/trace-report" -q --json -o "$t.json" "$t" || fail "$name: trace-report failed"
	/usr/bin/python3 "$SRC/tests/e2e/check_tracer_end.py" "$t" "$t.prv" "$t.otf2/traces.otf2" \
		"$t.json" || fail "$name: the tracer's end counted as the program's"
	"$BUILD/trace-report" -q "$t" | grep -q "^  ending .* after the program's end" ||
		fail "$name: trace-report does not say how long the tracer's end took"
}

# Threads created and joined, main returns.
check joined "$TESTBIN/count_events" 3 20000 private
# The same with larger rings to copy at the end.
LIBTRACE_BUFFER_SIZE=64M check big "$TESTBIN/count_events" 3 50000 private
echo "ok: tracer-end"
