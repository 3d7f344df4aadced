#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Bounded memory: a 60-second run at 1.2 million events per second (2 threads) adds at most
# LIBTRACE_BUFFER_SIZE per live thread + 16 MiB to the peak resident set, and loses
# nothing.  Then the drop policy: every event is either recorded or counted in a LOST record.
. "$(dirname "$0")/lib.sh"
threads=2 rate=600000 seconds=${MEMORY_TEST_SECONDS:-60}
plain=$("$TESTBIN/steady" $threads $rate 3) || fail "steady failed untraced"
out=$(traced "$WORK/t" "$TESTBIN/steady" $threads $rate "$seconds") || fail "steady failed traced"
hwm_plain=${plain#hwm_kb=} hwm_traced=${out#hwm_kb=}
live=$((threads + 1)) # the workers and main; the writer thread has no ring
bound=$((live * 8 * 1024 + 16 * 1024))
added=$((hwm_traced - hwm_plain))
echo "peak RSS: $hwm_plain kB untraced, $hwm_traced kB traced over ${seconds}s: +$added kB (bound $bound kB)"
[ $added -le $bound ] || fail "the tracer added $added kB, more than $bound kB"
"$DUMP" --stats "$WORK/t" >"$WORK/stats" || fail "trace-dump --stats failed"
cat "$WORK/stats"
want=$((rate * seconds))
workers=$(grep -c " COUNTER=$want\( \|$\)" "$WORK/stats")
[ "$workers" = $threads ] || fail "$workers threads with exactly $want values, expected $threads"
! grep -v 'lost=0 ' "$WORK/stats" | grep -q . || fail "events lost with the block policy"
size=$(stat -c %s "$WORK"/t/*/events)
echo "$((threads * want)) events in $size bytes"
rm -rf "$WORK/t"

# Drop policy, tiny rings: exact accounting per thread.  count_events' workers each record
# N counters plus, every tenth value, a region (2 records) and an uncontended lock/unlock of
# its own mutex (2 records: a plain mutex taken at once is one record, as its unlock).
n=200000
LIBTRACE_OVERFLOW=drop LIBTRACE_BUFFER_SIZE=64K traced "$WORK/d" "$TESTBIN/count_events" 4 $n \
	private >/dev/null || fail "count_events failed with the drop policy"
"$DUMP" --stats "$WORK/d" >"$WORK/stats" || fail "trace-dump --stats failed"
python3 - "$WORK/stats" $n <<'PY' || fail "drop policy accounting"
import re, sys
n = int(sys.argv[2])
want = n + n // 10 * 4
bad = 0
lost_all = 0
for line in open(sys.argv[1]):
    f = line.split()
    if f[1] == '0':
        continue  # the main thread also creates and joins
    kv = dict(x.split('=') for x in f[2:])
    # the tracer's own: begin, end, and the CPU a thread starts on (LIBTRACE_SAMPLERS=cpu)
    work = int(kv['records']) - int(kv.get('THREAD_BEGIN', 0)) - int(kv.get('THREAD_END', 0)) \
        - int(kv.get('CPU', 0))
    lost = int(kv['lost'])
    lost_all += lost
    if work + lost != want or kv.get('THREAD_END') != '1':
        print(f"thread {f[1]}: {work} recorded + {lost} lost != {want}, or no end", file=sys.stderr)
        bad += 1
print(f"drop policy: {lost_all} events counted as lost, every thread's count exact")
sys.exit(1 if bad else 0)
PY
"$DUMP" "$WORK/d" | grep -q 'LOST cause=buffer' || echo "(the writer kept up: nothing was dropped this time)"
echo ok
