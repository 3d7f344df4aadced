// SPDX-License-Identifier: BSD-3-Clause
/*
 * writer.c - the writer thread: it copies the rings' sealed chunks to the events file
 * (buffer.c describes the rings and who owns what), woken by the producers' kicks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lock.h"
#include "lt.h"

static struct {
	uint32_t wake;
	int writer_state; /* 0 not started, 1 running, 2 failed to start, 3 stopping */
	pthread_t writer;
	uint64_t cpu_done; /* CPU ns of the writer threads that ended */
	uint64_t cpu_now;  /* of the running one, as it last read it */
} W;

/* The CPUs the process could use at start, before a runtime pinned its threads: a helper
 * runs on any of them rather than on the core of the thread that happened to start it. */
static cpu_set_t start_cpus;
static int start_cpus_ok;

static lt_create_fn *real_pthread_create_fn;

void lt_buf_writer_init(void)
{
	start_cpus_ok = sched_getaffinity(0, sizeof(start_cpus), &start_cpus) == 0;
}

static int add_tls(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_TLS)
			*(size_t *)data += info->dlpi_phdr[i].p_memsz + info->dlpi_phdr[i].p_align;
	return 0;
}

/*
 * The thread-local storage of every loaded object, an upper bound of what glibc places at
 * the top of each new thread's stack (the static TLS): a program's `threadprivate` of a
 * megabyte (NPB EP) would leave a small helper stack none, and pthread_create would refuse
 * it (EINVAL).  Once per process: objects loaded later get dynamic TLS, off the stack.
 */
static size_t static_tls(void)
{
	static size_t tls = (size_t)-1;
	size_t n = __atomic_load_n(&tls, __ATOMIC_RELAXED);
	if (n == (size_t)-1) {
		n = 0;
		dl_iterate_phdr(add_tls, &n);
		__atomic_store_n(&tls, n, __ATOMIC_RELAXED);
	}
	return n;
}

/* A helper's attributes: every signal blocked, the CPUs of the process's start (pinned), an
 * ordinary policy; `stack` bytes of stack for the helper itself, beside the program's TLS. */
static int helper_attr(pthread_attr_t *attr, int pinned, size_t stack)
{
	int err = pthread_attr_init(attr);
	if (err)
		return err;
	/* The program's signals must never be delivered to a helper. */
	sigset_t all;
	sigfillset(&all);
	pthread_attr_setsigmask_np(attr, &all);
	if (pinned)
		pthread_attr_setaffinity_np(attr, sizeof(start_cpus), &start_cpus);
	if (stack) {
		long page = sysconf(_SC_PAGESIZE);
		size_t pg = page > 0 ? (size_t)page : 4096;
		stack = (stack + static_tls() + pg - 1) / pg * pg;
		pthread_attr_setstacksize(attr, stack);
	}
	/* Made by a thread the program gave a real-time policy: an ordinary thread all the same. */
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK; /* -1 stays negative */
	if (policy == SCHED_FIFO || policy == SCHED_RR) {
		struct sched_param none = {0};
		pthread_attr_setinheritsched(attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(attr, SCHED_OTHER);
		pthread_attr_setschedparam(attr, &none);
	}
	return 0;
}

int lt_helper_create(lt_create_fn *create, pthread_t *th, size_t stack, void *(*fn)(void *),
		     void *arg)
{
	/* A thread inherits its creator's TSC setting: where the program turned it off, the
	 * helper gets it back (its C library reads the TSC in clock_gettime), this thread
	 * keeps the program's. */
	int tsc_off = lt_clock_kind != LT_CLOCK_TSC && lt_clock_tsc_is_off();
	if (tsc_off)
		prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
	for (int pinned = start_cpus_ok;; pinned = 0) {
		pthread_attr_t attr;
		int err = helper_attr(&attr, pinned, stack);
		if (!err) {
			err = create(th, &attr, fn, arg);
			pthread_attr_destroy(&attr);
		}
		if (err != EINVAL || !pinned) {
			if (tsc_off)
				prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
			return err;
		}
		/* None of the CPUs of the process's start is allowed any more (its cpuset
		 * shrank since): on those the process may use now. */
		lt_debug("a helper thread: the CPUs of the start are refused; on today's CPUs");
	}
}

void lt_buf_writer_after_fork(void)
{
	W.writer_state = 0;
	W.cpu_done = W.cpu_now = 0; /* the parent's writer worked for the parent */
}

/* This thread's CPU time so far, in ns. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (lt_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lt_writer_cpu_ns(void)
{
	return __atomic_load_n(&W.cpu_done, __ATOMIC_RELAXED) +
	       __atomic_load_n(&W.cpu_now, __ATOMIC_RELAXED);
}

/*
 * The writer: drains on every kick and at least every 100 ms; records a clock pair a second.
 * It reads its own CPU time after every pass (meta "writer_cpu" at the end says the total).
 */
static void *writer_main(void *arg)
{
	(void)arg;
	lt_tls_guard = 1; /* nothing this thread does is traced */
	/* The process has two threads now: a module's helper may start (from here, with the
	 * priority the process has, not the writer's). */
	lt_process_threaded();
	/* The lowest priority: woken on a program's CPU, it does not preempt the program (which
	 * cost a lock+unlock pair 35 -> 46 ns in bursts on 2 CPUs once the writer packs); where
	 * no CPU is left for it, the threads copy their own chunks out (the block policy). */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) != 0)
		lt_debug("writer: cannot lower its priority: %s", strerror(errno));
	uint64_t last_sync = lt_clock_mono_ns();
	while (__atomic_load_n(&W.writer_state, __ATOMIC_ACQUIRE) == 1) {
		uint32_t seen = __atomic_load_n(&W.wake, __ATOMIC_ACQUIRE);
		lt_buf_drain_all(1);
		lt_thread_counts_flush();
		__atomic_store_n(&W.cpu_now, thread_cpu_ns(), __ATOMIC_RELAXED);
		uint64_t now = lt_clock_mono_ns();
		if (now - last_sync >= 1000000000u) {
			lt_meta_sync();
			last_sync = now;
		}
		struct timespec ts = {0, 100 * 1000 * 1000};
		if (__atomic_load_n(&W.wake, __ATOMIC_ACQUIRE) == seen)
			lt_futex(&W.wake, FUTEX_WAIT, seen, &ts);
	}
	__atomic_fetch_add(&W.cpu_done, thread_cpu_ns(), __ATOMIC_RELAXED);
	__atomic_store_n(&W.cpu_now, 0, __ATOMIC_RELAXED);
	return NULL;
}

#define WRITER_STACK (512 * 1024)

static void writer_start(void)
{
	int expected = 0;
	if (!__atomic_compare_exchange_n(&W.writer_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	if (!real_pthread_create_fn)
		real_pthread_create_fn = lt_dlsym_next("pthread_create", NULL);
	/* Joinable: lt_writer_pause waits until the kernel has let it go.  Its stack is small
	 * (its buffers are mapped once, outside it): 8 MiB of address space would count
	 * against the program's `ulimit -v` and `mlockall`'s memlock limit. */
	int err = real_pthread_create_fn ? lt_helper_create(real_pthread_create_fn, &W.writer,
							    WRITER_STACK, writer_main, NULL)
					 : -1;
	if (err) {
		lt_warn("cannot start the writer thread; threads will drain their own rings");
		__atomic_store_n(&W.writer_state, 2, __ATOMIC_RELEASE);
		return;
	}
	lt_modules_resume(); /* if a pause stopped them: the helpers come back together */
}

void lt_buf_writer_kick(void)
{
	int st = __atomic_load_n(&W.writer_state, __ATOMIC_ACQUIRE);
	if (st == 0) {
		/* Not around a fork: the helpers stepped aside for it, and neither the records of
		 * the call nor the first chunk filled after it bring them back (the sealed chunk
		 * waits for the next kick; a full ring is copied out by its thread). */
		struct lt_thread *t = lt_self;
		if (t && t->hold_writer) {
			if (t->hold_writer == LT_HOLD_NEXT)
				t->hold_writer = LT_HOLD_NONE;
			return;
		}
		writer_start();
	} else if (st != 1) {
		return;
	}
	__atomic_fetch_add(&W.wake, 1, __ATOMIC_RELEASE);
	lt_futex(&W.wake, FUTEX_WAKE, 1, NULL);
}

void lt_buf_writer_nudge(void)
{
	if (__atomic_load_n(&W.writer_state, __ATOMIC_ACQUIRE) != 1)
		return;
	__atomic_fetch_add(&W.wake, 1, __ATOMIC_RELEASE);
	lt_futex(&W.wake, FUTEX_WAKE, 1, NULL);
}

/*
 * Stops the writer and waits until its thread is gone (1 s at most: a write stuck on a
 * dead file system does not hold the program up).  The next kick starts a new one.
 */
int lt_writer_pause(void)
{
	int expected = 1;
	if (!__atomic_compare_exchange_n(&W.writer_state, &expected, 3, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return 0;
	__atomic_fetch_add(&W.wake, 1, __ATOMIC_RELEASE);
	lt_futex(&W.wake, FUTEX_WAKE, 1, NULL);
	if (lt_join_helper(W.writer) != 0)
		return -1; /* still there: stays "stopping", threads drain their own rings */
	__atomic_store_n(&W.writer_state, 0, __ATOMIC_RELEASE);
	return 0;
}

int lt_join_helper(pthread_t th)
{
	static int (*timedjoin)(pthread_t, void **, const struct timespec *);
	if (!timedjoin)
		timedjoin = lt_dlsym_next("pthread_timedjoin_np", NULL);
	struct timespec until;
	lt_clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	return timedjoin ? timedjoin(th, NULL, &until) : -1;
}

void lt_writer_stop(void)
{
	int expected = 1;
	if (__atomic_compare_exchange_n(&W.writer_state, &expected, 3, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED)) {
		__atomic_fetch_add(&W.wake, 1, __ATOMIC_RELEASE);
		lt_futex(&W.wake, FUTEX_WAKE, 1, NULL);
	}
}
