#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A flipped bit in the records of the events file (a bad disk, a bad copy) is reported as
# damage: 100 single-bit flips at places spread over the chunks' stored records (packed
# and raw alike), each in a fresh copy of the trace; trace-dump must exit 1 and name the
# damage every time, and the intact trace reads with exit 0.  Before chunks carried a
# check of their records (format 2.1), 48 of 100 such flips were read without a word, as
# changed values.
. "$(dirname "$0")/lib.sh"

traced "$WORK/t" "$TESTBIN/count_events" 2 20000 private >/dev/null 2>&1 || fail "count_events failed"
"$DUMP" "$WORK/t" >/dev/null 2>"$WORK/err" || fail "the intact trace: $(cat "$WORK/err")"
events=$(echo "$WORK"/t/*/events)
# Offsets of payload bits: each chunk's stored bytes after its 64-byte header.
# A chunk whose copy in the ring is longer (the main thread's, copied at the end while it
# still ran, then written to further) is read from the ring: a flip in its events copy is
# in nothing read, so it is not one of the places; nor is a copy another one as long or
# longer in the events file may stand for, nor the zero padding after packed records.
python3 - "$events" "$(dirname "$events")/ring" >"$WORK/bits" <<'PY' || fail "cannot index the events file"
import random, struct, sys
data = open(sys.argv[1], 'rb').read()
ring = open(sys.argv[2], 'rb').read()
longer = {}
chunk_size = struct.unpack_from('<8sHHIIIQQ', ring, 0)[6]
for at in range(4096, len(ring) - 63, chunk_size):
    magic, hsize, thread, tid, seq, cap, used, lost, flags, check, state, res = \
        struct.unpack_from('<IIIIQQQQIIII', ring, at)
    if state in (1, 2) and hsize >= 64:
        longer[(thread, seq)] = used
off, found = 4096, []
while off + 64 <= len(data):
    magic, hsize, thread, tid, seq, cap, used, lost, flags, check, state, res = \
        struct.unpack_from('<IIIIQQQQIIII', data, off)
    stored = cap - hsize if flags & 2 else used
    payload = res if flags & 2 else used  # a packed chunk's padding after it is no record
    if payload:
        found.append(((thread, seq), used, off + hsize, payload))

    off += hsize + stored + ((8 - stored % 8) % 8 if flags & 2 else 0)
# (and of two copies as long in the events file, the reader may take either)
same = {}
for key, used, _, _ in found:
    same[(key, used)] = same.get((key, used), 0) + 1
spans = [(at, n) for key, used, at, n in found
         if longer.get(key, -1) <= used and same[(key, used)] == 1 and
         used == max(u for k, u, _, _ in found if k == key)]
assert spans, 'no chunk with records'
rnd = random.Random(44)
for i in range(100):
    start, n = spans[i % len(spans)]
    print(start + rnd.randrange(n), rnd.randrange(8))
PY
[ "$(wc -l <"$WORK/bits")" = 100 ] || fail "expected 100 flips"
caught=0
while read -r at bit; do
	rm -rf "$WORK/c"
	cp -r "$WORK/t" "$WORK/c"
	python3 -c 'import sys; p, at, bit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = open(p, "r+b"); f.seek(at); b = f.read(1); f.seek(at); f.write(bytes([b[0] ^ (1 << bit)]))' \
		"$(echo "$WORK"/c/*/events)" "$at" "$bit"
	"$DUMP" "$WORK/c" >/dev/null 2>"$WORK/err"
	s=$?
	if [ $s = 1 ] && grep -qi 'checksum\|malformed\|damaged' "$WORK/err"; then
		caught=$((caught + 1))
	else
		echo "byte $at bit $bit: exit status $s, $(head -2 "$WORK/err")" >&2
	fi
done <"$WORK/bits"
[ "$caught" = 100 ] || fail "$caught of 100 flipped payload bits reported as damage"
echo "100 of 100 flipped payload bits reported as damage (trace-dump exit 1)"
echo ok
