#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# vfork: the child runs on its parent's memory, the tracer's thread state included, until it
# execs or exits.  Its calls must not land in the parent's stream: each parent thread has
# exactly its own calls, the thread that vforked and returned at once still ends in the
# trace, and the image the first child execs is traced as a process of its own.  Before,
# the parent's thread 0 had every child's calls too (404 of its 400 here, and more).
. "$(dirname "$0")/lib.sh"

traced "$WORK/t" "$TESTBIN/vfork_child" 100 7 /bin/true >"$WORK/out" 2>"$WORK/err" ||
	fail "exit status $?: $(cat "$WORK/out" "$WORK/err")"
grep -qx ok "$WORK/out" || fail "the program went otherwise: $(cat "$WORK/out")"
"$DUMP" --stats "$WORK/t" >"$WORK/stats" || fail "trace-dump --stats"
[ "$(ls -d "$WORK"/t/*/ | wc -l)" = 2 ] || fail "not 2 processes (the program and the exec'd image): $(ls "$WORK/t")"
parent=$(awk '/ THREAD_CREATE=/ { print $1 }' "$WORK/stats")
[ -n "$parent" ] || fail "no process with a THREAD_CREATE: $(cat "$WORK/stats")"
calls() { awk -v p="$parent" -v th="$1" '$1 == p && $2 == th { for (i = 3; i <= NF; i++) if ($i ~ /^CALL=/) { split($i, kv, "="); print kv[2] } }' "$WORK/stats"; }
[ "$(calls 0)" = 400 ] || fail "the main thread has $(calls 0) calls, its own are 400: $(cat "$WORK/stats")"
[ "$(calls 1)" = 200 ] || fail "the thread has $(calls 1) calls, its own are 200: $(cat "$WORK/stats")"
awk -v p="$parent" '$1 == p && $2 == 1' "$WORK/stats" | grep -q ' THREAD_END=1' ||
	fail "the thread that vforked last has no THREAD_END: $(cat "$WORK/stats")"
grep -v ' lost=0 ' "$WORK/stats" && fail "events lost"
echo "vfork: each parent thread has its own calls only (400 and 200), the exec'd image traced apart"
