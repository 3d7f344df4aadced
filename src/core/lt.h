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

#define LT_EXPORT __attribute__((visibility("default")))
#define LT_HIDDEN __attribute__((visibility("hidden")))
#define LT_TLS	  __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
/* LT_UNPAREN (a, b) is a, b: splices a parenthesised list into another one. */
#define LT_UNPAREN(...) __VA_ARGS__
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* Run-time modules, selected by LIBTRACE_MODULES. */
enum lt_module {
	LT_MOD_PTHREAD = 1u << 0, /* pthread synchronisation and thread lifetime */
	LT_MOD_PROC = 1u << 1,	  /* fork, exec, posix_spawn, dlopen */
	LT_MOD_USER = 1u << 2,	  /* the annotation API (ltr_*) */
	LT_MOD_OMP = 1u << 3,	  /* OpenMP: libgomp's GOMP_* entry points, OMPT runtimes */
	LT_MOD_KOKKOS = 1u << 4,  /* the Kokkos profiling interface (kokkosp_*) */
	LT_MOD_MPI = 1u << 5,	  /* MPI, through the companion library libtrace-mpi-<abi>.so */
	LT_MOD_CUDA = 1u << 6,	  /* CUDA: CUPTI, else the shared CUDA runtime's entry points */
	LT_MOD_HIP = 1u << 7,	  /* HIP: the HIP runtime's entry points (libamdhip64) */
};
#define LT_MOD_ALL                                                                              \
	(LT_MOD_PTHREAD | LT_MOD_PROC | LT_MOD_USER | LT_MOD_OMP | LT_MOD_KOKKOS | LT_MOD_MPI | \
	 LT_MOD_CUDA | LT_MOD_HIP)

/* Samplers of the sampler thread, selected by LIBTRACE_SAMPLERS. */
enum lt_sampler {
	LT_SAMPLE_ENERGY = 1u << 0,	 /* RAPL: powercap sysfs, perf power events, PAPI */
	LT_SAMPLE_TEMPERATURE = 1u << 1, /* hwmon temp*_input, thermal zones */
	LT_SAMPLE_MEMORY = 1u << 2,	 /* resident set size, memory per NUMA node */
	LT_SAMPLE_CPU = 1u << 3,	 /* each thread's CPU and NUMA node (migrations) */
};

#define LT_CALLSITE_MAX 32 /* LIBTRACE_CALLSITE_DEPTH's upper bound */

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
	int clock;		   /* enum lt_clock_kind, or -1 for auto */
	int kokkos_fence;	   /* enum lt_kokkos_fence */
	uint64_t sample_period_ns; /* the sampler thread's period; 0: no sampler thread */
	unsigned samplers;	   /* enum lt_sampler bits */
	char sysfs_root[1024];	   /* stands for / in the samplers' paths ("": /) */
	char papi_events[1024];	   /* comma-separated PAPI event names ("": none) */
	unsigned papi_modules;	   /* modules whose regions carry PAPI readings */
	int callsite_depth;	   /* call-site frames per traced call (0: none) */
	int64_t clock_skew_ns;	   /* tests: added to every clock reading */
	int cupti;		   /* enum lt_cupti_mode */
	char cupti_lib[1024];	   /* the CUPTI library to load ("": search) */
};

enum lt_cupti_mode { LT_CUPTI_AUTO = 0, LT_CUPTI_OFF };

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
	/* Call sites and counters (callsite.c, papi.c). */
	uint64_t cs_ra;	    /* where the traced call returns to: frame 1 of its call site */
	uintptr_t cs_fp;    /* the caller's frame pointer then (0: unknown), for depth > 1 */
	uintptr_t stack_lo; /* the thread's stack, for the frame walk (0: unknown) */
	uintptr_t stack_hi;
	struct lt_papi *papi; /* the thread's PAPI event set, made at its first reading */
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
/* Non-zero while this thread is inside a traced call of a runtime library (MPI, CUDA, HIP):
 * the threads that library starts then are its own (progress, PMIx, the GPU runtimes'
 * workers), not the program's, and are not traced. */
extern LT_HIDDEN __thread int lt_in_runtime LT_TLS;

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
/* Stops the writer thread and waits until it is gone; the next sealed chunk starts it again
 * (and the sampler with it).  0, or -1 when it did not end in time. */
LT_HIDDEN int lt_writer_pause(void);
/* The tracer's helper threads (writer, sampler) stopped and gone, for a call that needs the
 * process single-threaded when the program is (fork, unshare, setns): they come back when
 * next needed, after the call. */
LT_HIDDEN void lt_helpers_pause(void);

/*
 * file.c: a file of the tracer's, kept usable whatever the program does to descriptors.
 * The descriptor sits high (from LT_FD_BASE, or above the program's soft RLIMIT_NOFILE)
 * and the descriptor wrappers (interpose/fd.c) hide it from the program: closing it,
 * fcntl and dup on it fail with EBADF as if it were not open, and a dup2/dup3 onto its
 * number first moves it elsewhere.  Every use goes between lt_file_fd and lt_file_done,
 * so that a move waits until no write through the old number is under way.
 */
#define LT_FD_BASE 100
struct lt_file {
	int fd;
	int users; /* uses under way (lt_file_fd .. lt_file_done) */
	dev_t dev;
	ino_t ino;
	char path[4096];
	int flags;
};
/* Creates dir/name 0600 (O_EXCL, O_NOFOLLOW) on a high descriptor.  0 or -errno. */
LT_HIDDEN int lt_file_create(struct lt_file *f, const char *dir, const char *name, int flags);
/* f's descriptor, reopened by path when the program closed or reused it; -1 if gone.  A
 * result >= 0 must be given back with lt_file_done once the call that uses it returned. */
LT_HIDDEN int lt_file_fd(struct lt_file *f);
LT_HIDDEN void lt_file_done(struct lt_file *f);
/* Closes f's descriptor (the parent's files, in the child of fork) and forgets it. */
LT_HIDDEN void lt_file_close(struct lt_file *f);
/* The descriptors the program must not see: the files above (done by lt_file_*) and any
 * other the tracer holds (the samplers' sources).  lt_fd_list: at most max of them, in
 * increasing order. */
LT_HIDDEN void lt_fd_hide(int fd);
/* fd moved where the program's descriptors are not (see file.c); fd is closed.  The new
 * number, or -errno. */
LT_HIDDEN int lt_fd_place(int fd);
LT_HIDDEN void lt_fd_unhide(int fd);
LT_HIDDEN int lt_fd_hidden(int fd);
LT_HIDDEN size_t lt_fd_list(int *fds, size_t max);
/* Before the program's dup2/dup3 onto fd: moves the tracer's file there elsewhere.  The
 * number is left open for the program's call to replace; if that call fails, the caller
 * closes it with lt_file_vacated_unused. */
LT_HIDDEN void lt_file_vacate(int fd);
LT_HIDDEN void lt_file_vacated_unused(int fd);

/* thread.c */
LT_HIDDEN void lt_thread_init(void);
LT_HIDDEN struct lt_thread *lt_thread_register(uint32_t index, uint32_t parent, uintptr_t start);
LT_HIDDEN void lt_thread_end(struct lt_thread *t); /* frees t */
LT_HIDDEN uint32_t lt_thread_new_index(void);
/* Writes the chunk counts of the threads ended since the last call (meta "chunks"). */
LT_HIDDEN void lt_thread_counts_flush(void);
LT_HIDDEN void lt_thread_after_fork_child(void);
LT_HIDDEN void lt_thread_map_after_fork_child(void);
LT_HIDDEN void lt_thread_map_put(unsigned long handle, uint32_t index);
LT_HIDDEN uint32_t lt_thread_map_get(unsigned long handle, int remove);

/* The live threads' indices and tids (at most max), for the cpu sampler.  The count. */
LT_HIDDEN size_t lt_thread_list(uint32_t *index, uint32_t *tid, size_t max);

/* samplers/: the sampler thread (sampler.c) and the CPU placement of threads (numa.c). */
/* Before the process's first thread registers: the NUMA map and lt_cpu_records. */
LT_HIDDEN void lt_sampler_prepare(void);
LT_HIDDEN void lt_sampler_start(void); /* then the thread: after init, in the child of fork */
LT_HIDDEN void lt_sampler_stop(int wait);
/* Stops the sampler thread and waits until it is gone, keeping its state (its thread in the
 * trace, its sources); lt_sampler_resume starts it again.  0, or -1 when it did not stop. */
LT_HIDDEN int lt_sampler_pause(void);
LT_HIDDEN void lt_sampler_resume(void);
LT_HIDDEN void lt_sampler_after_fork_child(void);
/* Threads record their CPU (LT_SAMPLE_CPU with the sampler thread on). */
extern LT_HIDDEN int lt_cpu_records;
/* The NUMA node of a CPU, 0xffff when unknown. */
LT_HIDDEN unsigned lt_cpu_node(int cpu);
/* A CPU record of t's current CPU (sched_getcpu) and its node. */
LT_HIDDEN void lt_cpu_record(struct lt_thread *t);

/* strings.c */
LT_HIDDEN uint32_t lt_string_id(struct lt_thread *t, const char *s);
LT_HIDDEN void lt_strings_after_fork_child(void);

/* meta.c */
LT_HIDDEN int lt_meta_open(const char *dir);
LT_HIDDEN void lt_meta_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whole lines, written as they are in one write(2). */
LT_HIDDEN void lt_meta_raw(const char *buf, size_t len);
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

/* papi.c: the modules whose ENTER/LEAVE records carry a COUNTERS reading (0: PAPI off). */
extern LT_HIDDEN unsigned lt_papi_modules;
LT_HIDDEN void lt_papi_init(void);
LT_HIDDEN void lt_papi_read(struct lt_thread *t); /* writes a COUNTERS record */
LT_HIDDEN void lt_papi_thread_end(struct lt_thread *t);
LT_HIDDEN void lt_papi_after_fork_child(void);

/* A PAPI reading for the ENTER or LEAVE record of module `mod` that follows (about 0.8 us
 * where counters are read through a system call: only at region boundaries). */
static inline void lt_counters(struct lt_thread *t, unsigned mod)
{
	if (unlikely(lt_papi_modules & mod))
		lt_papi_read(t);
}

/*
 * Call sites (callsite.c).  An exported wrapper notes where the program called it from
 * (LT_NOTE_CALLER, in the exported function itself); the record of the call then carries
 * that return address as its last payload word, with LT_REC_F_CALLSITE in its type (8
 * bytes, no extra record).  With LIBTRACE_CALLSITE_DEPTH > 1 a CALLSITE record with the
 * outer frames, found by a bounded frame-pointer walk, comes just before it.
 */
extern LT_HIDDEN int lt_callsite_depth; /* LIBTRACE_CALLSITE_DEPTH once init is over */
LT_HIDDEN void lt_callsite_deep(struct lt_thread *t, uint64_t ts);
LT_HIDDEN void lt_callsite_thread(struct lt_thread *t); /* notes the thread's stack bounds */

#if defined(__x86_64__)
#define LT_FRAME_REGISTER()                                    \
	({                                                     \
		uintptr_t fp_;                                 \
		__asm__ volatile("mov %%rbp, %0" : "=r"(fp_)); \
		fp_;                                           \
	})
#else
#define LT_FRAME_REGISTER() ((uintptr_t)0)
#endif

/* In an exported function, after lt_begin(): where the program called it from.  The frame
 * register may hold anything (code built without frame pointers): the walk checks it. */
#define LT_NOTE_CALLER(t)                                               \
	((t)->cs_ra = (uint64_t)(uintptr_t)__builtin_return_address(0), \
	 (t)->cs_fp = LT_FRAME_REGISTER(), (void)0)

/* The same, taken in an exported function before it knows its thread (a helper notes it). */
struct lt_caller {
	uint64_t ra;
	uintptr_t fp;
};
#define LT_CALLER() \
	((struct lt_caller){(uint64_t)(uintptr_t)__builtin_return_address(0), LT_FRAME_REGISTER()})

static inline void lt_note_caller(struct lt_thread *t, struct lt_caller c)
{
	t->cs_ra = c.ra;
	t->cs_fp = c.fp;
}

/* The call site word of a record stamped `ts` (0: call sites off); depth > 1 writes the
 * CALLSITE record of the outer frames first. */
static inline uint64_t lt_callsite(struct lt_thread *t, uint64_t ts)
{
	int depth = lt_callsite_depth;
	if (likely(depth == 1))
		return t->cs_ra;
	if (!depth)
		return 0;
	lt_callsite_deep(t, ts);
	return t->cs_ra;
}

/* OpenMP records that open or close a region on the thread (they carry PAPI readings). */
static inline int lt_omp_is_region(unsigned type)
{
	return type == LT_REC_OMP_ENTER || type == LT_REC_OMP_LEAVE ||
	       type == LT_REC_OMP_TEAM_BEGIN || type == LT_REC_OMP_TEAM_END ||
	       type == LT_REC_OMP_TASK_BEGIN || type == LT_REC_OMP_TASK_END;
}

/* A record of `n` payload words (n <= 2) and the call site noted in t (OpenMP). */
static inline void lt_emit_cs(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
			      unsigned n, uint64_t p0, uint64_t p1)
{
	if (lt_omp_is_region(type))
		lt_counters(t, LT_MOD_OMP);
	uint64_t ts = lt_now();
	uint64_t ra = lt_callsite(t, ts);
	unsigned w = 2 + n + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, type | (ra ? LT_REC_F_CALLSITE : 0), w, sub, arg);
	if (n > 0)
		p[2] = p0;
	if (n > 1)
		p[3] = p1;
	if (ra)
		p[2 + n] = ra;
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

/* The CALL records (and lt_call_enter_cs, lt_call_enter2) carry the call site noted in t:
 * only the pthread wrappers, which note it, use them. */
static inline void lt_call_put(struct lt_thread *t, uint64_t ts, enum lt_fn fn, const void *obj,
			       int result)
{
	uint64_t ra = lt_callsite(t, ts);
	unsigned w = 3 + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, LT_REC_CALL | (ra ? LT_REC_F_CALLSITE : 0), w, fn, (uint32_t)result);
	p[2] = (uint64_t)(uintptr_t)obj;
	if (ra)
		p[3] = ra;
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

/* A CALL_ENTER of `n` payload words (n <= 2) with the call site noted in t. */
static inline void lt_call_enter_n(struct lt_thread *t, enum lt_fn fn, unsigned n, uint64_t p0,
				   uint64_t p1)
{
	uint64_t ts = lt_now();
	uint64_t ra = lt_callsite(t, ts);
	unsigned w = 2 + n + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, LT_REC_CALL_ENTER | (ra ? LT_REC_F_CALLSITE : 0), w, fn, 0);
	if (n > 0)
		p[2] = p0;
	if (n > 1)
		p[3] = p1;
	if (ra)
		p[2 + n] = ra;
	lt_commit(t);
}

/* lt_call_enter with the call site noted in t. */
static inline void lt_call_enter_cs(struct lt_thread *t, enum lt_fn fn, const void *obj)
{
	lt_call_enter_n(t, fn, 1, (uint64_t)(uintptr_t)obj, 0);
}

/* A call on two objects (a condition wait: p[0] the condition, p[1] the mutex). */
static inline void lt_call_enter2(struct lt_thread *t, enum lt_fn fn, const void *obj,
				  const void *obj2)
{
	lt_call_enter_n(t, fn, 2, (uint64_t)(uintptr_t)obj, (uint64_t)(uintptr_t)obj2);
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
	if (lt_omp_is_region(type))
		lt_counters(t, LT_MOD_OMP);
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

/*
 * cupti.c: CUPTI, loaded with dlopen when the process has CUDA (libcudart or libcuda
 * loaded at start, or dlopened later: a static cudart opens libcuda.so.1 at its first
 * call).  lt_cupti_active is non-zero once CUPTI records CUDA for this process (the
 * cudart wrappers stay quiet then).  lt_cupti_flush() hands the activity records CUPTI
 * still holds to the trace (process end, exec).
 */
extern LT_HIDDEN int lt_cupti_active;
LT_HIDDEN void lt_cupti_init(void);
LT_HIDDEN void lt_cupti_dlopened(const char *name, void *handle);
LT_HIDDEN void lt_cupti_flush(void);

/* log.c: async-signal-safe logging to stderr (snprintf to a stack buffer + write). */
LT_HIDDEN void lt_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define lt_warn(...)  lt_log(0, __VA_ARGS__)
#define lt_info(...)  lt_log(1, __VA_ARGS__)
#define lt_debug(...) lt_log(2, __VA_ARGS__)

/* Real functions: resolved with dlsym(RTLD_NEXT) once, lazily. */
LT_HIDDEN void *lt_dlsym_next(const char *name, const char *version);
/* The same, or else `name` in one of `libs` (NULL-terminated) if one is loaded: a runtime
 * that a library opened with RTLD_LOCAL, which RTLD_NEXT does not see, while its calls
 * still reach our wrappers.  NULL when none defines it. */
LT_HIDDEN void *lt_dlsym_runtime(const char *name, const char *const *libs);
/* Joins th, waiting one second at most (a helper thread stuck in I/O must not hold the
 * program up).  0 when it is gone. */
LT_HIDDEN int lt_join_helper(pthread_t th);
/* Resolves the real function `name` into real_##name once (version: NULL or "GLIBC_2.x"). */
#define LT_RESOLVE(name, version)                                    \
	do {                                                         \
		if (unlikely(!real_##name))                          \
			real_##name = lt_dlsym_next(#name, version); \
	} while (0)

#endif /* LIBTRACE_LT_H */
