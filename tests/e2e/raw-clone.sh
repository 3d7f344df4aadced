#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A child process made by the clone system call itself (SIGCHLD, no CLONE_VM: not fork, so
# no atfork handler tells the tracer) locks and unlocks 100,000 times while its parent does
# 300,000 pairs.  The child runs on a copy of its parent's memory with the parent's rings
# still mapped: every one of the parent's pairs must be in its trace, and what the child
# would have recorded is counted, exactly, as lost with cause "unseen".  Before the fix the
# child wrote into its parent's ring: 163,829 of the parent's 300,000 pairs were found.
. "$(dirname "$0")/lib.sh"

traced "$WORK/t" "$TESTBIN/raw_clone" 300000 100000 >"$WORK/out" 2>&1 ||
	fail "raw_clone: exit status $?: $(cat "$WORK/out")"
grep -q '^child status 0,' "$WORK/out" || fail "the child failed: $(cat "$WORK/out")"
"$DUMP" "$WORK/t" >"$WORK/dump" 2>"$WORK/err" || fail "trace-dump: $(head -3 "$WORK/err")"
[ "$(ls -d "$WORK"/t/*/ | wc -l)" = 1 ] || fail "expected the parent's process directory only"
for f in pthread_mutex_lock pthread_mutex_unlock; do
	n=$(grep -c " CALL $f " "$WORK/dump")
	[ "$n" = 300000 ] || fail "$n calls of $f in the parent's trace, expected 300000"
done
lost=$(awk '$4 == "LOST" && $5 == "cause=unseen" { sub(/count=/, "", $6); s += $6 } END { print s + 0 }' "$WORK/dump")
[ "$lost" = 200000 ] || fail "the child's 200000 events counted as $lost lost (cause unseen)"
other=$(awk '$4 == "LOST" && $5 != "cause=unseen"' "$WORK/dump")
[ -z "$other" ] || fail "other losses: $other"
echo "the parent's 600000 calls all in its trace; the child's 200000 events counted lost (unseen)"
echo ok
