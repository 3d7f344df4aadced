// SPDX-License-Identifier: BSD-3-Clause
/*
 * task.c - module gomp's tasks: creation, dependences, taskloops, taskwait and taskgroups
 * (gomp.c says how the module works).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "private.h"

/* ---- tasks ---- */

#define TASK_FLAG_UNTIED (1u << 0)
#define TASK_FLAG_DEPEND (1u << 3)
#define TASK_FLAG_DETACH (1u << 13)

/*
 * Our argument block: this header, then the program's block at `off`.  libgomp writes a
 * detach event into word 0 of the block it was given, and a taskloop's bounds into the
 * first two words of each task's copy: w[0] and w[1] receive them, the trampoline and the
 * copy function hand them on.
 */
struct task_hdr {
	uint64_t w[2];
	void (*fn)(void *);
	void (*cpyfn)(void *, void *);
	void *data; /* the program's block (valid during the call that creates the task) */
	long off, size;
	uint64_t id;
	unsigned flags;
	int taskloop;
};

static void task_trampoline(void *arg)
{
	struct task_hdr *h = arg;
	char *user = (char *)arg + h->off;
	if (h->taskloop)
		memcpy(user, h->w, sizeof(h->w));
	struct lt_thread *t = lt_begin(LT_MOD_OMP);
	if (!t) {
		h->fn(user);
		return;
	}
	unsigned f = h->flags & TASK_FLAG_UNTIED ? LT_OMP_F_UNTIED : 0;
	lt_omp_emit(t, LT_REC_OMP_TASK_BEGIN, 0, f, 2, h->id, (uintptr_t)h->fn);
	lt_finish(t);
	uint64_t id = h->id;
	h->fn(user);
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_TASK_END, 0, f, 1, id, 0);
		lt_finish(t);
	}
}

/* libgomp copies the block through here, on the creating thread, while `data` is valid. */
static void task_copy(void *dst, void *src)
{
	struct task_hdr *h = dst;
	const struct task_hdr *s = src;
	*h = *s;
	char *user = (char *)dst + s->off;
	if (s->cpyfn)
		s->cpyfn(user, s->data);
	else
		memcpy(user, s->data, (size_t)s->size);
	if ((s->flags & TASK_FLAG_DETACH) && s->w[0])
		memcpy(user, &s->w[0], sizeof(s->w[0]));
	if (s->taskloop) { /* one copy per task: each is a task of its own */
		struct lt_thread *t = lt_begin(LT_MOD_OMP);
		if (t) {
			h->id = lt_thread_id(t);
			lt_omp_emit(t, LT_REC_OMP_ENTER, LT_OMP_task_create, 0, 2, h->id,
				    (uintptr_t)s->fn);
			lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_task_create, 0, 0, 0, 0);
			lt_finish(t);
		}
	}
}

static long task_off(long align)
{
	long a = align > 8 ? align : 8;
	return (long)((sizeof(struct task_hdr) + (size_t)a - 1) / (size_t)a * (size_t)a);
}

/* gcc's depend array: [n, nout, addr...] or, from OpenMP 5.0, [0, n, nout, nmutex, nin,
 * addr...] where the rest are depend objects. */
static void task_deps(struct lt_thread *t, uint64_t id, void **depend)
{
	uintptr_t n = (uintptr_t)depend[0], nout, nmutex = 0, nin, first = 2;
	if (n) {
		nout = (uintptr_t)depend[1];
		nin = n - nout;
	} else {
		n = (uintptr_t)depend[1];
		nout = (uintptr_t)depend[2];
		nmutex = (uintptr_t)depend[3];
		nin = (uintptr_t)depend[4];
		first = 5;
	}
	for (uintptr_t i = 0; i < n && i < 4096; i++) {
		unsigned kind = i < nout		  ? LT_OMP_DEP_INOUT
				: i < nout + nmutex	  ? LT_OMP_DEP_MUTEXINOUTSET
				: i < nout + nmutex + nin ? LT_OMP_DEP_IN
							  : LT_OMP_DEP_DEPOBJ;
		lt_omp_emit(t, LT_REC_OMP_TASK_DEP, 0, kind, 2, id, (uintptr_t)depend[first + i]);
	}
}

static void (*real_GOMP_task)(void (*)(void *), void *, void (*)(void *, void *), long, long, bool,
			      unsigned, void **, int, void *);
LT_EXPORT void GOMP_task(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),
			 long arg_size, long arg_align, bool if_clause, unsigned flags,
			 void **depend, int priority, void *detach)
{
	LT_RESOLVE_BY(GOMP_task, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags,
				      depend, priority, detach);
	long off = task_off(arg_align);
	struct task_hdr h = {{0, 0}, fn, cpyfn, data, off, arg_size, lt_thread_id(t), flags, 0};
	OMP_ENTER_CS(t, LT_OMP_task_create,
		     (if_clause ? 0 : LT_OMP_F_UNDEFERRED) |
			 (flags & TASK_FLAG_UNTIED ? LT_OMP_F_UNTIED : 0),
		     2, h.id, (uintptr_t)fn);
	if ((flags & TASK_FLAG_DEPEND) && depend)
		task_deps(t, h.id, depend);
	lt_finish(t);
	real_GOMP_task(task_trampoline, &h, task_copy, off + arg_size,
		       arg_align > 8 ? arg_align : 8, if_clause, flags, depend, priority, detach);
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_task_create, 0, 0, 0, 0);
		lt_finish(t);
	}
}

#define TASKLOOP(name, type)                                                                       \
	static void (*real_##name)(void (*)(void *), void *, void (*)(void *, void *), long, long, \
				   unsigned, unsigned long, int, type, type, type);                \
	LT_EXPORT void name(void (*fn)(void *), void *data, void (*cpyfn)(void *, void *),         \
			    long arg_size, long arg_align, unsigned flags,                         \
			    unsigned long num_tasks, int priority, type start, type end,           \
			    type step)                                                             \
	{                                                                                          \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                                  \
		struct lt_thread *t = omp_begin();                                                 \
		if (!t || arg_size < (long)(2 * sizeof(type)))                                     \
			goto plain;                                                                \
		long off = task_off(arg_align);                                                    \
		struct task_hdr h = {{0, 0}, fn, cpyfn, data, off, arg_size, 0, flags, 1};         \
		OMP_ENTER_CS(t, LT_OMP_taskloop, 0, 1, 0, (uintptr_t)fn);                          \
		lt_finish(t);                                                                      \
		real_##name(task_trampoline, &h, task_copy, off + arg_size,                        \
			    arg_align > 8 ? arg_align : 8, flags, num_tasks, priority, start, end, \
			    step);                                                                 \
		if (lt_resume(t)) {                                                                \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_taskloop, 0, 0, 0, 0);             \
			lt_finish(t);                                                              \
		}                                                                                  \
		return;                                                                            \
	plain:                                                                                     \
		if (t)                                                                             \
			lt_finish(t);                                                              \
		real_##name(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority,      \
			    start, end, step);                                                     \
	}
TASKLOOP(GOMP_taskloop, long)
TASKLOOP(GOMP_taskloop_ull, unsigned long long)

static void (*real_GOMP_taskwait_depend)(void **);
LT_EXPORT void GOMP_taskwait_depend(void **depend)
{
	LT_RESOLVE_BY(GOMP_taskwait_depend, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_taskwait_depend(depend);
	OMP_ENTER_CS(t, LT_OMP_taskwait, 0, 0, 0, 0);
	lt_finish(t);
	real_GOMP_taskwait_depend(depend);
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_taskwait, 0, 0, 0, 0);
		lt_finish(t);
	}
}

/* A taskgroup is a region from its start to the return of its end (which waits). */
static void (*real_GOMP_taskgroup_start)(void);
LT_EXPORT void GOMP_taskgroup_start(void)
{
	LT_RESOLVE_BY(GOMP_taskgroup_start, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (t) {
		OMP_ENTER_CS(t, LT_OMP_taskgroup, 0, 0, 0, 0);
		lt_finish(t);
	}
	real_GOMP_taskgroup_start();
}

static void (*real_GOMP_taskgroup_end)(void);
LT_EXPORT void GOMP_taskgroup_end(void)
{
	LT_RESOLVE_BY(GOMP_taskgroup_end, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_taskgroup_end();
	lt_finish(t);
	real_GOMP_taskgroup_end();
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_taskgroup, 0, 0, 0, 0);
		lt_finish(t);
	}
}
