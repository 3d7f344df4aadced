// SPDX-License-Identifier: BSD-3-Clause
/*
 * buffer.c - per-thread rings in a shared file mapping; the writer that drains them is in
 * writer.c.
 *
 * Design (see format.h for the files):
 *
 * The ring file grows one slot at a time, and each slot is mapped MAP_SHARED on its own when
 * it is added (address space is taken per thread that attaches, never reserved up front:
 * `ulimit -v` bounds the thread count, not whether tracing works).  The file is grown sparse;
 * the disk blocks under a chunk are reserved (fallocate) before the producer stores into
 * them, a piece at a time: a page when the chunk is first started, then doubling up to
 * the whole chunk each time the producer reaches the end of what is reserved (the slot's
 * `alloc`); the writer reserves ahead of a busy producer (reserve_ahead).  A store into a
 * page without blocks would kill the program with SIGBUS on a full disk; a reservation that
 * fails instead is a chunk the producer cannot move to, which is counted as lost like a ring
 * full of chunks that cannot be written out.  A thread that records little therefore costs
 * a few pages of disk, not a slot.  A slot's mapping and its base pointer never change until
 * a fork child drops them, so chunk addresses never move; the base is stored before the
 * release store of `nslots` that the writer reads unlocked.  A slot belongs to one live
 * thread; a thread for which no slot can be mapped records nothing and counts what it loses
 * (LT_LOST_NORING), with a warning.
 * The producer is the only writer of its ACTIVE chunk: it appends records and release-stores
 * the chunk's `used` after each one (lt_commit, a plain store on x86-64).  No lock, no atomic
 * read-modify-write and no syscall on the hot path.
 *
 * When a chunk is full the producer seals it (state SEALED, release) and moves to the next
 * chunk of its slot, which must be FREE.  The writer thread copies SEALED chunks, per slot in
 * ring order, to the events file under `io_lock` and marks them FREE (release); the producer
 * reads the state with acquire, so it never reuses a chunk that is still being copied.  The
 * copy is packed (../format/pack.h) into a buffer that belongs to io_lock holders, mapped
 * once at open: the ring keeps raw records, the events file gets a few bytes a record.
 *
 * Ring full: with the block policy (default) the producer drains its own slot synchronously
 * (it takes io_lock and writes, so it slows down to the disk's pace but loses nothing); with
 * the drop policy, or when writing fails, it keeps its full chunk ACTIVE and counts every
 * further event in that chunk's `lost` field until the next chunk is FREE again.  The count
 * lives in the shared mapping, so it survives a crash too.
 *
 * Flight mode (LIBTRACE_MODE=flight): the writer copies nothing.  A producer whose next
 * chunk is SEALED takes it back (its oldest: FREE first, then the new header, so that a
 * reader after SIGKILL skips it while it changes, and a copy under way sees it changed), so
 * each ring always holds its thread's newest records.  They are copied out, without being
 * freed, at the end (flush_all), on LIBTRACE_FLIGHT_SIGNAL (from the handler when io_lock
 * is free, else by the writer a moment later) and when a slot of an ended thread is reused
 * (its chunks are final).  Such a copy races with the producer reusing the chunk: it is
 * checked afterwards like a sequence lock (the chunk's state and seq unchanged) and cut off
 * the events file again when it was torn.
 *
 * At the end (and before exec) the ring file is cut after the last byte a chunk still needs
 * (ring_cut): FREE chunks give their reservation back, so a finished trace's ring is about
 * as long as what it holds.  Producers moving between chunks and the cut exclude each other
 * (move_enter); a reservation after the cut lengthens the file again.
 *
 * Who owns what: a chunk's header and records belong to the producer while FREE->ACTIVE->SEALED,
 * and to the writer while SEALED->FREE.  A slot's `drain` index belongs to io_lock holders.
 * Slot allocation and ring growth take `slot_lock`.  Neither lock is ever taken on the hot
 * path, and none of this calls the pthread functions the library intercepts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#if defined(__x86_64__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.33: CPU_FEATURE_ACTIVE */
#endif
#if !defined(CPU_FEATURE_ACTIVE)
#include <cpuid.h>
#endif
#endif

#include "../format/pack.h"
#include "lock.h"
#include "lt.h"

enum { SLOT_FREE = 0, SLOT_OWNED, SLOT_ENDED };

#define RING_CHUNKS 8	   /* chunks per slot */
#define FIRST_PIECE 4096u  /* disk reserved when a chunk is first started (a page at least) */
#define AS_SHARE    65536u /* under `ulimit -v`, a slot takes this fraction of it at most */

struct slot {
	int state;
	uint32_t thread;
	unsigned drain; /* next chunk to copy out; io_lock */
	char *base;	/* the slot's mapping; set once, before nslots counts the slot */
	/* Bytes reserved on disk from each chunk's start: raised (release, never lowered while
	 * running) by the slot's owner before it stores there or by the writer ahead of it
	 * (reserve_ahead), and reset by lt_buffer_trim; 0: never started, all FREE. */
	uint32_t alloc[RING_CHUNKS];
};

/* In this order, and page-aligned, a short process touches two pages of it: the small
 * fields, the packer's tables and the ring's path on the first, the events file's path on
 * the second (each first touch of a page is a page fault). */
static struct __attribute__((aligned(4096))) {
	uint64_t chunk_size, slot_size;
	uint32_t first_piece; /* FIRST_PIECE, or the page when it is larger */
	unsigned chunks, max_slots;
	unsigned nslots;     /* slots mapped so far */
	unsigned file_slots; /* slots the ring file's size covers; slot_lock */
	struct lt_lock slot_lock, io_lock;
	int io_failed;		   /* the last write to events failed; io_lock */
	int trimmed;		   /* lt_buffer_trim has run: nothing is reserved ahead; io_lock */
	int io_warned;		   /* a failed write was reported; io_lock */
	int dump_pending;	   /* flight: a signal asked for a copy while io_lock was taken */
	int cutting;		   /* ring_cut is under way: producers wait before a move */
	int moving;		   /* producers in a move between chunks (move_enter) */
	int cut;		   /* ring_cut shortened the file: reservations may lengthen it */
	uint8_t *pack_buf;	   /* a chunk's packed form (chunk_size bytes); io_lock */
	struct lt_pack_state pack; /* the packer's tables; io_lock */
	struct lt_file ring, events;
} R;

/* The slot table, in pages mapped as slots are added: two levels, so that a program with a
 * few threads keeps the address space a table for 32768 would take (`ulimit -v`).  A page
 * is set before nslots counts its first slot. */
#define SLOTS_MAX      32768u
#define SLOTS_PER_PAGE (4096u / sizeof(struct slot))
static struct slot *slot_pages[(SLOTS_MAX + SLOTS_PER_PAGE - 1) / SLOTS_PER_PAGE];

static inline struct slot *slot_at(unsigned s)
{
	return &slot_pages[s / SLOTS_PER_PAGE][s % SLOTS_PER_PAGE];
}

/* A full memory barrier.  ThreadSanitizer models no fences (GCC refuses them under it): there a
 * sequentially consistent read-modify-write stands in, which it does model. */
static inline void full_barrier(void)
{
#ifdef __SANITIZE_THREAD__
	static int barrier;
	__atomic_fetch_add(&barrier, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

static int flight(void)
{
	return lt_cfg.mode == LT_MODE_FLIGHT;
}

/*
 * The writer thread evicts a chunk from the caches once it copied it out.  Reading it left
 * its lines in the writer's caches, on another core: when the ring comes round and the
 * producer writes the chunk again, each of its stores waits for those copies to be
 * invalidated over there, and the locked instruction of the next traced lock or unlock
 * waits for that store (a record 12 -> 20 ns in a loop of stores and locked exchanges on this
 * machine's two vCPUs with a reader behind it).  CLFLUSHOPT of every line the copy read
 * sends them to memory, from where the producer's sequential stores stream in as if the
 * ring had never been read.  A producer copying its own chunks, or the exit, has no other
 * core to pull the lines from: only the writer evicts.
 */
static int can_evict; /* CLFLUSHOPT: CPUID leaf 7, EBX bit 23 */

#if defined(__x86_64__)
/* From the C library's copy of the CPUID leaves: the instruction traps to the hypervisor in
 * a virtual machine (13 us each on the VM measured). */
static void evict_init(void)
{
#if defined(CPU_FEATURE_ACTIVE)
	can_evict = CPU_FEATURE_ACTIVE(CLFLUSHOPT);
#else
	unsigned a, b, c, d;
	can_evict = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 23) & 1;
#endif
}

__attribute__((target("clflushopt"))) static void chunk_evict(const struct lt_chunk_header *c)
{
	const char *p = (const char *)c, *end = p + sizeof(*c) + c->used;
	for (; p < end; p += 64)
		__builtin_ia32_clflushopt(p);
}
#else
static void evict_init(void)
{
}

static void chunk_evict(const struct lt_chunk_header *c)
{
	(void)c;
}
#endif

static struct lt_chunk_header *chunk_at(unsigned slot, unsigned i)
{
	return (struct lt_chunk_header *)(slot_at(slot)->base + i * R.chunk_size);
}

/* Where chunk i of a slot lies in the ring file. */
static off_t chunk_offset(unsigned slot, unsigned i)
{
	return (off_t)(LT_FILE_HEADER_SIZE + slot * R.slot_size + i * R.chunk_size);
}

static int chunk_state(const struct lt_chunk_header *c)
{
	return (int)__atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
}

static int write_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

static void file_header(struct lt_file_header *h, const char *magic)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, magic, 8);
	h->major = LT_FORMAT_MAJOR;
	h->minor = LT_FORMAT_MINOR;
	h->header_size = sizeof(*h);
	h->pid = (uint32_t)getpid();
	h->chunks = R.chunks;
	h->chunk_size = R.chunk_size;
	h->slot_size = R.slot_size;
}

/* The header, then zeros up to LT_FILE_HEADER_SIZE (read-only data: no page of ours to
 * clear for them). */
static int write_file_header(struct lt_file *f, const char *magic)
{
	static const char zeros[LT_FILE_HEADER_SIZE - sizeof(struct lt_file_header)];
	struct lt_file_header h;
	file_header(&h, magic);
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)zeros, sizeof(zeros)}};
	int fd = lt_file_fd(f);
	if (fd < 0)
		return -EBADF;
	int err = write_all(fd, iov, 2);
	lt_file_done(f);
	return err;
}

/*
 * A process made by a raw clone system call (no fork, so no atfork handler: the tracer never
 * saw it made) runs on a copy of its parent's memory, in which the state of the thread that
 * made it is zero pages (thread.c) while the rings are still the parent's shared mapping.
 * Its events can be put nowhere of its own: it counts them in a page it shares with the
 * process that made it, which writes the count as lost at its end (LT_LOST_UNSEEN), on the
 * thread that made the clone.  Made again in each fork child, for the clones of its own.
 */
static struct {
	uint64_t events;
	uint32_t thread;
} * unseen;

static void unseen_open(void)
{
	void *p =
	    mmap(NULL, sizeof(*unseen), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	unseen = p == MAP_FAILED ? NULL : p;
	if (unseen)
		unseen->thread = LT_NO_THREAD;
}

/* t's state was wiped: the thread of a process made by a raw clone.  It records nothing from
 * now on, and counts. */
static void unseen_count(struct lt_thread *t)
{
	if (!t->unseen) {
		t->unseen = 1;
		t->slot = -1;
		t->chunk = &t->dummy;
		t->data = t->pos = t->end = t->sink;
		uint32_t none = LT_NO_THREAD;
		if (unseen)
			__atomic_compare_exchange_n(&unseen->thread, &none, lt_self_index, 0,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	if (unseen)
		__atomic_fetch_add(&unseen->events, 1, __ATOMIC_RELAXED);
}

void lt_buffer_unseen_flush(void)
{
	uint64_t n = unseen ? __atomic_exchange_n(&unseen->events, 0, __ATOMIC_RELAXED) : 0;
	if (n)
		lt_meta_line(LT_META_LOST " %u %d %llu",
			     __atomic_load_n(&unseen->thread, __ATOMIC_RELAXED), LT_LOST_UNSEEN,
			     (unsigned long long)n);
}

/* lt_buffer_open has set up R.ring and R.events (their descriptors are theirs or -1; before,
 * the zeroes of a static structure, which are the program's standard input). */
static int files_set;

int lt_buffer_open(const char *dir, int after_fork)
{
	unseen_open();
	evict_init();
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	if (after_fork) {
		/* Drop the parent's shared ring from our address space: a store into it would
		 * land in the parent's trace, and the address space is ours to use again. */
		for (unsigned s = 0; s < R.nslots; s++)
			if (slot_at(s)->base)
				munmap(slot_at(s)->base, R.slot_size);
		lt_file_close(&R.ring);
		lt_file_close(&R.events);
		/* Slots past nslots were never written: leave their pages untouched. */
		for (unsigned s = 0; s < R.nslots; s++)
			memset(slot_at(s), 0, sizeof(struct slot));
		R.nslots = R.file_slots = 0;
		R.slot_lock = (struct lt_lock)LT_LOCK_INIT;
		R.io_lock = (struct lt_lock)LT_LOCK_INIT;
		R.io_failed = 0;
		R.dump_pending = 0;
		/* A fork while another thread cut the parent's ring: the child's is whole. */
		R.cutting = R.moving = R.cut = 0;
		lt_buf_writer_after_fork();
	} else {
		lt_buf_writer_init();
		R.chunks = RING_CHUNKS;
		R.chunk_size = lt_cfg.buffer_size / R.chunks;
		R.chunk_size -= R.chunk_size % (uint64_t)page;
		if (R.chunk_size < (uint64_t)page)
			R.chunk_size = (uint64_t)page;
		/* Under a file size limit (`ulimit -f`) the ring file must stay below it with
		 * room for several threads, and the events file needs room too: a slot takes
		 * an eighth of the limit at most. */
		uint64_t budget = 1ull << 40; /* bounds the ring file, 1 TiB */
		struct rlimit rl;
		if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
			uint64_t cap = rl.rlim_cur / 8 / R.chunks;
			cap -= cap % (uint64_t)page;
			if (cap < (uint64_t)page)
				cap = (uint64_t)page;
			if (R.chunk_size > cap) {
				R.chunk_size = cap;
				lt_warn("the file size limit (ulimit -f: %llu KiB) makes each "
					"thread's ring %llu KiB; what the trace files cannot hold "
					"is counted as lost",
					(unsigned long long)(rl.rlim_cur / 1024),
					(unsigned long long)(cap * R.chunks / 1024));
			}
			budget = rl.rlim_cur > LT_FILE_HEADER_SIZE
				     ? rl.rlim_cur - LT_FILE_HEADER_SIZE
				     : 0;
		}
		/* Under an address-space limit (`ulimit -v`) each ring is address space the
		 * program's threads and heap do not get: unless LIBTRACE_BUFFER_SIZE says
		 * otherwise, a slot takes 1/AS_SHARE of the limit at most, in fewer chunks when
		 * pages would be too many (12 KiB in 3 under 1 GB, 8 KiB in 2 under 400 MB), so
		 * that a program that creates threads until it can no more gets as many as
		 * untraced; slower (the thread waits for the writer more often), nothing lost. */
		if (!lt_cfg.buffer_size_given && getrlimit(RLIMIT_AS, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY) {
			uint64_t slot = rl.rlim_cur / AS_SHARE;
			unsigned chunks = (unsigned)(slot / (uint64_t)page);
			chunks = chunks < 2 ? 2 : chunks > RING_CHUNKS ? RING_CHUNKS : chunks;
			uint64_t cap = slot / chunks;
			cap -= cap % (uint64_t)page;
			if (cap < (uint64_t)page)
				cap = (uint64_t)page;
			if (R.chunk_size * R.chunks > cap * chunks) {
				R.chunks = chunks;
				if (R.chunk_size > cap)
					R.chunk_size = cap;
				lt_warn("the address-space limit (ulimit -v: %llu KiB) makes each "
					"thread's ring %llu KiB: tracing is slower",
					(unsigned long long)(rl.rlim_cur / 1024),
					(unsigned long long)(R.chunk_size * R.chunks / 1024));
			}
		}
		R.slot_size = R.chunk_size * R.chunks;
		R.first_piece = FIRST_PIECE < (uint64_t)page ? (uint32_t)page : FIRST_PIECE;
		R.max_slots = (unsigned)(budget / R.slot_size);
		if (R.max_slots > SLOTS_MAX)
			R.max_slots = SLOTS_MAX;
		R.ring.fd = R.events.fd = -1;
		files_set = 1;
		/* The packer's output, taken once (a fork child keeps its copy): chunk_write
		 * runs at exit and in signal handlers too, where nothing may be allocated.
		 * Without it chunks are written raw. */
		void *pb = mmap(NULL, R.chunk_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		R.pack_buf = pb == MAP_FAILED ? NULL : pb;
	}
	int err = lt_file_create(&R.ring, dir, "ring", O_RDWR);
	if (!err)
		err = write_file_header(&R.ring, LT_RING_MAGIC);
	if (!err)
		err = lt_file_create(&R.events, dir, LT_EVENTS_FILE, O_WRONLY | O_APPEND);
	if (!err)
		err = write_file_header(&R.events, LT_FILE_MAGIC);
	if (err)
		lt_warn("cannot create the trace files in %s: %s", dir, strerror(-err));
	return err;
}

void lt_buffer_discard(void)
{
	if (!files_set)
		return;
	lt_file_close(&R.ring);
	lt_file_close(&R.events);
}

/*
 * Under a finite RLIMIT_AS (`ulimit -v`), a new slot may take at most half of the address
 * space still free: the program's own next stacks and heap must fit too, and a thread of
 * the program matters more than its ring.  0 when there is room, else -ENOMEM.
 */
static int address_space_room(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[64];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	long page = sysconf(_SC_PAGESIZE);
	uint64_t used = strtoull(buf, NULL, 10) * (uint64_t)(page > 0 ? page : 4096);
	uint64_t left = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
	return R.slot_size <= left / 2 ? 0 : -ENOMEM;
}

/* A system call a filter refuses (seccomp: EPERM, or ENOSYS), not one that failed. */
static int refused(int err)
{
	return err == EPERM || err == EACCES || err == ENOSYS || err == EOPNOTSUPP;
}

/* Makes the ring file `size` bytes long (from shorter): ftruncate, or where a seccomp filter
 * refuses it, one zero byte written at the new end, which no one uses yet (sparse too). */
static int ring_extend(int fd, off_t size)
{
	if (ftruncate(fd, size) == 0)
		return 0;
	if (!refused(errno))
		return -1;
	static const char zero;
	return pwrite(fd, &zero, 1, size - 1) == 1 ? 0 : -1;
}

/* Maps one more slot at the end of the ring file.  slot_lock held.  0, or -errno (-ENOMEM
 * when the address space is used up, e.g. under `ulimit -v`). */
static int ring_grow(void)
{
	unsigned s = R.nslots;
	if (s >= R.max_slots)
		return -ENOSPC;
	int err = address_space_room();
	if (err)
		return err;
	struct slot **page = &slot_pages[s / SLOTS_PER_PAGE];
	if (!*page) {
		void *p =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		*page = p; /* zero: every slot FREE */
	}
	int fd = lt_file_fd(&R.ring);
	if (fd < 0)
		return -EBADF;
	off_t off = (off_t)(LT_FILE_HEADER_SIZE + s * R.slot_size);
	/* Sparse: the blocks are reserved chunk piece by chunk piece (chunk_reserve).  The
	 * size grows ahead, by as many slots as there are (64 at most), so that a crowd of
	 * threads does not change the file's size one by one; lt_buffer_trim cuts the rest. */
	if (s >= R.file_slots) {
		unsigned want = s + 1 + (s + 1 < 64 ? s + 1 : 64);
		if (want > R.max_slots)
			want = R.max_slots;
		if (ring_extend(fd, (off_t)(LT_FILE_HEADER_SIZE + want * R.slot_size)) != 0 &&
		    (want = s + 1, ring_extend(fd, off + (off_t)R.slot_size) != 0)) {
			err = errno;
			lt_file_done(&R.ring);
			return -err;
		}
		R.file_slots = want;
	}
	void *p = mmap(NULL, R.slot_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (p == MAP_FAILED) {
		err = errno;
		/* No slot there after all: the file ends with the last mapped one again. */
		if (ftruncate(fd, off) != 0)
			lt_debug("cannot cut %s back: %s", R.ring.path, strerror(errno));
		else
			R.file_slots = s;
		lt_file_done(&R.ring);
		return -err;
	}
	lt_file_done(&R.ring);
	/* A fault reads one page: the kernel's read-around would fill the page cache with up to
	 * read_ahead_kb of zeroes (a whole slot, milliseconds) on the thread's first store. */
	madvise(p, R.slot_size, MADV_RANDOM);
	slot_at(s)->base = p;
	__atomic_store_n(&R.nslots, s + 1, __ATOMIC_RELEASE); /* the writer reads it unlocked */
	return 0;
}

/*
 * Reserves the disk blocks of chunk i of slot s up to `want` bytes from its start, before
 * anyone stores there.  The slot's owner calls it, and the writer ahead of it: both may
 * reserve the same range at once (fallocate and the populate are idempotent), and `alloc`
 * only grows.  0, or -errno (-ENOSPC: a full disk).
 */
static int chunk_reserve(unsigned s, unsigned i, uint64_t want)
{
	struct slot *sl = slot_at(s);
	uint32_t have = __atomic_load_n(&sl->alloc[i], __ATOMIC_RELAXED);
	if (want > R.chunk_size)
		want = R.chunk_size;
	if (want <= have)
		return 0;
	int fd = lt_file_fd(&R.ring);
	if (fd < 0)
		return -EBADF;
	int err = posix_fallocate(fd, chunk_offset(s, i) + have, (off_t)(want - have));
	/* Past the end ring_cut left, the populate below would find no file under the pages:
	 * without fallocate, a zero byte at the range's end lengthens it (no one stores there
	 * yet). */
	static const char zero;
	if (err && refused(err) && __atomic_load_n(&R.cut, __ATOMIC_RELAXED) &&
	    pwrite(fd, &zero, 1, chunk_offset(s, i) + (off_t)want - 1) != 1)
		err = errno;
	lt_file_done(&R.ring);
	/* Its pages mapped writable in one call (Linux 5.14; older kernels refuse it): the
	 * producer's stores then take no fault each, 10 ns a lock+unlock pair over a first pass
	 * of the ring here.  Where a seccomp filter refuses fallocate, that call reserves the
	 * blocks instead (a write fault allocates them, and a full disk fails it here, not as a
	 * SIGBUS at a store), leaving what is stored there as it is. */
	int populated = madvise((char *)chunk_at(s, i) + have, want - have, MADV_POPULATE_WRITE);
	if (err && !(refused(err) && populated == 0))
		return -err;
	while (have < want && !__atomic_compare_exchange_n(&sl->alloc[i], &have, (uint32_t)want, 0,
							   __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	return 0;
}

/* A chunk's state; a chunk never started is FREE, and its page is not touched to say so
 * (reading a hole of the file costs a page of cache). */
static int chunk_state_at(unsigned s, unsigned i)
{
	if (!__atomic_load_n(&slot_at(s)->alloc[i], __ATOMIC_ACQUIRE))
		return LT_CHUNK_FREE;
	return chunk_state(chunk_at(s, i));
}

/* Whether the producer of slot s can move to chunk i: FREE, with its first piece reserved. */
static int chunk_ready(unsigned s, unsigned i)
{
	return chunk_state_at(s, i) == LT_CHUNK_FREE && chunk_reserve(s, i, R.first_piece) == 0;
}

/* The producer's end in chunk i: as far as the blocks are reserved. */
static uint64_t *chunk_end(unsigned s, unsigned i)
{
	return (uint64_t *)((char *)chunk_at(s, i) +
			    __atomic_load_n(&slot_at(s)->alloc[i], __ATOMIC_ACQUIRE));
}

/* Starts chunk i (chunk_ready said yes). */
static void chunk_start(struct lt_thread *t, unsigned i)
{
	struct lt_chunk_header *c = chunk_at((unsigned)t->slot, i);
	c->used = 0;
	c->lost = 0;
	c->flags = 0;
	c->magic = LT_CHUNK_MAGIC;
	c->header_size = sizeof(*c);
	c->thread = t->index;
	c->tid = t->tid;
	c->seq = t->seq++;
	c->capacity = R.chunk_size;
	c->check = lt_chunk_check(c);
	__atomic_store_n(&c->state, LT_CHUNK_ACTIVE, __ATOMIC_RELEASE);
	t->cur = i;
	t->chunk = c;
	t->data = (uint64_t *)(c + 1);
	t->pos = t->data;
	t->end = chunk_end((unsigned)t->slot, i);
}

static unsigned reclaim_ended(void);
/* Slots the ring may have before a thread that finds none free empties an ended thread's
 * slot itself (a write on its own time) rather than add one: the writer, a moment behind,
 * frees them without costing the program's threads anything. */
#define RECLAIM_FROM 16u

int lt_buffer_attach(struct lt_thread *t)
{
	int err = 0;
	unsigned s;
	t->slot = -1;
	t->chunk = &t->dummy;
	t->data = t->pos = t->end = t->sink;
	lt_lock(&R.slot_lock);
	for (s = 0; s < R.nslots; s++)
		if (__atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) == SLOT_FREE)
			break;
	int saved = errno; /* a lazily registered thread is inside the program's call */
	if (s == R.nslots && R.nslots >= RECLAIM_FROM)
		s = reclaim_ended();
	if (s == R.nslots)
		err = ring_grow();
	if (!err) {
		__atomic_store_n(&slot_at(s)->state, SLOT_OWNED, __ATOMIC_RELAXED);
		slot_at(s)->thread = t->index;
		/* Chunks from `drain` on are FREE: start there so the writer's order holds. */
		unsigned d = slot_at(s)->drain;
		err = chunk_state_at(s, d) == LT_CHUNK_FREE ? chunk_reserve(s, d, R.first_piece)
							    : -EBUSY;
		if (err) { /* -ENOSPC: a full disk; -EPERM: a seccomp filter, say */
			__atomic_store_n(&slot_at(s)->state, SLOT_FREE, __ATOMIC_RELEASE);
		}
	}
	errno = saved;
	lt_unlock(&R.slot_lock);
	if (err) {
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			lt_warn("no ring for thread %u (%s%s): its events are counted as lost",
				t->index, strerror(-err),
				err == -ENOMEM	 ? ", address space used up: see ulimit -v"
				: err == -EAGAIN ? ", locked memory: the program's mlockall locks "
						   "new mappings, see ulimit -l"
						 : "");
		return err;
	}
	t->slot = (int)s;
	chunk_start(t, slot_at(s)->drain);
	return 0;
}

static void chunk_seal(struct lt_chunk_header *c, int last)
{
	if (last)
		c->flags |= LT_CHUNK_LAST;
	__atomic_store_n(&c->state, LT_CHUNK_SEALED, __ATOMIC_RELEASE);
}

void lt_buffer_detach(struct lt_thread *t)
{
	if (t->slot < 0)
		return;
	struct lt_chunk_header *c = chunk_at((unsigned)t->slot, t->cur);
	chunk_seal(c, 1);
	__atomic_store_n(&slot_at(t->slot)->state, SLOT_ENDED, __ATOMIC_RELEASE);
	t->slot = -1;
	t->chunk = &t->dummy;
	t->data = t->pos = t->end = t->sink;
	/* Its last chunk is safe in the ring: a writer already running copies it out now; none
	 * is started for it (the exit, a new thread short of slots or the next kick will). */
	lt_buf_writer_nudge();
}

static int chunk_write_upto(struct lt_chunk_header *c, uint64_t used, off_t *start);

/*
 * Copies one chunk's header and committed records to the events file, packed (pack.h)
 * when that is shorter.  io_lock held.
 */
static int chunk_write(struct lt_chunk_header *c)
{
	return chunk_write_upto(c, __atomic_load_n(&c->used, __ATOMIC_ACQUIRE), NULL);
}

/* chunk_write of the chunk's first `used` bytes of records; *start: where in the events
 * file the copy begins (when start is not NULL). */
static int chunk_write_upto(struct lt_chunk_header *c, uint64_t used, off_t *start)
{
	int fd = lt_file_fd(&R.events);
	if (fd < 0)
		return -EBADF;
	struct lt_chunk_header h = *c;
	h.used = used;
	if (h.used > R.chunk_size - sizeof(h))
		h.used = R.chunk_size - sizeof(h);
	h.lost = __atomic_load_n(&c->lost, __ATOMIC_RELAXED);
	h.flags &= ~(LT_CHUNK_PACKED | LT_CHUNK_SUMMED);
	h.reserved = 0;
	h.capacity = sizeof(h) + h.used;
	static const uint64_t zero;
	struct iovec iov[3] = {{&h, sizeof(h)}, {c + 1, h.used}, {(void *)&zero, 0}};
	size_t packed = 0;
	if (R.pack_buf && h.used >= 64 && h.used <= UINT32_MAX)
		packed = lt_pack_chunk(&R.pack, (const uint64_t *)(c + 1), h.used, R.pack_buf,
				       R.chunk_size);
	if (packed && packed + 8 <= h.used) {
		h.flags |= LT_CHUNK_PACKED;
		h.reserved = (uint32_t)packed;
		iov[1] = (struct iovec){R.pack_buf, packed};
		iov[2].iov_len = (8 - packed % 8) % 8;
		h.capacity = sizeof(h) + packed + iov[2].iov_len;
	}
	/* A flipped bit in the file is found by the reader, not read as a value. */
	h.flags |= LT_CHUNK_SUMMED;
	h.state = lt_payload_check(iov[1].iov_base, iov[1].iov_len);
	h.check = lt_chunk_check(&h);
	/* A write cut short (a full disk) would leave part of a chunk that a later, smaller
	 * write lands after: give the file back its length, the chunk stays in the ring. */
	off_t end = lseek(fd, 0, SEEK_END);
	if (start)
		*start = end;
	int err = write_all(fd, iov, 3);
	if (err && end >= 0 && ftruncate(fd, end) != 0)
		lt_debug("cannot cut %s back after a failed write: %s", R.events.path,
			 strerror(errno));
	lt_file_done(&R.events);
	return err;
}

/*
 * With LIBTRACE_MIN_DURATION a producer takes a short call or region back (lt_short_pop: its
 * cursor and `used` go back over the enter, up to 16 nested ones) and may write new records
 * over it while its chunk is being copied.  tail_keep reads `used` and keeps the last
 * SNAP_TAIL bytes before it; after the copy, tail_same tells whether `used` is no lower and
 * those bytes are unchanged, as a sequence lock would: else the copy may be torn.  Without
 * a minimum duration nothing is ever taken back and neither does anything.  io_lock held.
 */
#define SNAP_TAIL 8192u /* bytes: 16 enters taken back at once, with their readings */
static LT_PAGE_ALIGNED uint8_t tail[SNAP_TAIL];
static size_t tail_len;

static uint64_t tail_keep(const struct lt_chunk_header *c)
{
	uint64_t used = __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
	if (used > R.chunk_size - sizeof(*c))
		used = R.chunk_size - sizeof(*c);
	tail_len = used < SNAP_TAIL ? (size_t)used : SNAP_TAIL;
	if (lt_min_ticks)
		memcpy(tail, (const uint8_t *)(c + 1) + used - tail_len, tail_len);
	return used;
}

static int tail_same(const struct lt_chunk_header *c, uint64_t used)
{
	if (!lt_min_ticks)
		return 1;
	full_barrier(); /* the copy's reads before these */
	return __atomic_load_n(&c->used, __ATOMIC_ACQUIRE) >= used &&
	       !memcmp(tail, (const uint8_t *)(c + 1) + used - tail_len, tail_len);
}

/*
 * Flight mode: copies a chunk its producer may be reusing meanwhile (flight_reuse), and
 * takes the copy back when the chunk changed under it.  io_lock held.  No allocation, no
 * stdio: it runs in the signal handler too.
 */
static void flight_write(struct lt_chunk_header *c)
{
	uint64_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
	uint32_t thread = __atomic_load_n(&c->thread, __ATOMIC_ACQUIRE);
	int st = chunk_state(c);
	if ((st != LT_CHUNK_SEALED && st != LT_CHUNK_ACTIVE) ||
	    (st == LT_CHUNK_ACTIVE && __atomic_load_n(&c->used, __ATOMIC_ACQUIRE) == 0))
		return;
	int fd = lt_file_fd(&R.events);
	if (fd < 0)
		return;
	off_t end = lseek(fd, 0, SEEK_END);
	lt_file_done(&R.events);
	uint64_t used = tail_keep(c);
	if (end < 0 || chunk_write_upto(c, used, NULL) != 0)
		return;
	full_barrier();
	st = chunk_state(c);
	if ((st == LT_CHUNK_SEALED || st == LT_CHUNK_ACTIVE) &&
	    __atomic_load_n(&c->seq, __ATOMIC_RELAXED) == seq &&
	    __atomic_load_n(&c->thread, __ATOMIC_RELAXED) == thread && tail_same(c, used))
		return;
	/* Reused or taken back from while it was copied: the copy may mix two chunks. */
	fd = lt_file_fd(&R.events);
	if (fd >= 0) {
		if (ftruncate(fd, end) != 0)
			R.io_failed = 1;
		lt_file_done(&R.events);
	}
}

/* Flight mode: copies every ring's chunks that hold records, ended threads' too, and
 * leaves them in the ring (a later copy repeats them: the reader keeps one).  io_lock. */
static void flight_dump(void)
{
	unsigned n = __atomic_load_n(&R.nslots, __ATOMIC_ACQUIRE);
	for (unsigned s = 0; s < n; s++) {
		if (__atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) == SLOT_FREE)
			continue;
		for (unsigned i = 0; i < R.chunks; i++)
			flight_write(chunk_at(s, i));
	}
}

/* The producer takes back its oldest chunk (flight mode). */
static void flight_reuse(struct lt_chunk_header *c)
{
	__atomic_store_n(&c->state, LT_CHUNK_FREE, __ATOMIC_RELEASE);
	full_barrier(); /* before the new header: flight_write */
}

/* Copies the slot's SEALED chunks in ring order and frees them (evicted from the caches
 * first when `evict`: the writer thread).  io_lock held. */
static int slot_drain(unsigned s, int evict)
{
	struct slot *sl = slot_at(s);
	for (unsigned n = 0; n < R.chunks; n++) {
		if (chunk_state_at(s, sl->drain) != LT_CHUNK_SEALED)
			break;
		struct lt_chunk_header *c = chunk_at(s, sl->drain);
		int err = chunk_write(c);
		if (err) {
			/* Said once per process: on a nearly full disk, writes of small
			 * chunks may still succeed in between. */
			if (!R.io_warned)
				lt_warn("cannot write %s: %s; events stay in the ring, new ones "
					"are counted as lost until it works again",
					R.events.path, strerror(-err));
			R.io_failed = R.io_warned = 1;
			return err;
		}
		R.io_failed = 0;
		if (evict && can_evict)
			chunk_evict(c);
		__atomic_store_n(&c->state, LT_CHUNK_FREE, __ATOMIC_RELEASE);
		sl->drain = (sl->drain + 1) % R.chunks;
	}
	return 0;
}

/*
 * Drains slot s and, if its thread has ended and everything is out, frees it.  io_lock
 * held: the state is read, the slot drained and freed in one critical section, so that a
 * slot freed and taken again meanwhile (by another drainer) is never freed with its new
 * owner's chunks still in it.  Returns whether the slot is FREE.
 */
static int slot_reclaim(unsigned s, int evict)
{
	int err = slot_drain(s, evict);
	int ended = SLOT_ENDED;
	if (!err && chunk_state_at(s, slot_at(s)->drain) == LT_CHUNK_FREE)
		__atomic_compare_exchange_n(&slot_at(s)->state, &ended, SLOT_FREE, 0,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	return __atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) == SLOT_FREE;
}

/*
 * The writer reserves the disk blocks a busy producer is about to need, so that its thread
 * seldom makes those calls itself (fallocate and the populate: 72 per 8 MiB ring on the
 * program's thread before, 13 now; a first pass over the ring 9% cheaper here): the rest of
 * the chunk being filled once it is past half of what is reserved, doubling in a thread's
 * first chunk and all of it later, and the whole next chunk once the thread is past its
 * first half chunk.  A thread that records little reserves its own pages, a piece at a
 * time, as before.  Where the writer is late the producer reserves for itself.  io_lock
 * held (after lt_buffer_trim nothing is reserved again).
 */
static void reserve_ahead(unsigned s)
{
	struct slot *sl = slot_at(s);
	unsigned a = sl->drain; /* after a drain: the producer's chunk, if it has one */
	if (R.trimmed || __atomic_load_n(&sl->state, __ATOMIC_ACQUIRE) != SLOT_OWNED ||
	    chunk_state_at(s, a) != LT_CHUNK_ACTIVE)
		return;
	struct lt_chunk_header *c = chunk_at(s, a);
	uint64_t reached = sizeof(*c) + __atomic_load_n(&c->used, __ATOMIC_ACQUIRE);
	uint32_t have = __atomic_load_n(&sl->alloc[a], __ATOMIC_ACQUIRE);
	int busy = __atomic_load_n(&c->seq, __ATOMIC_RELAXED) > 0 || 2 * reached >= R.chunk_size;
	if (have < R.chunk_size && 2 * reached >= have)
		chunk_reserve(s, a, busy ? R.chunk_size : 2 * (uint64_t)have);
	unsigned next = (a + 1) % R.chunks;
	if (busy && chunk_state_at(s, next) == LT_CHUNK_FREE)
		chunk_reserve(s, next, R.chunk_size);
}

/* One pass over every slot; frees the slots of ended threads once drained, and the writer
 * reserves ahead of the busy ones. */
void lt_buf_drain_all(int writer)
{
	if (flight()) {
		/* Nothing is copied while running; a signal's copy that found io_lock taken. */
		if (__atomic_exchange_n(&R.dump_pending, 0, __ATOMIC_ACQ_REL)) {
			lt_lock(&R.io_lock);
			flight_dump();
			lt_unlock(&R.io_lock);
		}
		return;
	}
	unsigned n = __atomic_load_n(&R.nslots, __ATOMIC_ACQUIRE);
	for (unsigned s = 0; s < n; s++) {
		if (__atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) == SLOT_FREE)
			continue;
		lt_lock(&R.io_lock);
		if (!slot_reclaim(s, writer) && writer)
			reserve_ahead(s);
		lt_unlock(&R.io_lock);
	}
}

/*
 * No free slot: does the writer's work on the ended threads' slots here, rather than grow
 * the ring while the writer is behind (a storm of short threads on a busy machine would
 * grow it by a slot a thread).  slot_lock held (then io_lock: nothing takes them the other
 * way round).  Returns a slot that is FREE now, or R.nslots.
 */
static unsigned reclaim_ended(void)
{
	unsigned n = R.nslots;
	for (unsigned s = 0; s < n; s++) {
		if (__atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) != SLOT_ENDED)
			continue;
		lt_lock(&R.io_lock);
		int freed = slot_reclaim(s, 0);
		lt_unlock(&R.io_lock);
		if (freed)
			return s;
	}
	return n;
}

/*
 * A producer's move between chunks (from finding the next one FREE to starting it, or a
 * reservation of more of its own) and ring_cut exclude each other, as in Dekker's
 * algorithm: the producer counts itself in R.moving, then finds no cut under way (or
 * withdraws and waits for its end); the cut raises R.cutting, then waits until R.moving is
 * zero.  The slow path only: the producer's stores within its chunk need neither.  Nested
 * (a signal handler's record in the middle of its thread's own move), it is one move.
 */
static void move_enter(struct lt_thread *t)
{
	if (t->moving++)
		return;
	for (;;) {
		__atomic_add_fetch(&R.moving, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&R.cutting, __ATOMIC_SEQ_CST))
			return;
		__atomic_sub_fetch(&R.moving, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&R.cutting, __ATOMIC_ACQUIRE))
			sched_yield();
	}
}

static void move_leave(struct lt_thread *t)
{
	if (--t->moving == 0)
		__atomic_sub_fetch(&R.moving, 1, __ATOMIC_RELEASE);
}

static uint64_t *reserve_slow(struct lt_thread *t, unsigned words)
{
	if (unlikely(!t->chunk || t->unseen)) {
		unseen_count(t);
		return t->sink;
	}
	if (t->slot < 0) {
		t->lost_noslot++;
		return t->sink;
	}
	unsigned s = (unsigned)t->slot;
	struct lt_chunk_header *cur = chunk_at(s, t->cur);
	unsigned next = (t->cur + 1) % R.chunks;
	uint32_t alloc = __atomic_load_n(&slot_at(s)->alloc[t->cur], __ATOMIC_ACQUIRE);
	if (!t->dropping &&
	    (chunk_end(s, t->cur) > t->end ||
	     (alloc < R.chunk_size && chunk_reserve(s, t->cur, 2 * (uint64_t)alloc) == 0))) {
		/* More of the same chunk, reserved by the writer ahead of us or now (a full
		 * disk: the next chunk, as when it is full). */
		t->end = chunk_end(s, t->cur);
		if (t->pos + words <= t->end)
			return lt_reserve(t, words);
		/* Reserved, yet no room after all (never expected): on to the next chunk, as
		 * when this one is full, rather than ask again. */
	}
	if (t->dropping) {
		/* Count, and look for a free chunk now and then (one load). */
		cur->lost++;
		if ((cur->lost & 63) != 1 || !chunk_ready(s, next))
			return t->sink;
		t->dropping = 0;
		cur->lost--; /* this event will be recorded after all */
	} else if (flight() && chunk_state_at(s, next) != LT_CHUNK_FREE) {
		flight_reuse(chunk_at(s, next)); /* SEALED: ours, and the oldest; ACTIVE is never
						  * the next */
	} else if (!chunk_ready(s, next)) {
		if (lt_cfg.overflow == LT_OVERFLOW_BLOCK) {
			/* Copy our own sealed chunks out: slower, but nothing is lost. */
			lt_lock(&R.io_lock);
			slot_drain(s, 0);
			lt_unlock(&R.io_lock);
		}
		if (!chunk_ready(s, next)) {
			t->dropping = 1;
			cur->flags |=
			    (uint32_t)(lt_cfg.overflow == LT_OVERFLOW_BLOCK ? LT_LOST_IO
									    : LT_LOST_BUFFER)
			    << 8;
			cur->lost++;
			t->chunk = &t->dummy;
			t->data = t->pos = t->end = t->sink;
			lt_buf_writer_kick();
			return t->sink;
		}
	}
	/* The next chunk ACTIVE before this one is SEALED: a thread killed in between (the
	 * program's exit while it records) leaves an ACTIVE chunk in the ring either way, and
	 * the reader never takes a sealed chunk without a successor for lost ones. */
	chunk_start(t, next);
	chunk_seal(cur, 0);
	lt_buf_writer_kick();
	return lt_reserve(t, words);
}

void lt_buffer_settle(struct lt_thread *t)
{
	if (!t->dropping || t->slot < 0)
		return;
	int saved = errno;
	lt_lock(&R.io_lock);
	slot_drain((unsigned)t->slot, 0);
	lt_unlock(&R.io_lock);
	unsigned next = (t->cur + 1) % R.chunks;
	move_enter(t);
	if (chunk_ready((unsigned)t->slot, next)) {
		t->dropping = 0;
		struct lt_chunk_header *cur = chunk_at((unsigned)t->slot, t->cur);
		chunk_start(t, next); /* before the seal, as in reserve_slow */
		chunk_seal(cur, 0);
		lt_buf_writer_kick();
	}
	move_leave(t);
	errno = saved;
}

/* The program's errno must survive whatever the slow path does (futex, write). */
uint64_t *lt_reserve_slow(struct lt_thread *t, unsigned words)
{
	int saved = errno;
	int move = t->slot >= 0 && t->chunk && !t->unseen; /* else it only counts */
	if (move)
		move_enter(t);
	uint64_t *p = reserve_slow(t, words);
	if (move)
		move_leave(t);
	errno = saved;
	return p;
}

/*
 * Copies a chunk its producer may still be filling (the exit's copy of the live threads'
 * chunks), checked with tail_keep and tail_same: a copy that may be torn is cut off the
 * events file and made again, and after three tries the ring alone keeps the chunk.
 * io_lock held.
 */
static void chunk_snapshot(struct lt_chunk_header *c)
{
	for (int tries = 0; tries < 3; tries++) {
		uint64_t used = tail_keep(c);
		off_t start;
		if (!used || chunk_write_upto(c, used, &start) != 0 || tail_same(c, used))
			return;
		int fd = lt_file_fd(&R.events);
		if (fd < 0)
			return;
		int cut = ftruncate(fd, start);
		lt_file_done(&R.events);
		if (cut != 0)
			return;
	}
}

void lt_buffer_flush_all(int snapshot_active)
{
	if (flight()) {
		lt_lock(&R.io_lock);
		flight_dump();
		lt_unlock(&R.io_lock);
		return;
	}
	lt_buf_drain_all(0);
	if (!snapshot_active)
		return;
	/* Copy what live threads have committed so far; the reader keeps the longest copy. */
	unsigned n = __atomic_load_n(&R.nslots, __ATOMIC_ACQUIRE);
	lt_lock(&R.io_lock);
	for (unsigned s = 0; s < n; s++) {
		if (__atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) != SLOT_OWNED)
			continue;
		for (unsigned i = 0; i < R.chunks; i++)
			if (chunk_state_at(s, i) == LT_CHUNK_ACTIVE)
				chunk_snapshot(chunk_at(s, i));
	}
	lt_unlock(&R.io_lock);
}

/* Punches chunks [from, to) of the ring (as s * chunks + i), which are all in use no more. */
static void trim_range(int fd, unsigned from, unsigned to)
{
	if (from >= to)
		return;
	off_t a = chunk_offset(from / R.chunks, from % R.chunks);
	off_t b = chunk_offset((to - 1) / R.chunks, (to - 1) % R.chunks) + (off_t)R.chunk_size;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, a, b - a) != 0)
		return;
	for (unsigned k = from; k < to; k++)
		__atomic_store_n(&slot_at(k / R.chunks)->alloc[k % R.chunks], 0, __ATOMIC_RELEASE);
}

/*
 * Ends the ring file after the last byte a chunk still needs, so that the file is as long
 * as what it holds (cp, tar and du -b count its holes too).  A FREE chunk holds nothing the
 * events file lacks: its reservation goes (alloc 0; a producer that moves there later
 * reserves it again, and posix_fallocate lengthens the file), and with it the file beyond.
 * ACTIVE and SEALED chunks stay, and the file ends with the last of them, whole (its
 * unreserved rest a hole).  A live thread's chunks are where its slot is, so a pool still
 * running at the end keeps the file as long as its last thread's current chunk.  No producer is in
 * a move meanwhile (move_enter); one held up there for long (a slow disk its own copy waits on)
 * leaves the file as it is.  slot_lock held, signals blocked.
 */
#define CUT_WAIT 10000u /* yields the cut waits for producers in a move */
static void ring_cut(int fd, unsigned n)
{
	if (lt_self && lt_self->moving)
		return; /* the end from a signal handler inside our own move */
	__atomic_store_n(&R.cutting, 1, __ATOMIC_SEQ_CST);
	/* Once no move is seen under way, none starts until the cut is over.  Then the writer
	 * too (io_lock): it reads the header of a chunk it found reserved. */
	for (unsigned tries = 0, none = 0;; tries++) {
		if (tries == CUT_WAIT) {
			__atomic_store_n(&R.cutting, 0, __ATOMIC_RELEASE);
			return;
		}
		none = none || !__atomic_load_n(&R.moving, __ATOMIC_SEQ_CST);
		if (none && lt_trylock(&R.io_lock))
			break;
		sched_yield();
	}
	off_t end = LT_FILE_HEADER_SIZE;
	for (unsigned s = 0; s < n; s++)
		for (unsigned i = 0; i < R.chunks; i++) {
			uint32_t alloc = __atomic_load_n(&slot_at(s)->alloc[i], __ATOMIC_ACQUIRE);
			off_t to = chunk_offset(s, i) + (off_t)alloc;
			if (alloc && chunk_state(chunk_at(s, i)) != LT_CHUNK_FREE && to > end)
				end = to;
		}
	/* Whole chunks: a reader of an older minor version takes a chunk only where the file
	 * holds all of it. */
	uint64_t whole = ((uint64_t)(end - LT_FILE_HEADER_SIZE) + R.chunk_size - 1) / R.chunk_size;
	end = (off_t)(LT_FILE_HEADER_SIZE + whole * R.chunk_size);
	for (unsigned s = 0; s < n; s++)
		for (unsigned i = 0; i < R.chunks; i++) {
			uint32_t alloc = __atomic_load_n(&slot_at(s)->alloc[i], __ATOMIC_ACQUIRE);
			if (alloc && chunk_offset(s, i) + (off_t)alloc > end)
				__atomic_store_n(&slot_at(s)->alloc[i], 0, __ATOMIC_RELEASE);
		}
	if (ftruncate(fd, end) == 0) {
		R.file_slots = (unsigned)((uint64_t)(end - LT_FILE_HEADER_SIZE) / R.slot_size);
		__atomic_store_n(&R.cut, 1, __ATOMIC_RELEASE);
	}
	lt_unlock(&R.io_lock);
	__atomic_store_n(&R.cutting, 0, __ATOMIC_RELEASE);
}

/* The ring file's length at the end (and before exec).  slot_lock held. */
static void ring_end(int fd, unsigned n)
{
	if (flight()) {
		/* The copies on a signal read every chunk's header: the slots stay whole.  The
		 * size grown ahead of them goes. */
		if (R.file_slots > n &&
		    ftruncate(fd, (off_t)(LT_FILE_HEADER_SIZE + n * R.slot_size)) == 0)
			R.file_slots = n;
		return;
	}
	uint64_t all = ~0ull, old;
	int masked = syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all)) == 0;
	ring_cut(fd, n);
	if (masked)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

void lt_buffer_trim(void)
{
	/*
	 * The FREE chunks' contents are in the events file: give their blocks back, one call
	 * per run of them.  The ACTIVE ones stay, since their threads may still write (a
	 * runtime's pool after exit).  So do the chunks that never grew past their first page
	 * (a short thread's): a punch costs as much for a page as for a megabyte (the extent's
	 * journal entry, the mapping's page tables), and they are a page per slot at most.
	 */
	lt_lock(&R.io_lock);
	R.trimmed = 1; /* the writer reserves nothing ahead from now on */
	lt_unlock(&R.io_lock);
	/* slot_lock throughout: no slot changes owner meanwhile (an ended thread's slot taken
	 * by a thread started during the exit). */
	lt_lock(&R.slot_lock);
	unsigned n = R.nslots;
	int fd = lt_file_fd(&R.ring);
	if (fd < 0) {
		lt_unlock(&R.slot_lock);
		return;
	}
	int own = lt_self ? lt_self->slot : -1;
	unsigned from = 0, to = 0; /* the run of chunks to punch */
	for (unsigned s = 0; s < n; s++) {
		/* A slot another live thread owns is left whole: a program that exits while its
		 * threads still record (a pool never joined) has them move to their next chunk
		 * at any moment, and a chunk seen FREE here may be theirs again before the punch
		 * (its records zeroed, its `alloc` reset under the producer's cursor). */
		if ((int)s != own &&
		    __atomic_load_n(&slot_at(s)->state, __ATOMIC_ACQUIRE) == SLOT_OWNED) {
			trim_range(fd, from, to);
			from = to = 0;
			continue;
		}
		for (unsigned i = 0; i < R.chunks; i++) {
			unsigned k = s * R.chunks + i;
			uint32_t alloc = __atomic_load_n(&slot_at(s)->alloc[i], __ATOMIC_ACQUIRE);
			if (alloc > R.first_piece && chunk_state(chunk_at(s, i)) == LT_CHUNK_FREE) {
				if (from == to)
					from = k;
				to = k + 1;
				continue;
			}
			trim_range(fd, from, to);
			from = to = 0;
		}
	}
	trim_range(fd, from, to);
	ring_end(fd, n);
	lt_file_done(&R.ring);
	lt_unlock(&R.slot_lock);
}

void lt_buffer_cut(void)
{
	lt_lock(&R.slot_lock);
	int fd = lt_file_fd(&R.ring);
	if (fd >= 0) {
		ring_end(fd, R.nslots);
		lt_file_done(&R.ring);
	}
	lt_unlock(&R.slot_lock);
}

/*
 * LIBTRACE_FLIGHT_SIGNAL: the rings' current contents to the events file, and the program
 * goes on.  Async-signal-safe: io_lock is only tried (the interrupted code may hold it;
 * then the writer makes the copy when it next wakes), the rest is system calls.
 */
static void flight_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	int saved = errno;
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON && lt_is_traced_process() &&
	    R.max_slots) {
		if (lt_trylock(&R.io_lock)) {
			flight_dump();
			lt_unlock(&R.io_lock);
		} else {
			__atomic_store_n(&R.dump_pending, 1, __ATOMIC_RELEASE);
			lt_buf_writer_nudge();
		}
	}
	errno = saved;
}

void lt_buffer_flight_signal(void)
{
	if (!flight() || !lt_cfg.flight_signal)
		return;
	lt_catch_signal(lt_cfg.flight_signal, flight_signal, "LIBTRACE_FLIGHT_SIGNAL");
}

/*
 * mlockall(MCL_CURRENT) without CAP_IPC_LOCK fails when all the process's mappings together
 * exceed RLIMIT_MEMLOCK (8 MiB by default), and a ring alone is 8 MiB: a program that locks
 * its memory (real-time, security) would fail traced and work untraced.  When the real call
 * failed so, this locks what the program has mapped, one mapping at a time, and not the
 * tracer's (its rings, its buffers, this library's own segments), then asks for MCL_FUTURE
 * alone: as far as the program can tell, its memory is locked as it asked.  Mappings made
 * later are locked by the kernel, rings too, and count against the limit: a thread whose
 * ring cannot be had then has its loss counted (LT_LOST_NORING), with a warning.  0, or -1
 * with errno (everything this locked is unlocked again).
 */
struct range {
	uintptr_t lo, hi;
};

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct range *own = arg;
	uintptr_t me = (uintptr_t)&find_own, lo = UINTPTR_MAX, hi = 0;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		mine |= me >= a && me < b;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (!mine)
		return 0;
	own->lo = lo & ~(uintptr_t)4095;
	own->hi = (hi + 4095) & ~(uintptr_t)4095;
	return 1;
}

static int inside(uintptr_t a, uintptr_t b, const struct range *r, int n)
{
	for (int i = 0; i < n; i++)
		if (a >= r[i].lo && b <= r[i].hi)
			return 1;
	return 0;
}

/* Locks one line of /proc/self/maps unless it is the tracer's.  0, or -errno. */
static int lock_line(char *line, const struct range *own, int nown, int onfault)
{
	unsigned long a, b, ino;
	char perms[8];
	int path_at = 0;
	if (sscanf(line, "%lx-%lx %7s %*x %*x:%*x %lu %n", &a, &b, perms, &ino, &path_at) < 4)
		return 0;
	const char *path = path_at ? line + path_at : "";
	if (!strncmp(path, "[vvar", 5) || !strncmp(path, "[vsyscall", 9))
		return 0; /* not memory mlockall locks either */
	if (ino && ino == (unsigned long)R.ring.ino)
		return 0; /* a ring */
	if (inside(a, b, own, nown))
		return 0;
	int r = onfault ? (int)syscall(SYS_mlock2, (void *)a, b - a, MLOCK_ONFAULT)
			: mlock((void *)a, b - a);
	return r == 0 ? 0 : -errno;
}

int lt_buffer_mlock_program(int flags)
{
	struct range own[2] = {{0, 0}, {0, 0}};
	int nown = 0;
	if (dl_iterate_phdr(find_own, &own[0]))
		nown++;
	if (R.pack_buf)
		own[nown++] =
		    (struct range){(uintptr_t)R.pack_buf, (uintptr_t)R.pack_buf + R.chunk_size};
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	char buf[8192];
	size_t have = 0;
	int err = 0, onfault = (flags & MCL_ONFAULT) != 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while (!err && (nl = strchr(line, '\n'))) {
			*nl = '\0';
			err = lock_line(line, own, nown, onfault);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (err || have == sizeof(buf) - 1)
			break;
	}
	close(fd);
	if (!err && (flags & MCL_FUTURE) && mlockall(flags & ~MCL_CURRENT) != 0)
		err = -errno;
	if (err) {
		munlockall();
		errno = -err;
		return -1;
	}
	lt_info("mlockall: the program's mappings locked one by one, the tracer's left out "
		"(its rings would exceed RLIMIT_MEMLOCK)");
	return 0;
}
