#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# A process killed by the kernel's OOM killer (under a cgroup memory limit) while its
# threads produce: each thread's trace is a gap-free prefix ending no earlier than the count
# it mirrored, minus one.  Needs a writable cgroup memory controller (v2 or v1), else skips.
. "$(dirname "$0")/lib.sh"
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] &&
	grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	cg=/sys/fs/cgroup/libtrace-oom-$$ limit=memory.max
elif [ -w /sys/fs/cgroup/memory ]; then
	cg=/sys/fs/cgroup/memory/libtrace-oom-$$ limit=memory.limit_in_bytes
else
	skip "no writable cgroup memory controller"
fi
mkdir "$cg" 2>/dev/null || skip "cannot create a cgroup under ${cg%/*}"
trap 'rmdir "$cg" 2>/dev/null; rm -rf "$WORK"' EXIT
echo $((256 << 20)) >"$cg/$limit" || skip "cannot set $cg/$limit"
[ -f "$cg/memory.swap.max" ] && echo 0 >"$cg/memory.swap.max"
threads=3
(
	echo $BASHPID >"$cg/cgroup.procs"
	exec env LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/t" LIBTRACE_QUIET=1 \
		LIBTRACE_BUFFER_SIZE=1M "$TESTBIN/spin" $threads "$WORK/mirror" hog
)
status=$?
[ $status = 137 ] || fail "the hog ended with status $status, not by SIGKILL (137)"
"$DUMP" "$WORK/t" >"$WORK/dump" || fail "trace-dump failed on the OOM-killed trace ($?)"
python3 "$SRC/tests/e2e/check_prefix.py" "$WORK/dump" "$WORK/mirror" $threads 0 ||
	fail "OOM-killed trace"
echo ok
