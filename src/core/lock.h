/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lock.h - the runtime's own lock: a futex mutex (Drepper's three-state design), so that
 * the tracer never goes through the pthread functions it intercepts.  Slow paths only.
 */
#ifndef LIBTRACE_LOCK_H
#define LIBTRACE_LOCK_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct lt_lock {
	uint32_t v; /* 0 free, 1 locked, 2 locked with waiters */
};

#define LT_LOCK_INIT \
	{            \
		0    \
	}

static inline long lt_futex(uint32_t *addr, int op, uint32_t val, const struct timespec *timeout)
{
	return syscall(SYS_futex, (uint32_t *)addr, op | FUTEX_PRIVATE_FLAG, val, timeout, NULL, 0);
}

static inline void lt_lock(struct lt_lock *l)
{
	uint32_t c = 0;
	if (__atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		lt_futex(&l->v, FUTEX_WAIT, 2, NULL);
		c = __atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE);
	}
}

/* Takes the lock when it is free (a signal handler's way): non-zero on success. */
static inline int lt_trylock(struct lt_lock *l)
{
	uint32_t c = 0;
	return __atomic_compare_exchange_n(&l->v, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void lt_unlock(struct lt_lock *l)
{
	if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		lt_futex(&l->v, FUTEX_WAKE, 1, NULL);
}

#endif /* LIBTRACE_LOCK_H */
