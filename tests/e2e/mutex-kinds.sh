#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# pthread_mutex_lock under the tracer returns what it returns
# untraced for every kind of mutex: EDEADLK on an error-checking relock, 0 on a recursive
# one, EOWNERDEAD and ENOTRECOVERABLE on a robust mutex whose owner died, 0 after waiting
# on a contended one.  A plain mutex (normal, recursive, error-checking) taken at once is
# one CALL record carrying the result; one that waited (contended, or refused after the
# try: EDEADLK) and every lock of a robust mutex are a CALL_ENTER ... CALL_LEAVE.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/in"
same_behaviour kinds "$TESTBIN/mutex_kinds"
grep -q '^errorcheck relock: Resource deadlock avoided$' "$WORK/traced.out" ||
	fail "errorcheck relock: $(grep relock "$WORK/traced.out")"
grep -q '^robust, owner died: Owner died$' "$WORK/traced.out" || fail "robust: $(cat "$WORK/traced.out")"
"$DUMP" "$WORK/kinds.trace" >"$WORK/dump" || fail "trace-dump failed"
errno() { python3 -c "import errno; print(errno.$1)"; }
has() { grep -Eq "$1" "$WORK/dump" || fail "$2"; }
has ' CALL pthread_mutex_lock obj=0x[0-9a-f]* ret=0( |$)' "no lock taken at once as one CALL record"
has ' CALL_LEAVE pthread_mutex_lock ret=0$' "the contended lock is not a CALL_ENTER ... CALL_LEAVE"
has " CALL_LEAVE pthread_mutex_lock ret=$(errno EDEADLK)\$" "the errorcheck relock is not recorded with EDEADLK"
has " CALL_LEAVE pthread_mutex_lock ret=$(errno EOWNERDEAD)\$" "the robust lock is not recorded with EOWNERDEAD"
has " CALL_LEAVE pthread_mutex_lock ret=$(errno ENOTRECOVERABLE)\$" \
	"the unrecoverable robust lock is not recorded with ENOTRECOVERABLE"
# Exactly five waited or are robust: the errorcheck relock, the three robust locks (the
# dying owner's too), the contended one; the errorcheck lock, the recursive lock and relock
# and the holder's lock of the contended mutex were taken at once.
n=$(grep -c ' CALL_ENTER pthread_mutex_lock ' "$WORK/dump")
[ "$n" = 5 ] || fail "$n locks recorded as enter and leave, not 5"
n=$(grep -c ' CALL pthread_mutex_lock ' "$WORK/dump")
[ "$n" = 4 ] || fail "$n locks recorded as taken at once, not 4"
echo ok
