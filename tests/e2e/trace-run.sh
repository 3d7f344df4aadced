#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-run: traces into -o DIR, passes arguments and the exit status through, says where the
# trace went, and refuses a statically linked program with a clear message.
. "$(dirname "$0")/lib.sh"
run=$BUILD/trace-run

out=$("$run" -o "$WORK/t" "$TESTBIN/exit_with" 3 "two words" 2>"$WORK/err")
status=$?
[ $status = 3 ] || fail "exit status $status, expected 3"
[ "$out" = $'3\ntwo words' ] || fail "arguments not passed through: $out"
grep -q "^trace-run: trace in $WORK/t" "$WORK/err" || fail "no location line: $(cat "$WORK/err")"
[ "$(grep -c . "$WORK/err")" = 1 ] || fail "more than one line on stderr: $(cat "$WORK/err")"
ls "$WORK"/t/*/meta >/dev/null || fail "no trace"
"$run" -q -o "$WORK/q" "$TESTBIN/exit_with" 0 >/dev/null 2>"$WORK/err" || fail "-q run failed"
[ ! -s "$WORK/err" ] || fail "-q still printed: $(cat "$WORK/err")"
"$run" -o "$WORK/m" -m user "$TESTBIN/count_events" 1 10 >/dev/null 2>&1 || fail "-m run failed"
grep -q '^config LIBTRACE_MODULES=user$' "$WORK"/m/*/meta || fail "-m user not applied"
! "$DUMP" "$WORK/m" | grep -q pthread_create || fail "-m user still recorded pthread calls"

if [ -x "$TESTBIN/exit_with_static" ]; then
	"$run" -o "$WORK/s" "$TESTBIN/exit_with_static" 0 >/dev/null 2>"$WORK/err"
	status=$?
	[ $status = 127 ] || fail "static program: status $status, expected 127"
	grep -q "statically linked" "$WORK/err" || fail "no clear message: $(cat "$WORK/err")"
	echo "static program refused"
else
	echo "no static libc here: the static-program case is not run"
fi
"$run" -o "$WORK/x" no-such-program-here >/dev/null 2>"$WORK/err"
[ $? = 127 ] || fail "a missing program must give 127"
grep -q "command not found" "$WORK/err" || fail "no clear message for a missing program"
echo ok
