#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# PAPI readings in OTF2 next to metrics the converter meets later.  mk_papi_trace.py writes
# (from format.h, no PAPI needed) two processes whose threads read PAPI events at each
# region's enter and leave while a counter of the annotation API and a sampled metric
# appear only after the first reading, the second process with another PAPI set.  Each
# Metric event of the archive, read through its location's mapping table, must name the
# class whose members are what was read, with the values of the trace (check_papi_otf2.py
# against trace-dump), serially and with -j 2 (whose global definitions are the serial
# archive's, line for line, and whose events are the same: compare_otf2.py).
. "$(dirname "$0")/lib.sh"
need_converter
/usr/bin/python3 "$SRC/tests/e2e/mk_papi_trace.py" "$WORK/t" || fail "cannot write the trace"
"$DUMP" --sampler "$WORK/t" >"$WORK/t.dump" || fail "trace-dump failed"
check() { # NAME ARCHIVE
	otf2-print -Werror "$2" >/dev/null 2>"$WORK/$1.err" ||
		fail "$1: otf2-print -Werror: $(head -3 "$WORK/$1.err")"
	local said
	said=$(/usr/bin/python3 "$SRC/tests/e2e/check_papi_otf2.py" "$WORK/t.dump" "$2") ||
		fail "$1: the Metric events are not the trace's readings"
	echo "$1: $said"
}
"$CONVERT" -q -o "$WORK/serial.otf2" "$WORK/t" || fail "serial conversion failed"
check serial "$WORK/serial.otf2/traces.otf2"
"$CONVERT" -q -j 2 -o "$WORK/par.otf2" "$WORK/t" || fail "-j 2 conversion failed"
check "-j 2" "$WORK/par.otf2/traces.otf2"
diff <(otf2-print -G "$WORK/serial.otf2/traces.otf2") <(otf2-print -G "$WORK/par.otf2/traces.otf2") \
	>"$WORK/defs.diff" || fail "-j 2: global definitions differ: $(head -5 "$WORK/defs.diff")"
/usr/bin/python3 "$SRC/tests/e2e/compare_otf2.py" "$WORK/serial.otf2/traces.otf2" \
	"$WORK/par.otf2/traces.otf2" >"$WORK/cmp.log" 2>&1 || {
	tail -5 "$WORK/cmp.log" >&2
	fail "-j 2: the events differ from the serial archive's"
}
echo "-j 2: the serial archive's definitions and events"
echo ok
