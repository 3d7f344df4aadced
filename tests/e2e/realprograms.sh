#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Real programs from Debian's packages, traced: pigz -p 2, xz -T2, sysbench threads and
# sysbench mutex.  Each behaves exactly as without the tracer (output, files, exit status;
# sysbench's timings masked), and its trace holds every thread the program started: the
# count comes independently from strace (clone with CLONE_THREAD, untraced run).
. "$(dirname "$0")/lib.sh"

for tool in pigz xz sysbench strace; do
	command -v $tool >/dev/null || skip "$tool is not installed (tools/bootstrap.sh installs it)"
done

mkdir -p "$WORK/in"
python3 - "$WORK/in/data" <<'PY'
import random, sys
r = random.Random(1)
with open(sys.argv[1], 'wb') as f:
    f.write(bytes(r.getrandbits(8) for _ in range(2000000)))
    f.write(''.join(f'{i} {r.random()}\n' for i in range(300000)).encode())
PY

# threads_started CMD...: how many threads CMD starts, counted by strace on a plain run.
threads_started() {
	local log=$WORK/strace.log
	rm -rf "$WORK/st" && cp -a "$WORK/in" "$WORK/st"
	(cd "$WORK/st" && strace -f -qq -e trace=clone,clone3 -o "$log" "$@" >/dev/null 2>&1)
	grep -c CLONE_THREAD "$log"
}

# check NAME JOINED CMD...: same behaviour, then the trace against strace's thread count.
check() {
	local name=$1 joined=$2
	shift 2
	same_behaviour "$name" "$@"
	local n
	n=$(threads_started "$@")
	[ "$n" -ge 1 ] || fail "$name: strace saw no thread start"
	local extra=()
	[ "$joined" = joined ] && extra=(--joined-all)
	local summary
	summary=$($CHECK "$WORK/$name.trace" --processes 1 --threads $((n + 1)) \
		--calls pthread_create="$n" --no-lost "${extra[@]}") || fail "$name: $summary"
	echo "$name: $n threads started (strace), trace: $summary"
}

check pigz joined pigz -p 2 -k data
check xz-T2 not-joined xz -T2 --block-size=1MiB -k data # xz exits with its workers alive

# sysbench prints timings: compare its output with every number masked.
mask() { sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g' "$1"; }
for test in threads mutex; do
	args=(sysbench "$test" --threads=2 --time=0)
	small=(sysbench "$test" --threads=2 --time=0)
	[ $test = threads ] && args+=(--events=200) && small+=(--events=10)
	[ $test = mutex ] && args+=(--mutex-locks=20000) && small+=(--mutex-locks=100)
	args+=(run)
	rm -rf "$WORK/plain" "$WORK/traced"
	mkdir -p "$WORK/plain" "$WORK/traced"
	(cd "$WORK/plain" && "${args[@]}" >"$WORK/plain.out" 2>&1)
	s1=$?
	(cd "$WORK/traced" && traced "$WORK/sb-$test.trace" "${args[@]}" >"$WORK/traced.out" 2>&1)
	s2=$?
	[ $s1 = $s2 ] || fail "sysbench $test: exit status $s1 untraced, $s2 traced"
	diff <(mask "$WORK/plain.out") <(mask "$WORK/traced.out") >&2 ||
		fail "sysbench $test: output differs under the tracer"
	# strace makes sysbench's yield loops crawl: count its threads on a short run (the
	# thread count does not depend on the amount of work).
	n=$(threads_started "${small[@]}" run)
	summary=$($CHECK "$WORK/sb-$test.trace" --processes 1 --threads $((n + 1)) \
		--calls pthread_create="$n" --joined-all --no-lost) || fail "sysbench $test: $summary"
	echo "sysbench $test: $n threads started (strace), trace: $summary"
done
echo ok
