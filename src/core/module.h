/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.h - what a module (an interposer, a source of samples, the counters) may use of the
 * libtrace runtime: the hot path that encodes records into the calling thread's chunk (lt_begin,
 * the emitters, lt_finish), call sites, the thread registry's public side, the meta file,
 * logging, settings, and the module interface (struct lt_module) by which the core calls
 * modules at the moments of a process's life.  The core's own internals are in lt.h.
 *
 * Everything here runs inside somebody else's program: no exit/abort, no stdio, no locks
 * on the hot path, and the tracer's own calls are never traced (per-thread guard).
 */
#ifndef LIBTRACE_MODULE_H
#define LIBTRACE_MODULE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "format.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the record encoder assumes a little-endian machine"
#endif

#define LT_EXPORT __attribute__((visibility("default")))
#define LT_HIDDEN __attribute__((visibility("hidden")))
#define LT_TLS	  __attribute__((tls_model("initial-exec")))
/*
 * For a static array or structure of 4 KiB or more.  The library is linked with its
 * variables sorted by alignment (CMakeLists.txt), so these come first and the small ones
 * lie together after them: a short process touches a few pages of the library's data, not
 * one page per file it uses (each first touch of a page is a page fault).
 */
#define LT_PAGE_ALIGNED __attribute__((aligned(4096)))
#define likely(x)	__builtin_expect(!!(x), 1)
/* LT_UNPAREN (a, b) is a, b: splices a parenthesised list into another one. */
#define LT_UNPAREN(...) __VA_ARGS__
#define unlikely(x)	__builtin_expect(!!(x), 0)

/* lt_active's bits are the LIBTRACE_MODULES bits, in the order of the option table's module
 * names (their enum: src/common/modules.h); the core only ever tests a wrapper's own bit. */

enum lt_state {
	LT_STATE_UNINIT = 0,
	LT_STATE_INITIALIZING,
	LT_STATE_ON,
	LT_STATE_OFF, /* disabled for good: AT_SECURE, bad output path, init failure */
};

/* A module's word of per-thread storage (struct lt_thread's `local`, see lt_local). */
union lt_local {
	uint64_t n;
	void *p;
};
#define LT_MODULES_MAX 24 /* registered modules with per-thread storage */

#define LT_SHORT_DEPTH 16 /* nested regions LIBTRACE_MIN_DURATION can take out */

/* Per-thread state.  Reached through one initial-exec TLS pointer; lives in pages of its own
 * (thread.c). */
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
	int unseen;			     /* in a process made by a raw clone (buffer.c) */
	int in_fork;			     /* inside the fork wrapper's real call */
	int hold_writer;		     /* LT_HOLD_*: a full chunk starts no writer */
	int moving;			     /* depth of its moves between chunks (buffer.c) */
	uint64_t lost_noslot;		     /* events lost because the thread got no slot */
	uint64_t ids;			     /* ids handed out by lt_thread_id */
	struct lt_chunk_header dummy;	     /* lt_commit() target while dropping */
	uint64_t sink[LT_REC_WORDS_MAX + 1]; /* where dropped records are encoded */
	/* Call sites (callsite.c). */
	uint64_t cs_ra;	    /* where the traced call returns to: frame 1 of its call site */
	uintptr_t cs_fp;    /* the caller's frame pointer then (0: unknown), for depth > 1 */
	uintptr_t stack_lo; /* the thread's stack, for the frame walk (0: unknown) */
	uintptr_t stack_hi;
	/* Owned by thread.c and strings.c. */
	struct lt_thread *next_live, *prev_live;
	struct {
		const char *ptr;
		const char *interned;
		uint32_t id;
	} scache[32]; /* strings seen lately by pointer, for the annotation API */
	/* Selective recording (filter.c). */
	uint64_t dropped[LT_DROP_CAUSES]; /* calls and regions not recorded, by enum lt_drop */
	uint64_t *cnt_at, *cnt_end;	  /* the last COUNTERS record written, */
	uint64_t cnt_seq;		  /* in the chunk before this seq */
	unsigned short_depth;		  /* open enters noted for LIBTRACE_MIN_DURATION */
	struct {
		uint64_t *at; /* where the enter's records begin */
		uint64_t seq; /* t->seq then: the same chunk */
	} short_open[LT_SHORT_DEPTH];
	/* Each module's own per-thread word (zero at the thread's start; lt_local). */
	union lt_local local[LT_MODULES_MAX];
};

/* struct lt_thread's hold_writer: in the fork wrapper; then, after fork returned in the
 * parent, until the next full chunk (the program's own calls right after a fork, which a
 * check of its thread count may follow, as Python's does). */
enum { LT_HOLD_NONE = 0, LT_HOLD_FORK, LT_HOLD_NEXT };

/* Global state. */
extern LT_HIDDEN int lt_state;
/* Modules recording now, plus LT_ACTIVE_INIT once init is over (whatever its outcome):
 * zero only before init. */
extern LT_HIDDEN unsigned lt_active;
#define LT_ACTIVE_INIT 0x80000000u
extern LT_HIDDEN __thread struct lt_thread *lt_self LT_TLS;
extern LT_HIDDEN __thread int lt_tls_guard LT_TLS; /* before lt_self exists */
/* lt_self's index, which survives the state's pages being wiped in a raw clone's child. */
extern LT_HIDDEN __thread uint32_t lt_self_index LT_TLS;
/* Set by the tracer's own threads that register (a module's helper): not the program's. */
extern LT_HIDDEN __thread int lt_helper_thread LT_TLS;
/* Non-zero while the thread is inside the dynamic loader (dlopen, dlclose): its lists may be
 * half changed, so nothing walks them from a signal handler (stack unwinding). */
extern LT_HIDDEN __thread int lt_in_loader LT_TLS;
/* Non-zero while this thread is inside a traced call of a runtime library (message passing, GPU):
 * the threads that library starts then are its own (progress, PMIx, the GPU runtimes'
 * workers), not the program's, and are not traced. */
extern LT_HIDDEN __thread int lt_in_runtime LT_TLS;

/* init.c */
LT_HIDDEN void lt_init(void);
LT_HIDDEN void lt_before_exec(void);
/* False in the child of vfork, which runs on its parent's memory (a getpid syscall). */
LT_HIDDEN int lt_is_traced_process(void);
LT_HIDDEN void lt_process_end(const char *how);
LT_HIDDEN const char *lt_process_dir(void);
/*
 * vfork: the child runs on this thread's memory, its state included, until it execs or
 * exits.  lt_vfork_begin, just before the real call, raises the thread's guards so that the
 * child records nothing into its parent's stream; the parent takes them down again at its
 * next entry into the tracer (lt_vfork_settle: a getpid syscall tells the two apart), since
 * the wrapper cannot run anything after the real call returns (the child would have
 * returned through the same stack).  lt_vfork_settle: 1 in the child (record nothing), 0
 * elsewhere.
 */
extern LT_HIDDEN __thread pid_t lt_vfork_pid LT_TLS; /* the parent's pid while it settles */
LT_HIDDEN void lt_vfork_begin(void);
LT_HIDDEN int lt_vfork_settle_slow(void);
static inline int lt_vfork_settle(void)
{
	return __builtin_expect(lt_vfork_pid != 0, 0) ? lt_vfork_settle_slow() : 0;
}

/* clock.c */
/* LT_CLOCK_EMULATED: a trace begun with the TSC, which the program turned off since: its
 * ticks from CLOCK_MONOTONIC read with a system call (clock.c). */
enum lt_clock_kind { LT_CLOCK_TSC = 0, LT_CLOCK_MONOTONIC = 1, LT_CLOCK_EMULATED = 2 };
LT_HIDDEN extern int lt_clock_kind;
LT_HIDDEN double lt_clock_hz(void);
LT_HIDDEN uint64_t lt_clock_mono_ns(void);
LT_HIDDEN uint64_t lt_clock_real_ns(void);
/* lt_now where the TSC is not read: CLOCK_MONOTONIC, or the emulated ticks. */
LT_HIDDEN uint64_t lt_clock_ticks_slow(void);
/* clock_gettime, as a system call once the TSC is off (the vDSO reads it). */
LT_HIDDEN int lt_clock_gettime(clockid_t id, struct timespec *ts);
/* The program is about to turn the TSC off for its thread (PR_SET_TSC): every clock is
 * read with a system call from now on. */
LT_HIDDEN void lt_clock_tsc_off(void);
/* Whether the TSC is off for the calling thread (a system call). */
LT_HIDDEN int lt_clock_tsc_is_off(void);

static inline uint64_t lt_now(void)
{
#if defined(__x86_64__)
	if (likely(lt_clock_kind == LT_CLOCK_TSC)) {
		uint32_t lo, hi;
		__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
		return ((uint64_t)hi << 32) | lo;
	}
#endif
	return lt_clock_ticks_slow();
}

/* writer.c: starts a helper thread (the writer, a module's) with `create` (the real
 * pthread_create, resolved by the caller), a stack of `stack` bytes (0: the default), every
 * signal blocked, an ordinary policy, on the CPUs the process could use at its start, or,
 * when its cpuset has refused all of those since, on those it may use now.  0, or the
 * error. */
typedef int lt_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
LT_HIDDEN int lt_helper_create(lt_create_fn *create, pthread_t *th, size_t stack,
			       void *(*fn)(void *), void *arg);

/* buffer.c: the encoder's slow half, and the helper threads stepping aside. */
LT_HIDDEN uint64_t *lt_reserve_slow(struct lt_thread *t, unsigned words);
/* After the program's mlockall(MCL_CURRENT...) failed with ENOMEM: locks the program's own
 * mappings, not the tracer's.  0, or -1 with errno. */
LT_HIDDEN int lt_buffer_mlock_program(int flags);
/* The tracer's helper threads (the writer, the modules' threads) stopped and gone, for a call that
 * needs the process single-threaded when the program is (fork, unshare, setns): they come back when
 * next needed, after the call. */
LT_HIDDEN void lt_helpers_pause(void);
/* The program's pthread_create failed with EAGAIN (`ulimit -u`): the helpers step aside.
 * Non-zero when the call is worth trying again. */
LT_HIDDEN int lt_helpers_pause_for_program(void);

/*
 * file.c: the tracer's descriptors sit high and the descriptor wrappers hide them from the
 * program.  The descriptors the program must not see: the tracer's files and any other it
 * holds (a module's sources).  lt_fd_list: at most max of them, in increasing order.
 */
#define LT_FD_BASE 100
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
/* The program ran out of descriptor numbers (EMFILE) while the tracer's files sit under the
 * soft limit (from LT_FD_BASE, where that limit is over 4096): they move above it, the hard
 * limit allowing.  1 when one moved (the program's call may be made again), else 0; errno
 * is kept. */
LT_HIDDEN int lt_file_lift(void);

/* thread.c: the registry's public side (thread wrappers, helper threads). */
LT_HIDDEN struct lt_thread *lt_thread_register(uint32_t index, uint32_t parent, uintptr_t start);
LT_HIDDEN void lt_thread_end(struct lt_thread *t); /* t goes back to the registry */
LT_HIDDEN uint32_t lt_thread_new_index(void);
/* The calling thread records no more (seccomp's strict mode is coming, where no system call
 * of the tracer's would be allowed): its THREAD_END now; lt_thread_unseal if the program's
 * call failed after all (it records again, as a new thread). */
LT_HIDDEN void lt_thread_seal(void);
LT_HIDDEN void lt_thread_unseal(void);
LT_HIDDEN void lt_thread_map_put(unsigned long handle, uint32_t index);
LT_HIDDEN uint32_t lt_thread_map_get(unsigned long handle, int remove);
/* The live threads' indices and tids (at most max).  The count. */
LT_HIDDEN size_t lt_thread_list(uint32_t *index, uint32_t *tid, size_t max);
/* Calls fn(t, arg) on each live thread, under the registry's lock: fn takes no lock, makes no
 * system call and records nothing. */
LT_HIDDEN void lt_thread_each(void (*fn)(struct lt_thread *t, void *arg), void *arg);

/* strings.c */
LT_HIDDEN uint32_t lt_string_id(struct lt_thread *t, const char *s);

/* meta.c: lines of the process's meta file. */
LT_HIDDEN void lt_meta_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whole lines, written as they are in one write(2). */
LT_HIDDEN void lt_meta_raw(const char *buf, size_t len);
LT_HIDDEN void lt_meta_escaped(const char *key, const char *value);
LT_HIDDEN void lt_meta_escaped2(const char *key, const char *a, const char *b);
LT_HIDDEN void lt_meta_maps(void);

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
	 * the guard down (a signal fence: the handler runs on this thread). */
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

/* Counters: the modules whose ENTER/LEAVE records carry a COUNTERS reading (0: none), and
 * what writes it.  Set by the counters module before any thread records, then only read. */
extern LT_HIDDEN unsigned lt_counter_modules;
extern LT_HIDDEN void (*lt_counter_read)(struct lt_thread *t);

/* A reading for the ENTER or LEAVE record of module `mod` that follows (about 0.8 us
 * where counters are read through a system call: only at region boundaries). */
static inline void lt_counters(struct lt_thread *t, unsigned mod)
{
	if (unlikely(lt_counter_modules & mod)) {
		/* Noted for the selective recording: the reading goes where its record goes. */
		t->cnt_at = t->pos;
		lt_counter_read(t);
		t->cnt_end = t->pos;
		t->cnt_seq = t->seq;
	}
}

/*
 * Selective recording (filter.c): LIBTRACE_EXCLUDE / LIBTRACE_INCLUDE name filters and
 * LIBTRACE_MIN_DURATION.  With neither set, each costs one load and a branch per record.
 *
 * A filtered call or region writes nothing (its COUNTERS reading, written just before, is
 * taken back) and counts in t->dropped[LT_DROP_FILTER].  With a minimum duration, every enter
 * notes where its records begin (lt_short_open); at the leave, if nothing but the enter's
 * own records came after that point in the same chunk and it began less than the minimum
 * ago, the thread's cursor goes back there (lt_short_close: true, write no leave).  Nested
 * short regions go innermost first, so a short region holding only short ones goes too.
 */
extern LT_HIDDEN uint64_t lt_min_ticks;	       /* LIBTRACE_MIN_DURATION in clock ticks, 0: off */
extern LT_HIDDEN unsigned char lt_filter_fns;  /* some lt_fn is filtered out */
extern LT_HIDDEN unsigned char lt_filter_strs; /* some name is filtered out */
extern LT_HIDDEN unsigned char lt_fn_off[LT_FN_MAX];  /* by enum lt_fn: not recorded */
extern LT_HIDDEN unsigned char lt_str_off[65536 / 8]; /* by string id: a filtered name */
LT_HIDDEN int lt_fn_skip_slow(struct lt_thread *t, unsigned fn, int count);
LT_HIDDEN void lt_short_push(struct lt_thread *t, uint64_t *at);
LT_HIDDEN int lt_short_pop(struct lt_thread *t);
LT_HIDDEN void lt_filter_drop(struct lt_thread *t);
/* ltr_trace_pause / ltr_trace_resume: t (may be NULL) records the pause's marker. */
LT_HIDDEN void lt_recording_pause(struct lt_thread *t);
LT_HIDDEN void lt_recording_resume(void);
/* Recording is paused, and module `mod` records when it is not. */
LT_HIDDEN int lt_recording_paused(unsigned mod);

/* True when call `fn` is not to be recorded; `count`: this is its first record. */
static inline int lt_fn_skip(struct lt_thread *t, unsigned fn, int count)
{
	return unlikely(lt_filter_fns) && lt_fn_skip_slow(t, fn, count);
}

/* True when the name of string id `id` is filtered out (a region, a kernel, a call). */
static inline int lt_str_skip(uint32_t id)
{
	return unlikely(lt_filter_strs) && id < 65536 && (lt_str_off[id >> 3] >> (id & 7) & 1);
}

/* For an enter whose records began at `at` (t->pos before them). */
static inline void lt_short_open(struct lt_thread *t, uint64_t *at)
{
	if (unlikely(lt_min_ticks))
		lt_short_push(t, at);
}

/* Before a leave's record: true when the pair is taken out (write no leave). */
static inline int lt_short_close(struct lt_thread *t)
{
	return unlikely(lt_min_ticks) && lt_short_pop(t);
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
LT_HIDDEN void lt_callsite_init(int depth);		/* at init: LIBTRACE_CALLSITE_DEPTH */
/* This library's code, [lt_self_lo, lt_self_hi) (found at init): frames in it are the
 * tracer's (wrappers, the trampolines of start routines and outlined functions). */
extern LT_HIDDEN uintptr_t lt_self_lo, lt_self_hi;
static inline int lt_self_code(uintptr_t pc)
{
	return pc >= __atomic_load_n(&lt_self_lo, __ATOMIC_RELAXED) &&
	       pc < __atomic_load_n(&lt_self_hi, __ATOMIC_RELAXED);
}

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

/* A record of `n` payload words (n <= 2) and the call site noted in t. */
static inline void lt_emit_cs(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
			      unsigned n, uint64_t p0, uint64_t p1)
{
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
	if (lt_fn_skip(t, fn, 1))
		return;
	if (unlikely(lt_min_ticks)) {
		t->dropped[LT_DROP_SHORT]++; /* a call that does not block is shorter than any */
		return;
	}
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
	if (lt_fn_skip(t, fn, 1))
		return;
	uint64_t *at = t->pos;
	lt_emit1(t, LT_REC_CALL_ENTER, fn, 0, (uint64_t)(uintptr_t)obj);
	lt_short_open(t, at);
}

/* A CALL_ENTER of `n` payload words (n <= 2) with the call site noted in t. */
static inline void lt_call_enter_n(struct lt_thread *t, enum lt_fn fn, unsigned n, uint64_t p0,
				   uint64_t p1)
{
	if (lt_fn_skip(t, fn, 1))
		return;
	uint64_t *at = t->pos;
	lt_emit_cs(t, LT_REC_CALL_ENTER, fn, 0, n, p0, p1);
	lt_short_open(t, at);
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
	if (lt_fn_skip(t, fn, 1))
		return;
	uint64_t *at = t->pos;
	lt_emit0(t, LT_REC_CALL_ENTER, fn, 0);
	lt_short_open(t, at);
}

static inline void lt_call_leave(struct lt_thread *t, enum lt_fn fn, int result)
{
	if (lt_fn_skip(t, fn, 0) || lt_short_close(t))
		return;
	lt_emit0(t, LT_REC_CALL_LEAVE, fn, (uint32_t)result);
}

/* A record of `n` payload words (n <= 2): the common shape of many records. */
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

/* A new id for something t created (a region, a task): unique in the process. */
static inline uint64_t lt_thread_id(struct lt_thread *t)
{
	return (uint64_t)t->index << 40 | ++t->ids;
}

/*
 * Modules.  A module is one file that defines a `struct lt_module` with LT_MODULE(id): the
 * linker gathers them into the section lt_modules, so the table exists before any
 * constructor has run (init is lazy and may run from the first wrapper call, inside another
 * library's constructor).  Adding a module is its file plus the line that adds it to the
 * build.  Every hook is optional (NULL: none); the core calls each hook of every module in
 * increasing `order`, whatever LIBTRACE_MODULES says: a hook checks what it needs.
 */
struct lt_module {
	const char *name;
	unsigned bit; /* its LIBTRACE_MODULES bit, 0 when it has none */
	int order;    /* hooks run in increasing order (ties: link order) */
	/* Before tracing makes anything in a process (init, after the settings; only when
	 * LIBTRACE_MODULES has the module on): a module may start the program again here
	 * (exec), before any of it has run. */
	void (*preflight)(void);
	/* The library constructor, after init. */
	void (*constructor)(void);
	/* Lines of the module's own in the meta file's header (init and fork child). */
	void (*meta)(void);
	/* Tracing starts in a process (forked: in the child of fork, new files open), before
	 * thread 0 registers; then `started`, after it did. */
	void (*start)(int forked);
	void (*started)(int forked);
	/* First thing in the child of fork, on the forking thread: forget the parent's. */
	void (*fork_child)(void);
	/* A dlopen returned `handle` (NULL: it failed) for `name`. */
	void (*dlopened)(const char *name, void *handle);
	/* unshare/setns need the process single-threaded: helper threads step aside (pause),
	 * and come back (resume) when the tracer's own helpers do. */
	void (*pause)(void);
	void (*resume)(void);
	/* Before exec: hand to the trace what the module still buffers. */
	void (*before_exec)(void);
	/* Process end: hand over what it buffers (not when a signal handler interrupted the
	 * tracer), then stop (wait: may wait a bounded time for a thread of its own). */
	void (*end_flush)(void);
	void (*end_stop)(int wait);
	/* The process has a second thread now: the program's first pthread_create (or its
	 * runtime's), or the writer thread, started when the trace fills a chunk.  Once per
	 * process (again in the child of fork), never from a signal handler: a module may start
	 * a helper thread of its own here, so that a single-threaded process that records
	 * little stays single-threaded.  When that happened while init ran, it is called at
	 * the end of init, and may be called twice. */
	void (*threaded)(void);
	/* A thread starts (after THREAD_BEGIN, guard held) or ends (before THREAD_END). */
	void (*thread_start)(struct lt_thread *t);
	void (*thread_end)(struct lt_thread *t);
	/* The calling thread t changed its own CPU affinity (lt_thread_moved). */
	void (*thread_moved)(struct lt_thread *t);
	/* Non-zero while the module itself will end the trace (a runtime whose threads report
	 * after the library destructor): the destructor then leaves the end to it. */
	int (*ends_trace)(void);
};

/* Defines module `id` (a `static const struct lt_module` initialiser follows). */
#define LT_MODULE(id)                                            \
	extern const struct lt_module lt_module_##id;            \
	__attribute__((used, section("lt_modules"), aligned(8))) \
	const struct lt_module lt_module_##id

/* The section's bounds (weak: a build without modules has none). */
extern const struct lt_module __start_lt_modules[] __attribute__((weak, visibility("hidden")));
extern const struct lt_module __stop_lt_modules[] __attribute__((weak, visibility("hidden")));

/* Module m's own word of t's per-thread storage (zero when the thread starts). */
static inline union lt_local *lt_local(struct lt_thread *t, const struct lt_module *m)
{
	return &t->local[m - __start_lt_modules];
}

/* The process gets a second thread (the pthread_create wrapper, traced or not, and the writer
 * thread's start): the modules' threaded hooks, the first time.  Not from a signal handler. */
LT_HIDDEN void lt_process_threaded(void);
/* Calls the modules' dlopened hooks (the dlopen wrapper, traced or not). */
LT_HIDDEN void lt_dlopened(const char *name, void *handle);
/* The calling thread t changed its own CPU affinity: the thread_moved hooks.  A wrapper
 * that may report it first tests lt_track_moves (non-zero while a module follows CPUs). */
LT_HIDDEN void lt_thread_moved(struct lt_thread *t);
extern LT_HIDDEN int lt_track_moves;

/* Claims: a paradigm (a LIBTRACE_MODULES bit) that another source reports for the whole
 * process (a runtime's tool interface instead of the wrappers of its entry points): the
 * wrappers of a claimed paradigm pass calls through unrecorded, so nothing is recorded twice. */
extern LT_HIDDEN unsigned lt_claims;
LT_HIDDEN void lt_claim(unsigned mod, int on);
static inline int lt_claimed(unsigned mod)
{
	return (__atomic_load_n(&lt_claims, __ATOMIC_RELAXED) & mod) != 0;
}
/* Non-zero while a wrapper runs a try-lock call that the source of a claim reports as a
 * blocking lock (that source then records it as the try it is). */
extern LT_HIDDEN __thread int lt_in_try LT_TLS;

/* Settings (config.c's table is the one list of LIBTRACE_* variables), read by name:
 * lt_setting gives a number, duration (ns), choice (its word's index) or word list (a mask),
 * lt_setting_str a string ("" when unset).  An unknown name gives 0 / "". */
LT_HIDDEN uint64_t lt_setting(const char *name);
/* The LIBTRACE_MODULES names, in bit order (NULL-terminated). */
extern LT_HIDDEN const char *const lt_module_names[];
LT_HIDDEN const char *lt_setting_str(const char *name);
/* Whether the user set it (validly) in the environment, rather than left the default. */
LT_HIDDEN int lt_setting_given(const char *name);
/* Another runtime's variable that the tracer must respect (a runtime's tool variable, the
 * launchers' rank variables): its value, or NULL when unset or empty.  Only known names. */
LT_HIDDEN const char *lt_foreign_env(const char *name);
/* The process's arguments as /proc/self/cmdline has them (each ends with a NUL), read once
 * at start and kept; *len their length.  NULL (and 0) when they cannot be read. */
LT_HIDDEN const char *lt_cmdline(size_t *len);

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
/* The same through the module's own lookup(const char *name): a runtime that RTLD_NEXT may
 * not see (one opened RTLD_LOCAL, one of several sonames). */
#define LT_RESOLVE_BY(name, lookup)                  \
	do {                                         \
		if (unlikely(!real_##name))          \
			real_##name = lookup(#name); \
	} while (0)

#endif /* LIBTRACE_MODULE_H */
