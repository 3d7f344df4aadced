#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/stress/run.sh BUILD_DIR [ROUNDS] - the long adversarial sweep behind e2e.signals,
# e2e.descriptors, e2e.helpers, e2e.limits, e2e.exit-race, e2e.sigmask, e2e.raw-clone,
# e2e.fsize, e2e.tsc-off, e2e.mlock, e2e.payload-flip, e2e.nproc, e2e.seccomp-filter and
# e2e.vfork, run on purpose (not by CTest): many more
# runs of each, so that a rare hang or a rare difference shows.  Exits 1 at the first
# failure, with what failed; prints one line per part otherwise.  See README.md here.
set -u
build=$(cd "${1:?usage: tests/stress/run.sh BUILD_DIR [ROUNDS]}" && pwd)
rounds=${2:-10}
src=$(cd "$(dirname "$0")/../.." && pwd)
export BUILD=$build SRC=$src TESTBIN=$build/tests
work=$(mktemp -d "${TMPDIR:-/tmp}/libtrace-stress.XXXXXX")
trap 'rm -rf "$work"' EXIT
lib=$build/libtrace.so
fail() {
	echo "stress: FAIL: $*" >&2
	exit 1
}

# 1. Signal handlers calling traced functions while threads start: 64 at a time, each
#    signalled as it starts, 10 kHz timer; then 3,008 threads per run.
SIGNAL_STORM_RUNS=$((rounds * 10)) bash "$src/tests/e2e/signals.sh" >"$work/log" 2>&1 ||
	fail "signals: $(tail -3 "$work/log")"
for i in $(seq 1 $((rounds * 3))); do
	rm -rf "$work/t"
	timeout 120 env LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$work/t" LIBTRACE_QUIET=1 \
		"$TESTBIN/signal_storm" 47 64 >/dev/null 2>&1
	s=$?
	[ $s = 0 ] || fail "signal_storm 47 64, run $i: exit status $s (124: hung)"
done
echo "stress: signals: $((rounds * 10)) runs of 20x64 threads and $((rounds * 3)) of 47x64, no hang"

# 2. Descriptors: the e2e checks again and again, and a long fd_hammer.
for i in $(seq 1 "$rounds"); do
	bash "$src/tests/e2e/descriptors.sh" >"$work/log" 2>&1 || fail "descriptors, run $i: $(tail -3 "$work/log")"
done
plain=$("$TESTBIN/fd_hammer" 400 16 | tail -3)
traced=$(LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$work/h" LIBTRACE_QUIET=1 "$TESTBIN/fd_hammer" 400 16 | tail -3)
[ "$plain" = "$traced" ] || fail "fd_hammer 400 16: untraced '$plain', traced '$traced'"
echo "stress: descriptors: $rounds runs, fd_hammer 400x16 as untraced"

# 3. Descriptor limits from 4 to 80: the program's output as untraced (libtrace lines
#    aside), and a word whenever tracing is off.
prog='for i in 3 4 5 6 7 8 9 10; do eval "exec $i>/dev/null" 2>/dev/null && echo "fd $i"; done; echo end'
for n in 4 5 6 7 8 12 16 32 63 64 65 80; do
	plain=$( (ulimit -n $n && bash -c "$prog") 2>&1)
	out=$( (ulimit -n $n && LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$work/n$n" bash -c "$prog") 2>&1)
	[ "$plain" = "$(grep -v '^libtrace' <<<"$out")" ] || fail "ulimit -n $n: untraced '$plain', traced '$out'"
	if ! ls "$work/n$n"/*/events >/dev/null 2>&1; then
		grep -q 'not tracing' <<<"$out" || fail "ulimit -n $n: no trace and no word why"
	fi
done
echo "stress: ulimit -n 4..80: as untraced, never off without a word"

# 4. Helper threads and limits: the e2e checks again.
for t in helpers limits; do
	for i in $(seq 1 "$rounds"); do
		bash "$src/tests/e2e/$t.sh" >"$work/log" 2>&1
		s=$?
		[ $s = 0 ] || [ $s = 77 ] || fail "$t, run $i: $(tail -3 "$work/log")"
	done
	echo "stress: $t: $rounds runs"
done
# 5. The third pass's findings, many times over: the end while threads record (exit and
#    _exit, 50..500 ms, two ring sizes), threads signalled as they start with a mask of their
#    own, a raw clone's child beside its parent, ulimit -f, the TSC turned off, mlockall as
#    nobody, flipped bits in the events file.
EXIT_RACE_RUNS=$((rounds * 20)) bash "$src/tests/e2e/exit-race.sh" >"$work/log" 2>&1 ||
	fail "exit-race: $(tail -3 "$work/log")"
echo "stress: exit-race: $((rounds * 20)) runs"
SIGMASK_RUNS=$((rounds * 20)) bash "$src/tests/e2e/sigmask.sh" >"$work/log" 2>&1 ||
	fail "sigmask: $(tail -3 "$work/log")"
for i in $(seq 1 "$rounds"); do
	rm -rf "$work/t"
	timeout 120 env LD_PRELOAD="$lib" LIBTRACE_OUTPUT="$work/t" LIBTRACE_QUIET=1 \
		"$TESTBIN/sigmask_start" 20 64 10 >"$work/log" 2>&1
	s=$?
	[ $s = 0 ] || fail "sigmask_start 20 64 10, run $i: exit status $s (124: hung): $(tail -2 "$work/log")"
done
echo "stress: sigmask: $((rounds * 20)) runs of 80 threads and $rounds of 1280, no hang, no allocation in a handler"
for t in raw-clone fsize tsc-off mlock payload-flip nproc seccomp-filter vfork; do
	for i in $(seq 1 "$rounds"); do
		bash "$src/tests/e2e/$t.sh" >"$work/log" 2>&1
		s=$?
		[ $s = 0 ] || [ $s = 77 ] || fail "$t, run $i: $(tail -3 "$work/log")"
	done
	echo "stress: $t: $rounds runs"
done
echo "stress: ok"
