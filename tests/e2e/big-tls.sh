#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A program with a megabyte of static TLS (NPB EP's threadprivate arrays): glibc places it
# at the top of every new thread's stack, the tracer's helpers' too.  Their stacks are sized
# by the program's TLS: the writer and the sampler start, every thread's calls are in the
# trace, with no warning.  Before, both helpers failed to start ("cannot start the sampler
# thread: Invalid argument; no samples", "cannot start the writer thread").
. "$(dirname "$0")/lib.sh"

LIBTRACE_QUIET=0 LIBTRACE_SAMPLER_START=now LIBTRACE_SAMPLE_PERIOD=1ms \
	traced "$WORK/t" "$TESTBIN/big_tls" 2 50000 >"$WORK/out" 2>"$WORK/err"
s=$?
[ $s = 0 ] && grep -qx ok "$WORK/out" || fail "exit status $s: $(cat "$WORK/out" "$WORK/err")"
grep -v '^libtrace: trace written to' "$WORK/err" && fail "warnings with a megabyte of TLS"
meta=$(ls "$WORK"/t/*/meta)
grep -q '^sampler [0-9]' "$meta" || fail "no sampler thread"
# (The writer's start is the warning above: it may have nothing to do in so short a run.)
"$DUMP" --stats "$WORK/t" >"$WORK/stats" || fail "trace-dump --stats"
grep -v ' lost=0 ' "$WORK/stats" && fail "events lost"
n=$(awk '$2 == 1 || $2 == 2 { c = 0; for (i = 3; i <= NF; i++) if ($i ~ /^(CALL|CALL_ENTER)=/) { split($i, kv, "="); c += kv[2] }
	if (c == 100000) n++ } END { print n + 0 }' "$WORK/stats")
[ "$n" = 2 ] || fail "$n of 2 threads have their 100000 calls: $(cat "$WORK/stats")"
echo "1 MiB of static TLS: writer and sampler started, 2 threads of 100000 calls, no warning"
