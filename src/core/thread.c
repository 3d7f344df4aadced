// SPDX-License-Identifier: BSD-3-Clause
/*
 * thread.c - the thread registry: process-local thread indices, the per-thread state, and
 * the pthread_t -> index map that lets a joiner name the thread it waited for.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lock.h"
#include "lt.h"

__thread struct lt_thread *lt_self LT_TLS;
__thread int lt_tls_guard LT_TLS;
__thread uint32_t lt_self_index LT_TLS;
__thread int lt_helper_thread LT_TLS;
__thread int lt_in_loader LT_TLS;

static uint32_t next_index;
static pthread_key_t end_key;
static int end_key_ok;
static struct lt_lock reg_lock = LT_LOCK_INIT;
static struct lt_thread *live; /* every registered thread that has not ended; reg_lock */

/*
 * Thread states are pages of their own, not heap: a thread may register in a signal handler
 * that interrupted malloc (one started with a signal mask of its own, which glibc sets
 * before our trampoline could block signals, gets one in the trampoline's free), and there
 * calloc would wait forever on the allocator's lock.  mmap is a system call, safe in a
 * handler.  The pages are MADV_WIPEONFORK: a process made by a raw clone system call, which
 * the tracer did not see being made, finds its copy of the state zeroed, a NULL chunk,
 * rather than a cursor into its parent's shared ring (buffer.c then counts what it would
 * have recorded as unseen).  The states of ended threads wait in `spare` for the next ones;
 * they are never unmapped.
 */
static struct lt_thread *spare; /* linked through next_live; reg_lock */

static size_t state_size(void)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t pg = page > 0 ? (size_t)page : 4096;
	return (sizeof(struct lt_thread) + pg - 1) / pg * pg;
}

static struct lt_thread *state_new(void)
{
	lt_lock(&reg_lock);
	struct lt_thread *t = spare;
	if (t)
		spare = t->next_live;
	lt_unlock(&reg_lock);
	if (t) {
		memset(t, 0, sizeof(*t));
		return t;
	}
	void *p =
	    mmap(NULL, state_size(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Linux 4.14; before it, a raw clone's child writes into its parent's ring, as it did
	 * before this existed. */
	madvise(p, state_size(), MADV_WIPEONFORK);
	return p; /* zero pages */
}

/* Runs when a thread exits by any path (return, pthread_exit, cancellation). */
static void end_key_destructor(void *p)
{
	struct lt_thread *t = p;
	lt_vfork_settle();
	if (lt_self != t)
		return; /* already ended (lt_thread_end clears lt_self) */
	lt_guard_take(t);
	lt_thread_end(t);
}

void lt_thread_init(void)
{
	end_key_ok = pthread_key_create(&end_key, end_key_destructor) == 0;
}

uint32_t lt_thread_new_index(void)
{
	return __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
}

struct lt_thread *lt_thread_register(uint32_t index, uint32_t parent, uintptr_t start)
{
	struct lt_thread *t = state_new();
	if (!t)
		return NULL;
	t->index = index;
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->guard = 1;
	lt_callsite_thread(t);
	lt_buffer_attach(t);
	lt_lock(&reg_lock);
	t->next_live = live;
	if (live)
		live->prev_live = t;
	live = t;
	lt_unlock(&reg_lock);
	lt_self = t;
	lt_self_index = index;
	if (end_key_ok)
		pthread_setspecific(end_key, t);
	uint64_t *p = lt_reserve(t, 4);
	lt_rec_put(p, lt_now(), LT_REC_THREAD_BEGIN, 4, 0, index);
	p[2] = start;
	p[3] = (uint64_t)parent << 32 | t->tid;
	lt_commit(t);
	lt_modules_thread_start(t);
	lt_finish(t);
	return t;
}

/*
 * How many chunks each ended thread wrote, for the meta file ("chunks" lines): the tools
 * tell a thread whose chunks were all lost (an events file cut short) from one that never
 * was.  Kept here and written in batches (a write per thread end would cost a thread's
 * start and end a fifth more): by the writer thread, when the batch is full, before exec
 * and at the end.  A process killed before a batch is written loses only the check.
 */
#define COUNTS_MAX 128
static struct {
	uint32_t index;
	uint64_t chunks;
} counts[COUNTS_MAX];
static unsigned ncounts; /* counts_lock */
static struct lt_lock counts_lock = LT_LOCK_INIT;

static void counts_write_locked(void)
{
	char buf[4096];
	size_t n = 0;
	for (unsigned i = 0; i < ncounts; i++) {
		if (n + 48 > sizeof(buf)) {
			lt_meta_raw(buf, n);
			n = 0;
		}
		n += (size_t)lt_snprintf(buf + n, sizeof(buf) - n, LT_META_CHUNKS " %u %llu\n",
					 counts[i].index, (unsigned long long)counts[i].chunks);
	}
	if (n)
		lt_meta_raw(buf, n);
	__atomic_store_n(&ncounts, 0, __ATOMIC_RELAXED);
}

static void count_chunks(uint32_t index, uint64_t chunks)
{
	lt_lock(&counts_lock);
	if (ncounts == COUNTS_MAX)
		counts_write_locked();
	counts[ncounts].index = index;
	counts[ncounts].chunks = chunks;
	__atomic_store_n(&ncounts, ncounts + 1, __ATOMIC_RELAXED); /* read unlocked below */
	lt_unlock(&counts_lock);
}

void lt_thread_counts_flush(void)
{
	if (!__atomic_load_n(&ncounts, __ATOMIC_RELAXED))
		return;
	lt_lock(&counts_lock);
	counts_write_locked();
	lt_unlock(&counts_lock);
}

/*
 * Writes THREAD_END, hands the ring back and gives t back for a later thread.  The thread records
 * nothing more: lt_self is cleared and the thread-level guard stays up for the rest of its life
 * (what runs in thread-exit destructors after this point is not traced).
 */
void lt_thread_end(struct lt_thread *t)
{
	lt_modules_thread_end(t);
	lt_buffer_settle(t);
	lt_emit0(t, LT_REC_THREAD_END, 0, t->index);
	lt_filter_thread_counts(t);
	if (t->slot >= 0)
		count_chunks(t->index, t->seq);
	if (t->lost_noslot)
		/* It never had a ring: its loss can only be told in the meta file. */
		lt_meta_line(LT_META_LOST " %u %d %llu", t->index, LT_LOST_NORING,
			     (unsigned long long)t->lost_noslot);
	lt_buffer_detach(t);
	lt_lock(&reg_lock);
	if (t->prev_live)
		t->prev_live->next_live = t->next_live;
	else if (live == t)
		live = t->next_live;
	if (t->next_live)
		t->next_live->prev_live = t->prev_live;
	lt_unlock(&reg_lock);
	if (lt_self == t) {
		/* The guard goes up before lt_self goes: between the two, a signal handler would
		 * take the thread for a new one and register it again. */
		lt_tls_guard = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (end_key_ok)
			pthread_setspecific(end_key, NULL);
		lt_self = NULL;
	}
	lt_lock(&reg_lock);
	t->next_live = spare;
	spare = t;
	lt_unlock(&reg_lock);
}

static __thread int sealed LT_TLS; /* lt_tls_guard's value before lt_thread_seal, + 1 */

void lt_thread_seal(void)
{
	lt_vfork_settle(); /* now: strict mode would kill its getpid */
	struct lt_thread *t = lt_self;
	sealed = lt_tls_guard + 1;
	if (t && !t->guard) {
		lt_guard_take(t);
		lt_thread_end(t); /* raises lt_tls_guard */
	} else if (!t) {
		lt_tls_guard = 1; /* and nothing registers it now */
	}
}

void lt_thread_unseal(void)
{
	if (sealed && !lt_self)
		lt_tls_guard = sealed - 1;
	sealed = 0;
}

void lt_thread_dropped_flush(void)
{
	lt_lock(&reg_lock);
	for (struct lt_thread *t = live; t; t = t->next_live)
		lt_filter_thread_counts(t);
	lt_unlock(&reg_lock);
}

size_t lt_thread_list(uint32_t *index, uint32_t *tid, size_t max)
{
	size_t n = 0;
	lt_lock(&reg_lock);
	for (struct lt_thread *t = live; t && n < max; t = t->next_live, n++) {
		index[n] = t->index;
		tid[n] = t->tid;
	}
	lt_unlock(&reg_lock);
	return n;
}

void lt_thread_each(void (*fn)(struct lt_thread *t, void *arg), void *arg)
{
	lt_lock(&reg_lock);
	for (struct lt_thread *t = live; t; t = t->next_live)
		fn(t, arg);
	lt_unlock(&reg_lock);
}

/*
 * After fork, only the forking thread lives on.  The others' states, and the forking
 * thread's own, are zero pages in the child (MADV_WIPEONFORK) and are left behind.
 */
void lt_thread_after_fork_child(void)
{
	counts_lock = (struct lt_lock)LT_LOCK_INIT;
	ncounts = 0; /* the parent's, which it writes itself */
	reg_lock = (struct lt_lock)LT_LOCK_INIT;
	live = NULL;
	spare = NULL; /* the parent's list, which another thread may have been changing */
	next_index = 0;
}

/*
 * pthread_t -> thread index, for join and setname.  Open addressing, a lock around it:
 * create and join are rare next to the work they do.
 */
#define MAP_FIRST 1024u	 /* entries mapped at the first thread */
#define MAP_MAX	  65536u /* entries at most: half of them used */
struct map_entry {
	unsigned long handle;
	uint32_t index;
	int used;
};
/* Mapped, and doubled as threads come, in pages of its own: a program that starts few
 * threads keeps the rest of 1 MiB for itself (`ulimit -v`).  map_lock. */
static struct map_entry *map;
static unsigned map_size; /* a power of two */
static struct lt_lock map_lock = LT_LOCK_INIT;
static unsigned map_count;

static unsigned map_hash(unsigned long h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (unsigned)h;
}

static struct map_entry *map_slot(struct map_entry *m, unsigned size, unsigned long handle)
{
	unsigned i = map_hash(handle) & (size - 1);
	while (m[i].used && m[i].handle != handle)
		i = (i + 1) & (size - 1);
	return &m[i];
}

/* Room for one more entry, doubling the table when it is half full; map_lock. */
static int map_room(void)
{
	if (map && map_count + 1 <= map_size / 2)
		return 1;
	unsigned size = map ? map_size * 2 : MAP_FIRST;
	if (size > MAP_MAX)
		return 0;
	struct map_entry *m = mmap(NULL, size * sizeof(*m), PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	for (unsigned i = 0; i < map_size; i++)
		if (map[i].used)
			*map_slot(m, size, map[i].handle) = map[i];
	/* Published before the old one goes: a fork meanwhile gives the child a whole table. */
	struct map_entry *old = map;
	unsigned old_size = map_size;
	map = m;
	map_size = size;
	if (old)
		munmap(old, old_size * sizeof(*old));
	return 1;
}

void lt_thread_map_put(unsigned long handle, uint32_t index)
{
	lt_lock(&map_lock);
	if (map_room()) {
		struct map_entry *e = map_slot(map, map_size, handle);
		if (!e->used)
			map_count++;
		e->handle = handle;
		e->index = index;
		e->used = 1;
	}
	lt_unlock(&map_lock);
}

uint32_t lt_thread_map_get(unsigned long handle, int remove)
{
	uint32_t index = LT_NO_THREAD;
	lt_lock(&map_lock);
	struct map_entry *e = map ? map_slot(map, map_size, handle) : NULL;
	if (e && e->used) {
		index = e->index;
		if (remove) {
			/* Backward-shift deletion keeps every probe chain intact. */
			unsigned mask = map_size - 1, i = (unsigned)(e - map), j = i;
			for (;;) {
				map[i].used = 0;
				for (;;) {
					j = (j + 1) & mask;
					if (!map[j].used)
						goto out;
					unsigned k = map_hash(map[j].handle) & mask;
					if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
						continue;
					break;
				}
				map[i] = map[j];
				i = j;
			}
		out:
			map_count--;
		}
	}
	lt_unlock(&map_lock);
	return index;
}

void lt_thread_map_after_fork_child(void)
{
	map_lock = (struct lt_lock)LT_LOCK_INIT;
}
