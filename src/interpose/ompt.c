// SPDX-License-Identifier: BSD-3-Clause
/*
 * ompt.c - OpenMP through OMPT: LLVM libomp and any runtime that looks for ompt_start_tool.
 *
 * The runtime calls our callbacks on the thread concerned; each becomes the same OMP_*
 * record the GOMP wrappers write, so the converter has one OpenMP model.  The OMPT types
 * used here are the interface's ABI as the OpenMP 5.1 specification defines it (only what
 * we register).
 *
 * libomp finalizes after the preloaded library's destructor: the destructor leaves the end
 * of the process to our finalize callback (ompt_ends_trace), so that the workers' last
 * events are kept.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>

#include "../core/module.h"
#include "../common/omp.h"

typedef union {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef void (*ompt_callback_t)(void);
typedef ompt_callback_t (*ompt_function_lookup_t)(const char *);
typedef int (*ompt_set_callback_t)(int event, ompt_callback_t callback);
typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device,
				 ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);
typedef struct {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;
typedef struct {
	ompt_data_t variable;
	int dependence_type;
} ompt_dependence_t;

enum { /* callback ids */
       CB_PARALLEL_BEGIN = 3,
       CB_PARALLEL_END = 4,
       CB_TASK_CREATE = 5,
       CB_TASK_SCHEDULE = 6,
       CB_IMPLICIT_TASK = 7,
       CB_MUTEX_RELEASED = 17,
       CB_DEPENDENCES = 18,
       CB_WORK = 20,
       CB_MASKED = 21,
       CB_SYNC_REGION = 23,
       CB_MUTEX_ACQUIRE = 26,
       CB_MUTEX_ACQUIRED = 27,
       CB_NEST_LOCK = 28,
       CB_DISPATCH = 32,
};
enum { SCOPE_BEGIN = 1, SCOPE_END = 2, SCOPE_BEGINEND = 3 };
enum {
	TASK_INITIAL = 0x1,
	TASK_IMPLICIT = 0x2,
	TASK_EXPLICIT = 0x4,
	TASK_UNDEFERRED = 0x08000000,
	TASK_UNTIED = 0x10000000
};
enum { STATUS_COMPLETE = 1, STATUS_CANCEL = 3, STATUS_DETACH = 4, STATUS_LATE_FULFILL = 6 };

/* Implicit tasks keep their parallel id in task data, tagged apart from explicit task ids. */
#define IMPLICIT_TAG (1ull << 63)

/* An OMPT runtime started our tool; its finalize callback ran (it then ended the trace). */
static int active, finalized;

static inline struct lt_thread *ompt_begin(void)
{
	return lt_begin(LT_MOD_OMP);
}

/* The call site of what the callback reports: the runtime's codeptr_ra (frame 1 only: the
 * callback runs inside the runtime, whose frames are no use). */
static inline void note_codeptr(struct lt_thread *t, const void *codeptr)
{
	t->cs_ra = (uint64_t)(uintptr_t)codeptr;
	t->cs_fp = 0;
}

/* An ENTER (with its call site) or a LEAVE of construct c. */
static void emit_region(struct lt_thread *t, int endpoint, unsigned c, uint32_t arg, unsigned n,
			uint64_t p0, const void *codeptr)
{
	if (endpoint == SCOPE_END) {
		lt_omp_emit(t, LT_REC_OMP_LEAVE, c, arg, 0, 0, 0);
	} else {
		note_codeptr(t, codeptr);
		lt_omp_emit_cs(t, LT_REC_OMP_ENTER, c, arg, n, p0, 0);
	}
}

static void on_parallel_begin(ompt_data_t *task, const void *frame, ompt_data_t *parallel,
			      unsigned requested, int flags, const void *codeptr)
{
	(void)task, (void)frame, (void)flags;
	struct lt_thread *t = ompt_begin();
	if (!t) {
		parallel->value = 0;
		return;
	}
	parallel->value = lt_thread_id(t);
	note_codeptr(t, codeptr);
	lt_omp_emit_cs(t, LT_REC_OMP_FORK, LT_OMP_parallel, requested, 2, parallel->value,
		       (uintptr_t)codeptr);
	lt_finish(t);
}

static void on_parallel_end(ompt_data_t *parallel, ompt_data_t *task, int flags,
			    const void *codeptr)
{
	(void)task, (void)flags, (void)codeptr;
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	lt_omp_emit(t, LT_REC_OMP_JOIN, LT_OMP_parallel, 0, 1, parallel->value, 0);
	lt_finish(t);
}

static void on_implicit_task(int endpoint, ompt_data_t *parallel, ompt_data_t *task, unsigned size,
			     unsigned index, int flags)
{
	if (flags & TASK_INITIAL)
		return; /* the initial task is the thread itself */
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	if (endpoint == SCOPE_BEGIN) {
		uint64_t id = parallel ? parallel->value : 0;
		task->value = id | IMPLICIT_TAG;
		lt_omp_emit(t, LT_REC_OMP_TEAM_BEGIN, LT_OMP_parallel, index, 2, id, size);
	} else {
		lt_omp_emit(t, LT_REC_OMP_TEAM_END, LT_OMP_parallel, index, 1,
			    task->value & ~IMPLICIT_TAG, 0);
	}
	lt_finish(t);
}

static void on_work(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task,
		    uint64_t count, const void *codeptr)
{
	(void)parallel, (void)task, (void)count;
	unsigned c;
	uint32_t arg = 0;
	switch (kind) {
	case 1:
		c = LT_OMP_loop;
		break;
	case 2:
		c = LT_OMP_sections;
		break;
	case 3: /* single, the thread that executes it */
		c = LT_OMP_single;
		arg = 1;
		break;
	case 4:
		c = LT_OMP_single;
		break;
	case 5:
		c = LT_OMP_workshare;
		break;
	case 7:
		c = LT_OMP_taskloop;
		break;
	default:
		return; /* distribute, scope: not modelled */
	}
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	emit_region(t, endpoint, c, arg, 0, 0, codeptr);
	lt_finish(t);
}

static void on_sync_region(int kind, int endpoint, ompt_data_t *parallel, ompt_data_t *task,
			   const void *codeptr)
{
	(void)parallel, (void)task;
	unsigned c;
	switch (kind) {
	case 3:
		c = LT_OMP_barrier;
		break;
	case 1:
	case 2:
	case 4:
	case 8:
	case 9:
		c = LT_OMP_implicit_barrier;
		break;
	case 5:
		c = LT_OMP_taskwait;
		break;
	case 6:
		c = LT_OMP_taskgroup;
		break;
	default:
		return; /* reductions, teams barriers */
	}
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	emit_region(t, endpoint, c, 0, 0, 0, codeptr);
	lt_finish(t);
}

static void on_masked(int endpoint, ompt_data_t *parallel, ompt_data_t *task, const void *codeptr)
{
	(void)parallel, (void)task;
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	emit_region(t, endpoint, LT_OMP_masked, 0, 0, 0, codeptr);
	lt_finish(t);
}

/* ompt_mutex_t -> the construct of the acquisition. */
static int mutex_construct(int kind)
{
	static const int map[] = {-1,
				  LT_OMP_set_lock,
				  LT_OMP_test_lock,
				  LT_OMP_set_nest_lock,
				  LT_OMP_test_nest_lock,
				  LT_OMP_critical,
				  LT_OMP_atomic,
				  LT_OMP_ordered};
	int c = kind > 0 && kind < (int)(sizeof(map) / sizeof(map[0])) ? map[kind] : -1;
	if (lt_in_try && c == LT_OMP_set_lock)
		return LT_OMP_test_lock;
	if (lt_in_try && c == LT_OMP_set_nest_lock)
		return LT_OMP_test_nest_lock;
	return c;
}

static void on_mutex_acquire(int kind, unsigned hint, unsigned impl, uint64_t wait_id,
			     const void *codeptr)
{
	(void)hint, (void)impl;
	int c = mutex_construct(kind);
	struct lt_thread *t = c >= 0 ? ompt_begin() : NULL;
	if (!t)
		return;
	note_codeptr(t, codeptr);
	lt_omp_emit_cs(t, LT_REC_OMP_ENTER, (unsigned)c, 0, 1, wait_id, 0);
	/* A test does not wait, and nothing is reported when it fails: its region ends now;
	 * a success is reported as the acquisition that follows. */
	if (c == LT_OMP_test_lock || c == LT_OMP_test_nest_lock)
		lt_omp_emit(t, LT_REC_OMP_LEAVE, (unsigned)c, 0, 0, 0, 0);
	lt_finish(t);
}

static void on_mutex_acquired(int kind, uint64_t wait_id, const void *codeptr)
{
	(void)codeptr;
	int c = mutex_construct(kind);
	struct lt_thread *t = c >= 0 ? ompt_begin() : NULL;
	if (!t)
		return;
	lt_omp_emit(t, LT_REC_OMP_ACQUIRED, (unsigned)c, 0, 1, wait_id, 0);
	lt_finish(t);
}

static void on_mutex_released(int kind, uint64_t wait_id, const void *codeptr)
{
	(void)codeptr;
	int c = mutex_construct(kind);
	if (c == LT_OMP_set_lock || c == LT_OMP_test_lock)
		c = LT_OMP_unset_lock;
	else if (c == LT_OMP_set_nest_lock || c == LT_OMP_test_nest_lock)
		c = LT_OMP_unset_nest_lock;
	struct lt_thread *t = c >= 0 ? ompt_begin() : NULL;
	if (!t)
		return;
	lt_omp_emit(t, LT_REC_OMP_LEAVE, (unsigned)c, 0, 1, wait_id, 0);
	lt_finish(t);
}

/* A nested lock taken again (begin) or released once but still held (end). */
static void on_nest_lock(int endpoint, uint64_t wait_id, const void *codeptr)
{
	(void)codeptr;
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	if (endpoint == SCOPE_BEGIN)
		lt_omp_emit(t, LT_REC_OMP_ACQUIRED, LT_OMP_set_nest_lock, 0, 1, wait_id, 0);
	else
		lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_unset_nest_lock, 0, 1, wait_id, 0);
	lt_finish(t);
}

static void on_task_create(ompt_data_t *parent, const void *frame, ompt_data_t *task, int flags,
			   int has_deps, const void *codeptr)
{
	(void)parent, (void)frame, (void)has_deps;
	task->value = 0;
	if (!(flags & TASK_EXPLICIT))
		return;
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	task->value = lt_thread_id(t);
	unsigned f = (flags & TASK_UNDEFERRED ? LT_OMP_F_UNDEFERRED : 0) |
		     (flags & TASK_UNTIED ? LT_OMP_F_UNTIED : 0);
	note_codeptr(t, codeptr);
	lt_omp_emit_cs(t, LT_REC_OMP_ENTER, LT_OMP_task_create, f, 2, task->value,
		       (uintptr_t)codeptr);
	lt_omp_emit(t, LT_REC_OMP_LEAVE, LT_OMP_task_create, 0, 0, 0, 0);
	lt_finish(t);
}

static void on_dependences(ompt_data_t *task, const ompt_dependence_t *deps, int ndeps)
{
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	for (int i = 0; i < ndeps && i < 4096; i++) {
		unsigned kind = (unsigned)deps[i].dependence_type;
		if (kind == 7)
			kind = LT_OMP_DEP_INOUTSET;
		else if (kind > 4)
			continue; /* doacross source/sink */
		lt_omp_emit(t, LT_REC_OMP_TASK_DEP, 0, kind, 2, task->value,
			    (uintptr_t)deps[i].variable.ptr);
	}
	lt_finish(t);
}

static int explicit_task(const ompt_data_t *d)
{
	return d && d->value && !(d->value & IMPLICIT_TAG);
}

static void on_task_schedule(ompt_data_t *prior, int status, ompt_data_t *next)
{
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	if (explicit_task(prior)) {
		int done = status == STATUS_COMPLETE || status == STATUS_CANCEL ||
			   status == STATUS_DETACH || status == STATUS_LATE_FULFILL;
		lt_omp_emit(t, LT_REC_OMP_TASK_END, 0, done ? 0 : LT_OMP_F_SWITCH, 1, prior->value,
			    0);
	}
	if (explicit_task(next))
		lt_omp_emit(t, LT_REC_OMP_TASK_BEGIN, 0, 0, 2, next->value, 0);
	lt_finish(t);
}

static void on_dispatch(ompt_data_t *parallel, ompt_data_t *task, int kind, ompt_data_t instance)
{
	(void)parallel, (void)task;
	struct lt_thread *t = ompt_begin();
	if (!t)
		return;
	lt_omp_emit(t, LT_REC_OMP_CHUNK, kind == 2 ? LT_OMP_sections : LT_OMP_loop, 1, 2,
		    instance.value, instance.value + 1);
	lt_finish(t);
}

static int ompt_init(ompt_function_lookup_t lookup, int initial_device, ompt_data_t *tool_data)
{
	(void)initial_device, (void)tool_data;
	ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
	if (!set)
		return 0;
	static const struct {
		int event;
		ompt_callback_t fn;
	} cbs[] = {
	    {CB_PARALLEL_BEGIN, (ompt_callback_t)on_parallel_begin},
	    {CB_PARALLEL_END, (ompt_callback_t)on_parallel_end},
	    {CB_TASK_CREATE, (ompt_callback_t)on_task_create},
	    {CB_TASK_SCHEDULE, (ompt_callback_t)on_task_schedule},
	    {CB_IMPLICIT_TASK, (ompt_callback_t)on_implicit_task},
	    {CB_MUTEX_RELEASED, (ompt_callback_t)on_mutex_released},
	    {CB_DEPENDENCES, (ompt_callback_t)on_dependences},
	    {CB_WORK, (ompt_callback_t)on_work},
	    {CB_MASKED, (ompt_callback_t)on_masked},
	    {CB_SYNC_REGION, (ompt_callback_t)on_sync_region},
	    {CB_MUTEX_ACQUIRE, (ompt_callback_t)on_mutex_acquire},
	    {CB_MUTEX_ACQUIRED, (ompt_callback_t)on_mutex_acquired},
	    {CB_NEST_LOCK, (ompt_callback_t)on_nest_lock},
	    {CB_DISPATCH, (ompt_callback_t)on_dispatch},
	};
	for (size_t i = 0; i < sizeof(cbs) / sizeof(cbs[0]); i++)
		set(cbs[i].event, cbs[i].fn);
	active = 1;
	lt_claim(LT_MOD_OMP, 1); /* the GOMP wrappers stay quiet: OMPT reports their calls */
	lt_meta_line(LT_META_OPENMP " ompt");
	lt_info("OpenMP: recording through OMPT");
	return 1; /* keep the tool */
}

static void ompt_fini(ompt_data_t *tool_data)
{
	(void)tool_data;
	finalized = 1;
	lt_process_end("exit");
}

LT_EXPORT ompt_start_tool_result_t *ompt_start_tool(unsigned omp_version,
						    const char *runtime_version)
{
	(void)omp_version;
	static ompt_start_tool_result_t result = {ompt_init, ompt_fini, {0}};
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_UNINIT)
		lt_init();
	if (!(lt_active & LT_MOD_OMP)) {
		/* OpenMP tracing is off: the runtime goes on to OMP_TOOL_LIBRARIES. */
		return NULL;
	}
	lt_debug("OpenMP runtime %s asks for a tool", runtime_version ? runtime_version : "?");
	return &result;
}

/* The runtime's finalize ends the trace, after its threads' last events: the library
 * destructor leaves it alone while the runtime is up. */
static int ompt_ends_trace(void)
{
	return active && !finalized;
}

LT_MODULE(ompt) = {.name = "ompt", .bit = LT_MOD_OMP, .order = 31, .ends_trace = ompt_ends_trace};
