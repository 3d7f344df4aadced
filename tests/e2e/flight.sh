#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# LIBTRACE_MODE=flight: threads that record far more than a 64 KiB ring holds keep their
# newest records, contiguous, within the ring's size; the events file does not grow while
# the program runs; LIBTRACE_FLIGHT_SIGNAL writes the rings out and the program goes on; a
# SIGKILLed run still has its newest records (in the ring).  Every trace converts, to OTF2
# (otf2-print -Werror, check_otf2.py) and to Paraver (check_prv.py), with no anomaly, and
# the tools say it is a flight recorder's window.
. "$(dirname "$0")/lib.sh"
need_converter
export LIBTRACE_SAMPLE_PERIOD=0 LIBTRACE_MODE=flight LIBTRACE_BUFFER_SIZE=64K
PRVCHECK="python3 $SRC/tests/e2e/check_prv.py"
prog=$TESTBIN/flight
n=20000
# A step is a region around a counter: 3 records of 16 + 24 + 16 bytes.  A ring of 64 KiB
# keeps at most 65536 / 56 steps; 7 of its 8 chunks full, at least 7 x (8192 - 64) / 56.
most=$((65536 / 56))
least=$((7 * (8192 - 64) / 56))

# runs TRACE: "thread first last count pieces" per thread, of its counter values: pieces
# is the number of contiguous runs; first, last, count: of the last run.
runs() {
	"$DUMP" "$1" >"$WORK/dump" 2>"$WORK/dump.err" || fail "trace-dump $1: exit status $?: $(head -3 "$WORK/dump.err")"
	grep -q 'a flight-recorder trace' "$WORK/dump.err" || fail "trace-dump does not say the trace is a flight recorder's window"
	awk '$4 == "COUNTER" && $5 == "\"i\"" {
		split($6, v, "="); t = $2; x = v[2] + 0
		if (!(t in last) || x != last[t] + 1) { pieces[t]++; first[t] = x; count[t] = 0 }
		last[t] = x; count[t]++
	} END { for (t in last) print t, first[t], last[t], count[t], pieces[t] }' "$WORK/dump" | sort -n
}

# wait_ready OUT PID: until the program printed "ready" (its first half recorded).
wait_ready() {
	for _ in $(seq 600); do
		grep -qx ready "$1" && return 0
		kill -0 "$2" 2>/dev/null || fail "the program ended before it was ready: $(cat "$1")"
		sleep 0.1
	done
	fail "the program was not ready after 60 s"
}

# convert TRACE NAME: OTF2 and Paraver, both checked; the converter says it is a window.
convert() {
	CONVERT_OPTS= converted "$1" "$WORK/$2.otf2" >"$WORK/total" 2>"$WORK/conv.err"
	cat "$WORK/total"
	grep -q "'Flight-recorder window': 1" "$WORK/total" || fail "$2: no flight-recorder window marker"
	"$CONVERT" "$1" -o "$WORK/$2.again" >/dev/null 2>"$WORK/conv.err" || fail "$2: trace2otf2 exit status $?"
	grep -q 'a flight-recorder trace (LIBTRACE_MODE=flight): a window' "$WORK/conv.err" || fail "$2: trace2otf2 does not say it is a window: $(cat "$WORK/conv.err")"
	! grep -i -E 'anomal|missing|damage' "$WORK/conv.err" || fail "$2: trace2otf2 sees damage"
	"$CONVERT" -q --format=paraver "$1" -o "$WORK/$2" || fail "$2: trace2otf2 -f paraver: exit status $?"
	$PRVCHECK "$WORK/$2.prv" >"$WORK/prv.log" 2>&1 || {
		tail -20 "$WORK/prv.log" >&2
		fail "$2: check_prv"
	}
	tail -1 "$WORK/prv.log"
	"$BUILD/trace-report" "$1" >"$WORK/report" 2>"$WORK/report.err" || fail "$2: trace-report exit status $?"
	grep -q 'a flight-recorder trace' "$WORK/report.err" || fail "$2: trace-report does not say it is a window"
	grep -q '1 process ran as a flight recorder' "$WORK/report" || fail "$2: the profile does not say it is a window"
	! grep -q anomalies "$WORK/report" || fail "$2: the profile counts anomalies"
}

# 1. Records of 3 threads, a dump on SIGUSR1 halfway, the rest, a normal exit.
rm -f "$WORK/go"
# (not through traced, a function: $! must be the program's pid)
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/a LIBTRACE_QUIET=1 LIBTRACE_FLIGHT_SIGNAL=SIGUSR1 "$prog" 2 $n "$WORK/go" >"$WORK/out" 2>&1 &
pid=$!
wait_ready "$WORK/out" $pid
events=$(ls "$WORK"/a/*/events)
grep -qx 'mode flight 65536' "$WORK"/a/*/meta || fail "no meta line says the process runs in flight mode"
size=$(stat -c %s "$events")
[ "$size" = 4096 ] || fail "the events file grew while running: $size bytes (its header is 4096)"
sleep 0.5
size=$(stat -c %s "$events")
[ "$size" = 4096 ] || fail "the events file grew while the program waited: $size bytes"
kill -USR1 $pid
for _ in $(seq 100); do
	size=$(stat -c %s "$events")
	[ "$size" -gt 4096 ] && break
	sleep 0.05
done
[ "$size" -gt 4096 ] || fail "SIGUSR1 wrote nothing out"
[ "$size" -le $((4096 + 3 * 65536)) ] || fail "SIGUSR1 wrote $size bytes, more than 3 rings"
kill -0 $pid 2>/dev/null || fail "the program did not go on after SIGUSR1"
echo "while running: events file 4096 bytes; after SIGUSR1: $size bytes, the program goes on"
touch "$WORK/go"
wait $pid || fail "the program's exit status is $?: $(cat "$WORK/out")"
grep -qx done "$WORK/out" || fail "the program did not finish: $(cat "$WORK/out")"
runs "$WORK/a" >"$WORK/runs"
cat "$WORK/runs"
[ "$(wc -l <"$WORK/runs")" = 3 ] || fail "expected 3 threads with counters"
while read -r t first last count pieces; do
	[ "$last" = $((2 * n - 1)) ] || fail "thread $t: its newest value $last is not $((2 * n - 1))"
	[ "$count" -le $most ] && [ "$count" -ge $least ] ||
		fail "thread $t: $count values kept, not within $least..$most"
	[ "$first" = $((last - count + 1)) ] || fail "thread $t: not contiguous"
	[ "$pieces" = 2 ] || fail "thread $t: $pieces runs of values; expected the SIGUSR1 copy, then the end's"
done <"$WORK/runs"
# The SIGUSR1 copy: each thread's values up to n - 1, the last before the signal.
awk '$4 == "COUNTER" && $5 == "\"i\"" { split($6, v, "="); if (v[2] + 0 < '$n') { c[$2]++; if (v[2] + 0 > m[$2]) m[$2] = v[2] + 0 } }
	END { for (t in c) print t, m[t], c[t] }' "$WORK/dump" >"$WORK/early"
[ "$(wc -l <"$WORK/early")" = 3 ] || fail "the SIGUSR1 copy misses threads: $(cat "$WORK/early")"
while read -r t max count; do
	[ "$max" = $((n - 1)) ] && [ "$count" -le $most ] && [ "$count" -ge $least ] ||
		fail "thread $t: the SIGUSR1 copy has $count values up to $max"
done <"$WORK/early"
echo "exit: each thread's newest values kept, contiguous, within the ring; the SIGUSR1 copy too"
convert "$WORK/a" a

# 2. SIGKILL while the program waits: the ring holds the newest records.
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/k LIBTRACE_QUIET=1 LIBTRACE_FLIGHT_SIGNAL=none "$prog" 2 $n "$WORK/never" >"$WORK/out" 2>&1 &
pid=$!
wait_ready "$WORK/out" $pid
kill -KILL $pid
wait $pid 2>/dev/null
size=$(stat -c %s "$WORK"/k/*/events)
[ "$size" = 4096 ] || fail "killed run: the events file has $size bytes, not its header alone"
runs "$WORK/k" >"$WORK/runs"
cat "$WORK/runs"
[ "$(wc -l <"$WORK/runs")" = 3 ] || fail "killed run: expected 3 threads with counters"
while read -r t first last count pieces; do
	[ "$last" = $((n - 1)) ] && [ "$pieces" = 1 ] && [ "$first" -gt 0 ] ||
		fail "thread $t: values $first..$last in $pieces runs, not the newest up to $((n - 1))"
	[ "$count" -le $most ] && [ "$count" -ge $least ] || fail "thread $t: $count values kept"
done <"$WORK/runs"
echo "SIGKILL: each thread's newest values in the ring, contiguous, within its size"
convert "$WORK/k" k

# 3. Every ending the library handles writes the rings out (or leaves them in the ring
# file): each thread's newest counter values (24 bytes each), contiguous, within the ring.
if [ -x "$TESTBIN/endings" ]; then
	most=$((65536 / 24))
	least=$((7 * (8192 - 64) / 24))
	for mode in return exit _exit abort segv term-handler exec; do
		rm -rf "$WORK/e"
		(ulimit -c 0; traced "$WORK/e" "$TESTBIN/endings" $mode $n >/dev/null 2>&1)
		"$DUMP" "$WORK/e" >"$WORK/dump" 2>"$WORK/dump.err" || fail "$mode: trace-dump exit status $?: $(head -3 "$WORK/dump.err")"
		for name in main worker; do
			got=$(awk -v q="\"$name\"" '$4 == "COUNTER" && $5 == q {
				split($6, v, "="); x = v[2] + 0
				if (c && x != last + 1) pieces++
				if (!c) first = x
				last = x; c++
			} END { print first, last, c, pieces + 1 }' "$WORK/dump")
			read -r first last count pieces <<<"$got"
			[ "$last" = $((n - 1)) ] && [ "$pieces" = 1 ] && [ "$count" -le $most ] &&
				[ "$count" -ge $least ] && [ "$first" -gt 0 ] ||
				fail "$mode: $name values $first..$last ($count, $pieces runs): not the newest"
		done
		echo "$mode: the newest values of both threads kept ($count of the worker's)"
	done
fi
echo ok
