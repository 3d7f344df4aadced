#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A program that closes every descriptor it did not open (the tracer's too) and reuses the
# numbers: it runs as untraced, its files hold only its data, and its trace is complete.
. "$(dirname "$0")/lib.sh"
mkdir "$WORK/files"
events=400000
out=$(LIBTRACE_BUFFER_SIZE=64K traced "$WORK/t" "$TESTBIN/fd_closer" $events "$WORK/files") ||
	fail "fd_closer failed under the tracer"
[ "$out" = done ] || fail "fd_closer: $out"
for f in "$WORK"/files/*; do
	[ "$(cat "$f")" = mine ] || fail "$f holds more than the program wrote"
done
summary=$($CHECK "$WORK/t" --threads 1 --counter-seq i=$events --no-lost) || fail "$summary"
echo "$summary"
echo ok
