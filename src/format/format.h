/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * format.h - the on-disk trace format, the only thing libtrace.so and the tools share.
 *
 * A trace directory holds one sub-directory per traced process, "<host>.<pid>", with:
 *
 *   meta    text, one "key value" per line, first line "libtrace-meta <major>.<minor>".
 *           Written with O_APPEND, whole lines per write(2) (the start's lines together at
 *           its end, then one per line), so every line that reached the kernel survives any
 *           death of the process.  Keys are listed below (LT_META_*).
 *   ring    the per-thread ring buffers themselves, a MAP_SHARED file: struct
 *           lt_ring_header padded to LT_FILE_HEADER_SIZE, then slots of `chunks` chunks of
 *           `chunk_size` bytes.  Each live thread owns one slot and writes records into its
 *           chunks in turn; a full chunk is sealed and the thread moves to the next one.
 *           The file is sparse: chunks never written are holes (zeroes: state FREE), and
 *           it may end with slots never used (its size grows ahead of the threads).
 *   events  the stream: struct lt_file_header padded to LT_FILE_HEADER_SIZE, then sealed
 *           chunks copied out of the ring by the writer thread, each as its lt_chunk_header
 *           (with `used` = the record bytes it holds) and its records: raw (`capacity` =
 *           header + `used`), or packed (2.0: flag LT_CHUNK_PACKED, `reserved` = the packed
 *           bytes that follow, `capacity` = header + those padded to 8; see pack.h).  The
 *           ring always holds raw records.
 *
 * Every chunk starts with struct lt_chunk_header, whose `used` field the producer
 * release-stores after every record.  Because the ring is a shared file mapping, whatever
 * ends the process (exit, _exit, exec, a fatal signal, SIGKILL, the OOM killer) the page
 * cache holds every committed record: a reader takes the chunks of `events`, then the
 * ACTIVE and SEALED chunks of `ring` it has not seen (same thread and seq: the longer wins).
 *
 * Records are 8-byte aligned: a 16-byte struct lt_rec followed by (words - 2) payload
 * words.  An enter/leave pair of an annotated region is 2 x 16 bytes.
 *
 * Compatibility: fields are only ever appended.  A reader accepts any minor version of its
 * major version and must reject another major version.  Major 2 (packed chunks in `events`)
 * is 1.8 plus LT_CHUNK_PACKED, which a 1.x reader would misread: the tools of major 2 read
 * traces of major 1 too.
 */
#ifndef LIBTRACE_FORMAT_H
#define LIBTRACE_FORMAT_H

#include <stdint.h>

#define LT_FORMAT_MAJOR	       2
#define LT_FORMAT_MINOR	       2
#define LT_FORMAT_MAJOR_OLDEST 1 /* the oldest major version the tools still read */

#define LT_META_FILE   "meta"
#define LT_EVENTS_FILE "events"

#define LT_FILE_MAGIC	    "LIBTRACE"
#define LT_FILE_HEADER_SIZE 4096u /* the first chunk starts on the second page */

struct lt_file_header {
	char magic[8]; /* LT_FILE_MAGIC or LT_RING_MAGIC, not NUL-terminated */
	uint16_t major;
	uint16_t minor;
	uint32_t header_size; /* sizeof(struct lt_file_header) as written */
	uint32_t pid;
	uint32_t chunks;     /* ring: chunks per slot */
	uint64_t chunk_size; /* ring: bytes per chunk, header included */
	uint64_t slot_size;  /* ring: bytes per slot (chunks * chunk_size) */
};

#define LT_RING_MAGIC "LTRACERG"

/* Chunk states (ring only; every chunk of `events` is sealed). */
enum lt_chunk_state {
	LT_CHUNK_FREE = 0,   /* drained or never used: its contents are stale */
	LT_CHUNK_ACTIVE = 1, /* the owning thread is writing into it */
	LT_CHUNK_SEALED = 2, /* full or final, waiting for the writer */
};

#define LT_CHUNK_MAGIC 0x4b43544cu /* "LTCK" little-endian */

/* Chunk flags. */
#define LT_CHUNK_LAST	0x1u /* the thread ended cleanly; no chunk follows in its sequence */
#define LT_CHUNK_PACKED 0x2u /* events only (2.0): the records are packed (pack.h) */
#define LT_CHUNK_SUMMED                                                    \
	0x4u /* events only (2.1): `state` holds lt_payload_check() of the \
	      * stored bytes after the header (raw or packed, without padding) */
/* bits 8..15: enum lt_lost_cause of `lost` */

struct lt_chunk_header {
	uint32_t magic;
	uint32_t header_size; /* sizeof(struct lt_chunk_header) as written */
	uint32_t thread;      /* process-local thread index, never reused within a process */
	uint32_t tid;	      /* OS thread id */
	uint64_t seq;	      /* 0, 1, 2, ... within one thread */
	uint64_t capacity;    /* bytes of the whole chunk, header included */
	uint64_t used;	      /* committed record bytes after the header (release-stored) */
	uint64_t lost;	      /* events dropped after this chunk's records (see flags) */
	uint32_t flags;	      /* LT_CHUNK_* */
	uint32_t check;	      /* lt_chunk_check() of the fields above `used` */
	uint32_t state;	      /* enum lt_chunk_state (ring); LT_CHUNK_SUMMED: the check (events) */
	uint32_t reserved;    /* LT_CHUNK_PACKED: packed bytes after the header; else 0 */
};

/* A cheap integrity check of the immutable part of a chunk header. */
static inline uint32_t lt_chunk_check(const struct lt_chunk_header *c)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	h ^= c->magic + ((uint64_t)c->header_size << 32);
	h *= 0xff51afd7ed558ccdull;
	h ^= c->thread + ((uint64_t)c->tid << 32);
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= c->seq;
	h *= 0xff51afd7ed558ccdull;
	h ^= c->capacity;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 32));
}

/*
 * A check of a chunk's stored records in `events` (2.1, LT_CHUNK_SUMMED; kept in `state`,
 * which only the ring needs): four lanes of a multiply-xor hash over 8-byte words, each step
 * a bijection of the lane, so that a flipped bit anywhere changes the 64-bit state for
 * certain and the 32 bits kept but for a chance of 2^-32.  Several bytes a cycle.
 */
static inline uint32_t lt_payload_check(const void *data, uint64_t n)
{
	const unsigned char *b = (const unsigned char *)data;
	uint64_t h0 = 0x9e3779b97f4a7c15ull ^ n, h1 = 0xbf58476d1ce4e5b9ull,
		 h2 = 0x94d049bb133111ebull, h3 = 0xff51afd7ed558ccdull;
	const uint64_t m = 0xc4ceb9fe1a85ec53ull;
	uint64_t i = 0;
	for (; i + 32 <= n; i += 32) {
		uint64_t w[4];
		__builtin_memcpy(w, b + i, 32);
		h0 = (h0 ^ w[0]) * m;
		h1 = (h1 ^ w[1]) * m;
		h2 = (h2 ^ w[2]) * m;
		h3 = (h3 ^ w[3]) * m;
		h0 ^= h0 >> 29;
		h1 ^= h1 >> 29;
		h2 ^= h2 >> 29;
		h3 ^= h3 >> 29;
	}
	for (; i < n; i++) {
		h0 = (h0 ^ b[i]) * m;
		h0 ^= h0 >> 29;
	}
	uint64_t h = h0;
	h = (h ^ h1) * m;
	h ^= h >> 31;
	h = (h ^ h2) * m;
	h ^= h >> 31;
	h = (h ^ h3) * m;
	h ^= h >> 33;
	return (uint32_t)(h ^ (h >> 32));
}

/* The fixed part of every record. */
struct lt_rec {
	uint64_t ts;   /* raw ticks of the process clock (see meta "clock") */
	uint8_t type;  /* enum lt_rec_type */
	uint8_t words; /* whole record size in 8-byte words, >= 2 */
	uint16_t sub;  /* type-specific: function id, cause, value kind */
	uint32_t arg;  /* type-specific: string id, thread index, result */
};

#define LT_REC_WORDS_MAX 255u
#define LT_STACK_MAX	 64u   /* frames of a STACK record */
#define LT_STRING_MAX	 1023u /* longest interned string; longer ones are cut */

#define LT_NO_THREAD 0xffffffffu

/*
 * Record types.  "p[i]" is payload word i.
 */
enum lt_rec_type {
	/* 1 is not used: string definitions live in the meta file ("string" lines). */
	LT_REC_THREAD_BEGIN = 2,  /* arg: thread index; p[0]: start routine address (0: none),
				   * p[1]: parent thread index << 32 | tid */
	LT_REC_THREAD_END = 3,	  /* arg: thread index */
	LT_REC_THREAD_CREATE = 4, /* arg: index of the created thread (inside pthread_create) */
	LT_REC_THREAD_WAIT = 5,	  /* arg: index of the joined thread (inside pthread_join) */
	LT_REC_THREAD_NAME = 6,	  /* arg: string id; p[0]: index of the named thread */
	LT_REC_CALL_ENTER = 7,	  /* sub: enum lt_fn; p[0] if present: object (see lt_fn);
				   * p[1] if present: second object (condition waits: mutex) */
	LT_REC_CALL_LEAVE = 8,	  /* sub: enum lt_fn; arg: result (int, truncated to 32 bits) */
	LT_REC_REGION_ENTER = 9,  /* arg: string id of the region name */
	LT_REC_REGION_LEAVE = 10, /* arg: string id of the region name */
	LT_REC_MARKER = 11,	  /* arg: string id of the text */
	LT_REC_COUNTER = 12,	  /* arg: string id of the name; sub: LT_VALUE_*; p[0]: value */
	LT_REC_LOST = 13,	  /* sub: enum lt_lost_cause; p[0]: events lost */
	LT_REC_CALL = 14,	  /* a call that did not block, as one event (a release stamped
				   * when made, a try or a plain mutex lock taken at once at return):
				   * sub: enum lt_fn; arg: result; p[0]: object */
	/* OpenMP (1.1).  Parallel and task ids are unique in the process: the creating thread's
	 * index << 40 | a count of that thread's. */
	LT_REC_OMP_FORK = 15,	    /* sub: enum lt_omp (parallel, teams); arg: threads asked
				     * for (0: default); p[0]: id; p[1]: code address (the
				     * outlined function, or the call site) */
	LT_REC_OMP_JOIN = 16,	    /* sub: as FORK; p[0]: id */
	LT_REC_OMP_TEAM_BEGIN = 17, /* arg: thread number in the team; p[0]: parallel id;
				     * p[1]: team size */
	LT_REC_OMP_TEAM_END = 18,   /* arg: thread number; p[0]: parallel id */
	LT_REC_OMP_ENTER = 19,	    /* sub: enum lt_omp; arg: LT_OMP_F_*; p[0] if present: object
				     * (lock, critical name, task id); p[1] if present: code
				     * address */
	LT_REC_OMP_ACQUIRED = 20,   /* sub: enum lt_omp; p[0]: object: the lock is held now */
	LT_REC_OMP_LEAVE = 21,	    /* sub: enum lt_omp; arg: result; p[0] if present: object
				     * (a lock or critical released here) */
	LT_REC_OMP_TASK_BEGIN = 22, /* arg: LT_OMP_F_*; p[0]: task id; p[1]: code address */
	LT_REC_OMP_TASK_END = 23,   /* arg: LT_OMP_F_*; p[0]: task id */
	LT_REC_OMP_TASK_DEP = 24,   /* arg: enum lt_omp_dep; p[0]: task id; p[1]: address */
	LT_REC_OMP_CHUNK = 25,	    /* sub: enum lt_omp (loop, sections); arg: 1 if work was
				     * handed out; p[0], p[1]: its first and end iteration */
	/* Kokkos (1.2).  Kernel and fence ids are the calling thread's count (32 bits). */
	LT_REC_KOKKOS_BEGIN = 26, /* sub: enum lt_kokkos; arg: string id of the name (label;
				   * 0 for a section, named at its creation); p[0] (kernels,
				   * fences, sections): device id Kokkos passed << 32 | id */
	LT_REC_KOKKOS_END = 27,	  /* sub: enum lt_kokkos; arg: id (as BEGIN's p[0]) */
	LT_REC_KOKKOS_COPY = 28,  /* a deep copy begins: arg: bytes (low 32 bits); p[0]: bytes;
				   * p[1]: destination space string id << 32 | source space;
				   * p[2]: destination label << 32 | source label; p[3]:
				   * destination address; p[4]: source address */
	LT_REC_KOKKOS_ALLOC = 29, /* sub: 0 allocation, 1 deallocation; arg: string id of the
				   * label; p[0]: address; p[1]: bytes; p[2]: space string id */
	LT_REC_KOKKOS_INFO = 30,  /* sub: enum lt_kokkos_info; arg: string id (section name,
				   * DualView label); p[0]: section id or address; p[1]: flag */
	/* Samplers and call sites (1.3). */
	LT_REC_METRIC = 31,   /* a sampled value, written by the sampler thread: arg: metric id
			       * (meta "metric" line); sub: enum lt_value_kind; p[0]: value */
	LT_REC_CPU = 32,      /* a thread runs on another CPU now: arg: CPU; sub: NUMA node
			       * (0xffff: unknown); p[0] if present: the index of the thread
			       * it concerns (the sampler's), else the writing thread */
	LT_REC_CALLSITE = 33, /* the outer frames (2, 3...) of the call site of the next
			       * record of this thread, which has LT_REC_F_CALLSITE (depth > 1
			       * only): sub: frames; p[0..frames-1]: return addresses, frame 2
			       * first; ts: the next record's */
	LT_REC_COUNTERS = 34, /* PAPI readings that belong to the next record of this thread
			       * (an ENTER or LEAVE of a module of meta "papi_modules"; the
			       * reading is taken just before that record's timestamp, which
			       * the converter gives it): sub: mask of the events of the meta
			       * "papi" lines read (bit i: event i); p[...]: their values since
			       * the thread's first reading, in bit order */
	/* MPI (1.4), written through the companion library libtrace-mpi-<abi>.so.  Ranks are
	 * ranks in the record's communicator; communicator ids are the same in every rank:
	 * LT_MPI_COMM_WORLD, LT_MPI_COMM_SELF, else (leader's world rank + 1) << 32 | the
	 * leader's count (the leader is rank 0 of the new communicator); 0: unknown. */
	LT_REC_MPI_ENTER = 35, /* arg: string id of the function's name (MPI_Send...) */
	LT_REC_MPI_LEAVE = 36, /* arg: its return code */
	LT_REC_MPI_P2P = 37,   /* sub: enum lt_mpi_p2p; arg: peer rank (LT_MPI_NO_RANK:
				* none, MPI_PROC_NULL); p[0]: communicator id; p[1]: tag;
				* p[2]: bytes; p[3]: request id (non-blocking kinds) */
	LT_REC_MPI_COLL = 38,  /* a collective, right after its MPI_ENTER: sub: enum
				* lt_mpi_coll; arg: root rank (LT_MPI_NO_RANK: none); p[0]:
				* communicator id; p[1]: bytes this rank sends; p[2]: bytes it
				* receives */
	LT_REC_MPI_COMM = 39,  /* a communicator this rank belongs to: arg: its size; sub:
				* index of the first member listed here; p[0]: its id; p[1..]:
				* the members' world ranks, two per word (low half first) */
	/* GPU (1.5): CUDA and HIP.  The host side comes from the wrappers of the runtime
	 * libraries (libcudart.so, libamdhip64.so) or from CUPTI's API callbacks; the device
	 * side from CUPTI's activity records.  Correlation ids are CUPTI's (0: none).
	 * Streams, events and addresses are the runtime's handles as the program sees them;
	 * stream 0 is the default stream. */
	LT_REC_GPU_ENTER = 40,	  /* a runtime or driver API call begins: sub: enum lt_gpu_api |
				   * enum lt_gpu_op << 4; arg: string id of the function's
				   * name; p[0]: correlation id; then by op (a missing word is
				   * 0):
				   *   CALL   p[1], p[2]: objects it concerns (stream, event)
				   *   ALLOC  p[1]: bytes; p[2]: enum lt_gpu_mem
				   *   FREE   p[1]: address; p[2]: enum lt_gpu_mem
				   *   COPY   p[1]: bytes; p[2]: destination; p[3]: source;
				   *          p[4]: enum lt_gpu_copy; p[5]: stream (async)
				   *   SET    p[1]: bytes; p[2]: destination; p[3]: value;
				   *          p[4]: stream
				   *   LAUNCH p[1]: grid x | y << 32; p[2]: grid z | block x << 32;
				   *          p[3]: block y | z << 32; p[4]: dynamic shared memory
				   *          bytes; p[5]: stream; p[6]: string id of the kernel's
				   *          (mangled) name, 0: unknown
				   *   SYNC   p[1]: the stream or event waited for (0: the device)
				   * The call site, where recorded, is the last word (F_CALLSITE). */
	LT_REC_GPU_LEAVE = 41,	  /* it returned: sub: as its ENTER; arg: its return code (0:
				   * success); p[0] if present: what it made (the allocated
				   * address, the created stream or event) */
	LT_REC_GPU_ACTIVITY = 42, /* the device did something (CUPTI activity record), written
				   * by whichever thread received the record; ts: then.  sub:
				   * enum lt_gpu_act; arg: kernels: string id of the name;
				   * copies: enum lt_gpu_copy; p[0], p[1]: start and end, ns of
				   * CLOCK_MONOTONIC (the sync pairs' MONO_NS); p[2]: device <<
				   * 32 | context id; p[3]: stream id; p[4]: correlation id;
				   * p[5]: bytes (copies, sets); kernels: p[5..7] grid and block
				   * as LAUNCH's p[1..3] */
	LT_REC_MAIN = 43,  /* the program's main begins (sub 1) or returns (sub 0), on the main
			    * thread; a process that has them says so in its meta file (main) */
	LT_REC_STACK = 44, /* a sample of the thread's call stack, taken after `arg` ns of its
			    * CPU time (LIBTRACE_STACK_SAMPLING): p[0..words-3] the return
			    * addresses (at most LT_STACK_MAX), innermost (the interrupted
			    * instruction) first; sub 1: the unwinding stopped early (an
			    * unreadable frame) */
	LT_REC_TYPE_MAX
};

/*
 * The record schema, for the tools.  LT_REC_LIST names every record type (LT_REC_<T>, printed
 * as "<T>"); enum lt_rec_word names the payload words described above: LT_W_<T>_<WORD> is
 * the index of p[i].  lt_rec_word() reads a word a short record does not have as 0.
 */
#define LT_REC_LIST(X)    \
	X(THREAD_BEGIN)   \
	X(THREAD_END)     \
	X(THREAD_CREATE)  \
	X(THREAD_WAIT)    \
	X(THREAD_NAME)    \
	X(CALL_ENTER)     \
	X(CALL_LEAVE)     \
	X(REGION_ENTER)   \
	X(REGION_LEAVE)   \
	X(MARKER)         \
	X(COUNTER)        \
	X(LOST)           \
	X(CALL)           \
	X(OMP_FORK)       \
	X(OMP_JOIN)       \
	X(OMP_TEAM_BEGIN) \
	X(OMP_TEAM_END)   \
	X(OMP_ENTER)      \
	X(OMP_ACQUIRED)   \
	X(OMP_LEAVE)      \
	X(OMP_TASK_BEGIN) \
	X(OMP_TASK_END)   \
	X(OMP_TASK_DEP)   \
	X(OMP_CHUNK)      \
	X(KOKKOS_BEGIN)   \
	X(KOKKOS_END)     \
	X(KOKKOS_COPY)    \
	X(KOKKOS_ALLOC)   \
	X(KOKKOS_INFO)    \
	X(METRIC)         \
	X(CPU)            \
	X(CALLSITE)       \
	X(COUNTERS)       \
	X(MPI_ENTER)      \
	X(MPI_LEAVE)      \
	X(MPI_P2P)        \
	X(MPI_COLL)       \
	X(MPI_COMM)       \
	X(GPU_ENTER)      \
	X(GPU_LEAVE)      \
	X(GPU_ACTIVITY)   \
	X(MAIN)           \
	X(STACK)

enum lt_rec_word {
	LT_W_THREAD_BEGIN_START = 0,  /* start routine address, 0: none */
	LT_W_THREAD_BEGIN_PARENT = 1, /* parent thread index << 32 | tid */
	LT_W_THREAD_NAME_THREAD = 0,
	LT_W_CALL_OBJ = 0, /* CALL_ENTER and CALL */
	LT_W_CALL_OBJ2 = 1,
	LT_W_COUNTER_VALUE = 0,
	LT_W_LOST_COUNT = 0,
	LT_W_OMP_FORK_ID = 0, /* FORK and JOIN */
	LT_W_OMP_FORK_CODE = 1,
	LT_W_OMP_TEAM_ID = 0, /* TEAM_BEGIN and TEAM_END: the parallel id */
	LT_W_OMP_TEAM_SIZE = 1,
	LT_W_OMP_OBJ = 0, /* ENTER, ACQUIRED, LEAVE */
	LT_W_OMP_CODE = 1,
	LT_W_OMP_TASK_ID = 0, /* TASK_BEGIN, TASK_END, TASK_DEP */
	LT_W_OMP_TASK_CODE = 1,
	LT_W_OMP_TASK_DEP_ADDR = 1,
	LT_W_OMP_CHUNK_FIRST = 0,
	LT_W_OMP_CHUNK_END = 1,
	LT_W_KOKKOS_BEGIN_ID = 0, /* device << 32 | id */
	LT_W_KOKKOS_COPY_BYTES = 0,
	LT_W_KOKKOS_COPY_SPACES = 1, /* destination << 32 | source */
	LT_W_KOKKOS_COPY_LABELS = 2, /* destination << 32 | source */
	LT_W_KOKKOS_COPY_DST = 3,
	LT_W_KOKKOS_COPY_SRC = 4,
	LT_W_KOKKOS_ALLOC_ADDR = 0,
	LT_W_KOKKOS_ALLOC_BYTES = 1,
	LT_W_KOKKOS_ALLOC_SPACE = 2,
	LT_W_KOKKOS_INFO_ID = 0, /* section id or address */
	LT_W_KOKKOS_INFO_FLAG = 1,
	LT_W_METRIC_VALUE = 0,
	LT_W_CPU_THREAD = 0,
	LT_W_MPI_COMM_ID = 0, /* P2P, COLL, COMM: the communicator */
	LT_W_MPI_P2P_TAG = 1,
	LT_W_MPI_P2P_BYTES = 2,
	LT_W_MPI_P2P_REQUEST = 3,
	LT_W_MPI_COLL_SENT = 1,
	LT_W_MPI_COLL_RECEIVED = 2,
	LT_W_MPI_COMM_MEMBERS = 1, /* the first of the words of members */
	LT_W_GPU_CORRELATION = 0,  /* GPU_ENTER; then by its op: */
	LT_W_GPU_CALL_OBJ = 1,
	LT_W_GPU_CALL_OBJ2 = 2,
	LT_W_GPU_ALLOC_BYTES = 1,
	LT_W_GPU_ALLOC_MEM = 2,
	LT_W_GPU_FREE_ADDR = 1,
	LT_W_GPU_FREE_MEM = 2,
	LT_W_GPU_COPY_BYTES = 1,
	LT_W_GPU_COPY_DST = 2,
	LT_W_GPU_COPY_SRC = 3,
	LT_W_GPU_COPY_KIND = 4,
	LT_W_GPU_COPY_STREAM = 5,
	LT_W_GPU_SET_BYTES = 1,
	LT_W_GPU_SET_DST = 2,
	LT_W_GPU_SET_VALUE = 3,
	LT_W_GPU_SET_STREAM = 4,
	LT_W_GPU_LAUNCH_DIMS = 1, /* 3 words: grid and block */
	LT_W_GPU_LAUNCH_SHARED = 4,
	LT_W_GPU_LAUNCH_STREAM = 5,
	LT_W_GPU_LAUNCH_KERNEL = 6,
	LT_W_GPU_SYNC_OBJ = 1,
	LT_W_GPU_LEAVE_MADE = 0,
	LT_W_GPU_ACT_START = 0,
	LT_W_GPU_ACT_END = 1,
	LT_W_GPU_ACT_CONTEXT = 2, /* device << 32 | context id */
	LT_W_GPU_ACT_STREAM = 3,
	LT_W_GPU_ACT_CORRELATION = 4,
	LT_W_GPU_ACT_BYTES = 5, /* copies, sets */
	LT_W_GPU_ACT_DIMS = 5,	/* kernels: 3 words, as LAUNCH's */
};

/* Payload word i of r, 0 when r is too short to have it. */
static inline uint64_t lt_rec_word(const struct lt_rec *r, unsigned i)
{
	return i + 2u < r->words ? ((const uint64_t *)(r + 1))[i] : 0;
}

#define LT_MPI_COMM_WORLD 1u
#define LT_MPI_COMM_SELF  2u
#define LT_MPI_NO_RANK	  0xffffffffu

enum lt_mpi_p2p {
	LT_MPI_SEND = 0,	 /* a blocking send begins */
	LT_MPI_RECV = 1,	 /* a blocking receive completed (source, tag, bytes: its status) */
	LT_MPI_ISEND = 2,	 /* a non-blocking send was started: request id */
	LT_MPI_ISEND_DONE = 3,	 /* it completed (wait or test): p[3] the request id */
	LT_MPI_IRECV_POSTED = 4, /* a non-blocking receive was posted: request id */
	LT_MPI_IRECV_DONE = 5,	 /* it completed: source, tag, bytes of its status */
	LT_MPI_CANCELLED = 6,	 /* a request was cancelled */
};

/* Collective operations, the sub of MPI_COLL (OTF2's OTF2_CollectiveOp order). */
enum lt_mpi_coll {
	LT_MPI_BARRIER = 0,
	LT_MPI_BCAST = 1,
	LT_MPI_GATHER = 2,
	LT_MPI_GATHERV = 3,
	LT_MPI_SCATTER = 4,
	LT_MPI_SCATTERV = 5,
	LT_MPI_ALLGATHER = 6,
	LT_MPI_ALLGATHERV = 7,
	LT_MPI_ALLTOALL = 8,
	LT_MPI_ALLTOALLV = 9,
	LT_MPI_ALLTOALLW = 10,
	LT_MPI_ALLREDUCE = 11,
	LT_MPI_REDUCE = 12,
	LT_MPI_REDUCE_SCATTER = 13,
	LT_MPI_SCAN = 14,
	LT_MPI_EXSCAN = 15,
	LT_MPI_REDUCE_SCATTER_BLOCK = 16,
	LT_MPI_CREATE_HANDLE = 17, /* communicator creation (split, dup...) */
	LT_MPI_DESTROY_HANDLE = 18,
};

/* Where a GPU_ENTER/LEAVE comes from: the low 4 bits of their sub. */
enum lt_gpu_api {
	LT_GPU_CUDART = 0,	  /* the wrappers of the shared CUDA runtime (libcudart.so) */
	LT_GPU_CUPTI_RUNTIME = 1, /* CUPTI's runtime API callbacks */
	LT_GPU_CUPTI_DRIVER = 2,  /* CUPTI's driver API callbacks (calls not made by cudart) */
	LT_GPU_HIP = 3,		  /* the wrappers of the HIP runtime (libamdhip64.so) */
};

/* What a GPU API call does: bits 4..7 of the sub of GPU_ENTER/LEAVE. */
enum lt_gpu_op {
	LT_GPU_OP_CALL = 0, /* anything else (queries, stream and event management) */
	LT_GPU_OP_ALLOC = 1,
	LT_GPU_OP_FREE = 2,
	LT_GPU_OP_COPY = 3,
	LT_GPU_OP_SET = 4,
	LT_GPU_OP_LAUNCH = 5,
	LT_GPU_OP_SYNC = 6, /* the host waits for the device, a stream or an event */
};

#define LT_GPU_API(sub) ((sub)&0xfu)
#define LT_GPU_OP(sub)	((sub) >> 4 & 0xfu)

enum lt_gpu_mem {
	LT_GPU_MEM_DEVICE = 0,
	LT_GPU_MEM_HOST = 1,	/* page-locked host memory */
	LT_GPU_MEM_MANAGED = 2, /* unified memory */
	LT_GPU_MEM_ASYNC = 3,	/* stream-ordered (cudaMallocAsync, hipMallocAsync) */
};

/* Copy directions, the values of cudaMemcpyKind and hipMemcpyKind. */
enum lt_gpu_copy {
	LT_GPU_COPY_HTOH = 0,
	LT_GPU_COPY_HTOD = 1,
	LT_GPU_COPY_DTOH = 2,
	LT_GPU_COPY_DTOD = 3,
	LT_GPU_COPY_DEFAULT = 4, /* inferred from the addresses (unified addressing) */
	LT_GPU_COPY_PEER = 5,	 /* device to another device */
	LT_GPU_COPY_UNKNOWN = 15,
};

enum lt_gpu_act {
	LT_GPU_ACT_KERNEL = 0,
	LT_GPU_ACT_COPY = 1,
	LT_GPU_ACT_SET = 2,
	LT_GPU_ACT_SYNC = 3, /* a host wait CUPTI measured (cudaStreamSynchronize...) */
};

/*
 * Call sites (1.3).  A record whose type byte has LT_REC_F_CALLSITE set carries one more
 * payload word, its last: the return address of the traced call into the code that made it
 * (frame 1 of its call site); type & ~LT_REC_F_CALLSITE is its type, and its other words
 * are as without the flag.  Folded in, a call site costs 8 bytes and no record header (a
 * separate record would take 24 bytes and a second header store on the hot path).  Set on
 * CALL_ENTER and CALL of the pthread module and on OMP_ENTER and OMP_FORK: the records of
 * calls the program makes.  The annotation API's regions are named by the program and
 * Kokkos's callbacks are called from inside Kokkos: neither carries one.
 */
#define LT_REC_F_CALLSITE 0x80u

/* Whether records of `type` (flag removed) open something a later record closes: a call,
 * a region, a construct, a kernel. */
static inline int lt_rec_opens(unsigned type)
{
	return type == LT_REC_CALL_ENTER || type == LT_REC_REGION_ENTER ||
	       type == LT_REC_MPI_ENTER || type == LT_REC_OMP_ENTER ||
	       type == LT_REC_KOKKOS_BEGIN || type == LT_REC_GPU_ENTER;
}

enum lt_value_kind {
	LT_VALUE_INT64 = 0,
	LT_VALUE_DOUBLE = 1,
};

enum lt_lost_cause {
	LT_LOST_BUFFER = 1, /* drop policy: the thread's ring was full */
	LT_LOST_IO = 2,	    /* the events file could not be written (disk full, I/O error) */
	LT_LOST_NORING = 3, /* the thread got no ring (the ring file could not grow) */
	LT_LOST_UNSEEN = 4, /* recorded in a process made by a raw clone (not fork), which has
			     * no trace of its own: counted for the thread that made it */
};

/*
 * What selective recording left out on purpose (1.9), by cause: meta "dropped" lines count
 * calls and regions (an enter/leave pair, or one CALL record, counts once).
 */
enum lt_drop {
	LT_DROP_SHORT = 0,  /* shorter than LIBTRACE_MIN_DURATION */
	LT_DROP_FILTER = 1, /* its name filtered out (LIBTRACE_EXCLUDE / LIBTRACE_INCLUDE) */
	LT_DROP_CAUSES
};

/*
 * Intercepted functions.  X(name, module, object) where object says what CALL_ENTER p[0]
 * holds: NONE (no payload word), ADDR (the primitive's address), THREAD (a thread index),
 * STRING (a string id: path or command), PID (a process id).  The ids are part of the
 * format: only append.
 */
#define LT_FN_LIST(X)                                \
	X(pthread_create, pthread, NONE)             \
	X(pthread_join, pthread, THREAD)             \
	X(pthread_tryjoin_np, pthread, THREAD)       \
	X(pthread_timedjoin_np, pthread, THREAD)     \
	X(pthread_exit, pthread, NONE)               \
	X(pthread_mutex_lock, pthread, ADDR)         \
	X(pthread_mutex_trylock, pthread, ADDR)      \
	X(pthread_mutex_timedlock, pthread, ADDR)    \
	X(pthread_mutex_unlock, pthread, ADDR)       \
	X(pthread_rwlock_rdlock, pthread, ADDR)      \
	X(pthread_rwlock_tryrdlock, pthread, ADDR)   \
	X(pthread_rwlock_timedrdlock, pthread, ADDR) \
	X(pthread_rwlock_wrlock, pthread, ADDR)      \
	X(pthread_rwlock_trywrlock, pthread, ADDR)   \
	X(pthread_rwlock_timedwrlock, pthread, ADDR) \
	X(pthread_rwlock_unlock, pthread, ADDR)      \
	X(pthread_cond_wait, pthread, ADDR)          \
	X(pthread_cond_timedwait, pthread, ADDR)     \
	X(pthread_cond_signal, pthread, ADDR)        \
	X(pthread_cond_broadcast, pthread, ADDR)     \
	X(pthread_barrier_wait, pthread, ADDR)       \
	X(sem_wait, pthread, ADDR)                   \
	X(sem_timedwait, pthread, ADDR)              \
	X(sem_trywait, pthread, ADDR)                \
	X(sem_post, pthread, ADDR)                   \
	X(fork, proc, NONE)                          \
	X(execve, proc, STRING)                      \
	X(posix_spawn, proc, STRING)                 \
	X(dlopen, proc, STRING)                      \
	X(dlclose, proc, ADDR)                       \
	X(pthread_mutex_clocklock, pthread, ADDR)    \
	X(pthread_cond_clockwait, pthread, ADDR)     \
	X(sem_clockwait, pthread, ADDR)              \
	X(pthread_clockjoin_np, pthread, THREAD)     \
	X(pthread_rwlock_clockrdlock, pthread, ADDR) \
	X(pthread_rwlock_clockwrlock, pthread, ADDR)

enum lt_fn {
#define LT_FN_ENUM(name, module, object) LT_FN_##name,
	LT_FN_LIST(LT_FN_ENUM)
#undef LT_FN_ENUM
	    LT_FN_MAX
};

enum lt_fn_object {
	LT_OBJ_NONE = 0,
	LT_OBJ_ADDR,
	LT_OBJ_THREAD,
	LT_OBJ_STRING,
	LT_OBJ_PID,
};

/*
 * OpenMP constructs: the sub of the OMP_* records.  X(name, text): text is what the
 * converter calls the region.  Part of the format: only append.
 */
#define LT_OMP_LIST(X)                                 \
	X(parallel, "!$omp parallel")                  \
	X(teams, "!$omp teams")                        \
	X(loop, "!$omp for")                           \
	X(sections, "!$omp sections")                  \
	X(single, "!$omp single")                      \
	X(barrier, "!$omp barrier")                    \
	X(implicit_barrier, "!$omp implicit barrier")  \
	X(taskwait, "!$omp taskwait")                  \
	X(taskgroup, "!$omp taskgroup")                \
	X(critical, "!$omp critical")                  \
	X(atomic, "!$omp atomic")                      \
	X(ordered, "!$omp ordered")                    \
	X(task_create, "!$omp create task")            \
	X(task, "!$omp task")                          \
	X(taskloop, "!$omp taskloop")                  \
	X(taskyield, "!$omp taskyield")                \
	X(masked, "!$omp masked")                      \
	X(cancel, "!$omp cancel")                      \
	X(set_lock, "omp_set_lock")                    \
	X(test_lock, "omp_test_lock")                  \
	X(unset_lock, "omp_unset_lock")                \
	X(set_nest_lock, "omp_set_nest_lock")          \
	X(test_nest_lock, "omp_test_nest_lock")        \
	X(unset_nest_lock, "omp_unset_nest_lock")      \
	X(doacross_wait, "!$omp ordered depend(sink)") \
	X(workshare, "!$omp workshare")                \
	X(reduction, "!$omp reduction")                \
	X(flush, "!$omp flush")

enum lt_omp {
#define LT_OMP_ENUM(name, text) LT_OMP_##name,
	LT_OMP_LIST(LT_OMP_ENUM)
#undef LT_OMP_ENUM
	    LT_OMP_MAX
};

/*
 * Kokkos: what a KOKKOS_BEGIN/END opens or closes.  X(name, text).  Part of the format.
 */
#define LT_KOKKOS_LIST(X)                                 \
	X(parallel_for, "Kokkos::parallel_for")           \
	X(parallel_reduce, "Kokkos::parallel_reduce")     \
	X(parallel_scan, "Kokkos::parallel_scan")         \
	X(fence, "Kokkos::fence")                         \
	X(region, "Kokkos::Profiling::pushRegion")        \
	X(section, "Kokkos::Profiling::ProfilingSection") \
	X(deep_copy, "Kokkos::deep_copy")

enum lt_kokkos {
#define LT_KOKKOS_ENUM(name, text) LT_KOKKOS_##name,
	LT_KOKKOS_LIST(LT_KOKKOS_ENUM)
#undef LT_KOKKOS_ENUM
	    LT_KOKKOS_MAX
};

enum lt_kokkos_info {
	LT_KOKKOS_SECTION_CREATE = 0,  /* arg: name; p[0]: section id */
	LT_KOKKOS_SECTION_DESTROY = 1, /* p[0]: section id */
	LT_KOKKOS_DV_SYNC = 2,	       /* arg: label; p[0]: address; p[1]: 1 to the device */
	LT_KOKKOS_DV_MODIFY = 3,       /* arg: label; p[0]: address; p[1]: 1 on the device */
	LT_KOKKOS_EVENT = 4,	       /* arg: the profile event's text */
};

/* Flags of OMP_ENTER, OMP_TASK_BEGIN and OMP_TASK_END. */
#define LT_OMP_F_UNDEFERRED 0x1u /* a task run at once by its creator */
#define LT_OMP_F_UNTIED	    0x2u
#define LT_OMP_F_SWITCH	    0x4u /* a task suspended (END) or resumed (BEGIN), not done */
#define LT_OMP_F_IMPLICIT   0x8u /* ENTER of a construct the runtime adds (end of a loop) */

enum lt_omp_dep {
	LT_OMP_DEP_IN = 1,
	LT_OMP_DEP_OUT = 2,
	LT_OMP_DEP_INOUT = 3,
	LT_OMP_DEP_MUTEXINOUTSET = 4,
	LT_OMP_DEP_INOUTSET = 5,
	LT_OMP_DEP_DEPOBJ = 6, /* p[1]: the depend object, whose kind the runtime holds */
};

/*
 * Keys of the meta file.  Values run to the end of the line; strings that may hold odd
 * bytes (paths, arguments) are escaped: bytes < 0x21, 0x7f and '\\' become \xNN.
 *
 *   libtrace-meta 2.0            first line: format version
 *   pid N / ppid N / host NAME / exe PATH
 *   arg ESCAPED                  one line per argv element, in order
 *   clock tsc|monotonic          what the ticks of this process are
 *   clock_hz F                   ticks per second estimated at start
 *   sync TICKS MONO_NS REAL_NS   a clock reading pair; one at start, more later, one at end
 *   config NAME=ESCAPED          the resolved configuration
 *   parent PID THREAD            set in a forked child: parent pid and forking thread index
 *   map START END OFFSET PATH    an executable file mapping (hex), at start and each dlopen
 *   dlopen TICKS PATH            a dlopen that changed the map
 *   string ID ESCAPED            an interned string (region names, paths...): records refer
 *                                to it by ID; written before the first record that does
 *   lost THREAD CAUSE COUNT      events of a thread that had no ring (enum lt_lost_cause)
 *   chunks THREAD N              the thread ended after writing chunks 0 .. N-1 (1.6)
 *   ending TICKS                 the tracer began its own end here (2.2): what follows
 *                                until "end" (its modules' end, the last copies, the trim)
 *                                is the tracer's time, not the program's; written just
 *                                before "end" and "exec"
 *   end TICKS REASON             the process ended normally; absent after a crash
 *   openmp ompt|gomp             how OpenMP is recorded (1.1): through OMPT, whose code
 *                                addresses are call sites, or libgomp's entry points
 *   kokkos VERSION               Kokkos loaded our callbacks (1.2); its interface version
 *   kokkos_meta KEY VALUE        Kokkos metadata (declare_metadata); KEY and VALUE escaped
 *   kokkos_fence 0|1             whether Kokkos fences around the callbacks (its
 *                                requires_global_fencing)
 *   kokkos_end TICKS             kokkosp_finalize_library was called
 *   exec TICKS                   the process is about to exec (its new image has its own
 *                                directory, <host>.<pid>.N)
 *   metric ID SCOPE MODE UNIT NAME   a sampled quantity (1.3): SCOPE node|process; MODE
 *                                absolute (a level: temperature, bytes) or accumulated (a
 *                                running total: energy); UNIT as OTF2 writes it (J, C, B);
 *                                NAME escaped ("RAPL package 0", "memory node 1")
 *   sampler THREAD               the index of the sampler thread: its records are metrics,
 *                                not the program's
 *   papi I NAME                  PAPI event I (bit I of COUNTERS records), as asked for
 *   papi_code I CODE             its PAPI event code (0x8000xxxx: a preset; Paraver's type)
 *   papi_modules LIST            the modules whose regions carry COUNTERS records
 *   callsite_depth N             frames per call site at most (frame 1 in the record,
 *                                up to N - 1 in a CALLSITE record)
 *   sampler_off NAME ESCAPED     a sampler that could not run, and why (said once)
 *   stack_blocked THREAD TID N   thread THREAD (kernel id TID) blocked the stack sampling
 *                                signal: N samples it would have had were not taken
 *                                (said at its end, or at exit while it lived)
 *   mpi_rank R                   the process is MPI rank R of COMM_WORLD (1.4): from the
 *                                launcher's variables at start, confirmed at MPI_Init
 *   mpi_size N                   the size of COMM_WORLD (at MPI_Init)
 *   mpi_library NAME             the companion library's MPI (openmpi, mpich)
 *   gpu cupti VERSION            CUDA is recorded through CUPTI (1.5), API version N;
 *                                the cudart wrappers stay quiet then
 *   gpu_off WHAT ESCAPED         a GPU layer that could not run, and why (once)
 *   gpu_clock HOW                how CUPTI's device times were put on CLOCK_MONOTONIC:
 *                                callback (CUPTI stamps with our clock) or sync (paired
 *                                readings, linear between them)
 *   main 1                       the C library started the program through libtrace's
 *                                __libc_start_main: MAIN records say when main began and
 *                                returned (else the main thread's life stands for it)
 *   dropped THREAD CAUSE COUNT   thread THREAD left COUNT calls and regions unrecorded on
 *                                purpose, for enum lt_drop CAUSE (1.9: at its end, or at
 *                                the process's end while it lives)
 *   paused 1                     recording began paused (LIBTRACE_START_PAUSED, 1.9);
 *                                pauses and resumes are MARKER records of the thread
 *                                that made them, with the texts LT_PAUSE_TEXT and
 *                                LT_RESUME_TEXT
 *   mode flight BYTES            the process ran as a flight recorder (1.9): each thread
 *                                kept its newest BYTES of records (LIBTRACE_BUFFER_SIZE)
 *                                in its ring, reusing its oldest chunk; the events file
 *                                holds copies made at the end, on LIBTRACE_FLIGHT_SIGNAL
 *                                or as a slot was reused.  A thread's chunks then start
 *                                at a seq > 0 and may have gaps between copies: not
 *                                damage.  Absent: stream mode, every chunk is copied
 *   mpi_clock LOCAL OFFSET RTT   at LOCAL (ns on this process's timeline: the sync pairs'
 *                                clock), rank 0's timeline read LOCAL + OFFSET, measured
 *                                by a ping-pong whose best round trip took RTT ns (at
 *                                MPI_Init and MPI_Finalize; none on rank 0)
 *   writer_cpu NS                CPU time the writer thread(s) used, in ns (2.0; before
 *                                "end"; 0: the writer never started)
 */
#define LT_META_MAGIC "libtrace-meta"

/* The keys above, for the code that writes and reads them. */
#define LT_META_PID	       "pid"
#define LT_META_PPID	       "ppid"
#define LT_META_HOST	       "host"
#define LT_META_EXE	       "exe"
#define LT_META_ARG	       "arg"
#define LT_META_CLOCK	       "clock"
#define LT_META_CLOCK_HZ       "clock_hz"
#define LT_META_SYNC	       "sync"
#define LT_META_CONFIG	       "config"
#define LT_META_PARENT	       "parent"
#define LT_META_MAP	       "map"
#define LT_META_DLOPEN	       "dlopen"
#define LT_META_STRING	       "string"
#define LT_META_LOST	       "lost"
#define LT_META_CHUNKS	       "chunks"
#define LT_META_END	       "end"
#define LT_META_ENDING	       "ending"
#define LT_META_OPENMP	       "openmp"
#define LT_META_KOKKOS	       "kokkos"
#define LT_META_KOKKOS_META    "kokkos_meta"
#define LT_META_KOKKOS_FENCE   "kokkos_fence"
#define LT_META_KOKKOS_END     "kokkos_end"
#define LT_META_EXEC	       "exec"
#define LT_META_METRIC	       "metric"
#define LT_META_SAMPLER	       "sampler"
#define LT_META_PAPI	       "papi"
#define LT_META_PAPI_CODE      "papi_code"
#define LT_META_PAPI_MODULES   "papi_modules"
#define LT_META_CALLSITE_DEPTH "callsite_depth"
#define LT_META_SAMPLER_OFF    "sampler_off"
#define LT_META_MPI_RANK       "mpi_rank"
#define LT_META_MPI_SIZE       "mpi_size"
#define LT_META_MPI_LIBRARY    "mpi_library"
#define LT_META_GPU	       "gpu"
#define LT_META_GPU_OFF	       "gpu_off"
#define LT_META_GPU_CLOCK      "gpu_clock"
#define LT_META_MPI_CLOCK      "mpi_clock"
#define LT_META_MAIN	       "main"
#define LT_META_MODE	       "mode"		/* flight <ring bytes per thread> (1.9) */
#define LT_META_STACK	       "stack_sampling" /* <period ns>: STACK records may follow */
#define LT_META_STACK_BLOCKED  "stack_blocked"	/* THREAD TID COUNT: samples not taken */
#define LT_META_DROPPED	       "dropped"
#define LT_META_PAUSED	       "paused"

#define LT_PAUSE_TEXT	   "libtrace: recording paused"
#define LT_RESUME_TEXT	   "libtrace: recording resumed"
#define LT_META_WRITER_CPU "writer_cpu"

#endif /* LIBTRACE_FORMAT_H */
