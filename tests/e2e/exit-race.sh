#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The program ends while its threads still record: three threads lock and unlock in a loop,
# never joined, while the main thread sleeps 50 to 500 ms and then calls exit or _exit (20
# runs of each, the ring's default size and a small one by turns, so that the threads move
# to new chunks while the end copies and trims the rings).  Each run exits 0, and every pair
# a thread completed (counted by the program itself in a file mapping that outlives it) is
# in the trace, with nothing counted lost and trace-dump reading it whole.  Before the fix,
# the end's trim punched chunks the threads had just moved to: chunks lost, and a producer
# that recursed on its slow path until its stack overflowed (SIGSEGV).
. "$(dirname "$0")/lib.sh"

runs=${EXIT_RACE_RUNS:-40}
for i in $(seq 0 $((runs - 1))); do
	how=exit
	[ $((i % 2)) = 1 ] && how=_exit
	size=
	[ $((i / 2 % 2)) = 1 ] && size=256K
	ms=$((50 + i * 450 / (runs > 1 ? runs - 1 : 1)))
	rm -rf "$WORK/t"
	LIBTRACE_BUFFER_SIZE=${size:-8M} traced "$WORK/t" "$TESTBIN/exit_race" "$WORK/counts" $ms $how \
		>"$WORK/out" 2>&1
	s=$?
	[ $s = 0 ] || fail "run $i ($how after $ms ms, ring ${size:-8M}): exit status $s: $(cat "$WORK/out")"
	"$DUMP" --stats "$WORK/t" >"$WORK/stats" 2>"$WORK/err" ||
		fail "run $i ($how after $ms ms): trace-dump: $(head -3 "$WORK/err")"
	grep -v ' lost=0 ' "$WORK/stats" && fail "run $i ($how after $ms ms): events counted lost"
	k=1
	while read -r tid done; do
		calls=$(awk -v k=$k '$2 == k { for (f = 3; f <= NF; f++) if ($f ~ /^CALL=/) { sub(/CALL=/, "", $f); print $f } }' "$WORK/stats")
		pairs=$(( ${calls:-0} / 2 ))
		# The trace may hold one pair more: the unlock recorded, the count not yet stored.
		[ "$pairs" -ge "$done" ] && [ "$pairs" -le $((done + 1)) ] ||
			fail "run $i ($how after $ms ms): thread $k (tid $tid) completed $done pairs, the trace holds $pairs"
		k=$((k + 1))
	done <"$WORK/counts"
	[ $k = 4 ] || fail "run $i: $((k - 1)) threads counted, expected 3"
	total=$((${total:-0} + $(awk '{ s += $2 } END { print s }' "$WORK/counts")))
done
echo "$runs runs (exit and _exit, 50..500 ms): exit status 0, all $total completed pairs in the traces, none lost"
echo ok
