#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pthread_mutex_lock under the tracer returns what it returns
# untraced for every kind of mutex: EDEADLK on an error-checking relock, 0 on a recursive
# one, EOWNERDEAD and ENOTRECOVERABLE on a robust mutex whose owner died, 0 after waiting
# on a contended one.  Each lock is a CALL_ENTER ... CALL_LEAVE that carries the result.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/in"
same_behaviour kinds "$TESTBIN/mutex_kinds"
grep -q '^errorcheck relock: Resource deadlock avoided$' "$WORK/traced.out" ||
	fail "errorcheck relock: $(grep relock "$WORK/traced.out")"
grep -q '^robust, owner died: Owner died$' "$WORK/traced.out" || fail "robust: $(cat "$WORK/traced.out")"
"$DUMP" "$WORK/kinds.trace" >"$WORK/dump" || fail "trace-dump failed"
grep -q 'CALL_LEAVE pthread_mutex_lock ret=0$' "$WORK/dump" || fail "no successful lock"
grep -q "CALL_LEAVE pthread_mutex_lock ret=$(python3 -c 'import errno; print(errno.EDEADLK)')$" "$WORK/dump" ||
	fail "the errorcheck relock is not recorded with EDEADLK"
grep -q "CALL_LEAVE pthread_mutex_lock ret=$(python3 -c 'import errno; print(errno.EOWNERDEAD)')$" "$WORK/dump" ||
	fail "the robust lock is not recorded with EOWNERDEAD"
echo ok
