#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 on programs whose every event is known: the archive is accepted by otf2-print
# -Werror and by a python3-otf2 reader, and holds exactly what the program did (threads,
# create/begin/end/wait pairs, lock operations, counters, regions, start routine names).
. "$(dirname "$0")/lib.sh"
# Exact event counts: no sampler thread (its records are checked in samplers.sh).
export LIBTRACE_SAMPLE_PERIOD=0
need_converter

# count_events T N: T threads plus main each record N counter values, a "tenth" region around
# every tenth value with one mutex lock/unlock inside, all joined.
T=3 N=1000
traced "$WORK/count.trace" "$TESTBIN/count_events" $T $N >/dev/null || fail "count_events failed"
threads=$((T + 1))
tenths=$(((N + 9) / 10))
converted "$WORK/count.trace" "$WORK/count.otf2" \
	--processes 1 --locations $threads --created $T --waited $T \
	--kind ThreadCreate=$T --kind ThreadEnd=$T \
	--kind Metric=$((threads * N)) \
	--enters tenth=$((threads * tenths)) \
	--enters pthread_mutex_lock=$((threads * tenths)) \
	--enters pthread_mutex_unlock=$((threads * tenths)) \
	--kind ThreadAcquireLock=$((threads * tenths)) \
	--kind ThreadReleaseLock=$((threads * tenths)) \
	--enters pthread_create=$T --enters pthread_join=$T \
	--outer 'work @count_events\.c:[0-9]+' --kind ProgramBegin=1 --kind ProgramEnd=1
# The default output name, and an existing output refused.
"$CONVERT" -q "$WORK/count.trace" || fail "default output: exit status $?"
[ -f "$WORK/count.trace.otf2/traces.otf2" ] || fail "no archive at TRACE.otf2"
"$CONVERT" -q "$WORK/count.trace" 2>"$WORK/err" && fail "an existing output was overwritten"
[ $? = 4 ] || fail "existing output: exit status not 4"
grep -q 'exists' "$WORK/err" || fail "existing output: no clear message"
# The summary paragraph names what was converted.
rm -rf "$WORK/count.trace.otf2"
"$CONVERT" "$WORK/count.trace" 2>"$WORK/summary" || fail "summary run failed"
grep -q "1 process, $threads threads, .* events from .* records" "$WORK/summary" ||
	fail "summary: $(cat "$WORK/summary")"

# The example: condition variables, rwlocks, semaphores, a barrier, a named thread.
traced "$WORK/pipe.trace" "$BUILD/examples/pthread_pipeline" >/dev/null || fail "example failed"
converted "$WORK/pipe.trace" "$WORK/pipe.otf2" --processes 1 --locations 6 --created 5 \
	--waited 5 --outer '(worker|reader) @pthread_pipeline\.c:[0-9]+'

# fork, exec, spawn: one location group per process.
traced "$WORK/procs.trace" "$TESTBIN/procs" >/dev/null 2>&1 || fail "procs failed"
n=$(ls -d "$WORK"/procs.trace/*/ | wc -l)
[ "$n" -ge 3 ] || fail "procs: only $n process directories"
converted "$WORK/procs.trace" "$WORK/procs.otf2" --processes "$n"

# Losses: a thread that got no ring has its lost events counted in the meta file (the drop
# policy counts them in chunk headers; both reach the converter as LOST records).  Added by
# hand here, as a full disk would have: the archive shows them as a marker, the summary too.
cp -a "$WORK/count.trace" "$WORK/lost.trace"
echo "lost 1 3 12345" >>"$(ls -d "$WORK"/lost.trace/*/)meta"
converted "$WORK/lost.trace" "$WORK/lost.otf2" --locations $threads --markers 'Lost events=1'
otf2-marker "$WORK/lost.otf2/traces.otf2" | grep -q '12345 events lost: the thread got no buffer' ||
	fail "the loss is not in the marker's text"
"$CONVERT" "$WORK/lost.trace" -o "$WORK/lost2.otf2" 2>&1 | grep -q '12345 events were lost' ||
	fail "the summary does not tell the loss"

# A killed process: converted up to its death, with a truncation marker; the regions its
# threads had open (two start routines, main's pthread_join) are closed by the converter
# and marked.
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/kill.trace LIBTRACE_QUIET=1 "$TESTBIN/steady" 2 20000 60 &
pid=$!
live_threads "$WORK/kill.trace" 3 $pid
sleep 0.2
kill -KILL $pid
wait $pid 2>/dev/null
converted "$WORK/kill.trace" "$WORK/kill.otf2" --processes 1 --locations 3 --created 2 \
	--markers 'Truncated trace=1' --markers 'Regions closed by the converter=3'
echo ok
