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
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/module.h"
#include "../shared/omp.h"

/*
 * The runtime's function `name`.  Usually the next definition after ours; but a library
 * loaded with RTLD_LOCAL (a Python extension module linked with libgomp) has its OpenMP
 * runtime out of the global scope, where RTLD_NEXT does not look, while its calls still
 * reach our preloaded wrappers: then the runtime loaded privately is asked by name.
 */
static __attribute__((noinline)) void *gomp_sym(const char *name)
{
	static const char *const runtimes[] = {"libgomp.so.1", "libomp.so.5", "libomp.so",
					       "libiomp5.so", NULL};
	void *p = lt_dlsym_runtime(name, runtimes);
	if (!p)
		lt_warn("OpenMP: no runtime defines %s", name);
	return p;
}

#define RESOLVE(name)                                  \
	do {                                           \
		if (unlikely(!real_##name))            \
			real_##name = gomp_sym(#name); \
	} while (0)

/* Whether the GOMP_* and omp_* functions behind ours are libgomp's (1), or another
 * runtime's compatibility layer (0: LLVM libomp, which reports through OMPT, even for the
 * constructs before it started our tool).  -1 before the first call. */
static int gomp_native = -1;

static __attribute__((noinline)) int gomp_detect(void)
{
	void *fn = gomp_sym("GOMP_parallel");
	Dl_info info;
	int native =
	    fn && dladdr(fn, &info) && info.dli_fname && strstr(info.dli_fname, "libgomp") != NULL;
	lt_debug("OpenMP: %s", native ? "libgomp, through GOMP_* interposition"
				      : "another runtime's GOMP layer: left to OMPT");
	return native;
}

/* OMP_ENTER with the call site: only in an exported function that the program calls. */
#define OMP_ENTER_CS(t, ...) (LT_NOTE_CALLER(t), lt_omp_emit_cs(t, LT_REC_OMP_ENTER, __VA_ARGS__))

/* The thread's state when OpenMP constructs are recorded here, else NULL. */
static inline struct lt_thread *omp_begin(void)
{
	if (unlikely(gomp_native < 0))
		gomp_native = gomp_detect();
	if (!gomp_native || lt_claimed(LT_MOD_OMP))
		return NULL;
	return lt_begin(LT_MOD_OMP);
}

static int (*real_omp_get_thread_num)(void);
static int (*real_omp_get_num_threads)(void);

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
			real_omp_get_thread_num = gomp_sym("omp_get_thread_num");                  \
			real_omp_get_num_threads = gomp_sym("omp_get_num_threads");                \
		}                                                                                  \
		struct par par = {fn, data, lt_thread_id(t), constr};                              \
		if (!real_omp_get_thread_num || !real_omp_get_num_threads) {                       \
			lt_finish(t);                                                              \
			par.fn = NULL;                                                             \
		} else {                                                                           \
			LT_NOTE_CALLER(t);                                                         \
			lt_omp_emit_cs(t, LT_REC_OMP_FORK, LT_OMP_parallel, nthreads, 2, par.id,   \
				       (uint64_t)(uintptr_t)(fn));                                 \
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
	RESOLVE(GOMP_parallel);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_parallel(fn, data, n, flags);
	PARALLEL(t, fn, data, n, -1, real_GOMP_parallel(tramp, arg, n, flags));
}

static unsigned (*real_GOMP_parallel_reductions)(void (*)(void *), void *, unsigned, unsigned);
LT_EXPORT unsigned GOMP_parallel_reductions(void (*fn)(void *), void *data, unsigned n,
					    unsigned flags)
{
	RESOLVE(GOMP_parallel_reductions);
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
		RESOLVE(name);                                                                 \
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
		RESOLVE(name);                                                                \
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
	RESOLVE(GOMP_parallel_sections);
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
		RESOLVE(name);                                                   \
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
		RESOLVE(name);                                                               \
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
		RESOLVE(name);                                                                 \
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
	RESOLVE(GOMP_sections_start);
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
	RESOLVE(GOMP_sections_next);
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
		RESOLVE(name);                                                                  \
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

/* ---- mutual exclusion: enter (wait), acquired, leave (release, stamped before) ---- */

static char unnamed_critical, atomic_lock; /* the lock objects of the unnamed ones */

#define ACQUIRE(name, params, args, c, obj)                                                \
	static void(*real_##name) params;                                                  \
	LT_EXPORT void name params                                                         \
	{                                                                                  \
		RESOLVE(name);                                                             \
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
		RESOLVE(name);                                                  \
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
		RESOLVE(name);                                                                 \
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
	RESOLVE(GOMP_task);
	struct lt_thread *t = omp_begin();
	if (!t)
		return real_GOMP_task(fn, data, cpyfn, arg_size, arg_align, if_clause, flags,
				      depend, priority, detach);
	long off = task_off(arg_align);
	struct task_hdr h = {{0, 0}, fn, cpyfn, data, off, arg_size, lt_thread_id(t), flags, 0};
	OMP_ENTER_CS(t, LT_OMP_task_create, if_clause ? 0 : LT_OMP_F_UNDEFERRED, 2, h.id,
		     (uintptr_t)fn);
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
		RESOLVE(name);                                                                     \
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
	RESOLVE(GOMP_taskwait_depend);
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
	RESOLVE(GOMP_taskgroup_start);
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
	RESOLVE(GOMP_taskgroup_end);
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

LT_MODULE(gomp) = {.name = "gomp", .bit = LT_MOD_OMP, .order = 30};
