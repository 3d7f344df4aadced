#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# mlockall(MCL_CURRENT | MCL_FUTURE) by an unprivileged program under the default 8 MiB
# RLIMIT_MEMLOCK: the kernel refuses MCL_CURRENT when all the process's mappings exceed the
# limit, and a ring alone is 8 MiB.  Traced, the call must succeed as it does untraced (the
# program's mappings are locked, the tracer's left out), the program run on, and the main
# thread's calls be in the trace; a thread started afterwards, whose ring the kernel would
# have to lock, is traced or has its loss counted with a word why.  Run as nobody (root
# can lock without limit): needs root to switch to nobody, else exit 77.  Before the fix
# the traced mlockall failed with "Cannot allocate memory".
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root to run the program as nobody"
command -v setpriv >/dev/null || skip "no setpriv"
# The program, the library and the trace where nobody can reach them.
chmod 755 "$WORK"
mkdir "$WORK/bin" "$WORK/out"
chmod 777 "$WORK/out"
cp "$LIB" "$TESTBIN/mlock_all" "$WORK/bin/"
chmod -R a+rX "$WORK/bin"
as_nobody() {
	(
		ulimit -l 8192
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	)
}
out=$(as_nobody "$WORK/bin/mlock_all" 1000 2>&1)
[ "$out" = "locked
ok" ] || skip "mlockall does not work untraced as nobody here: $out"
out=$(as_nobody env LD_PRELOAD="$WORK/bin/libtrace.so" LIBTRACE_OUTPUT="$WORK/out/t" \
	"$WORK/bin/mlock_all" 1000 2>"$WORK/err")
s=$?
[ $s = 0 ] && [ "$out" = "locked
ok" ] || fail "traced as nobody: exit status $s: $out $(cat "$WORK/err")"
"$DUMP" --stats "$WORK/out/t" >"$WORK/stats" 2>"$WORK/dumperr" || fail "trace-dump: $(head -3 "$WORK/dumperr")"
grep -q '^[^ ]* 0 .* lost=0 .*CALL=2000 ' "$WORK/stats" || fail "the main thread's calls: $(cat "$WORK/stats")"
if ! grep -q '^[^ ]* 1 .* lost=0 .*CALL=2000 ' "$WORK/stats"; then
	grep -q '^[^ ]* 1 records=0 lost=2003' "$WORK/stats" || fail "thread 1: neither traced nor counted: $(cat "$WORK/stats")"
	grep -q "mlockall locks new mappings" "$WORK/err" || fail "no word why thread 1 got no ring: $(cat "$WORK/err")"
fi
echo "mlockall as nobody under 8 MiB of memlock: works traced, the main thread's 2000 calls in the trace"
echo ok
