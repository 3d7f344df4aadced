// SPDX-License-Identifier: BSD-3-Clause
/*
 * pthread.c - the pthread module: thread lifetime (create, join, exit, names) and the
 * synchronisation primitives (mutexes, rwlocks, condition variables, barriers, semaphores).
 *
 * Every wrapper: resolve the real function once, lt_begin(), record CALL_ENTER, drop the
 * guard for the real call, lt_resume(), record CALL_LEAVE.  With the module off, a wrapper
 * costs a load and a branch on top of the indirect call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "../core/module.h"
#include "../common/modules.h"

/*
 * WRAP(name, version, params, args, before, after) defines the wrapper of int name(params):
 * `before` is recorded, the real function runs without the guard, `after` is recorded
 * (ret holds the result).  The exported function only decides, and every way out of it is
 * a tail call: to the recording half (traced_), to the real function (module off), or to
 * slow_ (before init, a thread not registered yet, the real function not resolved yet, the
 * tracer's own calls).  So the untraced path saves no registers and ends in a jump.
 */
#define WRAP(name, version, params, args, before, after)                                           \
	static __typeof__(&name) real_##name;                                                      \
	static __attribute__((noinline)) int traced_##name(struct lt_thread *t, LT_UNPAREN params) \
	{                                                                                          \
		LT_RESOLVE(name, version);                                                         \
		TRACED_CALL(name, args, before, after);                                            \
	}                                                                                          \
	WRAP_ENTRY(name, version, params, args)

/* The recording half's body: `before`, the real call without the guard, `after`. */
#define TRACED_CALL(name, args, before, after) \
	do {                                   \
		before;                        \
		lt_finish(t);                  \
		int ret = real_##name args;    \
		if (lt_resume(t)) {            \
			after;                 \
			lt_finish(t);          \
		}                              \
		return ret;                    \
	} while (0)

/* The exported function and its slow half, around traced_##name. */
#define WRAP_ENTRY(name, version, params, args)                                             \
	static __attribute__((noinline)) int slow_##name(void *ra, LT_UNPAREN params)       \
	{                                                                                   \
		LT_RESOLVE(name, version);                                                  \
		struct lt_thread *t = lt_begin_slow(LT_MOD_PTHREAD);                        \
		if (t) {                                                                    \
			t->cs_ra = (uint64_t)(uintptr_t)ra;                                 \
			t->cs_fp = 0;                                                       \
			return traced_##name(t, LT_UNPAREN args);                           \
		}                                                                           \
		return real_##name args;                                                    \
	}                                                                                   \
	LT_EXPORT int name params                                                           \
	{                                                                                   \
		unsigned active = lt_active;                                                \
		if (likely(active & LT_MOD_PTHREAD)) {                                      \
			struct lt_thread *t = lt_self;                                      \
			if (likely(t && !t->guard)) {                                       \
				lt_guard_take(t);                                           \
				LT_NOTE_CALLER(t);                                          \
				return traced_##name(t, LT_UNPAREN args);                   \
			}                                                                   \
		} else if (likely(active && real_##name)) {                                 \
			return real_##name args; /* module off: one load, three branches */ \
		}                                                                           \
		return slow_##name(__builtin_return_address(0), LT_UNPAREN args);           \
	}

/* A call that may block, on one object: CALL_ENTER(obj) ... CALL_LEAVE(result), each
 * with the PAPI reading when the module's regions carry them. */
#define WRAP_OBJ(name, version, params, args, obj)                                     \
	WRAP(name, version, params, args,                                              \
	     (lt_counters(t, LT_MOD_PTHREAD), lt_call_enter_cs(t, LT_FN_##name, obj)), \
	     (lt_counters(t, LT_MOD_PTHREAD), lt_call_leave(t, LT_FN_##name, ret)))

/*
 * pthread_mutex_lock on a plain mutex (normal, recursive, error-checking or adaptive; not
 * robust, priority-inheriting or -protecting, process-shared or marked for elision: glibc's
 * kind word says) first calls the real trylock, which is exactly what glibc's lock does
 * first for these kinds (one compare-and-exchange of the lock word; the owner check of a
 * recursive or error-checking mutex).  Taken at once, the lock did not block: one CALL
 * record, stamped at return as a successful try (an uncontended lock+unlock pair is two
 * records instead of three).  Busy: CALL_ENTER, the real lock, CALL_LEAVE, as for any
 * call that may block, so a trace shows exactly which acquisitions waited.  Any other
 * mutex, and every lock while PAPI readings go with the module's calls (they belong to an
 * enter and a leave), takes the real lock only.
 */
static int mutex_plain(const pthread_mutex_t *m)
{
	return (__atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED) & ~3) == 0;
}

#define WRAP_LOCK(name, try, plain, version, params, args, obj)                                    \
	static __typeof__(&name) real_##name;                                                      \
	static __attribute__((noinline)) int traced_##name(struct lt_thread *t, LT_UNPAREN params) \
	{                                                                                          \
		LT_RESOLVE(name, version);                                                         \
		LT_RESOLVE(try, version);                                                          \
		if (likely(!(lt_counter_modules & LT_MOD_PTHREAD) && plain)) {                     \
			lt_finish(t);                                                              \
			int ret = real_##try args;                                                 \
			if (ret != EBUSY) {                                                        \
				if (lt_resume(t)) {                                                \
					lt_call_instant(t, LT_FN_##name, obj, ret);                \
					lt_finish(t);                                              \
				}                                                                  \
				return ret;                                                        \
			}                                                                          \
			if (!lt_resume(t))                                                         \
				return real_##name args;                                           \
		}                                                                                  \
		TRACED_CALL(                                                                       \
		    name, args,                                                                    \
		    (lt_counters(t, LT_MOD_PTHREAD), lt_call_enter_cs(t, LT_FN_##name, obj)),      \
		    (lt_counters(t, LT_MOD_PTHREAD), lt_call_leave(t, LT_FN_##name, ret)));        \
	}                                                                                          \
	WRAP_ENTRY(name, version, params, args)

/* A call that never blocks but may acquire (try*): one CALL record, stamped at return. */
#define WRAP_TRY(name, version, params, args, obj) \
	WRAP(name, version, params, args, (void)0, lt_call_instant(t, LT_FN_##name, obj, ret))

/* A release (unlock, post, signal): one CALL record, stamped before the real call. */
#define WRAP_RELEASE(name, version, params, args, obj)                          \
	WRAP(name, version, params, args, struct lt_mark mark = lt_mark_now(t), \
	     lt_call_release(t, mark, LT_FN_##name, obj, ret))

/* A condition wait: CALL_ENTER carries the condition and the mutex. */
#define WRAP_COND_WAIT(name, version, params, args)                                   \
	WRAP(name, version, params, args,                                             \
	     (lt_counters(t, LT_MOD_PTHREAD), lt_call_enter2(t, LT_FN_##name, c, m)), \
	     (lt_counters(t, LT_MOD_PTHREAD), lt_call_leave(t, LT_FN_##name, ret)))

WRAP_TRY(pthread_mutex_trylock, NULL, (pthread_mutex_t * m), (m), m)
WRAP_LOCK(pthread_mutex_lock, pthread_mutex_trylock, mutex_plain(m), NULL, (pthread_mutex_t * m),
	  (m), m)
WRAP_OBJ(pthread_mutex_timedlock, NULL,
	 (pthread_mutex_t *restrict m, const struct timespec *restrict ts), (m, ts), m)
WRAP_OBJ(pthread_mutex_clocklock, NULL,
	 (pthread_mutex_t *restrict m, clockid_t clk, const struct timespec *restrict ts),
	 (m, clk, ts), m)
WRAP_RELEASE(pthread_mutex_unlock, NULL, (pthread_mutex_t * m), (m), m)

WRAP_OBJ(pthread_rwlock_rdlock, NULL, (pthread_rwlock_t * l), (l), l)
WRAP_TRY(pthread_rwlock_tryrdlock, NULL, (pthread_rwlock_t * l), (l), l)
WRAP_OBJ(pthread_rwlock_timedrdlock, NULL,
	 (pthread_rwlock_t *restrict l, const struct timespec *restrict ts), (l, ts), l)
WRAP_OBJ(pthread_rwlock_wrlock, NULL, (pthread_rwlock_t * l), (l), l)
WRAP_TRY(pthread_rwlock_trywrlock, NULL, (pthread_rwlock_t * l), (l), l)
WRAP_OBJ(pthread_rwlock_timedwrlock, NULL,
	 (pthread_rwlock_t *restrict l, const struct timespec *restrict ts), (l, ts), l)
WRAP_OBJ(pthread_rwlock_clockrdlock, NULL,
	 (pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict ts),
	 (l, clk, ts), l)
WRAP_OBJ(pthread_rwlock_clockwrlock, NULL,
	 (pthread_rwlock_t *restrict l, clockid_t clk, const struct timespec *restrict ts),
	 (l, clk, ts), l)
WRAP_RELEASE(pthread_rwlock_unlock, NULL, (pthread_rwlock_t * l), (l), l)

/* The condition functions have two versions in glibc; the new one is GLIBC_2.3.2. */
WRAP_COND_WAIT(pthread_cond_wait, "GLIBC_2.3.2",
	       (pthread_cond_t *restrict c, pthread_mutex_t *restrict m), (c, m))
WRAP_COND_WAIT(pthread_cond_timedwait, "GLIBC_2.3.2",
	       (pthread_cond_t *restrict c, pthread_mutex_t *restrict m,
		const struct timespec *restrict ts),
	       (c, m, ts))
WRAP_COND_WAIT(pthread_cond_clockwait, NULL,
	       (pthread_cond_t *restrict c, pthread_mutex_t *restrict m, clockid_t clk,
		const struct timespec *restrict ts),
	       (c, m, clk, ts))
WRAP_RELEASE(pthread_cond_signal, "GLIBC_2.3.2", (pthread_cond_t * c), (c), c)
WRAP_RELEASE(pthread_cond_broadcast, "GLIBC_2.3.2", (pthread_cond_t * c), (c), c)

WRAP_OBJ(pthread_barrier_wait, NULL, (pthread_barrier_t * b), (b), b)

WRAP_OBJ(sem_wait, NULL, (sem_t * s), (s), s)
WRAP_OBJ(sem_timedwait, NULL, (sem_t *restrict s, const struct timespec *restrict ts), (s, ts), s)
WRAP_OBJ(sem_clockwait, NULL,
	 (sem_t *restrict s, clockid_t clk, const struct timespec *restrict ts), (s, clk, ts), s)
WRAP_TRY(sem_trywait, NULL, (sem_t * s), (s), s)
WRAP_RELEASE(sem_post, NULL, (sem_t * s), (s), s)

/* Thread lifetime. */

struct start {
	void *(*fn)(void *);
	void *arg;
	uint32_t index;
	uint32_t parent;
	sigset_t mask; /* the signal mask the thread would have started with */
};

/*
 * What a new thread is told (struct start) comes from a pool of the tracer's, not from
 * malloc: freed by the new thread, a heap block would be that thread's first use of the
 * allocator, which gives it an arena of its own (64 MiB of address space each, up to 8 per
 * CPU): under `ulimit -v` a program would get a fraction of its threads.  A bit per entry,
 * taken and given back with atomic operations (signal-safe); malloc when all are taken.
 */
#define STARTS 1024
static struct start starts[STARTS];
static uint64_t starts_used[STARTS / 64];

static struct start *start_get(void)
{
	for (unsigned w = 0; w < STARTS / 64; w++) {
		uint64_t v = __atomic_load_n(&starts_used[w], __ATOMIC_RELAXED);
		while (~v) {
			unsigned b = (unsigned)__builtin_ctzll(~v);
			if (__atomic_compare_exchange_n(&starts_used[w], &v, v | 1ull << b, 0,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return &starts[w * 64 + b];
		}
	}
	return malloc(sizeof(struct start));
}

static void start_put(struct start *s)
{
	size_t i = (size_t)(s - starts);
	if (s >= starts && i < STARTS)
		__atomic_fetch_and(&starts_used[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
	else
		free(s);
}

/* A thread the MPI library starts inside a traced call: nothing it does is traced. */
struct quiet {
	void *(*fn)(void *);
	void *arg;
};

static void *quiet_trampoline(void *p)
{
	struct quiet q = *(struct quiet *)p;
	free(p);
	lt_tls_guard = 1;
	lt_in_runtime = 1; /* and the threads it starts are the library's too */
	return q.fn(q.arg);
}

static __typeof__(&pthread_create) real_pthread_create;

static int create_quiet(pthread_t *restrict th, const pthread_attr_t *restrict attr,
			void *(*fn)(void *), void *restrict arg)
{
	struct quiet *q = malloc(sizeof(*q));
	if (!q)
		return real_pthread_create(th, attr, fn, arg);
	q->fn = fn;
	q->arg = arg;
	int ret = real_pthread_create(th, attr, quiet_trampoline, q);
	if (ret)
		free(q);
	return ret;
}

static void *start_trampoline(void *p)
{
	struct start s = *(struct start *)p;
	start_put(p);
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON && !lt_tls_guard &&
	    (lt_active & LT_MOD_PTHREAD) && !lt_self) {
		lt_tls_guard++;
		lt_thread_register(s.index, s.parent, (uintptr_t)s.fn);
		lt_tls_guard--;
	}
	/* Registered: the signals held back since the thread began are delivered now. */
	pthread_sigmask(SIG_SETMASK, &s.mask, NULL);
	void *ret = s.fn(s.arg);
	lt_vfork_settle(); /* the thread vforked and made no traced call since */
	struct lt_thread *t = lt_self;
	if (t && !t->guard) {
		lt_guard_take(t);
		lt_thread_end(t);
	}
	return ret;
}

LT_EXPORT int pthread_create(pthread_t *restrict th, const pthread_attr_t *restrict attr,
			     void *(*fn)(void *), void *restrict arg)
{
	LT_RESOLVE(pthread_create, NULL);
	lt_process_threaded(); /* a load and a branch after the first time */
	struct lt_thread *t = lt_begin(LT_MOD_PTHREAD);
	if (!t)
		return lt_in_runtime ? create_quiet(th, attr, fn, arg)
				     : real_pthread_create(th, attr, fn, arg);
	struct start *s = start_get();
	if (!s) {
		lt_finish(t);
		return real_pthread_create(th, attr, fn, arg);
	}
	s->fn = fn;
	s->arg = arg;
	s->index = lt_thread_new_index();
	s->parent = t->index;
	LT_NOTE_CALLER(t);
	lt_call_enter_n(t, LT_FN_pthread_create, 0, 0, 0);
	/* Before the real call, so that the creation precedes the child's begin in time; a
	 * failed creation is recognised by the non-zero result of CALL_LEAVE. */
	lt_emit0(t, LT_REC_THREAD_CREATE, 0, s->index);
	uint32_t index = s->index;
	lt_finish(t);
	/*
	 * The thread starts with every signal blocked and unblocks them once registered.  A
	 * handler run before that (between the thread's first instruction and the trampoline)
	 * would find no state and register the thread itself, calling malloc in a signal
	 * handler that may have interrupted malloc: a deadlock.  Blocked, the signal waits
	 * the few microseconds until the thread's own mask is back, as if it came then.
	 */
	sigset_t all, mine;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &mine);
	s->mask = mine;
	sigset_t attr_mask;
	if (attr && pthread_attr_getsigmask_np(attr, &attr_mask) == 0)
		s->mask = attr_mask; /* the thread was to start with this mask instead */
	int ret = real_pthread_create(th, attr, start_trampoline, s); /* s is the thread's now */
	if (ret == EAGAIN && lt_helpers_pause_for_program()) {
		/* Under `ulimit -u` the tracer's helpers took threads the program is allowed:
		 * they step aside (and come back only if they can), the program's thread goes
		 * first.  A joined thread still counts for a moment, until the kernel has
		 * released it: a few tries, a millisecond apart. */
		for (int tries = 0; ret == EAGAIN && tries < 20; tries++) {
			if (tries)
				nanosleep(&(struct timespec){0, 1000000}, NULL);
			ret = real_pthread_create(th, attr, start_trampoline, s);
		}
	}
	int saved = errno;
	pthread_sigmask(SIG_SETMASK, &mine, NULL);
	if (ret != 0) {
		start_put(s);
	} else {
		int detached = 0;
		if (attr)
			pthread_attr_getdetachstate(attr, &detached);
		if (detached != PTHREAD_CREATE_DETACHED)
			lt_thread_map_put((unsigned long)*th, index);
	}
	if (lt_resume(t)) {
		lt_call_leave(t, LT_FN_pthread_create, ret);
		lt_finish(t);
	}
	errno = saved;
	return ret;
}

/* The join family: CALL_ENTER names the awaited thread, THREAD_WAIT follows a success. */
#define WRAP_JOIN(name, params, args)                                      \
	static __typeof__(&name) real_##name;                              \
	LT_EXPORT int name params                                          \
	{                                                                  \
		LT_RESOLVE(name, NULL);                                    \
		struct lt_thread *t = lt_begin(LT_MOD_PTHREAD);            \
		if (!t)                                                    \
			return real_##name args;                           \
		LT_NOTE_CALLER(t);                                         \
		uint32_t index = lt_thread_map_get((unsigned long)th, 0);  \
		lt_call_enter_n(t, LT_FN_##name, 1, index, 0);             \
		lt_finish(t);                                              \
		int rc = real_##name args;                                 \
		if (rc == 0)                                               \
			lt_thread_map_get((unsigned long)th, 1);           \
		if (lt_resume(t)) {                                        \
			if (rc == 0 && index != LT_NO_THREAD)              \
				lt_emit0(t, LT_REC_THREAD_WAIT, 0, index); \
			lt_call_leave(t, LT_FN_##name, rc);                \
			lt_finish(t);                                      \
		}                                                          \
		return rc;                                                 \
	}

WRAP_JOIN(pthread_join, (pthread_t th, void **res), (th, res))
WRAP_JOIN(pthread_tryjoin_np, (pthread_t th, void **res), (th, res))
WRAP_JOIN(pthread_timedjoin_np, (pthread_t th, void **res, const struct timespec *ts),
	  (th, res, ts))
WRAP_JOIN(pthread_clockjoin_np,
	  (pthread_t th, void **res, clockid_t clk, const struct timespec *ts), (th, res, clk, ts))

static __typeof__(&pthread_detach) real_pthread_detach;

LT_EXPORT int pthread_detach(pthread_t th)
{
	LT_RESOLVE(pthread_detach, NULL);
	int ret = real_pthread_detach(th);
	if (ret == 0 && __atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON)
		lt_thread_map_get((unsigned long)th, 1); /* nobody will join it */
	return ret;
}

static __typeof__(&pthread_exit) real_pthread_exit;

LT_EXPORT void pthread_exit(void *ret)
{
	LT_RESOLVE(pthread_exit, NULL);
	struct lt_thread *t = lt_begin(LT_MOD_PTHREAD);
	if (t) {
		lt_call_enter0(t, LT_FN_pthread_exit);
		lt_thread_end(t); /* t is given back */
	}
	real_pthread_exit(ret);
}

static __typeof__(&pthread_setname_np) real_pthread_setname_np;

LT_EXPORT int pthread_setname_np(pthread_t th, const char *name)
{
	LT_RESOLVE(pthread_setname_np, NULL);
	int ret = real_pthread_setname_np(th, name);
	struct lt_thread *t;
	if (ret == 0 && (t = lt_begin(LT_MOD_PTHREAD))) {
		int saved = errno;
		uint32_t index = pthread_equal(th, pthread_self())
				     ? t->index
				     : lt_thread_map_get((unsigned long)th, 0);
		if (index != LT_NO_THREAD)
			lt_emit1(t, LT_REC_THREAD_NAME, 0, lt_string_id(t, name), index);
		lt_finish(t);
		errno = saved;
	}
	return ret;
}

LT_MODULE(pthread) = {.name = "pthread", .bit = LT_MOD_PTHREAD, .order = 10};
