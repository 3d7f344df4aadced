/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * paraver.h - what the files of the Paraver backend share (paraver_out.c: the events;
 * paraver_prv.c, paraver_pcf.c, paraver_row.c: the three files).
 */
#ifndef LIBTRACE_PARAVER_H
#define LIBTRACE_PARAVER_H

#include <stdint.h>
#include <stdio.h>

#include "convert.h"

#define RUN_RECORDS  (1u << 20) /* records sorted in memory at a time: 56 MB */
#define READ_RECORDS 4096u	/* per run while merging */

/* Extrae's states, the ones we write, and their colours. */
enum {
	ST_IDLE = 0,
	ST_RUNNING = 1,
	ST_NOT_CREATED = 2,
	ST_WAIT_MESSAGE = 3,
	ST_BLOCKING_SEND = 4,
	ST_SYNC = 5,
	ST_TEST_PROBE = 6,
	ST_FORK_JOIN = 7,
	ST_WAIT_ALL = 8,
	ST_BLOCKED = 9,
	ST_IMMEDIATE_SEND = 10,
	ST_IMMEDIATE_RECV = 11,
	ST_IO = 12, /* and the tracer's flushing, as Extrae paints its own */
	ST_GROUP_COMM = 13,
	ST_TRACING_DISABLED = 14,
	ST_OTHERS = 15,
	ST_SEND_RECV = 16,
	ST_MEMORY_TRANSFER = 17,
	ST_OVERHEAD = 24,
	ST_ALLOC = 30,
	ST_FREE = 31,
	ST_INHERIT = 255, /* a frame that keeps the state below it */
};

/* Event types. */
#define TY_APPLICATION	40000001u
#define TY_FLUSH	40000003u /* Extrae's "Flushing Traces": 1 begin, 0 end */
#define TY_OMP_CRITICAL 60000007u /* Extrae's unnamed critical: 3 lock, 6 locked, 0 unlocked */
#define OMP_LOCKED	6u
#define TY_CPU		40000033u /* Extrae's "Executing CPU": the CPU in its node + 1 */
#define TY_PID		40000036u /* Extrae's "Process IDentifier" */
#define TY_MPI_SENT	50100001u /* Extrae's global-operation events of a collective */
#define TY_MPI_RECEIVED 50100002u
#define TY_MPI_ROOT	50100003u
#define TY_MPI_COMM	50100004u
#define TY_OMP_PARALLEL 60000001u
#define TY_PTHREAD	61000000u
#define TY_GPU_OP	63100000u /* a stream's operation: Extrae's numbers of the calls */
#define TY_GPU_BYTES	63000001u /* bytes of a stream's copy or set */
#define TY_GPU_BLOCKS	63000011u /* a kernel's blocks per grid */
#define TY_GPU_THREADS	63000012u /* a kernel's threads per block */
#define TY_METRIC	64000000u /* + metric id */
#define TY_MARKER	69000010u /* + CV_MARK_* */
#define TY_ATTR		69100000u /* + CV_ATTR_* of integer attributes */
#define TY_PAPI_SET	41999999u /* the set of counters read: PAPI set id + 1 */
#define TY_PAPI_PRESET	42000000u /* + (code & 0xffff): a PAPI preset, as a delta */
#define TY_PAPI_NATIVE	44000000u /* + a hash of the name: a native event, as a delta */
#define TY_CALLER	70000000u /* + depth: the calling function (string id + 1) */
#define TY_CALLER_LINE	80000000u /* + depth: the calling line (label string id + 1) */
#define MAX_CALLER	32u	  /* depths shown (LIBTRACE_CALLSITE_DEPTH's limit) */
#define TY_SAMPLE	30000000u /* + depth: a stack sample's function (0: where it was taken) */
#define TY_SAMPLE_LINE	30000100u /* + depth: its line (label string id + 1) */
#define MAX_SAMPLE	8u	  /* the innermost frames of a sample written */

/* Region kinds that become one event type each, valued by region id + 1. */
enum kind {
	K_USER,
	K_THREAD_FN,
	K_OMP_OUTLINED,
	K_OMP_WORKSHARE,
	K_OMP_SYNC,	/* an explicit barrier */
	K_OMP_JOIN,	/* the barrier at the end of a worksharing construct or parallel region */
	K_OMP_CRITICAL, /* a critical section */
	K_OMP_LOCK,	/* atomic, ordered: our numbers, in the block of K_OMP_OTHER */
	K_OMP_TASK,
	K_OMP_TASK_CREATE,
	K_OMP_TASK_WAIT,
	K_OMP_TASKGROUP,
	K_OMP_OTHER,
	K_KOKKOS_KERNEL,
	K_KOKKOS_REGION,
	K_KOKKOS_FENCE,
	K_KOKKOS_SECTION,
	K_KOKKOS_COPY,
	K_KOKKOS_MEMORY,
	K_PROCESS,
	K_MPI,
	K_CUDA,	      /* a CUDA API call: valued by Extrae's numbers where it has one */
	K_HIP,	      /* a HIP API call: the same numbers */
	K_GPU_KERNEL, /* a kernel on its stream */
	K_GPU_DEVICE, /* a copy or set on its stream: valued by its Extrae number */
	K_PTHREAD,    /* valued by Extrae's pthread call numbers instead */
	K_COUNT
};
#define GPU_VALUE_OTHER 1000
#define MPI_VALUE_OTHER 1000 /* + region id: an MPI call Extrae has no number for */

/* A stream's operations (63100000), as Extrae numbers them. */
#define GPU_OP_KERNEL 1
#define GPU_OP_COPY   3
#define GPU_OP_SET    34

#define TAG_GPU	 3 /* communications from a GPU call to its device operation */
#define TAG_TASK 4 /* from an OpenMP task's creation to its start */

enum { REC_STATE = 1, REC_EVENT = 2, REC_COMM = 3 };

/* One record, before sorting.  State: [time, a) in state b.  Event: type b, value a.
 * Communication: from (loc, time) to (b, a), tag c, size `size`, posted at `posted` (the
 * logical receive).  cpu, cpu_r: the CPU in its node + 1 of loc and of b (0: unknown). */
struct rec {
	uint64_t time, a, seq, size;
	uint32_t loc, b;
	uint32_t kind, c;
	uint32_t cpu, cpu_r;
	uint64_t posted;
};

/* Half of an MPI message: who (COMM_WORLD ranks), in what order, when and where. */
struct msg {
	uint64_t comm;	     /* communicator id */
	uint32_t from, to;   /* COMM_WORLD ranks */
	uint32_t tag, loc;   /* loc: the sender's or receiver's location */
	uint64_t order;	     /* send: its call's start; receive: when it was posted */
	uint64_t time, size; /* send: its call's start; receive: its completion */
	uint32_t cpu;	     /* the CPU of loc then (struct rec) */
};

struct frame {
	uint32_t type;	/* event type written at its Enter, 0: none */
	uint8_t state;	/* ST_*, or ST_INHERIT */
	uint8_t fork;	/* an OpenMP fork: from the fork to the join, not a region */
	uint64_t value; /* event value */
	uint64_t task;	/* an OpenMP task's id, 0: none */
	uint64_t begin; /* when it was entered */
};

struct ploc {
	struct frame *stack;
	uint32_t depth, cap;
	uint8_t base;	    /* the state outside every region */
	uint8_t paused;	    /* recording paused (ltr_trace_pause): Tracing Disabled */
	uint8_t cur;	    /* the state written since `since` */
	uint64_t since;	    /* when cur began */
	uint32_t since_cpu; /* the CPU then */
	uint32_t cpu;	    /* the CPU in its node + 1 it runs on now, 0: unknown */
	uint64_t first;	    /* the first and last event times */
	uint64_t last;
	uint64_t floor;	  /* no record of it is earlier (a call ended 1 ns after it began) */
	uint32_t forking; /* OpenMP forks in progress (the team's master) */
	int begun, ended;
	int kept;      /* a metric location that is a thread of its own (its process has none) */
	uint32_t papi; /* PAPI set id + 1 of papi_last, 0: no reading yet */
	uint64_t papi_last[16]; /* the last reading: events are deltas since it */
	uint64_t mpi_enter;	/* when its innermost MPI call began */
};

/* A half of a communication waiting for the other: key -> (loc, time). */
struct pending {
	uint64_t key, time;
	uint32_t loc, cpu;
	uint8_t used, half, done; /* half: 1 the send side is here, 2 the receive side */
};

struct pmap {
	struct pending *slot;
	size_t cap, n;
};

/* A value of a marker or string attribute type: string sid + 1; first used in `process`. */
struct label {
	uint32_t type, sid, process;
};

/* What a region writes: its kind, its event type and value (Extrae's numbers for pthread,
 * MPI and GPU calls; 0: the region id + 1) and the state it puts its thread in. */
struct rinfo {
	uint8_t known, kind, state;
	uint32_t type, value;
};

struct out {
	char *name; /* NAME of NAME.prv */
	struct ploc *locs;
	size_t nlocs;
	struct rec *run;
	size_t nrun;
	uint64_t seq;
	FILE *scratch; /* the sorted runs spilled so far, one after the other */
	size_t nruns;
	uint64_t *ends; /* where each run ends (records) */
	size_t ends_cap;
	uint64_t records;      /* written to scratch */
	struct rinfo *regions; /* per region, made at its first use */
	struct rinfo spare;    /* when there is no memory for them */
	uint32_t nregions;
	uint32_t *host_cpus;	/* per host: the highest CPU seen + 1 */
	uint32_t *first_thread; /* per process: its first thread's location + 1 (0: not yet) */
	uint32_t nhost_cpus, nfirst_thread;
	uint32_t cpu_metric;   /* the metric id + 1 of the threads' CPUs, 0: not yet seen */
	uint64_t end;	       /* the last time of any record */
	struct pmap creates;   /* thread create/begin halves: key (process << 32) | thread */
	struct pmap tasks;     /* finished OpenMP tasks: key (process << 40) ^ task id */
	struct pmap label_set; /* (type << 32) | string id of the labelled values below */
	struct label *labels;
	size_t nlabels, labels_cap;
	uint32_t *scl_line; /* per call site: its line label's string id + 1 */
	uint32_t nscl_line;
	uint32_t (*papi_types)[16]; /* per PAPI set: the event type of each member */
	uint32_t npapi_types;
	uint32_t max_caller;	   /* the deepest caller level written */
	uint32_t samples;	   /* the depths of sample frames written + 1 (0: no samples) */
	struct msg *sends, *recvs; /* MPI message halves, matched at the end */
	size_t nsends, nrecvs, sends_cap, recvs_cap;
	struct pmap irecvs;  /* MPI_Irecv posted: key (process << 40) ^ request -> its time */
	struct pmap isends;  /* MPI_Isend: the same key -> its send half's index + 1 (time) */
	uint64_t attrs_used; /* bit CV_ATTR_*: events of that attribute were written */
	int mpi_colls;	     /* a collective's global-operation events were written */
	uint32_t process;    /* the process being converted (the last to begin a location) */
	int began;	     /* a location began */
	char *scratch_path;  /* a parallel conversion's: kept until rank 0 merged it */
	char error[4096 + 300];
};

/* Paraver numbering.  Tasks: the MPI ranks in rank order (task = rank + 1), then the other
 * processes in the order they started.  Threads of a task: its threads in the order they
 * appeared, then its GPU streams; a process's metric locations are not threads (their
 * events go to its first thread, as Extrae's do). */
struct numbering {
	uint32_t *task;	       /* per process: its task, 0: none (no threads) */
	uint32_t *order;       /* per task - 1: its process */
	uint32_t *thread;      /* per location: its thread in its task, 0: none */
	uint32_t *by_number;   /* from a process's first_loc on: its threads' locations */
	uint32_t *nthreads_of; /* per process */
	uint32_t *cpu_base;    /* per host: the CPUs of the hosts before it */
	uint32_t ntasks, ncpus;
	size_t nthreads;
};

struct writer {
	FILE *f;
	const struct cv *cv;
	const struct numbering *n;
	uint64_t t0;
	int open_event; /* an event line is open for (ev_time, ev_loc) */
	uint64_t ev_time;
	uint32_t ev_loc;
	uint32_t types[16]; /* the types of the open event record */
	unsigned ntypes;
};

/* An event type per region kind (paraver_pcf.c). */
struct prv_kind_def {
	uint32_t type;
	const char *label;
};
extern const struct prv_kind_def prv_kinds[K_COUNT];

/* How attributes (enum cv_attr_id) show: events of type TY_ATTR + id (or Extrae's), valued by the
 * number, or (labelled) by the string's id + 1 with the string as the label; label NULL: none. */
struct prv_attr_def {
	int labelled;
	const char *label;
	uint32_t type; /* Extrae's type for it; 0: TY_ATTR + id */
};
extern const struct prv_attr_def prv_attr_types[CV_ATTR_COUNT];

/* Sorted runs in several scratch files (a parallel conversion's ranks'): run j of a source
 * ends at record run_end[j] of its file. */
struct prv_source {
	int fd;
	size_t nruns;
	const uint64_t *run_end;
};

/* paraver_out.c */
void prv_fail(struct out *o, const char *what, int err);
struct pending *prv_pmap_slot(struct pmap *m, uint64_t key, int create);
void prv_note_label(struct out *o, uint32_t type, uint32_t sid);
const struct rinfo *prv_region_info(struct cv *cv, uint32_t r);
const uint32_t *prv_papi_types(struct cv *cv, uint32_t s);
int prv_write_outputs(struct cv *cv, struct out *o, const struct prv_source *src, size_t nsrc);
uint64_t *prv_run_ends(const struct out *o);
void prv_remove_outputs(const struct out *o);
void prv_restate(struct out *o, uint32_t li, struct ploc *p, uint64_t t);
enum kind prv_region_kind(const struct cv *cv, const struct cv_region *r);
const char *prv_base_name(const char *path);

/* paraver_prv.c */
void prv_spill(struct out *o);
void prv_put_event(struct out *o, uint32_t loc, uint64_t time, uint32_t type, uint64_t value);
void prv_put_state(struct out *o, uint32_t loc, uint64_t begin, uint64_t end, uint32_t state,
		   uint32_t cpu);
void prv_put_comm(struct out *o, uint32_t from, uint64_t sent, uint32_t to, uint64_t posted,
		  uint64_t received, uint64_t size, uint32_t tag);
void prv_put_comm_cpus(struct out *o, uint32_t from, uint32_t cpu, uint64_t sent, uint32_t to,
		       uint32_t cpu_r, uint64_t posted, uint64_t received, uint64_t size,
		       uint32_t tag);
int prv_write_body(struct out *o, struct writer *w, const uint64_t *run_end);
int prv_write_sources(struct out *o, struct writer *w, const struct prv_source *src, size_t nsrc);
FILE *prv_open_output(struct out *o, const char *ext);
int prv_close_output(struct out *o, FILE *f, const char *ext);
void prv_close_states(struct cv *cv);
uint64_t prv_end(const struct cv *cv);
void prv_match_messages(struct out *o);

/* paraver_pcf.c */
int prv_pthread_value(const char *name);
int prv_mpi_call(const char *name, uint32_t *type, uint8_t *state);
uint32_t prv_omp_value(const struct cv_region *r, enum kind k);
int prv_gpu_value(const struct cv *cv, uint32_t r, enum kind k);
void prv_write_pcf(struct cv *cv, FILE *f);

/* paraver_par.c */
int prv_finish_parallel(struct cv *cv);

/* paraver_row.c */
int prv_number_objects(struct cv *cv, struct numbering *n);
void prv_free_numbering(struct numbering *n);
uint32_t prv_host_cpus(const struct cv *cv, const struct numbering *n, uint32_t h);
void prv_put_label(FILE *f, const char *s);
void prv_region_label(FILE *f, const struct cv *cv, const struct cv_region *r);
void prv_write_row(struct cv *cv, FILE *f, const struct numbering *n);

#endif /* LIBTRACE_PARAVER_H */
