// SPDX-License-Identifier: BSD-3-Clause
/*
 * gomp.c - OpenMP with GCC: the GOMP_* entry points gcc 12 emits, and the omp_*_lock API.
 *
 * libgomp has no OMPT, so its constructs are seen where the compiled code calls into it.
 * A parallel region's outlined function is replaced by a trampoline that records the team
 * member's begin and end on its own thread; a task's function likewise, with our own copy
 * function so that libgomp copies the task's arguments through our code on every path.
 *
 * When an OMPT runtime started our tool (libomp, which also exports GOMP_* for gcc-built
 * code), the wrappers only forward: the runtime reports the same constructs through OMPT.
 *
 * This file: the runtime's functions, parallel regions and worksharing; lock.c: mutual
 * exclusion and the lock API; task.c: tasks (private.h is what they share).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "private.h"

/*
 * The runtime's function `name`.  Usually the next definition after ours; but a library
 * loaded with RTLD_LOCAL (a Python extension module linked with libgomp) has its OpenMP
 * runtime out of the global scope, where RTLD_NEXT does not look, while its calls still
 * reach our preloaded wrappers: then the runtime loaded privately is asked by name.
 */
__attribute__((noinline)) void *lt_gomp_sym(const char *name)
{
	static const char *const runtimes[] = {"libgomp.so.1", "libomp.so.5", "libomp.so",
					       "libiomp5.so", NULL};
	void *p = lt_dlsym_runtime(name, runtimes);
	if (!p)
		lt_warn("OpenMP: no runtime defines %s", name);
	return p;
}

int lt_gomp_native = -1;

__attribute__((noinline)) int lt_gomp_detect(void)
{
	void *fn = lt_gomp_sym("GOMP_parallel");
	Dl_info info;
	int native =
	    fn && dladdr(fn, &info) && info.dli_fname && strstr(info.dli_fname, "libgomp") != NULL;
	lt_debug("OpenMP: %s", native ? "libgomp, through GOMP_* interposition"
				      : "another runtime's GOMP layer: left to OMPT");
	return native;
}

static int (*real_omp_get_thread_num)(void);
static int (*real_omp_get_num_threads)(void);
static int (*real_omp_get_max_threads)(void);

/* The threads a fork asks for: its num_threads clause, else the default for the next team
 * (what the runtime will use, as Score-P records it). */
static unsigned requested(unsigned n)
{
	if (n || !real_omp_get_max_threads)
		return n;
	int max = real_omp_get_max_threads();
	return max > 0 ? (unsigned)max : 0;
}

/* ---- parallel regions ---- */

struct par {
	void (*fn)(void *);
	void *data;
	uint64_t id;
	int construct; /* enum lt_omp opened for every member (combined loop, sections), or -1 */
};

static void par_trampoline(void *arg)
{
	struct par *par = arg;
	struct lt_thread *t = lt_begin(LT_MOD_OMP);
	if (!t) {
		par->fn(par->data);
		return;
	}
	unsigned num = (unsigned)real_omp_get_thread_num();
	unsigned size = (unsigned)real_omp_get_num_threads();
	lt_omp_emit(t, LT_REC_OMP_TEAM_BEGIN, LT_OMP_parallel, num, 2, par->id, size);
	if (par->construct >= 0)
		lt_omp_emit(t, LT_REC_OMP_ENTER, (unsigned)par->construct, 0, 0, 0, 0);
	lt_finish(t);
	par->fn(par->data);
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_TEAM_END, LT_OMP_parallel, num, 1, par->id, 0);
		lt_finish(t);
	}
}

/* Forks a team running fn through the trampoline: `call` is the real call, with the
 * trampoline and &par in place of fn and data. */
#define PARALLEL(t, fn, data, nthreads, constr, call)                                              \
	do {                                                                                       \
		if (unlikely(!real_omp_get_thread_num)) {                                          \
			real_omp_get_thread_num = lt_gomp_sym("omp_get_thread_num");               \
			real_omp_get_num_threads = lt_gomp_sym("omp_get_num_threads");             \
			real_omp_get_max_threads = lt_gomp_sym("omp_get_max_threads");             \
		}                                                                                  \
		struct par par = {fn, data, lt_thread_id(t), constr};                              \
		if (!real_omp_get_thread_num || !real_omp_get_num_threads) {                       \
			lt_finish(t);                                                              \
			par.fn = NULL;                                                             \
		} else {                                                                           \
			LT_NOTE_CALLER(t);                                                         \
			lt_omp_emit_cs(t, LT_REC_OMP_FORK, LT_OMP_parallel, requested(nthreads),   \
				       2, par.id, (uint64_t)(uintptr_t)(fn));                      \
			lt_finish(t);                                                              \
		}                                                                                  \
		if (!par.fn) {                                                                     \
			void (*tramp)(void *) = fn;                                                \
			void *arg = data;                                                          \
			call;                                                                      \
		} else {                                                                           \
			void (*tramp)(void *) = par_trampoline;                                    \
			void *arg = &par;                                                          \
			call;                                                                      \
			if (lt_resume(t)) {                                                        \
				lt_omp_emit(t, LT_REC_OMP_JOIN, LT_OMP_parallel, 0, 1, par.id, 0); \
				lt_finish(t);                                                      \
			}                                                                          \
		}                                                                                  \
	} while (0)

static void (*real_GOMP_parallel)(void (*)(void *), void *, unsigned, unsigned);
LT_EXPORT void GOMP_parallel(void (*fn)(void *), void *data, unsigned n, unsigned flags)
{
	LT_RESOLVE_BY(GOMP_parallel, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_parallel(fn, data, n, flags);
	PARALLEL(t, fn, data, n, -1, real_GOMP_parallel(tramp, arg, n, flags));
}

static unsigned (*real_GOMP_parallel_reductions)(void (*)(void *), void *, unsigned, unsigned);
LT_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n,
					    unsigned flags)
{
	LT_RESOLVE_BY(GOMP_parallel_reductions, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_parallel_reductions(fn, data, n, flags);
	unsigned ret = 0;
	PARALLEL(t, fn, data, n, -1, ret = real_GOMP_parallel_reductions(tramp, arg, n, flags));
	return ret;
}

/* Combined parallel loops: every member starts in the loop. */
#define PARALLEL_LOOP(name)                                                                    \
	static void (*real_##name)(void (*)(void *), void *, unsigned, long, long, long, long, \
				   unsigned);                                                  \
	LT_EXPORT void name(void (*fn)(void *), void *data, unsigned n, long start, long end,  \
			    long incr, long chunk, unsigned flags)                             \
	{                                                                                      \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                              \
		struct lt_thread *t = omp_begin();                                             \
		if (!t)                                                                        \
			return real_##name(fn, data, n, start, end, incr, chunk, flags);       \
		PARALLEL(t, fn, data, n, LT_OMP_loop,                                          \
			 real_##name(tramp, arg, n, start, end, incr, chunk, flags));          \
	}
PARALLEL_LOOP(GOMP_parallel_loop_static)
PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_guided)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)

#define PARALLEL_LOOP_RUNTIME(name)                                                           \
	static void (*real_##name)(void (*)(void *), void *, unsigned, long, long, long,      \
				   unsigned);                                                 \
	LT_EXPORT void name(void (*fn)(void *), void *data, unsigned n, long start, long end, \
			    long incr, unsigned flags)                                        \
	{                                                                                     \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                             \
		struct lt_thread *t = omp_begin();                                            \
		if (!t)                                                                       \
			return real_##name(fn, data, n, start, end, incr, flags);             \
		PARALLEL(t, fn, data, n, LT_OMP_loop,                                         \
			 real_##name(tramp, arg, n, start, end, incr, flags));                \
	}
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

static void (*real_GOMP_parallel_sections)(void (*)(void *), void *, unsigned, unsigned, unsigned);
LT_EXPORT void GOMP_parallel_sections(void (*fn)(void *), void *data, unsigned n, unsigned count,
				      unsigned flags)
{
	LT_RESOLVE_BY(GOMP_parallel_sections, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_parallel_sections(fn, data, n, count, flags);
	PARALLEL(t, fn, data, n, LT_OMP_sections,
		 real_GOMP_parallel_sections(tramp, arg, n, count, flags));
}

/* ---- worksharing ---- */

/* A loop's start: ENTER(loop), the real call, the first chunk handed out. */
#define LOOP_START(name, params, args, istart, iend)                             \
	static bool(*real_##name) params;                                        \
	LT_EXPORT bool name params                                               \
	{                                                                        \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                \
		struct lt_thread *t = omp_begin();                               \
		if (!t)                                                          \
			return real_##name args;                                 \
		OMP_ENTER_CS(t, LT_OMP_loop, 0, 0, 0, 0);                        \
		lt_finish(t);                                                    \
		bool ret = real_##name args;                                     \
		if (lt_resume(t)) {                                              \
			lt_omp_emit(t, LT_REC_OMP_CHUNK, LT_OMP_loop, ret, 2,    \
				    ret && (istart) ? (uint64_t) * (istart) : 0, \
				    ret && (iend) ? (uint64_t) * (iend) : 0);    \
			lt_finish(t);                                            \
		}                                                                \
		return ret;                                                      \
	}

#define LOOP_START_L(name)                                                                        \
	LOOP_START(name, (long start, long end, long incr, long chunk, long *istart, long *iend), \
		   (start, end, incr, chunk, istart, iend), istart, iend)
#define LOOP_START_RT(name)                                                           \
	LOOP_START(name, (long start, long end, long incr, long *istart, long *iend), \
		   (start, end, incr, istart, iend), istart, iend)
#define LOOP_START_ULL(name)                                                                       \
	LOOP_START(name,                                                                           \
		   (bool up, unsigned long long start, unsigned long long end,                     \
		    unsigned long long incr, unsigned long long chunk, unsigned long long *istart, \
		    unsigned long long *iend),                                                     \
		   (up, start, end, incr, chunk, istart, iend), istart, iend)
#define LOOP_START_ULL_RT(name)                                                \
	LOOP_START(name,                                                       \
		   (bool up, unsigned long long start, unsigned long long end, \
		    unsigned long long incr, unsigned long long *istart,       \
		    unsigned long long *iend),                                 \
		   (up, start, end, incr, istart, iend), istart, iend)

LOOP_START_L(GOMP_loop_static_start)
LOOP_START_L(GOMP_loop_dynamic_start)
LOOP_START_L(GOMP_loop_guided_start)
LOOP_START_L(GOMP_loop_nonmonotonic_dynamic_start)
LOOP_START_L(GOMP_loop_nonmonotonic_guided_start)
LOOP_START_RT(GOMP_loop_runtime_start)
LOOP_START_RT(GOMP_loop_nonmonotonic_runtime_start)
LOOP_START_RT(GOMP_loop_maybe_nonmonotonic_runtime_start)
LOOP_START_L(GOMP_loop_ordered_static_start)
LOOP_START_L(GOMP_loop_ordered_dynamic_start)
LOOP_START_L(GOMP_loop_ordered_guided_start)
LOOP_START_RT(GOMP_loop_ordered_runtime_start)
LOOP_START_ULL(GOMP_loop_ull_static_start)
LOOP_START_ULL(GOMP_loop_ull_dynamic_start)
LOOP_START_ULL(GOMP_loop_ull_guided_start)
LOOP_START_ULL(GOMP_loop_ull_nonmonotonic_dynamic_start)
LOOP_START_ULL(GOMP_loop_ull_nonmonotonic_guided_start)
LOOP_START_ULL_RT(GOMP_loop_ull_runtime_start)
LOOP_START_ULL_RT(GOMP_loop_ull_nonmonotonic_runtime_start)
LOOP_START_ULL_RT(GOMP_loop_ull_maybe_nonmonotonic_runtime_start)
LOOP_START_ULL(GOMP_loop_ull_ordered_static_start)
LOOP_START_ULL(GOMP_loop_ull_ordered_dynamic_start)
LOOP_START_ULL(GOMP_loop_ull_ordered_guided_start)
LOOP_START_ULL_RT(GOMP_loop_ull_ordered_runtime_start)
/* OpenMP 5.0's generic start (loops with reductions, lastprivate(conditional), scan). */
LOOP_START(GOMP_loop_start,
	   (long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
	    uintptr_t *reductions, void **mem),
	   (start, end, incr, sched, chunk, istart, iend, reductions, mem), istart, iend)
LOOP_START(GOMP_loop_ordered_start,
	   (long start, long end, long incr, long sched, long chunk, long *istart, long *iend,
	    uintptr_t *reductions, void **mem),
	   (start, end, incr, sched, chunk, istart, iend, reductions, mem), istart, iend)

/* The next chunk: one CHUNK record at return (the call itself is short). */
#define LOOP_NEXT(name, type)                                                                \
	static bool (*real_##name)(type *, type *);                                          \
	LT_EXPORT bool name(type *istart, type *iend)                                        \
	{                                                                                    \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                            \
		struct lt_thread *t = omp_begin();                                           \
		if (!t)                                                                      \
			return real_##name(istart, iend);                                    \
		lt_finish(t);                                                                \
		bool ret = real_##name(istart, iend);                                        \
		if (lt_resume(t)) {                                                          \
			lt_omp_emit(t, LT_REC_OMP_CHUNK, LT_OMP_loop, ret, 2,                \
				    ret ? (uint64_t)*istart : 0, ret ? (uint64_t)*iend : 0); \
			lt_finish(t);                                                        \
		}                                                                            \
		return ret;                                                                  \
	}
LOOP_NEXT(GOMP_loop_static_next, long)
LOOP_NEXT(GOMP_loop_dynamic_next, long)
LOOP_NEXT(GOMP_loop_guided_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_dynamic_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_guided_next, long)
LOOP_NEXT(GOMP_loop_runtime_next, long)
LOOP_NEXT(GOMP_loop_nonmonotonic_runtime_next, long)
LOOP_NEXT(GOMP_loop_maybe_nonmonotonic_runtime_next, long)
LOOP_NEXT(GOMP_loop_ordered_static_next, long)
LOOP_NEXT(GOMP_loop_ordered_dynamic_next, long)
LOOP_NEXT(GOMP_loop_ordered_guided_next, long)
LOOP_NEXT(GOMP_loop_ordered_runtime_next, long)
LOOP_NEXT(GOMP_loop_ull_static_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_dynamic_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_guided_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_dynamic_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_guided_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_runtime_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_nonmonotonic_runtime_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_maybe_nonmonotonic_runtime_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_ordered_static_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_ordered_dynamic_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_ordered_guided_next, unsigned long long)
LOOP_NEXT(GOMP_loop_ull_ordered_runtime_next, unsigned long long)

/* The end of a worksharing construct `c`: with the implicit barrier (`barrier`), or not. */
#define WS_END(name, ret_type, c, barrier)                                                     \
	static ret_type (*real_##name)(void);                                                  \
	LT_EXPORT ret_type name(void)                                                          \
	{                                                                                      \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                              \
		struct lt_thread *t = omp_begin();                                             \
		if (!t)                                                                        \
			return real_##name();                                                  \
		if (barrier)                                                                   \
			OMP_ENTER_CS(t, LT_OMP_implicit_barrier, LT_OMP_F_IMPLICIT, 0, 0, 0);  \
		else                                                                           \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, c, 0, 0, 0, 0);                       \
		lt_finish(t);                                                                  \
		WS_DECL_##ret_type ret = 0;                                                    \
		WS_CALL_##ret_type(ret, real_##name());                                        \
		if (barrier && lt_resume(t)) {                                                 \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_implicit_barrier, 0, 0, 0, 0); \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, c, 0, 0, 0, 0);                       \
			lt_finish(t);                                                          \
		}                                                                              \
		WS_RETURN_##ret_type(ret);                                                     \
	}
/* Per return type: the variable holding the result, the call, the return. */
typedef void void_t;
typedef void *ptr_t;
#define WS_DECL_void_t		  int
#define WS_CALL_void_t(ret, call) ((void)(ret), call)
#define WS_RETURN_void_t(ret)	  (void)(ret)
#define WS_DECL_bool		  bool
#define WS_CALL_bool(ret, call)	  (ret = call)
#define WS_RETURN_bool(ret)	  return ret
#define WS_DECL_ptr_t		  ptr_t
#define WS_CALL_ptr_t(ret, call)  (ret = call)
#define WS_RETURN_ptr_t(ret)	  return ret
WS_END(GOMP_loop_end, void_t, LT_OMP_loop, 1)
WS_END(GOMP_loop_end_nowait, void_t, LT_OMP_loop, 0)
WS_END(GOMP_loop_end_cancel, bool, LT_OMP_loop, 1)
WS_END(GOMP_sections_end, void_t, LT_OMP_sections, 1)
WS_END(GOMP_sections_end_nowait, void_t, LT_OMP_sections, 0)
WS_END(GOMP_sections_end_cancel, bool, LT_OMP_sections, 1)

static unsigned (*real_GOMP_sections_start)(unsigned);
LT_EXPORT unsigned GOMP_sections_start(unsigned count)
{
	LT_RESOLVE_BY(GOMP_sections_start, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_sections_start(count);
	OMP_ENTER_CS(t, LT_OMP_sections, 0, 0, 0, 0);
	lt_finish(t);
	unsigned ret = real_GOMP_sections_start(count);
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_CHUNK, LT_OMP_sections, ret != 0, 2, ret, ret + 1ull);
		lt_finish(t);
	}
	return ret;
}

static unsigned (*real_GOMP_sections_next)(void);
LT_EXPORT unsigned GOMP_sections_next(void)
{
	LT_RESOLVE_BY(GOMP_sections_next, lt_gomp_sym);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_sections_next();
	lt_finish(t);
	unsigned ret = real_GOMP_sections_next();
	if (lt_resume(t)) {
		lt_omp_emit(t, LT_REC_OMP_CHUNK, LT_OMP_sections, ret != 0, 2, ret, ret + 1ull);
		lt_finish(t);
	}
	return ret;
}

/* A call recorded as an enter and a leave of construct c (arg of the leave: its result). */
#define SPAN(name, ret_type, c, obj)                                                            \
	static ret_type (*real_##name)(void);                                                   \
	LT_EXPORT ret_type name(void)                                                           \
	{                                                                                       \
		LT_RESOLVE_BY(name, lt_gomp_sym);                                               \
		struct lt_thread *t = omp_begin();                                              \
		if (!t)                                                                         \
			return real_##name();                                                   \
		OMP_ENTER_CS(t, c, 0, 0, 0, 0);                                                 \
		lt_finish(t);                                                                   \
		WS_DECL_##ret_type ret = 0;                                                     \
		WS_CALL_##ret_type(ret, real_##name());                                         \
		if (lt_resume(t)) {                                                             \
			lt_omp_emit(t, LT_REC_OMP_LEAVE, c, (uint32_t)(uintptr_t)ret, 0, 0, 0); \
			lt_finish(t);                                                           \
		}                                                                               \
		WS_RETURN_##ret_type(ret);                                                      \
	}
SPAN(GOMP_single_start, bool, LT_OMP_single, 0)
SPAN(GOMP_single_copy_start, ptr_t, LT_OMP_single, 0)
SPAN(GOMP_barrier, void_t, LT_OMP_barrier, 0)
SPAN(GOMP_barrier_cancel, bool, LT_OMP_barrier, 0)
SPAN(GOMP_taskwait, void_t, LT_OMP_taskwait, 0)
SPAN(GOMP_taskyield, void_t, LT_OMP_taskyield, 0)

LT_MODULE(gomp) = {.name = "gomp", .bit = LT_MOD_OMP, .order = 30};
