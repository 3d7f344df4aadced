// SPDX-License-Identifier: BSD-3-Clause
/*
 * sched.c - CPU affinity changes (module pthread): a thread that changes its own affinity
 * records the CPU it runs on right after the call returns, so that a migration the program
 * asks for shows at the instant it happened (the sampler thread would see it only at its
 * next period).  A change of another thread's affinity is left to the sampler.
 *
 * Nothing is recorded unless a module follows the threads' CPUs (lt_track_moves).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/module.h"
#include "../common/modules.h"

static __typeof__(&sched_setaffinity) real_sched_setaffinity;
static __typeof__(&pthread_setaffinity_np) real_pthread_setaffinity_np;

/* After a successful change of the calling thread's own affinity. */
static void moved_self(void)
{
	if (!lt_track_moves)
		return;
	int saved = errno;
	struct lt_thread *t = lt_begin(LT_MOD_PTHREAD);
	if (t) {
		lt_thread_moved(t);
		lt_finish(t);
	}
	errno = saved;
}

LT_EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
	LT_RESOLVE(sched_setaffinity, NULL);
	if (unlikely(!real_sched_setaffinity)) {
		errno = ENOSYS;
		return -1;
	}
	int ret = real_sched_setaffinity(pid, size, set);
	if (ret == 0 && lt_track_moves && (pid == 0 || pid == (pid_t)syscall(SYS_gettid)))
		moved_self();
	return ret;
}

LT_EXPORT int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t *set)
{
	LT_RESOLVE(pthread_setaffinity_np, NULL);
	if (unlikely(!real_pthread_setaffinity_np))
		return ENOSYS;
	int ret = real_pthread_setaffinity_np(thread, size, set);
	if (ret == 0 && lt_track_moves && pthread_equal(thread, pthread_self()))
		moved_self();
	return ret;
}

LT_MODULE(sched) = {.name = "sched", .bit = LT_MOD_PTHREAD, .order = 11};
