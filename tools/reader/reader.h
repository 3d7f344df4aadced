/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reader.h - reads a libtrace trace directory: its processes, their meta data, and each
 * thread's records in order, recovered from the events file and from the ring a killed
 * process left behind.  Shared by the tools; never linked into libtrace.so.
 *
 * Errors never stop the reading of what is valid: each problem is reported once through
 * the `warn` callback with the file and offset, and the reader goes on with the next chunk.
 */
#ifndef LIBTRACE_READER_H
#define LIBTRACE_READER_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "pack.h"

struct rd_sync {
	uint64_t ticks, mono_ns, real_ns;
};

struct rd_map {
	uint64_t start, end, offset;
	char *path;
};

struct rd_chunk {
	int file;     /* RD_EVENTS or RD_RING */
	uint64_t off; /* offset of the chunk header in that file */
	uint32_t thread, tid;
	uint64_t seq, used, lost; /* used: raw record bytes (packed or not) */
	uint32_t flags;
	uint64_t packed;	 /* LT_CHUNK_PACKED: the packed bytes there are to read; else 0 */
	uint64_t truncated_from; /* events: the size its header announced, when cut short */
	int live; /* a copy in the ring was still ACTIVE: its thread ran when the trace ended */
};

enum { RD_EVENTS = 0, RD_RING = 1 };

struct rd_written {
	uint32_t thread;
	uint64_t chunks;
};

struct rd_lost {
	uint32_t thread, cause;
	uint64_t count;
};

/* A quantity the sampler thread samples (meta "metric"). */
struct rd_metric {
	uint32_t id;
	int node;	 /* scope: 1 node, 0 process */
	int accumulated; /* a running total (energy), else a level */
	char unit[16];	 /* J, C, B */
	char *name;
};

struct rd_thread {
	uint32_t index, tid;
	size_t first, count; /* its chunks: rd_process.chunks[first .. first + count) */
};

struct rd_process {
	char dir[PATH_MAX];
	char name[256]; /* the directory's name: <host>.<pid>[.<n>] */
	int pid, ppid, parent_pid;
	uint32_t parent_thread;
	char host[256];
	char exe[PATH_MAX];
	char **args;
	size_t nargs;
	int clock_tsc;
	double clock_hz;
	double ns_per_tick; /* fitted to the clock readings */
	struct rd_sync *syncs;
	size_t nsyncs;
	int ended;    /* an "end" or "exec" line: the process ended normally */
	int mpi_rank; /* "mpi_rank R" + 1 (0: none) */
	int mpi_size; /* "mpi_size N": the process called MPI_Init (0: never) */
	struct rd_mpi_clock {
		int64_t local_ns, offset_ns, rtt_ns;
	} mpi_clock[4]; /* "mpi_clock" lines: offsets to rank 0, in time order */
	size_t nmpi_clock;
	int ompt; /* "openmp ompt": its OpenMP code addresses are call sites (return addresses) */
	int main_recorded;	       /* "main 1": MAIN records say when main began and returned */
	uint64_t stack_period;	       /* "stack_sampling": ns of CPU time between stack samples */
	struct rd_lost *stack_blocked; /* "stack_blocked THREAD TID N": cause is the tid, count N
					* samples not taken (the thread blocked the signal) */
	size_t nstack_blocked;
	uint64_t end_ticks;	   /* and when */
	uint64_t ending_ticks;	   /* "ending": when the tracer's own end began (0: unknown) */
	uint64_t kokkos_version;   /* "kokkos": Kokkos called our tool, with this interface */
	uint64_t kokkos_end_ticks; /* "kokkos_end": when Kokkos finalized its tool (0: never) */
	char **kokkos_meta;	   /* "kokkos_meta": key, value, key, value... */
	char *papi[16];		   /* "papi I NAME": PAPI event I (bit I of COUNTERS), or NULL */
	unsigned npapi;		   /* highest I + 1 */
	uint32_t papi_code[16];	   /* "papi_code I CODE": PAPI's event code (0: not said) */
	size_t nkokkos_meta;	   /* pairs */
	struct rd_map *maps;
	size_t nmaps, maps_cap;
	/* The maps indexed (rd_map_at): disjoint segments in address order, each naming the
	 * newest map over it; and the first map of each distinct path, in the maps' order. */
	struct rd_map_seg {
		uint64_t start, end;
		size_t map;
	} * map_segs;
	size_t nmap_segs;
	size_t *map_paths;
	size_t nmap_paths;
	struct rd_chunk *chunks; /* sorted by thread, then seq; duplicates removed */
	size_t nchunks;
	struct rd_thread *threads;
	size_t nthreads;
	struct rd_lost *lost; /* losses of threads that had no ring ("lost" lines of meta) */
	size_t nlost;
	struct rd_lost *dropped; /* left out on purpose ("dropped" lines; cause: enum lt_drop) */
	size_t ndropped;
	struct rd_written *written; /* chunks each ended thread wrote ("chunks" lines) */
	size_t nwritten;
	uint32_t sampler_thread;   /* "sampler": the sampler thread's index, else LT_NO_THREAD */
	struct rd_thread sampler;  /* its chunks: kept out of `threads` (it is not the program's;
				    * its records are metrics); count 0 when none */
	struct rd_metric *metrics; /* "metric" lines */
	size_t nmetrics;
	char **sampler_off;  /* "sampler_off": name, reason, name, reason... */
	size_t nsampler_off; /* pairs */
	char gpu[64];	     /* "gpu": how CUDA was recorded ("cupti 12040"), "" when not said */
	char gpu_clock[32];  /* "gpu_clock": how device times were put on CLOCK_MONOTONIC */
	char **gpu_off;	     /* "gpu_off": layer, reason, layer, reason... */
	size_t ngpu_off;     /* pairs */
	char **strings;	     /* id -> string, NULL where undefined */
	uint32_t nstrings;
	int events_fd, ring_fd;
	uint64_t events_size, ring_size; /* at open: what is read of each, however it grows */
	char events_path[PATH_MAX + 16], ring_path[PATH_MAX + 16];
	uint64_t flight; /* "mode flight BYTES": a flight recorder's window (BYTES per thread) */
	uint64_t flight_ticks;	/* from then on every thread's records are whole; 0: all of them */
	unsigned flight_copies; /* threads with chunks of an earlier copy before a gap */
	int major, minor;	/* the meta file's format version */
	int64_t writer_cpu_ns;	/* "writer_cpu": the writer's CPU time (-1: not said) */
	int started_paused;	/* "paused 1": started with recording paused */
	int errors;		/* damage reported while reading */
	int truncated;		/* files found cut short (a killed process, a full disk) */
};

typedef void (*rd_warn_fn)(void *ctx, const char *msg);

/*
 * Opens the process directory `dir`: parses meta, indexes the chunks of events and ring,
 * and collects the string definitions.  Returns 0, or -1 when nothing of it can be read, or
 * when meta, events or ring is there but not a regular file (then `errbuf` says why).
 * Damage that still leaves records is reported through `warn`, among it the chunks a
 * thread is missing: a gap in its sequence, or, in a process that ended normally, a last
 * chunk without LT_CHUNK_LAST that the ring does not show still being written.  A flight
 * recorder's trace (meta "mode flight") is a window: its threads' sequences may start late
 * and have gaps between copies, which is not damage; `warn` gets one line that says so and
 * when the window starts (flight_ticks), and p->errors does not count it.
 */
int rd_process_open(struct rd_process *p, const char *dir, rd_warn_fn warn, void *ctx, char *errbuf,
		    size_t errlen);
/* Only its meta file (no records: the chunks are not indexed); rd_process_close frees it. */
int rd_process_meta(struct rd_process *p, const char *dir, rd_warn_fn warn, void *ctx, char *errbuf,
		    size_t errlen);
void rd_process_close(struct rd_process *p);

/* CLOCK_MONOTONIC nanoseconds of a tick value of process p. */
uint64_t rd_ticks_to_ns(const struct rd_process *p, uint64_t ticks);

/*
 * Calls `fn` for every record of thread `th` in order; `rec` points at the whole record
 * (rec->words * 8 bytes).  A LOST count kept in a chunk header is delivered as a synthetic
 * LT_REC_LOST record after that chunk's records; a loss told by the meta file, after the
 * thread's last record.  Stops early when fn returns non-zero and
 * returns that value; returns 0 otherwise.
 */
typedef int (*rd_record_fn)(void *ctx, const struct rd_process *p, const struct rd_thread *th,
			    const struct lt_rec *rec);
int rd_thread_records(struct rd_process *p, const struct rd_thread *th, rd_record_fn fn, void *ctx,
		      rd_warn_fn warn, void *wctx);

/*
 * A cursor walks one thread's records in order, like rd_thread_records, but one record per
 * call and through a small window, so that the threads of a process can be merged in time.
 * The record returned stays valid until the next call.  Synthetic LOST records carry the
 * time stamp of the record before them.
 */
struct rd_cursor {
	struct rd_process *p;
	const struct rd_thread *th;
	rd_warn_fn warn;
	void *wctx;
	size_t chunk;		 /* index into th's chunks */
	uint64_t data_off;	 /* file offset of the current chunk's records */
	uint64_t pos;		 /* offset in the chunk's (raw) records of buf[at] */
	uint64_t wstart;	 /* packed chunks: offset in the packed bytes of buf[0] */
	struct lt_pack_state pk; /* packed chunks: the decoder's state */
	char *buf;
	size_t cap, len, at;
	int chunk_done;
	int truncated;	  /* the thread's records end in a copy that was cut short */
	size_t meta_lost; /* next p->lost entry to look at */
	uint64_t last_ts;
	struct {
		struct lt_rec r;
		uint64_t count;
	} lost;
	/* The call site of the record returned last (LT_REC_F_CALLSITE, format 1.3): the
	 * record is handed over without it, as if it had none; 0 when it had none. */
	uint64_t callsite;
	uint64_t plain[LT_REC_WORDS_MAX]; /* that record, without its call site word; or the
					   * record of a packed chunk decoded last */
};

void rd_cursor_init(struct rd_cursor *c, struct rd_process *p, const struct rd_thread *th,
		    rd_warn_fn warn, void *wctx);
/* The next record, or NULL after the last one. */
const struct lt_rec *rd_cursor_next(struct rd_cursor *c);
void rd_cursor_fini(struct rd_cursor *c);

/* Lists the process directories of a trace directory (sorted).  Returns the count or -1. */
int rd_trace_list(const char *trace_dir, char ***dirs, char *errbuf, size_t errlen);

/* Names for printing. */
const char *rd_rec_name(unsigned type);
const char *rd_fn_name(unsigned fn);
/* What an OpenMP construct (enum lt_omp) is called: "!$omp for", "omp_set_lock". */
const char *rd_omp_name(unsigned construct);
const char *rd_kokkos_name(unsigned kind);
/* The GPU enumerations of format.h: enum lt_gpu_api ("cudart"), lt_gpu_op ("alloc"),
 * lt_gpu_mem ("managed"), lt_gpu_copy ("HtoD"), lt_gpu_act ("kernel"); "?" when unknown. */
const char *rd_gpu_api_name(unsigned api);
const char *rd_gpu_op_name(unsigned op);
const char *rd_gpu_mem_name(unsigned mem);
const char *rd_gpu_copy_name(unsigned kind);
const char *rd_gpu_act_name(unsigned kind);
int rd_fn_object(unsigned fn); /* enum lt_fn_object */
const char *rd_string(const struct rd_process *p, uint32_t id);
/* The map that holds code address addr: the newest where one was mapped over another (dlopen
 * after dlclose); NULL when none does.  A binary search: a process may have millions. */
const struct rd_map *rd_map_at(const struct rd_process *p, uint64_t addr);
/* maps.c: builds p's index of its maps (rd_process_meta calls it). */
void rd_maps_index(struct rd_process *p);

#endif /* LIBTRACE_READER_H */
