#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A full disk: the program runs exactly as untraced, the tracer says once why it loses
# events, and every event of every thread is either in the trace or counted as lost (in the
# ring's chunk headers, or in the meta file for a thread that got no ring at all).
# Needs root to mount a 1 MiB tmpfs, else skips.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip "not root: cannot mount a small file system"
mkdir "$WORK/small"
mount -t tmpfs -o size=1M tmpfs "$WORK/small" 2>/dev/null || skip "cannot mount a tmpfs here"
trap 'umount "$WORK/small"; rm -rf "$WORK"' EXIT
n=100000
# With the sampler thread on (its meta lines and records also meet the full disk).
out=$(LIBTRACE_BUFFER_SIZE=64K LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/small/t \
	"$TESTBIN/count_events" 4 $n private 2>"$WORK/err") || fail "count_events failed on a full disk"
[ "$out" = "shared=$((5 * n / 10))" ] || fail "program output changed: $out"
grep -q "No space left on device" "$WORK/err" || fail "no message about the full disk: $(cat "$WORK/err")"
# Once per file (the events file, and the meta file when a sampler's line hit the full disk).
[ -z "$(grep -o 'cannot write [^:]*' "$WORK/err" | sort | uniq -d)" ] ||
	fail "a write failure was reported more than once: $(cat "$WORK/err")"
cp -a "$WORK/small/t" "$WORK/t"
"$DUMP" --stats "$WORK/t" >"$WORK/stats" || fail "trace-dump --stats failed ($?)"
cat "$WORK/stats"
python3 - "$WORK/stats" $n <<'PY' || fail "full-disk accounting"
import sys
n = int(sys.argv[2])
# Each worker: THREAD_BEGIN, n counters, every tenth value a region (2) and an uncontended
# lock/unlock of its own mutex (2 records: a plain mutex taken at once is one), THREAD_END,
# and the CPU it started on (the cpu sampler, on by default).
want = 3 + n + n // 10 * 4
bad = lost_all = 0
workers = 0
for line in open(sys.argv[1]):
    f = line.split()
    if f[1] == '0':
        continue
    workers += 1
    kv = dict(x.split('=') for x in f[2:])
    rec, lost = int(kv['records']), int(kv['lost'])
    lost_all += lost
    if rec + lost != want:
        print(f"thread {f[1]}: {rec} recorded + {lost} lost != {want}", file=sys.stderr)
        bad += 1
if workers != 4:
    print(f"{workers} worker threads in the trace, expected 4", file=sys.stderr)
    bad += 1
if lost_all == 0:
    print("nothing lost on a full 1 MiB disk: the test did not fill it", file=sys.stderr)
    bad += 1
print(f"full disk: {lost_all} events counted as lost, every worker's count exact")
sys.exit(1 if bad else 0)
PY
echo ok
