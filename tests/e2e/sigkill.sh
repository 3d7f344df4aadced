#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# SIGKILL while threads produce: each thread's trace is a gap-free, duplicate-free prefix of
# its sequence that ends no earlier than the count it mirrored to a shared file, minus one.
# What was still in the rings is recovered from the ring file.
. "$(dirname "$0")/lib.sh"

threads=3
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/t LIBTRACE_QUIET=1 LIBTRACE_BUFFER_SIZE=256K \
	"$TESTBIN/spin" $threads "$WORK/mirror" &
pid=$!
sleep 0.2
kill -KILL $pid
wait $pid 2>/dev/null
python3 - "$WORK/mirror" $threads >"$WORK/mirrored" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
for i in range(int(sys.argv[2])):
    print(struct.unpack_from('<Q', data, 8 * i)[0])
PY
grep -q '^end ' "$WORK"/t/*/meta && fail "a killed process cannot have an end line"
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed on the killed process's trace ($?)"
python3 - "$WORK/dump" "$WORK/mirrored" <<'PY' || fail "killed trace"
import collections, sys
seqs = collections.defaultdict(list)
start = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[3] == 'COUNTER' and f[4] == '"spin"':
        seqs[int(f[1])].append(int(f[5].split('=')[1]))
    if f[3] == 'THREAD_BEGIN':
        start[int(f[1])] = f[5] if len(f) > 5 else ''
mirrored = [int(x) for x in open(sys.argv[2])]
# Thread 0 is main (mirror slot 0); threads 1.. were created in order (slots 1..).
ok = True
for th, vals in sorted(seqs.items()):
    want = mirrored[th]
    if vals != list(range(len(vals))):
        print(f"thread {th}: not a gap-free prefix", file=sys.stderr); ok = False
    if len(vals) < want - 1:
        print(f"thread {th}: {len(vals)} values, mirrored {want}", file=sys.stderr); ok = False
    print(f"thread {th}: {len(vals)} values recorded, {want} mirrored")
if len(seqs) != len(mirrored):
    print(f"{len(seqs)} threads in the trace, {len(mirrored)} ran", file=sys.stderr); ok = False
sys.exit(0 if ok else 1)
PY
echo ok
