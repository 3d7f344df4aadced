#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A finished trace's files are about as long as what they hold: the ring file ends after
# the last chunk that holds anything (cp, tar, scp and du -b count a sparse file's holes).  Threads
# joined, then main returns; a shell that execs; an OpenMP pool still alive at the end,
# whose threads' current chunks must stay whole and readable.  Before, each thread's ring
# slot stayed an 8 MiB hole: 32 MiB for 4 joined threads, 16 MiB for a process that
# exec'd.
. "$(dirname "$0")/lib.sh"
export LIBTRACE_SAMPLE_PERIOD=0
small=$((4096 + 1024 * 1024)) # bytes: the first page and the main thread's chunk, whole

# apparent DIR: the largest ring's size, in bytes.
apparent() {
	stat -c %s "$1"/*/ring | sort -n | tail -1
}

# Threads created and joined, main returns: nothing is left to keep but what main holds.
traced "$WORK/joined" "$TESTBIN/count_events" 3 2000 private >/dev/null || fail "count_events failed"
size=$(apparent "$WORK/joined")
echo "joined: ring $size bytes"
[ "$size" -le $small ] || fail "joined: the ring is $size bytes long for a finished trace"
"$DUMP" -S "$WORK/joined" >"$WORK/joined.stats" 2>"$WORK/joined.err" || fail "joined: trace-dump -S"
n=$(grep -c " COUNTER=2000 " "$WORK/joined.stats")
[ "$n" = 4 ] || fail "joined: $n threads with all their counters"
[ ! -s "$WORK/joined.err" ] || fail "joined: trace-dump warned: $(head -3 "$WORK/joined.err")"

# A process that execs: its ring ends before the new image starts its own.
traced "$WORK/exec" bash -c 'true; exec /bin/true' || fail "bash failed"
n=$(ls -d "$WORK"/exec/*/ | wc -l)
[ "$n" -ge 2 ] || fail "exec: $n process directories"
for r in "$WORK"/exec/*/ring; do
	size=$(stat -c %s "$r")
	[ "$size" -le $small ] || fail "exec: ${r#"$WORK"/} is $size bytes long"
done
"$DUMP" "$WORK/exec" >/dev/null 2>"$WORK/exec.err" || fail "exec: trace-dump"
[ ! -s "$WORK/exec.err" ] || fail "exec: trace-dump warned: $(head -3 "$WORK/exec.err")"

# An OpenMP pool alive at the end: its threads may still record into their current chunks,
# which stay; the records they hold read back whole.
command -v gcc >/dev/null || skip "gcc missing"
cat >"$WORK/pool.c" <<'C'
#include <omp.h>
#include <stdio.h>
int main(void)
{
	long s = 0;
	for (int r = 0; r < 20; r++) {
#pragma omp parallel reduction(+ : s)
		s += omp_get_thread_num();
	}
	printf("%ld\n", s);
	return 0;
}
C
gcc -O2 -fopenmp "$WORK/pool.c" -o "$WORK/pool" 2>/dev/null || skip "gcc -fopenmp cannot build"
OMP_NUM_THREADS=4 traced "$WORK/pool.t" "$WORK/pool" >"$WORK/pool.out" || fail "pool failed"
[ "$(cat "$WORK/pool.out")" = 120 ] || fail "pool printed $(cat "$WORK/pool.out")"
size=$(apparent "$WORK/pool.t")
echo "OpenMP pool alive at the end: ring $size bytes"
# Main's slot and three pool threads' slots: 4 x 8 MiB and the first page before; the
# last thread's current chunk is the end now.
[ "$size" -lt $((4096 + 4 * 8 * 1024 * 1024)) ] || fail "pool: the ring is $size bytes long"
"$DUMP" -S "$WORK/pool.t" >"$WORK/pool.stats" 2>"$WORK/pool.err" || fail "pool: trace-dump -S"
[ ! -s "$WORK/pool.err" ] || fail "pool: trace-dump warned: $(head -3 "$WORK/pool.err")"
n=$(grep -c " OMP_TEAM_BEGIN=20 OMP_TEAM_END=20" "$WORK/pool.stats")
[ "$n" -ge 4 ] || { cat "$WORK/pool.stats" >&2; fail "pool: $n threads with their 20 regions"; }
echo "ring-size: ok"
