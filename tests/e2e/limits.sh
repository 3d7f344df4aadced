#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Limits of the environment the tracer lives in:
#  - address space: under `ulimit -v 8000000` a multithreaded program is traced whole (the
#    rings are mapped per thread, not reserved up front, and smaller under a limit, which a
#    warning says); under `ulimit -v 1000000` and `400000` a program that starts threads
#    and then allocates until it can no more gets as many threads traced as untraced, and
#    within 3% of the memory; when the address space does run
#    out, the threads without a ring say so and their loss is counted, never silent;
#  - a relative LIBTRACE_OUTPUT is resolved once: a program that chdir()s, then forks and
#    execs, has all its processes in one trace directory;
#  - a forked child does not follow a trace directory swapped after start;
#  - a long command line is in the meta file whole;
#  - a symbolic link component owned by another user is refused with a warning, and the
#    program runs unchanged (needs root to make one: exit 77 without it, after the rest).
. "$(dirname "$0")/lib.sh"

cd "$WORK" || fail "cd"
stats() { "$DUMP" --stats "$1" >"$WORK/stats" || fail "trace-dump --stats $1"; }

if ldd "$LIB" | grep -q libasan; then
	echo "AddressSanitizer build: the ulimit -v cases are not run (ASan needs its shadow)"
else
	# 8 threads and the main thread under ulimit -v 8000000 (about 7.6 GiB): each thread's
	# events are all there, none lost.
	out=$(ulimit -v 8000000 && traced "$WORK/as" "$TESTBIN/count_events" 8 1000 private \
		2>"$WORK/err") || fail "traced run under ulimit -v failed: $(cat "$WORK/err")"
	[ "$out" = "shared=900" ] || fail "program output changed under ulimit -v: $out"
	# The one word expected: the rings are made smaller under the limit.
	grep -v "the address-space limit (ulimit -v: 8000000 KiB) makes each thread's ring" \
		"$WORK/err" && fail "warnings under ulimit -v: $(cat "$WORK/err")"
	grep -q "makes each thread's ring" "$WORK/err" || fail "no word about the smaller rings"
	summary=$($CHECK "$WORK/as" --processes 1 --threads 9 --counter-seq i=1000 --no-lost) ||
		fail "ulimit -v trace: $summary"
	stats "$WORK/as"
	[ "$(grep -c ' records=' "$WORK/stats")" = 9 ] || fail "not 9 threads: $(cat "$WORK/stats")"
	grep -v ' lost=0 ' "$WORK/stats" && fail "loss under ulimit -v 8000000"
	[ "$(grep -c ' COUNTER=1000 ' "$WORK/stats")" = 9 ] || fail "values missing: $(cat "$WORK/stats")"
	echo "ulimit -v 8000000: 9 threads, every value, nothing lost"

	# A program that starts threads (8 MiB stacks) until it can no more, then allocates
	# until malloc fails: traced, it gets as many threads as untraced and within 3% of the
	# memory (before: 97 of 121 threads and 87% of the memory under 1000000, 18 of 48
	# threads under 400000: a malloc arena for every new thread, 8 MiB rings; then 120 and
	# 47: the tracer's static tables and 32 KiB rings).
	for v in 1000000 400000; do
		plain=$( (ulimit -v $v && "$TESTBIN/as_limit" 2000) 2>&1)
		rm -rf "$WORK/al"
		out=$( (ulimit -v $v && traced "$WORK/al" "$TESTBIN/as_limit" 2000) 2>"$WORK/err")
		read -r _ pt _ pm _ <<<"$(echo $plain)"
		read -r _ tt _ tm _ <<<"$(echo $out)"
		[ -n "$pt" ] && [ -n "$tt" ] && [ "$tt" = "$pt" ] && [ $((tm * 100)) -ge $((pm * 97)) ] ||
			fail "ulimit -v $v: untraced: $(echo $plain); traced: $(echo $out) ($(cat "$WORK/err"))"
		stats "$WORK/al"
		grep -v ' lost=0 ' "$WORK/stats" && fail "ulimit -v $v: events lost"
		echo "ulimit -v $v: untraced $pt threads and $pm MiB, traced $tt threads and $tm MiB, nothing lost"
	done

	# Address space for a few 128 MiB rings only: the threads that get none are named in a
	# warning and their events counted as lost; the others' are whole; the program runs on.
	out=$(ulimit -v 700000 && LIBTRACE_BUFFER_SIZE=128M traced "$WORK/as2" \
		"$TESTBIN/count_events" 8 1000 private 2>"$WORK/err") ||
		fail "traced run with little address space failed: $(cat "$WORK/err")"
	[ "$out" = "shared=900" ] || fail "program output changed: $out"
	grep -q "no ring for thread .*address space used up.*counted as lost" "$WORK/err" ||
		fail "no warning when the address space ran out: $(cat "$WORK/err")"
	stats "$WORK/as2"
	whole=$(grep -c ' lost=0 .*COUNTER=1000 ' "$WORK/stats")
	lost=$(grep -cE ' records=0 lost=[1-9]' "$WORK/stats")
	[ "$whole" -ge 1 ] && [ "$lost" -ge 1 ] && [ $((whole + lost)) = 9 ] ||
		fail "threads neither whole nor counted lost: $(cat "$WORK/stats")"
	echo "address space used up: $whole threads whole, $lost counted as lost, with a warning"
fi

# A relative LIBTRACE_OUTPUT, a program that chdir()s and then forks and execs: all its
# processes trace into the one directory, relative to where the program started.
mkdir -p "$WORK/start" "$WORK/elsewhere"
out=$(cd "$WORK/start" && traced rel/t "$TESTBIN/wander" "$WORK/elsewhere" 2>"$WORK/err") ||
	fail "wander failed: $out $(cat "$WORK/err")"
[ "$out" = ok ] || fail "wander: $out"
[ ! -s "$WORK/err" ] || fail "warnings: $(cat "$WORK/err")"
[ -z "$(ls -A "$WORK/elsewhere")" ] || fail "a child traced into its new directory: $(ls -R "$WORK/elsewhere")"
# The parent, the forked child, the child that execs, and its new image.
[ "$(ls "$WORK/start/rel/t" | wc -l)" = 4 ] || fail "not 4 process directories: $(ls "$WORK/start/rel/t")"
summary=$($CHECK "$WORK/start/rel/t" --processes 4 --no-lost) || fail "$summary"
"$DUMP" "$WORK/start/rel/t" >"$WORK/dump" || fail "trace-dump"
for want in start=10 forked=20 execd=30; do
	n=$(grep -c "COUNTER \"${want%=*}\"" "$WORK/dump")
	[ "$n" = "${want#*=}" ] || fail "$n ${want%=*} values, expected ${want#*=}"
done
grep -q "^config LIBTRACE_OUTPUT=$WORK/start/rel/t\$" "$WORK"/start/rel/t/*/meta ||
	fail "the resolved output is not in the meta file"
echo "relative output after chdir: fork and exec in the same trace directory"

# The trace directory's parent swapped for another (our own) after start: a forked child
# is not redirected into the new one (it says so and runs untraced).  An exec'd image is a
# new start and resolves the path again.
mkdir -p "$WORK/base"
traced "$WORK/base/t" "$TESTBIN/wander" "$WORK" "$WORK/go" >"$WORK/out" 2>"$WORK/err" &
pid=$!
for i in $(seq 500); do # events is the last of the files the start makes
	ls "$WORK"/base/t/*/events >/dev/null 2>&1 && break
	sleep 0.01
done
mv "$WORK/base" "$WORK/moved" && mkdir -p "$WORK/base/t" && touch "$WORK/go" || fail "swap"
wait $pid || fail "wander failed after the swap: $(cat "$WORK/out" "$WORK/err")"
[ "$(cat "$WORK/out")" = ok ] || fail "wander: $(cat "$WORK/out")"
grep -q "trace directory $WORK/base/t is no longer the directory found at start" "$WORK/err" ||
	fail "no warning for the swapped directory: $(cat "$WORK/err")"
"$DUMP" "$WORK/base/t" >"$WORK/dump" 2>/dev/null
! grep -q 'COUNTER "forked"' "$WORK/dump" || fail "a forked child followed the swapped directory"
"$DUMP" "$WORK/moved/t" >"$WORK/dump" || fail "trace-dump of the original directory"
[ "$(grep -c 'COUNTER "start"' "$WORK/dump")" = 10 ] || fail "the parent's trace is not whole"
echo "swapped trace directory: the forked child was not redirected"

# A long command line (5,000 arguments, 45 KiB) is in the meta file whole, in order.
seq -f 'arg%05g' 5000 >"$WORK/args"
xargs -a "$WORK/args" sh -c 'o=$1 && shift && LD_PRELOAD=$0 LIBTRACE_OUTPUT=$o \
	LIBTRACE_QUIET=1 /bin/echo "$@"' "$LIB" "$WORK/args.trace" >/dev/null ||
	fail "the long command line's run failed"
[ "$(ls "$WORK/args.trace" | wc -l)" = 1 ] || fail "xargs split the command line: more than one run"
grep -a '^arg ' "$WORK"/args.trace/*/meta | tail -n +2 | cut -d' ' -f2 >"$WORK/args.meta"
cmp -s "$WORK/args" "$WORK/args.meta" ||
	fail "the meta file's arguments are not the command line's ($(wc -l <"$WORK/args.meta") of 5000)"
echo "a 45 KiB command line: all 5000 arguments in the meta file"

# An executable whose path is longer than PATH_MAX (made and run one directory at a time):
# the kernel prints its whole path in proc/self/maps, and its mapping is in the meta file.
# About 4,450 bytes with a blank every other byte: a maps line longer than a PATH_MAX
# buffer, and a meta line of about 11,000 bytes once the blanks are escaped (\x20), longer
# than the stack buffer a meta line is written from.
deep="$(printf 'd %.0s' $(seq 99))d"
levels=$(((4450 - ${#WORK}) / 200))
(
	cd "$WORK" && for _ in $(seq $levels); do mkdir "$deep" && cd "$deep" || exit 1; done
	cp "$TESTBIN/count_events" ./prog && LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/deep.trace \
		LIBTRACE_QUIET=1 ./prog 1 10 >/dev/null
) || fail "the program under a path longer than PATH_MAX failed"
path=$(printf '%s/' "$WORK" && for _ in $(seq $levels); do printf '%s/' "$deep"; done)prog
path=${path// /\\x20} # as the meta file writes it
grep -a '^map ' "$WORK"/deep.trace/*/meta | grep -qaF " $path" ||
	fail "no map line, or a cut one, for an executable under a path longer than PATH_MAX"
echo "an executable under a path of $((${#WORK} + levels * 200 + 5)) bytes: its mapping is in" \
	"the meta file, a line of $(grep -a '^map ' "$WORK"/deep.trace/*/meta | awk '{ print length }' |
		sort -n | tail -1) bytes"

# Symbolic links in the output path: ours is followed, another user's is refused.
mkdir "$WORK/real"
ln -s "$WORK/real" "$WORK/mine"
traced "$WORK/mine/t" "$TESTBIN/count_events" 1 10 >/dev/null 2>"$WORK/err" || fail "own link"
ls "$WORK"/real/t/*/meta >/dev/null || fail "no trace through our own symbolic link"
rm -rf "$WORK/real/t"
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
	skip "not root: the foreign symbolic link case is not run (the rest passed)"
fi
ln -s "$WORK/real" "$WORK/evil" && chown -h nobody "$WORK/evil" || fail "chown -h nobody"
plain=$("$TESTBIN/count_events" 2 100 2>&1)
s1=$?
out=$(traced "$WORK/evil/t" "$TESTBIN/count_events" 2 100 2>"$WORK/err")
s2=$?
[ $s1 = $s2 ] && [ "$out" = "$plain" ] || fail "program changed: $s1 $plain / $s2 $out"
grep -q "refusing trace directory $WORK/evil/t: its component evil is a symbolic link owned by uid $(id -u nobody)" \
	"$WORK/err" || fail "no clear warning for a foreign link: $(cat "$WORK/err")"
[ -z "$(ls -A "$WORK/real")" ] || fail "wrote through a foreign symbolic link: $(ls -R "$WORK/real")"
# Relative, through the same link.
out=$(cd "$WORK" && traced evil/t2 "$TESTBIN/count_events" 2 100 2>"$WORK/err") || fail "relative"
[ "$out" = "$plain" ] || fail "program changed: $out"
grep -q "refusing trace directory $WORK/evil/t2: its component evil" "$WORK/err" ||
	fail "no warning for a relative path through a foreign link: $(cat "$WORK/err")"
[ -z "$(ls -A "$WORK/real")" ] || fail "wrote through a foreign symbolic link"
echo "foreign symbolic link refused; our own followed"
echo ok
