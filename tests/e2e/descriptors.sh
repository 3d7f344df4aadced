#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The program's descriptors are the program's: the tracer's files look closed to it and
# move out of the way of its dup2; descriptor limits never turn tracing off silently and
# never leave the tracer holding what the program needs.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/in"

# bash saves and restores a number it finds open: with the tracer's file seen at 100, the
# redirection went into the trace and g stayed empty.
same_behaviour bash100 bash -c 'exec 100>g; echo a >&100; exec 101>h; echo b >&101
	echo c >&102 || echo "102 is not open"; ls g h'
[ "$(cat "$WORK/traced/g")" = a ] || fail "bash: g holds '$(cat "$WORK/traced/g")', not a"
$DUMP "$WORK/bash100.trace" >/dev/null || fail "bash: the trace is damaged"
grep -aq '^end ' "$WORK"/bash100.trace/*/meta || fail "bash: the trace has no end"

# A program that checks, closes (one by one, close_range, closefrom) and dup2s onto the
# numbers the tracer uses while threads start: same output, and no thread is lost.
rounds=40 batch=8
same_behaviour hammer "$TESTBIN/fd_hammer" $rounds $batch
grep -qx 'open before the program opened them: 0' "$WORK/traced.out" ||
	fail "hammer: $(cat "$WORK/traced.out")"
summary=$($CHECK "$WORK/hammer.trace" --threads $((1 + rounds * batch)) --no-lost) ||
	fail "hammer: $summary"
echo "$summary"

# ulimit -n 5: too few for the tracer beside the program.  It says so and holds nothing:
# the program opens what it opens untraced (descriptors inherited from the test harness
# count against the limit too, so the untraced run is the reference).
tiny='exec 3>"$1"/a 4>"$1"/b && echo opened; echo ran'
plain=$( (ulimit -n 5 && bash -c "$tiny" _ "$WORK") 2>&1)
out=$( (ulimit -n 5 && traced "$WORK/tiny.trace" bash -c "$tiny" _ "$WORK") 2>&1)
[ "$plain" = "$(grep -v '^libtrace' <<<"$out")" ] ||
	fail "ulimit -n 5: untraced '$plain', traced '$out'"
grep -q '^libtrace.*not tracing' <<<"$out" || fail "ulimit -n 5: tracing went off without a word: $out"
# and leaves nothing behind: before, an empty process directory (and the trace directory).
[ ! -e "$WORK/tiny.trace" ] || fail "ulimit -n 5: left behind: $(find "$WORK/tiny.trace")"
# Giving up touches none of the program's descriptors: its standard input still reads.
out=$(echo hello | (ulimit -n 5 && traced "$WORK/tiny2.trace" bash -c 'read -r x && echo "read $x"') 2>&1)
[ "$(grep -v '^libtrace' <<<"$out")" = "read hello" ] || fail "ulimit -n 5: standard input lost: $out"

# A soft limit over 4096 (the tracer's files then sit from 100 on, under it): a program that
# opens until EMFILE, in any of these ways, gets as many descriptors as untraced (the files
# move above the limit when it runs out).  Before, 3 fewer (the tracer's 3 files).
if [ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -ge 8300 ]; then
	for way in open openat socket accept pipe fopen opendir; do
		plain=$( (ulimit -S -n 8192 && "$TESTBIN/fd_fill" $way) 2>&1)
		out=$( (ulimit -S -n 8192 && traced "$WORK/fill.$way" "$TESTBIN/fd_fill" $way) 2>&1)
		[ "$plain" = "$out" ] || fail "ulimit -S -n 8192, $way: untraced '$plain', traced '$out'"
		$DUMP "$WORK/fill.$way" >/dev/null || fail "ulimit -S -n 8192, $way: the trace is damaged"
	done
	echo "ulimit -S -n 8192: open, openat, socket, accept, pipe, fopen, opendir as untraced ($plain)"
else
	echo "hard descriptor limit $(ulimit -H -n): the soft limit over 4096 is not tried"
fi

# ulimit -S -n 200: traced, and the tracer's files sit above what the program is given: it
# opens as many as untraced.
fill='n=0; for i in $(seq 3 199); do eval "exec $i>/dev/null" 2>/dev/null && n=$((n+1)); done; echo "opened $n"'
out=$( (ulimit -S -n 200 && bash -c "$fill") 2>&1)
out2=$( (ulimit -S -n 200 && traced "$WORK/limit.trace" bash -c "$fill") 2>&1)
[ "$out" = "$out2" ] || fail "ulimit -S -n 200: untraced '$out', traced '$out2'"
$DUMP "$WORK/limit.trace" >/dev/null || fail "ulimit -S -n 200: the trace is damaged"
# ulimit -n 200 (the hard limit too, which only a privileged process may raise): traced,
# with a warning that the tracer holds the top numbers.
out=$( (ulimit -n 200 && traced "$WORK/hard.trace" bash -c 'echo ran') 2>&1)
grep -q '^ran$' <<<"$out" || fail "ulimit -n 200: $out"
[ -s "$(ls -d "$WORK"/hard.trace/*/ | head -1)/events" ] || fail "ulimit -n 200: no trace"
if ! grep -q 'take the top numbers' <<<"$out"; then
	(ulimit -n 200 && ulimit -H -n 300) 2>/dev/null || fail "ulimit -n 200: no warning: $out"
fi
# A soft limit above 4096 puts the tracer's files from 100 on: fcntl F_DUPFD from 100 must
# still give 100, 101, 102 as untraced (103, 104, 105 before), and the trace stay whole.
dupfd='import fcntl; print(*[fcntl.fcntl(1, c, 100) for c in (fcntl.F_DUPFD, fcntl.F_DUPFD_CLOEXEC, fcntl.F_DUPFD)])'
if (ulimit -S -n 8192) 2>/dev/null; then
	out=$( (ulimit -S -n 8192 && python3 -c "$dupfd") 2>&1)
	out2=$( (ulimit -S -n 8192 && traced "$WORK/dupfd.trace" python3 -c "$dupfd") 2>&1)
	[ "$out" = "$out2" ] || fail "F_DUPFD under a soft limit of 8192: untraced '$out', traced '$out2'"
	$DUMP "$WORK/dupfd.trace" >/dev/null || fail "F_DUPFD: the trace is damaged"
	echo "F_DUPFD from 100 under ulimit -S -n 8192: $out2, as untraced"
fi
echo "ok"
