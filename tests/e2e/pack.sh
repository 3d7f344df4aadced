#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The events file is packed (format 2.x, src/format/pack.h) and gives back exactly the
# records the program wrote: every packed chunk unpacks to its raw length and packs back to
# the same bytes (test_pack), the record counts are what the program did, the trace is
# several times smaller than its records, and the meta file says what the writer cost.
. "$(dirname "$0")/lib.sh"
threads=3 events=30000
LIBTRACE_BUFFER_SIZE=256K traced "$WORK/t" "$TESTBIN/count_events" $threads $events private >/dev/null ||
	fail "count_events failed"
proc=$(echo "$WORK"/t/*/)
"$TESTBIN/test_pack" "$proc" >"$WORK/pack.out" || { cat "$WORK/pack.out" >&2; fail "test_pack"; }
cat "$WORK/pack.out"
read -r chunks packed < <(sed -n 's/.*: \([0-9]*\) chunks, \([0-9]*\) packed$/\1 \2/p' "$WORK/pack.out")
[ "${chunks:-0}" -ge 8 ] || fail "only ${chunks:-0} chunks"
[ "$packed" = "$chunks" ] || fail "$packed of $chunks chunks packed"
"$DUMP" -m "$WORK/t" >"$WORK/dump" || fail "trace-dump: exit status $?"
head -1 "$proc/meta" | grep -qx 'libtrace-meta 2\.2' || fail "meta: $(head -1 "$proc/meta")"
# (0 where the writer never got a CPU before the end: a loaded machine, the threads then
# copy their own rings out.)
grep -Eq '^writer_cpu [0-9]+$' "$proc/meta" || fail "no writer_cpu line with a time"
line=$(grep -m1 ' format=2\.2 ' "$WORK/dump") || fail "trace-dump --meta: no format line"
echo "$line"
echo "$line" | grep -q " packed=$chunks " || fail "trace-dump counts other packed chunks"
echo "$line" | grep -Eq ' writer_cpu_ns=[0-9]' || fail "trace-dump shows no writer CPU time"
raw=$(echo "$line" | sed 's/.* record_bytes=\([0-9]*\).*/\1/')
stored=$(echo "$line" | sed 's/.* stored_bytes=\([0-9]*\).*/\1/')
[ $((stored * 3)) -le "$raw" ] || fail "stored $stored bytes for $raw bytes of records"
# What each of the threads + 1 did: EVENTS counters, a region around each tenth.
"$DUMP" -S "$WORK/t" >"$WORK/stats" || fail "trace-dump -S"
cat "$WORK/stats"
n=$(grep -c " COUNTER=$events " "$WORK/stats")
[ "$n" = $((threads + 1)) ] || fail "$n threads with $events counters"
n=$(grep -c " REGION_ENTER=$((events / 10)) REGION_LEAVE=$((events / 10)) " "$WORK/stats")
[ "$n" = $((threads + 1)) ] || fail "$n threads with $((events / 10)) regions"
# Values: every counter value 0..EVENTS-1 of every thread comes back.
sum=$(awk '$4 == "COUNTER" { for (i = 5; i <= NF; i++) if ($i ~ /^value=/) { sub(/value=/, "", $i); s += $i } } END { printf "%d", s }' "$WORK/dump")
[ "$sum" = $(((threads + 1) * events * (events - 1) / 2)) ] || fail "counter values sum to $sum"
echo "packed trace: $stored of $raw record bytes, counts and values exact"
