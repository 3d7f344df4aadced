/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lt.h - internal interface of the libtrace runtime: global state, the per-thread state
 * and the hot path that encodes a record into the calling thread's chunk.
 *
 * Everything here runs inside somebody else's program: no exit/abort, no stdio, no locks
 * on the hot path, and the tracer's own calls are never traced (per-thread guard).
 */
#ifndef LIBTRACE_LT_H
#define LIBTRACE_LT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the record encoder assumes a little-endian machine"
#endif

#define LT_EXPORT   __attribute__((visibility("default")))
#define LT_HIDDEN   __attribute__((visibility("hidden")))
#define LT_TLS	    __attribute__((tls_model("initial-exec")))
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Run-time modules, selected by LIBTRACE_MODULES. */
enum lt_module {
	LT_MOD_PTHREAD = 1u << 0, /* pthread synchronisation and thread lifetime */
	LT_MOD_PROC = 1u << 1,	  /* fork, exec, posix_spawn, dlopen */
	LT_MOD_USER = 1u << 2,	  /* the annotation API (ltr_*) */
	LT_MOD_OMP = 1u << 3,	  /* OpenMP: libgomp's GOMP_* entry points, OMPT runtimes */
	LT_MOD_KOKKOS = 1u << 4,  /* the Kokkos profiling interface (kokkosp_*) */
};
#define LT_MOD_ALL (LT_MOD_PTHREAD | LT_MOD_PROC | LT_MOD_USER | LT_MOD_OMP | LT_MOD_KOKKOS)

enum lt_state {
	LT_STATE_UNINIT = 0,
	LT_STATE_INITIALIZING,
	LT_STATE_ON,
	LT_STATE_OFF, /* disabled for good: AT_SECURE, bad output path, init failure */
};

enum lt_overflow {
	LT_OVERFLOW_BLOCK = 0, /* the producer drains its own ring: slower, nothing lost */
	LT_OVERFLOW_DROP = 1,  /* count as lost until the writer frees a chunk */
};

/* The resolved configuration (config.c fills it from the LIBTRACE_* table). */
struct lt_config {
	char output[4096];
	unsigned modules;
	uint64_t buffer_size; /* ring bytes per thread */
	int overflow;	      /* enum lt_overflow */
	int debug;
	int quiet;
	int clock;	  /* enum lt_clock_kind, or -1 for auto */
	int kokkos_fence; /* enum lt_kokkos_fence */
};

enum lt_kokkos_fence { LT_KOKKOS_FENCE_AUTO = 0, LT_KOKKOS_FENCE_ON, LT_KOKKOS_FENCE_OFF };

/* Per-thread state.  Reached through one initial-exec TLS pointer; lives on the heap. */
struct lt_thread {
	/* Hot: the encoder's cursor. */
	uint64_t *pos;		       /* next free word */
	uint64_t *end;		       /* end of the writable area */
	uint64_t *data;		       /* first record word of `chunk` */
	struct lt_chunk_header *chunk; /* where lt_commit() publishes `used` */
	long guard; /* non-zero while the tracer itself runs on this thread (a full word: the
		     * hot path stores and loads it whole, so store forwarding never stalls) */
	/* Cold: owned by buffer.c. */
	uint32_t index; /* process-local thread index */
	uint32_t tid;
	int slot;			     /* ring slot, -1 when none could be had */
	unsigned cur;			     /* index of the current chunk in the slot */
	uint64_t seq;			     /* sequence number of the next chunk */
	int dropping;			     /* the ring is full (drop policy or I/O error) */
	int in_fork;			     /* inside the fork wrapper's real call */
	uint64_t lost_noslot;		     /* events lost because the thread got no slot */
	uint64_t omp_count;		     /* OpenMP parallel regions and tasks it created */
	uint32_t kokkos_count;		     /* Kokkos kernels and fences it began */
	struct lt_chunk_header dummy;	     /* lt_commit() target while dropping */
	uint64_t sink[LT_REC_WORDS_MAX + 1]; /* where dropped records are encoded */
	/* Owned by thread.c and strings.c. */
	struct lt_thread *next_live, *prev_live;
	struct {
		const char *ptr;
		const char *interned;
		uint32_t id;
	} scache[32]; /* strings seen lately by pointer, for the annotation API */
};

/* Global state. */
extern LT_HIDDEN struct lt_config lt_cfg;
extern LT_HIDDEN int lt_state;
/* Modules recording now, plus LT_ACTIVE_INIT once init is over (whatever its outcome):
 * zero only before init. */
extern LT_HIDDEN unsigned lt_active;
#define LT_ACTIVE_INIT 0x80000000u
extern LT_HIDDEN __thread struct lt_thread *lt_self LT_TLS;
extern LT_HIDDEN __thread int lt_tls_guard LT_TLS; /* before lt_self exists */

/* init.c */
LT_HIDDEN void lt_init(void);
/* getauxval, as init sees it: a unit test injects AT_SECURE through it. */
extern LT_HIDDEN unsigned long (*lt_getauxval)(unsigned long);
LT_HIDDEN void lt_before_exec(void);
/* False in the child of vfork, which runs on its parent's memory (a getpid syscall). */
LT_HIDDEN int lt_is_traced_process(void);
LT_HIDDEN void lt_process_end(const char *how);
LT_HIDDEN const char *lt_process_dir(void);

/* clock.c */
enum lt_clock_kind { LT_CLOCK_TSC = 0, LT_CLOCK_MONOTONIC = 1 };
LT_HIDDEN extern int lt_clock_kind;
LT_HIDDEN void lt_clock_init(int requested);
LT_HIDDEN double lt_clock_hz(void);
LT_HIDDEN uint64_t lt_clock_mono_ns(void);
LT_HIDDEN uint64_t lt_clock_real_ns(void);

static inline uint64_t lt_now(void)
{
#if defined(__x86_64__)
	if (likely(lt_clock_kind == LT_CLOCK_TSC)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return lt_clock_mono_ns();
}

/* buffer.c */
LT_HIDDEN int lt_buffer_open(const char *dir, int after_fork);
LT_HIDDEN int lt_buffer_attach(struct lt_thread *t);
LT_HIDDEN void lt_buffer_detach(struct lt_thread *t);
/* Drop policy: makes room for a record that must not be lost (the thread's end). */
LT_HIDDEN void lt_buffer_settle(struct lt_thread *t);
LT_HIDDEN uint64_t *lt_reserve_slow(struct lt_thread *t, unsigned words);
LT_HIDDEN void lt_buffer_flush_all(int snapshot_active);
/* At the end: frees the disk blocks of ring chunks already copied to the events file. */
LT_HIDDEN void lt_buffer_trim(void);
LT_HIDDEN void lt_writer_stop(void);

/* file.c: a file of the tracer's, kept usable whatever the program does to descriptors. */
struct lt_file {
	int fd;
	dev_t dev;
	ino_t ino;
	char path[4096];
	int flags;
};
/* Creates dir/name 0600 (O_EXCL, O_NOFOLLOW) on a high descriptor.  0 or -errno. */
LT_HIDDEN int lt_file_create(struct lt_file *f, const char *dir, const char *name, int flags);
/* f's descriptor, reopened by path when the program closed or reused it; -1 if gone. */
LT_HIDDEN int lt_file_fd(struct lt_file *f);

/* thread.c */
LT_HIDDEN void lt_thread_init(void);
LT_HIDDEN struct lt_thread *lt_thread_register(uint32_t index, uint32_t parent, uintptr_t start);
LT_HIDDEN void lt_thread_end(struct lt_thread *t); /* frees t */
LT_HIDDEN uint32_t lt_thread_new_index(void);
LT_HIDDEN void lt_thread_after_fork_child(void);
LT_HIDDEN void lt_thread_map_after_fork_child(void);
LT_HIDDEN void lt_thread_map_put(unsigned long handle, uint32_t index);
LT_HIDDEN uint32_t lt_thread_map_get(unsigned long handle, int remove);

/* strings.c */
LT_HIDDEN uint32_t lt_string_id(struct lt_thread *t, const char *s);
LT_HIDDEN void lt_strings_after_fork_child(void);

/* meta.c */
LT_HIDDEN int lt_meta_open(const char *dir);
LT_HIDDEN void lt_meta_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
LT_HIDDEN void lt_meta_escaped(const char *key, const char *value);
LT_HIDDEN void lt_meta_escaped2(const char *key, const char *a, const char *b);
LT_HIDDEN void lt_meta_maps(void);
LT_HIDDEN void lt_meta_sync(void);

/*
 * Hot path.
 *
 * lt_begin() returns the calling thread's state when module `mod` records and the thread is
 * not inside the tracer; it sets the guard so that whatever the wrapper calls is not traced.
 * lt_finish() drops the guard.  Every wrapper pairs them:
 *
 *	struct lt_thread *t = lt_begin(LT_MOD_PTHREAD);
 *	if (!t) return real_f(...);
 *	...records...; ret = real_f(...); ...records...
 *	lt_finish(t);
 */
LT_HIDDEN struct lt_thread *lt_begin_slow(unsigned mod);

/* Raises the guard before anything of t's cursor is read: a signal handler that interrupts
 * the wrapper after this point records nothing, one that came before has finished. */
static inline void lt_guard_take(struct lt_thread *t)
{
	t->guard = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline struct lt_thread *lt_begin(unsigned mod)
{
	unsigned active = lt_active;
	if (unlikely(!(active & mod))) {
		/* Module off (one load and two branches), or init still to run. */
		if (likely(active))
			return NULL;
		return lt_begin_slow(mod);
	}
	struct lt_thread *t = lt_self;
	if (likely(t && !t->guard)) {
		lt_guard_take(t);
		return t;
	}
	return lt_begin_slow(mod);
}

static inline void lt_finish(struct lt_thread *t)
{
	/* Everything the wrapper wrote or read of t happens before a signal handler can see
	 * the guard down (a compiler barrier: the handler runs on this thread). */
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	t->guard = 0;
}

/* Takes the guard again after the real call (the guard is not held across it, so that what
 * the program does inside, signal handlers and atfork handlers, is traced).  False when
 * something else holds it. */
static inline int lt_resume(struct lt_thread *t)
{
	if (t->guard)
		return 0;
	lt_guard_take(t);
	return 1;
}

/* Reserves `words` 8-byte words in t's chunk; never fails (a sink absorbs what is lost). */
static inline uint64_t *lt_reserve(struct lt_thread *t, unsigned words)
{
	uint64_t *p = t->pos;
	if (unlikely(p + words > t->end))
		return lt_reserve_slow(t, words);
	t->pos = p + words;
	/* The ring line 512 bytes ahead, for writing: the locked instruction of a traced
	 * call that follows then waits for no cache miss (-7 ns per mutex pair here). */
	__builtin_prefetch(p + 64, 1, 3);
	return p;
}

/* Publishes every record reserved so far: a release store (a plain mov on x86-64). */
static inline void lt_commit(struct lt_thread *t)
{
	/* `chunk` is never NULL: a thread without a ring commits into its dummy header. */
	__atomic_store_n(&t->chunk->used, (uint64_t)((char *)t->pos - (char *)t->data),
			 __ATOMIC_RELEASE);
}

static inline void lt_rec_put(uint64_t *p, uint64_t ts, unsigned type, unsigned words, unsigned sub,
			      uint32_t arg)
{
	p[0] = ts;
	/* One 64-bit store for type, words, sub and arg (little-endian layout of lt_rec). */
	p[1] = (uint64_t)type | (uint64_t)words << 8 | (uint64_t)sub << 16 | (uint64_t)arg << 32;
}

/* A record with no payload. */
static inline void lt_emit0(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg)
{
	uint64_t *p = lt_reserve(t, 2);
	lt_rec_put(p, lt_now(), type, 2, sub, arg);
	lt_commit(t);
}

/* A record with one payload word. */
static inline void lt_emit1(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
			    uint64_t p0)
{
	uint64_t *p = lt_reserve(t, 3);
	lt_rec_put(p, lt_now(), type, 3, sub, arg);
	p[2] = p0;
	lt_commit(t);
}

/*
 * A call that cannot block: one CALL event after it returned.
 *
 * lt_call_instant() stamps it at return: right for what may acquire something (try*),
 * whose success must not look earlier than the release it saw.
 *
 * lt_call_release() stamps it with `mark`, taken before the call (the rdtsc overlaps the
 * call instead of waiting for it: 7 ns less per call here): right for a release (unlock,
 * post, signal), which the next acquirer sees only after that instant.  If the thread
 * recorded anything during the call (a signal handler: the cursor or the chunk moved), the
 * record is stamped at return instead, so that a thread's records stay in time order.
 */
struct lt_mark {
	uint64_t ts;
	const uint64_t *pos;
	uint64_t seq;
};

static inline struct lt_mark lt_mark_now(const struct lt_thread *t)
{
	return (struct lt_mark){lt_now(), t->pos, t->seq};
}

static inline void lt_call_put(struct lt_thread *t, uint64_t ts, enum lt_fn fn, const void *obj,
			       int result)
{
	uint64_t *p = lt_reserve(t, 3);
	lt_rec_put(p, ts, LT_REC_CALL, 3, fn, (uint32_t)result);
	p[2] = (uint64_t)(uintptr_t)obj;
	lt_commit(t);
}

static inline void lt_call_instant(struct lt_thread *t, enum lt_fn fn, const void *obj, int result)
{
	lt_call_put(t, lt_now(), fn, obj, result);
}

static inline void lt_call_release(struct lt_thread *t, struct lt_mark mark, enum lt_fn fn,
				   const void *obj, int result)
{
	if (unlikely(t->pos != mark.pos || t->seq != mark.seq))
		mark.ts = lt_now();
	lt_call_put(t, mark.ts, fn, obj, result);
}

static inline void lt_call_enter(struct lt_thread *t, enum lt_fn fn, const void *obj)
{
	lt_emit1(t, LT_REC_CALL_ENTER, fn, 0, (uint64_t)(uintptr_t)obj);
}

/* A call on two objects (a condition wait: p[0] the condition, p[1] the mutex). */
static inline void lt_call_enter2(struct lt_thread *t, enum lt_fn fn, const void *obj,
				  const void *obj2)
{
	uint64_t *p = lt_reserve(t, 4);
	lt_rec_put(p, lt_now(), LT_REC_CALL_ENTER, 4, fn, 0);
	p[2] = (uint64_t)(uintptr_t)obj;
	p[3] = (uint64_t)(uintptr_t)obj2;
	lt_commit(t);
}

static inline void lt_call_enter0(struct lt_thread *t, enum lt_fn fn)
{
	lt_emit0(t, LT_REC_CALL_ENTER, fn, 0);
}

static inline void lt_call_leave(struct lt_thread *t, enum lt_fn fn, int result)
{
	lt_emit0(t, LT_REC_CALL_LEAVE, fn, (uint32_t)result);
}

/* A record of `n` payload words (n <= 2): the OpenMP records' common shape. */
static inline void lt_emit(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
			   unsigned n, uint64_t p0, uint64_t p1)
{
	uint64_t *p = lt_reserve(t, 2 + n);
	lt_rec_put(p, lt_now(), type, 2 + n, sub, arg);
	if (n > 0)
		p[2] = p0;
	if (n > 1)
		p[3] = p1;
	lt_commit(t);
}

/* A new id for a parallel region or task created by t: unique in the process. */
static inline uint64_t lt_omp_id(struct lt_thread *t)
{
	return (uint64_t)t->index << 40 | ++t->omp_count;
}

/* ompt.c: true once an OMPT runtime started our tool (the GOMP wrappers then stay quiet:
 * libomp's GOMP compatibility layer reports through OMPT already). */
extern LT_HIDDEN int lt_ompt_active;
/* gomp.c: inside omp_test_lock / omp_test_nest_lock while OMPT reports (libomp up to 14
 * reports a test as ompt_mutex_lock / ompt_mutex_nest_lock). */
extern LT_HIDDEN __thread int lt_omp_testing LT_TLS;
/* Set by the OMPT finalize callback, which ends the process's trace (init.c's destructor
 * leaves that to it while the runtime is still up: its threads' last events come later). */
extern LT_HIDDEN int lt_ompt_finalized;

/* kokkos.c: names this library as the Kokkos tool (constructor), and catches a Kokkos
 * that a dlopen brought in later. */
LT_HIDDEN void lt_kokkos_register(void);
LT_HIDDEN void lt_kokkos_dlopened(void *handle);

/* log.c: async-signal-safe logging to stderr (snprintf to a stack buffer + write). */
LT_HIDDEN void lt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define lt_warn(...)  lt_log(0, __VA_ARGS__)
#define lt_info(...)  lt_log(1, __VA_ARGS__)
#define lt_debug(...) lt_log(2, __VA_ARGS__)

/* Real functions: resolved with dlsym(RTLD_NEXT) once, lazily. */
LT_HIDDEN void *lt_dlsym_next(const char *name, const char *version);

#endif /* LIBTRACE_LT_H */
