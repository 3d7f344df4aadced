#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 --format=paraver on programs whose structure is known: every .prv/.pcf/.row is
# accepted by the strict parser check_prv.py (header grammar, fields, time order, states that
# never overlap and cover each thread's whole timeline, every type, value and thread named),
# and holds what the program did: threads, thread-creation communications, pthread calls,
# user regions, counters, OpenMP parallel regions and task dependences, processes; in
# Extrae's conventions, which Paraver's configurations rely on: THREAD a.t.h names, calls of
# positive duration, metrics on the first thread, OpenMP fork/join in state 7, the CPU field.
. "$(dirname "$0")/lib.sh"
# Exact event counts: no sampler thread (its records are checked in samplers.sh).
export LIBTRACE_SAMPLE_PERIOD=0
[ -x "$CONVERT" ] || skip "trace2otf2 was not built (no OTF2: apt-get install libotf2-trace-dev)"
PRVCHECK="python3 $SRC/tests/e2e/check_prv.py"

# prv TRACE NAME [EXPECTATIONS...]: converts TRACE to NAME.prv (exit status 0 required) and
# checks it with the expectations.
prv() {
	local trace=$1 name=$2
	shift 2
	rm -f "$name.prv" "$name.pcf" "$name.row"
	"$CONVERT" -q --format=paraver "$trace" -o "$name" || fail "trace2otf2 -f paraver $trace: exit status $?"
	$PRVCHECK "$name.prv" "$@" >"$WORK/prv.log" 2>&1 || {
		tail -20 "$WORK/prv.log" >&2
		fail "check_prv $name.prv"
	}
	tail -1 "$WORK/prv.log"
}

# The parser itself: a valid trace passes, each kind of damage is caught.
$PRVCHECK --self-test >"$WORK/self.log" 2>&1 || {
	tail -20 "$WORK/self.log" >&2
	fail "check_prv --self-test"
}

# count_events T N: T threads plus main, each N counter values, a "tenth" region around every
# tenth value with one mutex lock/unlock inside, all created then joined.
T=3 N=1000
traced "$WORK/count.trace" "$TESTBIN/count_events" $T $N private >/dev/null || fail "count_events failed"
threads=$((T + 1))
tenths=$(((N + 9) / 10))
prv "$WORK/count.trace" "$WORK/count" --expect-tasks 1 --expect-threads $threads \
	--expect-comms $T --expect-comms-tag 1=$T \
	--expect-events 61000000:2=$T --expect-events 61000000:3=$T \
	--expect-events 61000000:8=$((threads * tenths)) \
	--expect-events 61000000:9=$((threads * tenths)) \
	--expect-events 60000019:*=$((threads * tenths)) --expect-label 60000019=tenth \
	--expect-events 64000000:*=$((threads * N - threads)) \
	--expect-events 40000001:1=1 --expect-events 40000001:0=1 \
	--expect-state 1 --expect-state 2
# Names: the start routine's value label has its source line; the counter its name.
grep -q 'work \[count_events\.c:[0-9]*\]' "$WORK/count.pcf" || fail "no work [count_events.c:LINE] label"
grep -q '^LEVEL THREAD SIZE 4$' "$WORK/count.row" || fail ".row: no THREAD level of 4"
grep -q '^THREAD 1\.1\.1$' "$WORK/count.row" || fail ".row: main thread not named THREAD 1.1.1"

# As Extrae writes it.  One thread, 1000 mutex lock/unlock pairs: each call of positive
# duration (Paraver leaves calls of no duration out of its profiles), counted 1000 of 1000;
# the thread named THREAD 1.1.1, its task's PID event, the application named after the program.
LIBTRACE_SAMPLE_PERIOD=1ms traced "$WORK/one.trace" "$TESTBIN/count_events" 0 10000 private >/dev/null ||
	fail "count_events failed"
pid=$(awk '$1 == "pid" {print $2; exit}' "$WORK"/one.trace/*/meta)
prv "$WORK/one.trace" "$WORK/one" --expect-threads 1 --expect-pseudo 0 --extrae-names \
	--no-zero-calls 61000000 --expect-calls 61000000:8=1000 --expect-calls 61000000:9=1000 \
	--expect-events 61000000:9=1000 --expect-task-pid 1="$pid"
grep -q '^count_events$' "$WORK/one.row" || fail ".row: the application is not named count_events"
# With the sampler on (two threads, about 80 ms): its metrics are events of thread 1.1.1, not a
# thread of their own; the CPU (Executing CPU, 40000033) in the CPU field of every record.
LIBTRACE_SAMPLE_PERIOD=1ms traced "$WORK/two.trace" "$TESTBIN/count_events" 1 60000 private >/dev/null ||
	fail "count_events failed"
prv "$WORK/two.trace" "$WORK/two" --expect-threads 2 --expect-pseudo 0 --extrae-names \
	--no-zero-calls 61000000 --expect-calls 61000000:8=12000 --expect-calls 61000000:9=12000 --expect-cpus
rss=$(awk '$1 == 7 && /Resident set size/ {print $2}' "$WORK/two.pcf")
[ -n "$rss" ] || fail "no resident set size metric in two.pcf"
on=$(awk -F: -v t="$rss" '$1 == 2 { for (i = 7; i < NF; i += 2) if ($i == t) print $3 "." $4 "." $5 }' "$WORK/two.prv" | sort -u)
[ "$on" = 1.1.1 ] || fail "resident set size events on threads '$on', not on THREAD 1.1.1 alone"

# The default name, an existing output refused, a format that does not exist.
"$CONVERT" -q -f paraver "$WORK/count.trace" || fail "default output: exit status $?"
[ -s "$WORK/count.trace.prv" ] && [ -s "$WORK/count.trace.pcf" ] && [ -s "$WORK/count.trace.row" ] ||
	fail "no TRACE.prv/.pcf/.row"
"$CONVERT" -q -f paraver "$WORK/count.trace" 2>"$WORK/err" && fail "an existing output was overwritten"
[ $? = 4 ] || fail "existing output: exit status not 4"
grep -q 'count.trace.prv: exists' "$WORK/err" || fail "existing output: no clear message: $(cat "$WORK/err")"
"$CONVERT" -q -f vampir "$WORK/count.trace" -o "$WORK/x" 2>"$WORK/err" && fail "an unknown format was taken"
[ $? = 1 ] && grep -q 'unknown format' "$WORK/err" || fail "unknown format: $(cat "$WORK/err")"
"$CONVERT" -q -f paraver "$WORK/count.trace" -o "$WORK/named.prv" || fail "-o NAME.prv failed"
[ -s "$WORK/named.prv" ] && [ -s "$WORK/named.pcf" ] || fail "-o NAME.prv: not NAME.prv + NAME.pcf"

# The example: condition variables, rwlocks, semaphores, a barrier, a named thread; threads
# wait (Synchronization) and block on locks.
traced "$WORK/pipe.trace" "$BUILD/examples/pthread_pipeline" >/dev/null || fail "example failed"
prv "$WORK/pipe.trace" "$WORK/pipe" --expect-threads 6 --expect-comms-tag 1=5 \
	--expect-events 61000000:2=5 --expect-state 5 \
	--expect-label 60000020=reader

# fork, exec, spawn: one Paraver task per process, all on one timeline.
traced "$WORK/procs.trace" "$TESTBIN/procs" >/dev/null 2>&1 || fail "procs failed"
n=$(ls -d "$WORK"/procs.trace/*/ | wc -l)
[ "$n" -ge 3 ] || fail "procs: only $n process directories"
prv "$WORK/procs.trace" "$WORK/procs" --expect-tasks "$n"

# A killed process: converted up to its death, with its truncation marker.
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/kill.trace LIBTRACE_QUIET=1 "$TESTBIN/steady" 2 20000 60 &
pid=$!
live_threads "$WORK/kill.trace" 3 $pid
sleep 0.2
kill -KILL $pid
wait $pid 2>/dev/null
prv "$WORK/kill.trace" "$WORK/kill" --expect-threads 3 --expect-events 69000012:*=1 \
	--expect-label '69000012=killed or crashed'

# OpenMP (gcc, libgomp): omp_parallel forks 12 parallel regions (tests/e2e/omp.sh counts
# them); with 4 threads each region runs its outlined function on the 4 members, which are
# idle between regions.  omp_tasks' dependence chain has 6 edges.
if command -v gcc >/dev/null && echo 'int main(void){return 0;}' | gcc -fopenmp -x c - -o "$WORK/omptest" 2>/dev/null; then
	gcc -g -O1 -fopenmp "$SRC/tests/programs/omp_parallel.c" -o "$WORK/omp_parallel" || fail "build omp_parallel"
	gcc -g -O1 -fopenmp "$SRC/tests/programs/omp_tasks.c" -o "$WORK/omp_tasks" || fail "build omp_tasks"
	OMP_NUM_THREADS=4 traced "$WORK/par.trace" "$WORK/omp_parallel" >/dev/null || fail "omp_parallel failed"
	prv "$WORK/par.trace" "$WORK/par" --expect-threads 4 --expect-events 60000001:3=12 \
		--expect-events 60000001:0=12 --expect-events 60000018:*=48 \
		--expect-label '60000018=omp_fn' --expect-state 0 --expect-state 5 \
		--expect-fork-join --expect-calls 60000001:3=12 --extrae-names --expect-pseudo 0
	OMP_NUM_THREADS=4 traced "$WORK/tasks.trace" "$WORK/omp_tasks" >/dev/null || fail "omp_tasks failed"
	# Extrae's legacy OpenMP numbering: 109 tasks instantiated (60000024), each with a
	# communication to its start (tag 4); 1 taskgroup (60000027); task identifiers (60000028).
	prv "$WORK/tasks.trace" "$WORK/tasks" --expect-comms-tag 2=6 --expect-label '60000023=omp_tasks.c' \
		--expect-comms-tag 4=109 --expect-events 60000024:*=109 \
		--expect-events 60000027:1=1 --expect-fork-join
	grep -q '^0 *60000028 *Task Identifier$' "$WORK/tasks.pcf" && grep -q ':60000028:[1-9]' "$WORK/tasks.prv" ||
		fail "no task identifiers (60000028)"
	# omp_sync: 96 critical sections (tests/e2e/omp.sh counts them) as Extrae's unnamed-Lock
	# (60000007): Lock (3) while it waits, Locked status (6) inside, each of positive duration.
	gcc -g -O1 -fopenmp "$SRC/tests/programs/omp_sync.c" -o "$WORK/omp_sync" || fail "build omp_sync"
	OMP_NUM_THREADS=4 traced "$WORK/sync.trace" "$WORK/omp_sync" >/dev/null || fail "omp_sync failed"
	prv "$WORK/sync.trace" "$WORK/sync" --expect-calls 60000007:3=96 --expect-calls 60000007:6=96 \
		--no-zero-calls 60000007,60000005,60000016,60000002 --expect-events 60000002:4=4 \
		--expect-fork-join

else
	echo "no gcc -fopenmp: the OpenMP cases are not run"
fi
# LLVM's libomp through OMPT: the fork from __kmpc_fork_call's entry, in state 7 the same.
if command -v clang >/dev/null && clang -g -O1 -fopenmp "$SRC/tests/programs/omp_parallel.c" -o "$WORK/omp_parallel_llvm" 2>/dev/null; then
	OMP_NUM_THREADS=4 traced "$WORK/llvm.trace" "$WORK/omp_parallel_llvm" >/dev/null || fail "omp_parallel (libomp) failed"
	prv "$WORK/llvm.trace" "$WORK/llvm" --expect-threads 4 --expect-fork-join \
		--expect-calls 60000001:3=12 --expect-events 60000018:*=48 --extrae-names
else
	echo "no clang -fopenmp: the libomp case is not run"
fi

# Kokkos (Debian's Kokkos, tests/programs/kokkos_app.cpp): kernels named by label, the deep
# copy a memory transfer, allocations by space.
if [ -x "$TESTBIN/kokkos_app" ]; then
	traced "$WORK/kokkos.trace" "$TESTBIN/kokkos_app" >/dev/null 2>&1 || fail "kokkos_app failed"
	prv "$WORK/kokkos.trace" "$WORK/kokkos" --expect-label 65000001=axpy \
		--expect-label '65000001=main::{lambda(int)#' --expect-label '65000005=deep_copy Host->Host' \
		--expect-label '65000006=allocate Host' --expect-state 17
else
	echo "kokkos_app was not built (no Kokkos): the Kokkos case is not run"
fi
echo ok
