#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A program that closes every descriptor it did not open (the tracer's too) and reuses the
# numbers: it runs as untraced, its files hold only its data, and its trace is complete.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/in/files"
events=400000
# Same output, status and files as untraced (same_behaviour compares the directories).
LIBTRACE_BUFFER_SIZE=64K same_behaviour fdclose "$TESTBIN/fd_closer" $events files
[ "$(cat "$WORK/traced.out")" = done ] || fail "fd_closer: $(cat "$WORK/traced.out")"
for f in "$WORK"/traced/files/*; do
	[ "$(cat "$f")" = mine ] || fail "$f holds more than the program wrote"
done
summary=$($CHECK "$WORK/fdclose.trace" --threads 1 --counter-seq i=$events --no-lost) ||
	fail "$summary"
echo "$summary"
echo ok
