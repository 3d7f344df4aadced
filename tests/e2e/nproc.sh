#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Under `ulimit -u` (RLIMIT_NPROC, threads count) the tracer's helper threads must not take
# the threads the program may start: as nobody under `ulimit -u 11` a program starts 10
# threads untraced, and must traced too; the trace stays whole (the threads that had to
# step aside drain nothing the program's threads do not drain themselves).  Run as nobody:
# needs root to switch to it, else exit 77; skipped when nobody runs processes already.
# Before the fix the traced program got 9 threads (the sampler had taken one).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to run the program as nobody"
command -v setpriv >/dev/null || skip "no setpriv"
[ -z "$(ps -u nobody -o pid= 2>/dev/null)" ] || skip "nobody runs processes already (they count against ulimit -u)"
chmod 755 "$WORK"
mkdir "$WORK/bin" "$WORK/out"
chmod 777 "$WORK/out"
cp "$LIB" "$TESTBIN/as_limit" "$WORK/bin/"
chmod -R a+rX "$WORK/bin"
as_nobody() {
	(
		ulimit -u 11
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	)
}
out=$(as_nobody "$WORK/bin/as_limit" 10 2>&1)
out=${out%%$'\n'*}
[ "$out" = "threads 10" ] || skip "10 threads under ulimit -u 11 untraced: $out"
out=$(as_nobody env LD_PRELOAD="$WORK/bin/libtrace.so" LIBTRACE_OUTPUT="$WORK/out/t" LIBTRACE_QUIET=1 \
	"$WORK/bin/as_limit" 10 2>"$WORK/err")
out=${out%%$'\n'*}
[ "$out" = "threads 10" ] || fail "traced under ulimit -u 11: $out ($(cat "$WORK/err"))"
"$DUMP" --stats "$WORK/out/t" >"$WORK/stats" 2>"$WORK/dumperr" || fail "trace-dump: $(head -3 "$WORK/dumperr")"
[ "$(grep -c 'THREAD_END=1' "$WORK/stats")" = 10 ] || fail "not the 10 threads' ends: $(cat "$WORK/stats")"
grep -v ' lost=0 ' "$WORK/stats" && fail "events lost"
echo "ulimit -u 11 as nobody: 10 threads traced as untraced, all in the trace"
echo ok
