#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every way a program ends keeps every recorded event, and the program's exit status or
# death by signal is exactly what it is untraced.
. "$(dirname "$0")/lib.sh"
prog=$TESTBIN/endings
[ -x "$prog" ] || skip "no C++ compiler: the endings program was not built"
n=20000
for mode in return exit _exit abort throw segv bus term int term-handler int-handler exec; do
	(ulimit -c 0; "$prog" $mode $n >/dev/null 2>&1)
	plain=$?
	rm -rf "$WORK/t"
	(ulimit -c 0; traced "$WORK/t" "$prog" $mode $n >/dev/null 2>&1)
	status=$?
	[ $plain = $status ] || fail "$mode: status $status traced, $plain untraced"
	"$DUMP" "$WORK/t" >"$WORK/dump" || fail "$mode: trace-dump failed ($?)"
	for name in main worker; do
		got=$(grep -c "COUNTER \"$name\"" "$WORK/dump")
		seq=$(awk -v n="\"$name\"" '$4 == "COUNTER" && $5 == n {split($6, v, "="); if (v[2] != i++) bad = 1} END {print bad ? "bad" : "ok"}' "$WORK/dump")
		[ "$got" = $n ] && [ "$seq" = ok ] || fail "$mode: $got $name values ($seq), expected $n in order"
	done
	case $mode in
	*-handler) grep -q 'MARKER "got SIG' "$WORK/dump" || fail "$mode: the handler's marker is missing" ;;
	esac
	echo "$mode: status $status as untraced, $n + $n values kept"
done
echo ok
