#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The tracer's helper threads (writer, sampler) never make a single-threaded program see a
# second thread where it needs to be alone: unshare of a user namespace works, and a fork
# leaves the parent with one thread (Python 3.12 warns otherwise).  The trace is whole.
. "$(dirname "$0")/lib.sh"
py=/usr/bin/python3

# unshare(CLONE_NEWUSER) refuses a process with two threads (EINVAL).
if unshare -U -r id -u >"$WORK/plain.out" 2>&1; then
	traced "$WORK/unshare.trace" unshare -U -r id -u >"$WORK/traced.out" 2>&1 ||
		fail "unshare -U -r id -u fails traced: $(cat "$WORK/traced.out")"
	cmp -s "$WORK/plain.out" "$WORK/traced.out" || fail "unshare: output differs"
	$DUMP "$WORK/unshare.trace" >/dev/null || fail "unshare: the trace is damaged"
	echo "unshare -U -r: works traced ($(cat "$WORK/traced.out"))"
else
	echo "unshare -U -r does not work here untraced ($(head -1 "$WORK/plain.out")): not checked"
fi

# The thread count a forking program sees in its parent, right after fork: ROUNDS forks,
# each after PAIRS lock+unlock pairs.
cat >"$WORK/fork.py" <<'PY'
import os, sys, threading
def threads():
    for line in open('/proc/self/status'):
        if line.startswith('Threads:'):
            return int(line.split()[1])
rounds, pairs = int(sys.argv[1]), int(sys.argv[2])
lock = threading.Lock()
for i in range(rounds):
    for _ in range(pairs):
        with lock:
            pass
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    after = threads()
    os.waitpid(pid, 0)
    print("threads after fork", after)
PY
$py "$WORK/fork.py" 3 0 >"$WORK/plain.out"
traced "$WORK/fork.trace" $py "$WORK/fork.py" 3 0 >"$WORK/traced.out"
cmp -s "$WORK/plain.out" "$WORK/traced.out" ||
	fail "fork: untraced '$(tr '\n' ' ' <"$WORK/plain.out")', traced '$(tr '\n' ' ' <"$WORK/traced.out")'"
$DUMP "$WORK/fork.trace" >/dev/null || fail "fork: the trace is damaged"
grep -c . "$WORK/traced.out" | grep -qx 3 || fail "fork: $(cat "$WORK/traced.out")"

# The same right after the trace filled a chunk: the writer starts then, and the writer
# starts the sampler (a single-threaded process gets one only then); the fork that follows
# at once must find both stepped aside.  8 KiB chunks, 500 lock+unlock pairs a round.
$py "$WORK/fork.py" 20 500 >"$WORK/plain.out"
LIBTRACE_BUFFER_SIZE=64K traced "$WORK/fill_fork.trace" $py "$WORK/fork.py" 20 500 >"$WORK/traced.out"
cmp -s "$WORK/plain.out" "$WORK/traced.out" ||
	fail "fork after a full chunk: untraced $(sort "$WORK/plain.out" | uniq -c | tr '\n' ' '), traced $(sort "$WORK/traced.out" | uniq -c | tr '\n' ' ')"
grep -q '^sampler [0-9]' "$WORK"/fill_fork.trace/*/meta ||
	fail "fork after a full chunk: no sampler started (no chunk filled?)"
$DUMP "$WORK/fill_fork.trace" >/dev/null || fail "fork after a full chunk: the trace is damaged"
echo "fork right after a full chunk: one thread in 20 of 20 rounds"

# The sampler comes back after a pause as the same thread of the trace: a program that
# forks, then works long enough for chunks to fill, is sampled after the fork too, and the
# archive is valid.  Without the resume about 80 samples come from before the fork.
need_converter
LIBTRACE_BUFFER_SIZE=64K LIBTRACE_SAMPLE_PERIOD=1ms traced "$WORK/resume.trace" $py -c '
import os, time, threading
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
lock = threading.Lock()
end = time.time() + 0.5
while time.time() < end:
    with lock:
        pass
' || fail "resume: the program failed"
$DUMP "$WORK/resume.trace" >/dev/null || fail "resume: the trace is damaged"
main=$(ls "$WORK/resume.trace" | grep -v '\.' | head -1)
converted "$WORK/resume.trace/$main" "$WORK/resume.otf2" >/dev/null
samples=$(otf2-print "$WORK/resume.otf2/traces.otf2" | grep -c '^METRIC ')
[ "$samples" -ge 200 ] || fail "resume: $samples samples in 0.5 s at 1 ms after a fork (not resumed?)"
echo "resume: $samples samples after the fork"

# A cpuset that shrank away from every CPU of the process's start (a batch system moving a
# running job): the helpers start on the CPUs it allows now.  The program starts on CPU 0,
# moves itself into a cpuset of the last CPU only, then starts a thread (the sampler) that
# fills chunks (the writer).  Both used to fail (EINVAL): the writer's work fell to the
# program's threads, and there were no samples.
cpuset_dir() { # a new cpuset of CPU $1 only: its directory, cgroup v1 or v2
	local v1=/sys/fs/cgroup/cpuset v2=/sys/fs/cgroup d
	if [ -f $v1/cpuset.cpus ]; then
		d=$v1/libtrace-test-$$
		mkdir "$d" && cat $v1/cpuset.mems >"$d/cpuset.mems" || return 1
	elif grep -qw cpuset $v2/cgroup.controllers 2>/dev/null; then
		d=$v2/libtrace-test-$$
		echo +cpuset >$v2/cgroup.subtree_control && mkdir "$d" || return 1
	else
		return 1
	fi
	echo "$1" >"$d/cpuset.cpus" && echo "$d"
}
last=$(($(nproc) - 1))
if [ "$(id -u)" != 0 ] || [ $last -lt 1 ]; then
	echo "shrunk cpuset: not checked (needs root and two CPUs)"
elif ! cs=$(cpuset_dir $last 2>/dev/null); then
	echo "shrunk cpuset: not checked (no cpuset cgroup can be made here)"
else
	cat >"$WORK/shrink.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *work(void *arg)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 300000000L);
	return arg;
}
int main(int argc, char **argv)
{
	FILE *f = argc > 1 ? fopen(argv[1], "w") : NULL; /* the cpuset's cgroup.procs */
	if (!f || fprintf(f, "0\n") < 0 || fclose(f))
		return 2;
	pthread_t t;
	if (pthread_create(&t, NULL, work, NULL) || pthread_join(t, NULL))
		return 3;
	return 0;
}
C
	gcc -O1 -pthread "$WORK/shrink.c" -o "$WORK/shrink" || fail "building shrink.c"
	taskset -c 0 env LD_PRELOAD="$LIB" LIBTRACE_OUTPUT="$WORK/shrink.trace" \
		LIBTRACE_BUFFER_SIZE=256K LIBTRACE_SAMPLE_PERIOD=1ms "$WORK/shrink" "$cs/cgroup.procs" \
		>/dev/null 2>"$WORK/shrink.err"
	rc=$?
	rmdir "$cs" 2>/dev/null
	[ $rc = 0 ] || fail "shrunk cpuset: the program failed ($rc): $(cat "$WORK/shrink.err")"
	! grep -q 'cannot start' "$WORK/shrink.err" ||
		fail "shrunk cpuset: $(grep 'cannot start' "$WORK/shrink.err")"
	meta=$(ls "$WORK"/shrink.trace/*/meta)
	writer=$(awk '$1 == "writer_cpu" { print $2 }' "$meta")
	[ "${writer:-0}" -gt 0 ] || fail "shrunk cpuset: the writer did not run (writer_cpu ${writer:-none})"
	grep -q '^sampler [0-9]' "$meta" || fail "shrunk cpuset: no sampler thread"
	! grep -q '^sampler_off all' "$meta" || fail "shrunk cpuset: $(grep '^sampler_off all' "$meta")"
	$DUMP "$WORK/shrink.trace" >/dev/null || fail "shrunk cpuset: the trace is damaged"
	echo "shrunk cpuset: the writer ($writer ns of CPU) and the sampler ran on CPU $last"
fi
echo ok
