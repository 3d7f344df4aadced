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
grep -q '^end ' "$WORK"/t/*/meta && fail "a killed process cannot have an end line"
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed on the killed process's trace ($?)"
python3 "$SRC/tests/e2e/check_prefix.py" "$WORK/dump" "$WORK/mirror" $threads ||
	fail "killed trace"
echo ok
