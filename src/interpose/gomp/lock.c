// SPDX-License-Identifier: BSD-3-Clause
/*
 * lock.c - module gomp's mutual exclusion: critical, atomic and ordered sections, and the
 * omp_*_lock API (gomp.c says how the module works).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "private.h"

/* ---- mutual exclusion: enter (wait), acquired, leave (release, stamped before) ---- */

static char unnamed_critical, atomic_lock; /* the lock objects of the unnamed ones */

#define ACQUIRE(name, params, args, c, obj)                                                \
	static void(*real_##name) params;                                                  \
	LT_EXPORT void name params                                                         \
	{                                                                                  \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                          \
		struct lt_thread *t = omp_begin();                                         \
		if (!t)                                                                    \
			return real_##name args;                                           \
		OMP_ENTER_CS(t, c, 0, 1, (uintptr_t)(obj), 0);                             \
		lt_finish(t);                                                              \
		real_##name args;                                                          \
		if (lt_resume(t)) {                                                        \
			lt_omp_emit(t, LT_REC_OMP_ACQUIRED, c, 0, 1, (uintptr_t)(obj), 0); \
			lt_finish(t);                                                      \
		}                                                                          \
	}
#define RELEASE(name, params, args, c, obj)                                     \
	static void(*real_##name) params;                                       \
	LT_EXPORT void name params                                              \
	{                                                                       \
		LT_RESOLVE_BY(name, lt_gomp_sym);                               \
		struct lt_thread *t = omp_begin();                              \
		if (!t)                                                         \
			return real_##name args;                                \
		lt_omp_emit(t, LT_REC_OMP_LEAVE, c, 0, 1, (uintptr_t)(obj), 0); \
		lt_finish(t);                                                   \
		real_##name args;                                               \
	}
ACQUIRE(GOMP_critical_start, (void), (), LT_OMP_critical, &unnamed_critical)
RELEASE(GOMP_critical_end, (void), (), LT_OMP_critical, &unnamed_critical)
ACQUIRE(GOMP_critical_name_start, (void **pptr), (pptr), LT_OMP_critical, pptr)
RELEASE(GOMP_critical_name_end, (void **pptr), (pptr), LT_OMP_critical, pptr)
ACQUIRE(GOMP_atomic_start, (void), (), LT_OMP_atomic, &atomic_lock)
RELEASE(GOMP_atomic_end, (void), (), LT_OMP_atomic, &atomic_lock)
ACQUIRE(GOMP_ordered_start, (void), (), LT_OMP_ordered, 0)
RELEASE(GOMP_ordered_end, (void), (), LT_OMP_ordered, 0)

/* The lock API (libgomp's and any other runtime's: with OMPT, the runtime reports them). */
typedef struct omp_lock_s omp_lock_t;
typedef struct omp_nest_lock_s omp_nest_lock_t;
ACQUIRE(omp_set_lock, (omp_lock_t * l), (l), LT_OMP_set_lock, l)
ACQUIRE(omp_set_nest_lock, (omp_nest_lock_t * l), (l), LT_OMP_set_nest_lock, l)
RELEASE(omp_unset_lock, (omp_lock_t * l), (l), LT_OMP_unset_lock, l)
RELEASE(omp_unset_nest_lock, (omp_nest_lock_t * l), (l), LT_OMP_unset_nest_lock, l)

#define TEST(name, type, c)                                                                    \
	static int (*real_##name)(type *);                                                     \
	LT_EXPORT int name(type *l)                                                            \
	{                                                                                      \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                              \
		struct lt_thread *t = omp_begin();                                             \
		if (!t && lt_claimed(LT_MOD_OMP)) {                                            \
			lt_in_try = 1;                                                         \
			int r = real_##name(l);                                                \
			lt_in_try = 0;                                                         \
			return r;                                                              \
		}                                                                              \
		if (!t)                                                                        \
			return real_##name(l);                                                 \
		OMP_ENTER_CS(t, c, 0, 1, (uintptr_t)l, 0);                                     \
		lt_finish(t);                                                                  \
		int ret = real_##name(l);                                                      \
		if (lt_resume(t)) {                                                            \
			if (ret)                                                               \
				lt_omp_emit(t, LT_REC_OMP_ACQUIRED, c, 0, 1, (uintptr_t)l, 0); \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, c, (uint32_t)ret, 0, 0, 0);           \
			lt_finish(t);                                                          \
		}                                                                              \
		return ret;                                                                    \
	}
TEST(omp_test_lock, omp_lock_t, LT_OMP_test_lock)
TEST(omp_test_nest_lock, omp_nest_lock_t, LT_OMP_test_nest_lock)
