#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A storm of 10,000 short-lived threads (waves of 64) beside a pool that is never joined:
# every thread's events are there, the process directory holds 3 files whatever the
# thread count, the ring stays small, and the tracer adds a bounded number of descriptors.
. "$(dirname "$0")/lib.sh"
total=10000 wave=64 pool=4 events=10
plain=$("$TESTBIN/storm" $total $wave $pool $events) || fail "storm failed untraced"
traced_out=$(LIBTRACE_BUFFER_SIZE=64K traced "$WORK/t" "$TESTBIN/storm" $total $wave $pool $events) ||
	fail "storm failed traced"
fds_plain=${plain#max_open_fds=}
fds_traced=${traced_out#max_open_fds=}
# At most: the 3 files of the trace, the sampler's statm, and a thread's stat file that the
# sampler opens, reads and closes.
[ $((fds_traced - fds_plain)) -le 5 ] ||
	fail "the tracer held $((fds_traced - fds_plain)) descriptors (plain $fds_plain, traced $fds_traced)"
dir=$(ls -d "$WORK"/t/*/)
nfiles=$(ls "$dir" | wc -l)
[ "$nfiles" = 3 ] || fail "$nfiles files in the process directory: $(ls "$dir")"
ring=$(stat -c %s "$dir/ring")
# 64K rings: live threads (64 + 4 + main) plus slack for slots not yet drained.
[ "$ring" -le $((256 * 65536 + 4096)) ] || fail "ring file of $ring bytes for $((wave + pool + 1)) live threads"
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed"
python3 - "$WORK/dump" $total $pool $events <<'PY' || fail "storm trace"
import collections, sys
total, pool, events = map(int, sys.argv[2:])
vals = collections.defaultdict(list)
begin, end = set(), set()
created = joined = 0
for line in open(sys.argv[1]):
    f = line.split()
    th, kind = int(f[1]), f[3]
    if kind == 'COUNTER':
        vals[th].append(int(f[5].split('=')[1]))
    elif kind == 'THREAD_BEGIN':
        begin.add(th)
    elif kind == 'THREAD_END':
        end.add(th)
    elif kind == 'THREAD_CREATE':
        created += 1
    elif kind == 'THREAD_WAIT':
        joined += 1
errors = []
if len(begin) != total + pool + 1:
    errors.append(f"{len(begin)} threads began, expected {total + pool + 1}")
numbers = sorted(v[0] for th, v in vals.items())
if numbers != list(range(total + pool)):
    errors.append("the threads' numbers are not 0..total+pool-1 exactly once")
bad = [th for th, v in vals.items() if len(v) != events or len(set(v)) != 1]
if bad:
    errors.append(f"{len(bad)} threads without exactly {events} values of their number")
if created != total + pool or joined != total:
    errors.append(f"{created} created, {joined} joined; expected {total + pool} and {total}")
if len(end) != total:
    errors.append(f"{len(end)} threads ended, expected {total} (the pool never ends)")
print(f"{len(begin)} threads, {sum(map(len, vals.values()))} values, {created} created, {joined} joined")
for e in errors:
    print(e, file=sys.stderr)
sys.exit(1 if errors else 0)
PY
echo "descriptors: $fds_plain untraced, $fds_traced traced; $nfiles files; ring $ring bytes"
echo ok
