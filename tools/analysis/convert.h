/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * convert.h - the analysis core (lt_analysis), shared by trace2otf2 and trace-report: it
 * reads every process of a trace directory, merges each process's threads in time, gives
 * the records their meaning (regions, thread create/begin/end/wait, locks, counters,
 * markers, losses) and hands normalised events to an output backend through struct cv_ops.
 * merge.c drives; each paradigm's records have their file (thread.c, sync.c, user.c,
 * omp.c, kokkos.c, mpi.c, gpu.c, samplers.c, process.c); registry.c holds the definitions.
 * Definitions (strings, regions, metrics, processes, locations) live in one registry with dense
 * ids, in first-use order, which a backend writes after the events.
 *
 * Memory: the registry grows with definitions; per thread, a read window and a region
 * stack while the thread is live in the merge; never with the number of events, but for
 * GPU activity: a process's device records arrive late and in any order, so they are kept
 * until the process's merge ends (72 bytes each) and its GPU calls' correlation ids (16
 * bytes each) with them.
 */
#ifndef LIBTRACE_CONVERT_H
#define LIBTRACE_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "reader.h"
#include "symbols.h"

enum cv_role { /* what a region is; backends map these to their own roles */
	       CV_ROLE_FUNCTION,
	       CV_ROLE_WRAPPER,
	       CV_ROLE_THREAD_CREATE,
	       CV_ROLE_THREAD_WAIT,
	       CV_ROLE_USER,
	       /* OpenMP */
	       CV_ROLE_PARALLEL,
	       CV_ROLE_LOOP,
	       CV_ROLE_SECTIONS,
	       CV_ROLE_SINGLE,
	       CV_ROLE_BARRIER,
	       CV_ROLE_IMPLICIT_BARRIER,
	       CV_ROLE_CRITICAL,
	       CV_ROLE_ATOMIC,
	       CV_ROLE_ORDERED,
	       CV_ROLE_MASTER,
	       CV_ROLE_TASK,
	       CV_ROLE_TASK_CREATE,
	       CV_ROLE_TASK_WAIT,
	       CV_ROLE_WORKSHARE,
	       /* Kokkos */
	       CV_ROLE_PHASE,
	       CV_ROLE_DATA_TRANSFER,
	       CV_ROLE_ALLOCATE,
	       CV_ROLE_DEALLOCATE,
	       /* MPI */
	       CV_ROLE_POINT2POINT,
	       CV_ROLE_COLLECTIVE,
	       /* GPU */
	       CV_ROLE_GPU_SYNC,   /* a host call that waits for the device, a stream, an event */
	       CV_ROLE_KERNEL,	   /* a kernel, on a stream */
	       CV_ROLE_GPU_MEMORY, /* a copy or set, on a stream */
};

enum cv_paradigm {
	CV_PARADIGM_USER,    /* annotations, start routines, main */
	CV_PARADIGM_PTHREAD, /* pthread calls */
	CV_PARADIGM_PROCESS, /* fork, exec, spawn, dlopen */
	CV_PARADIGM_OPENMP,
	CV_PARADIGM_KOKKOS,
	CV_PARADIGM_MPI,
	CV_PARADIGM_CUDA,
	CV_PARADIGM_HIP,
};

struct cv_region {
	uint32_t name, canonical, file; /* string ids; file: CV_NO_STRING when unknown */
	uint32_t line;
	enum cv_role role;
	enum cv_paradigm paradigm;
	uint32_t desc; /* string id + 1 of the description; 0: none */
};

struct cv_metric {
	uint32_t name, unit; /* string ids */
	int is_double;
	int accumulated; /* a running total since the start (energy), else a level */
};

/* A call site: where a traced call was made (OTF2 SourceCodeLocation). */
struct cv_scl {
	uint32_t file, line; /* string id, line; "" and 0 together where either is unknown */
	uint32_t function;   /* string id of the calling function */
	uint32_t site;	     /* its number among those with a line (cv.nsites), else NO_SITE */
};
#define CV_NO_SITE UINT32_MAX

/* A frame of a call path (OTF2 CallingContext): the function's region, the line in it, the
 * calling context of its caller (id + 1; 0 for the outermost frame known). */
struct cv_ctx {
	uint32_t region, scl, parent;
};

/* A set of PAPI events read together (OTF2 metric class of `n` members, names: string
 * ids).  strict: every Enter and Leave of every location that used it had a reading. */
struct cv_papi {
	uint32_t names[16];
	uint32_t codes[16]; /* PAPI's event codes (0: not recorded) */
	unsigned n;
	int strict;
};

/* Attributes of an Enter.  The value of a string attribute is a string id. */
enum cv_attr_id {
	CV_ATTR_TASK_ID,	/* uint64: an OpenMP task's id */
	CV_ATTR_TASK_DEPENDS,	/* string: ids of the tasks it depends on ("3,7") */
	CV_ATTR_KOKKOS_DEVICE,	/* string: the execution space instance */
	CV_ATTR_KOKKOS_BYTES,	/* uint64 */
	CV_ATTR_KOKKOS_LABEL,	/* string: the View */
	CV_ATTR_KOKKOS_SRC,	/* string: source View of a deep copy */
	CV_ATTR_KOKKOS_DST,	/* string: destination View */
	CV_ATTR_KOKKOS_ADDRESS, /* uint64 */
	/* GPU calls (on their Enter, but the result's on the Leave) and device operations */
	CV_ATTR_GPU_CORRELATION,   /* uint64: joins a call and what the device did for it */
	CV_ATTR_GPU_BYTES,	   /* uint64: bytes copied or set */
	CV_ATTR_GPU_COPY_KIND,	   /* string: HtoD, DtoH... */
	CV_ATTR_GPU_DST,	   /* uint64: destination address */
	CV_ATTR_GPU_SRC,	   /* uint64: source address */
	CV_ATTR_GPU_STREAM,	   /* uint64: the stream (or event) a call names */
	CV_ATTR_GPU_KERNEL,	   /* string: the kernel launched (demangled) */
	CV_ATTR_GPU_GRID,	   /* string: "4x1x1" */
	CV_ATTR_GPU_BLOCK,	   /* string: "256x1x1" */
	CV_ATTR_GPU_MEMORY,	   /* string: the kind of memory allocated or freed */
	CV_ATTR_GPU_RESULT,	   /* int64: the call's return code, when not 0 (on the Leave) */
	CV_ATTR_ALLOCATION_SIZE,   /* uint64: bytes allocated (Score-P's memory attributes) */
	CV_ATTR_DEALLOCATION_SIZE, /* uint64: bytes freed, where the allocation was seen */
	CV_ATTR_ARGUMENT_ADDRESS,  /* uint64: the address freed */
	CV_ATTR_RESULT_ADDRESS,	   /* uint64: the address allocated (on the Leave) */
	CV_ATTR_COUNT
};

struct cv_attr {
	enum cv_attr_id id;
	uint64_t value;
};

/* An allocation never freed: one Kokkos reported, or device memory a GPU API call made. */
struct cv_leak {
	uint32_t process, label, space; /* string ids: the View's label or the function that
					 * allocated; the memory space or kind */
	uint64_t bytes, addr;
	int kind;     /* CV_MARK_KOKKOS_LEAK, _UNFINALIZED (the process never finalized Kokkos)
		       * or _KEPT (live at finalize and freed by Kokkos after it, or a backend's
		       * scratch memory that Kokkos frees unseen after finalize: not a leak);
		       * CV_MARK_GPU_LEAK */
	uint32_t scl; /* where the allocating call was made: call site id + 1, 0: unknown */
};

#define CV_NO_STRING 0xffffffffu

struct cv_process {
	char *dir_name; /* <host>.<pid>[.<n>] */
	int mpi_rank;	/* its rank in MPI_COMM_WORLD, -1: not an MPI rank */
	int pid, ppid;
	uint32_t host;	  /* index into cv.hosts */
	uint32_t name;	  /* string id: "<program> [<pid>]", or "MPI Rank <rank>" */
	char *program;	  /* the program's file name (not a string of the archive's) */
	int creator;	  /* index of the process that forked or exec'ed it, or -1 */
	size_t first_loc; /* its locations: cv.locs[first_loc .. first_loc + nlocs) */
	size_t nlocs;
	int ended;		  /* the meta file says it ended normally */
	uint64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC, ns, at its start */
};

/* An OpenMP thread team: the threads that ever took part in the teams one thread forked
 * at one nesting level with one size (libgomp and libomp reuse their threads, so that is
 * one team to a user). */
enum cv_task_event { CV_TASK_CREATE, CV_TASK_SWITCH, CV_TASK_COMPLETE };

struct cv_team {
	uint32_t process, forker, size;
	uint32_t *members; /* indices into cv.locs, in the order of their OpenMP thread numbers */
	uint32_t nmembers, cap;
	uint32_t comm;	/* its communicator's number among the teams' and MPI's (cv.ncomm_refs) */
	uint32_t *nums; /* each member's thread number (NULL in a unified copy: not needed) */
};

enum cv_loc_kind {
	CV_LOC_THREAD = 0, /* a thread of the program */
	CV_LOC_METRIC,	   /* the sampler's metrics of a process (or of its node) */
	CV_LOC_CORE,	   /* --core-view: a CPU core; `process` is the host's index */
	CV_LOC_GPU_STREAM, /* a stream of a GPU context; `gpu` is its cv.gpu_groups index */
};

/* A stretch of time one thread ran on one CPU (--core-view). */
struct cv_core_span {
	uint32_t host, cpu, region;
	uint64_t from, to;
};

struct cv_loc {
	uint64_t id;	  /* (thread index << 32) | process index */
	uint32_t process; /* index into cv.procs */
	uint32_t index;	  /* thread index in its process */
	uint32_t name;	  /* string id */
	uint64_t nevents; /* events written (the backend counts) */
	void *out;	  /* the backend's per-location state */
	uint32_t papi;	  /* PAPI set id + 1 of its readings (0: none) */
	int papi_missed;  /* an Enter or Leave of it had no reading */
	int kind;	  /* enum cv_loc_kind */
	uint32_t gpu;	  /* CV_LOC_GPU_STREAM: its context, an index into cv.gpu_groups */
};

/* A GPU context of a process (an OTF2 ACCELERATOR location group), whose streams are
 * locations of kind CV_LOC_GPU_STREAM after the process's threads. */
struct cv_gpu_group {
	uint32_t process, name; /* index into cv.procs; string id */
};

/* A process's RMA window of its host-device copies: its communicator's members are the
 * process's threads, then its streams (indices into cv.locs).  A copy's remote is the rank
 * here of the thread that asked for it. */
struct cv_gpu_win {
	uint32_t process, name;
	uint32_t comm; /* its number among the teams' and MPI's communicators (cv.ncomm_refs) */
	uint32_t *members;
	uint32_t nmembers, cap;
};

/* An operation of a GPU stream, for cv_ops.gpu_activity: a region from start to end (a
 * kernel, a copy, a set); for a copy between host and device (HtoD, DtoH) also its RMA
 * operation over window `win` with remote `remote`, matched by the correlation id.  The
 * host call that asked for it, where known: location index host_loc (UINT32_MAX: unknown)
 * and the time of its Enter. */
struct cv_gpu_op {
	unsigned kind; /* enum lt_gpu_act */
	unsigned copy; /* enum lt_gpu_copy of a copy */
	uint32_t region;
	uint64_t start, end, bytes, corr;
	uint64_t blocks, threads; /* a kernel's blocks per grid and threads per block */
	int rma;		  /* a host-device copy: win and remote are set */
	uint32_t win, remote;
	uint32_t host_loc;
	uint64_t host_ns;
	struct cv_attr attrs[4];
	unsigned nattrs;
};

/* An MPI communicator, from the MPI_COMM records of its members (each member records the
 * same id).  COMM_WORLD and COMM_SELF are known without records. */
struct cv_comm {
	uint64_t id;	 /* LT_MPI_COMM_WORLD, LT_MPI_COMM_SELF, or the runtime's id */
	uint32_t size;	 /* 0: its members were never recorded */
	uint32_t *ranks; /* its members' COMM_WORLD ranks in its rank order (NULL: WORLD, SELF) */
	uint32_t comm;	 /* its number among the teams' and MPI's communicators */
};

struct cv_stats {
	uint64_t records, events, lost, threads, processes, unclosed, anomalies;
	uint64_t too_deep;	/* regions left out: nested deeper than the converter follows */
	uint64_t truncated;	/* threads whose records end in a file cut short */
	uint64_t cut_processes; /* processes that died or whose files were cut short */
	uint64_t flight; /* processes that ran as flight recorders: their trace is a window */
	uint64_t first_ns, last_ns;
	uint64_t gpu_ops;     /* device operations shown on GPU streams */
	uint64_t gpu_clamped; /* of those, moved so that a stream's times never go back */
	/* Kokkos deallocations whose allocation was never reported (made before Kokkos loaded
	 * the tool), and their bytes: left out of the memory metric. */
	uint64_t kokkos_unseen_frees, kokkos_unseen_bytes;
	int damaged;	/* a problem was reported while reading */
	int unreadable; /* a process directory could not be read at all */
};

struct cv;

/* An output backend's callbacks.  Each is optional: NULL says the backend is not interested
 * (the core checks).  Times are ns on the trace's common timeline, never decreasing per
 * location.  Returns of int functions: 0, or -1 on an output error (conversion stops). */
struct cv_ops {
	const char *name;
	int (*location_begin)(struct cv *cv, struct cv_loc *l);
	int (*location_end)(struct cv *cv, struct cv_loc *l);
	void (*enter)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region);
	/* closed: the converter closes a region the trace left open */
	void (*leave)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed);
	void (*thread_create)(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq);
	void (*thread_begin)(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq,
			     uint32_t tid);
	void (*thread_end)(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq);
	void (*thread_wait)(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq);
	void (*lock)(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm paradigm,
		     int acquire, uint32_t lock, uint32_t order);
	/* OpenMP fork/join: a fork on the encountering thread, team begin/end on each member
	 * (team: index into cv.teams), the join on the encountering thread. */
	void (*thread_fork)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested);
	void (*thread_join)(struct cv *cv, struct cv_loc *l, uint64_t t);
	void (*team_begin)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team);
	void (*team_end)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team);
	/* OpenMP untied tasks, which may go on on another thread, as OTF2's ThreadTaskCreate,
	 * ThreadTaskSwitch and ThreadTaskComplete write them: a task is (team, creator: the
	 * creating thread's index in the team, gen: that thread's count of such tasks, from
	 * 1); gen 0 is a thread's implicit task, the stack it had before the first switch.  A
	 * task begins with a switch to it and its Enter, ends with its Leave, its completion
	 * and a switch to what its thread goes on with; suspended, its thread switches away
	 * and its open regions stay open until a thread switches to it again.  NULL: a backend
	 * without task stacks: such a task leaves where it is suspended and enters again
	 * where it goes on, as tied tasks do. */
	void (*task_event)(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_task_event what,
			   uint32_t team, uint32_t creator, uint32_t gen);
	/* An Enter with attributes (a task's id, a Kokkos kernel's device...); NULL: enter(). */
	void (*enter_attrs)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			    const struct cv_attr *attrs, unsigned nattrs);
	void (*metric)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t metric, uint64_t raw);
	/* kind: CV_MARK_* ; text: what the marker says */
	void (*marker)(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text);
	/* Recording paused (on 0) or resumed (on 1) by the thread of l (ltr_trace_pause,
	 * LIBTRACE_TOGGLE_SIGNAL), right after the marker that says so; NULL: the marker
	 * alone. */
	void (*measurement)(struct cv *cv, struct cv_loc *l, uint64_t t, int on);
	void (*program_begin)(struct cv *cv, struct cv_loc *l, uint64_t t,
			      const struct rd_process *p);
	void (*program_end)(struct cv *cv, struct cv_loc *l, uint64_t t);
	/* The tracer's own end, on the program's thread after its program_end: from when the
	 * tracer began ending the trace to the process's end (its modules' end, the last
	 * copies): not the program's time.  NULL: the thread's life ends at `begin`. */
	void (*tracer_end)(struct cv *cv, struct cv_loc *l, uint64_t begin, uint64_t end);
	/* MPI.  comm: index into cv.comms; peer: a rank of it
	 * (LT_MPI_NO_RANK: unknown); kind: enum lt_mpi_p2p (format.h); request: the
	 * process's id of a non-blocking request.  A collective: begin right after the Enter
	 * of its call, end right before its Leave (op: enum lt_mpi_coll, root: a rank of comm
	 * or LT_MPI_NO_RANK; bytes this rank sent and received). */
	void (*mpi_p2p)(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
			uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request);
	void (*mpi_coll_begin)(struct cv *cv, struct cv_loc *l, uint64_t t);
	void (*mpi_coll_end)(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned op,
			     uint32_t comm, uint32_t root, uint64_t sent, uint64_t received);
	/* GPU.  A Leave with attributes (a GPU call's result); NULL: leave() is
	 * called.  An operation of a stream location, its start and end at once (the
	 * converter hands each stream's operations over in time order); NULL: GPU streams
	 * are left out. */
	void (*leave_attrs)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			    const struct cv_attr *attrs, unsigned nattrs);
	void (*gpu_activity)(struct cv *cv, struct cv_loc *l, const struct cv_gpu_op *op);
	/* A sample of the thread's call stack (LIBTRACE_STACK_SAMPLING): ctx, the calling
	 * context of the innermost frame (an index into cv.ctxs: its parents are the frames
	 * that called it, up to the outermost unwound); it stands for cpu_ns of the thread's
	 * CPU time. */
	void (*sample)(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t ctx, uint64_t cpu_ns);
	int (*finish)(struct cv *cv); /* write definitions, close */
};

enum cv_mark {
	CV_MARK_USER,
	CV_MARK_LOST,
	CV_MARK_TRUNCATED,
	CV_MARK_CLOSED,
	CV_MARK_KOKKOS_EVENT,	    /* kokkosp_profile_event */
	CV_MARK_KOKKOS_DUALVIEW,    /* DualView sync and modify */
	CV_MARK_KOKKOS_LEAK,	    /* an allocation never freed */
	CV_MARK_KOKKOS_KEPT,	    /* memory Kokkos kept past finalize */
	CV_MARK_KOKKOS_UNFINALIZED, /* live at the end of a process that never finalized Kokkos */
	CV_MARK_GPU_LEAK,	    /* device memory a GPU API call allocated, never freed */
	CV_MARK_DROPPED, /* "<n> calls and regions not recorded: <why>", at the thread's end */
	CV_MARK_FLIGHT,	 /* a flight recorder's window: whole from here on */
	CV_MARK_KINDS
};

struct cv_strmap;
struct cv;

/*
 * A parallel conversion (trace2otf2 under an MPI launcher): the converter's ranks share the
 * trace's processes, each converts its own, and rank 0 unifies the definitions (cv_unify).
 * Every function is collective: every rank calls it, in the same order.  0 or -1.
 */
struct cv_par {
	int rank, size;
	/* Each rank's buffer to rank 0: there all[r], lens[r] (malloc'ed, the caller frees). */
	int (*gather)(struct cv_par *par, const void *buf, size_t len, void ***all, size_t **lens);
	/* Rank 0's buffer (*buf, *len) to every rank: malloc'ed on the others. */
	int (*bcast)(struct cv_par *par, void **buf, size_t *len);
	/* OTF2's collective callbacks over the ranks, on an OTF2_Archive being written. */
	int (*otf2_collectives)(struct cv_par *par, void *archive);
};

/* The sizes of a rank's registry when it began a process (cv.marks): what a process used
 * first is what lies between its mark and the next. */
struct cv_sizes {
	uint32_t strings, regions, metrics, scls, ctxs, papis, comm_refs, notes;
	uint32_t converted; /* this rank converted the process */
};

/* A rank's ids, local index -> rank 0's (the archive's), after cv_unify. */
struct cv_maps {
	uint32_t *strings, *regions, *metrics, *scls, *ctxs, *papis, *comm_refs, *wins;
	uint32_t *locs, *comms; /* indices into cv.locs, cv.comms */
	uint32_t nstrings, nregions, nmetrics, nscls, nctxs, npapis, ncomm_refs, nwins;
	uint32_t nlocs, ncomms;
	uint32_t *sites;	  /* call site -> the archive's cv_scl.site (nscls of them) */
	uint32_t global_nmetrics; /* the archive's metrics (its PAPI classes follow them) */
};

/* A buffer packed for another rank; oom: memory ran out (the buffer is unusable). */
struct cv_pack {
	unsigned char *b;
	size_t n, cap;
	int oom;
};
void cv_put(struct cv_pack *k, const void *p, size_t n);
void cv_put32(struct cv_pack *k, uint32_t v);
void cv_put64(struct cv_pack *k, uint64_t v);
void cv_put_str(struct cv_pack *k, const char *s); /* NULL too */

/* A buffer being read; bad: it ended early or held nonsense (the getters then give 0,
 * NULL). */
struct cv_unpack {
	const unsigned char *b;
	size_t n, at;
	int bad;
};
const void *cv_get(struct cv_unpack *u, size_t n);
uint32_t cv_get32(struct cv_unpack *u);
uint64_t cv_get64(struct cv_unpack *u);
const char *cv_get_str(struct cv_unpack *u); /* NULL for a NULL put */

/* The calling context (id + 1) of region `reg` at line scl (id + 1; 0: none) called from
 * context parent (id + 1; 0: none), defined on first use; 0 when out of memory. */
uint32_t cv_context(struct cv *cv, uint32_t reg, uint32_t scl, uint32_t parent);
/*
 * The frames of a stack sample whose (unwound) context is ctx (an index into cv.ctxs) that
 * lie above the thread's open regions, outermost first, as contexts (ids + 1) in out (at
 * most LT_STACK_MAX): all of them, or, when the thread's outermost open region is `bottom`
 * (a region id; UINT32_MAX: none) and that is a function the stack holds (main, a start
 * routine), those after that function's frame (the C library's frames below it and the
 * function itself are its region; an OpenMP parallel region, named after its outlined
 * function, keeps that function's frame: the runtime's below it go).  Returns their number.
 */
unsigned cv_sample_frames(const struct cv *cv, uint32_t ctx, uint32_t bottom, uint32_t *out);

struct cv {
	const struct cv_ops *ops;
	void *out;	/* the backend's state */
	int out_failed; /* the backend's output failed: no more events are given it */
	struct sym_table *syms;
	int progress; /* draw a progress bar on stderr */
	int verbose;
	int core_view; /* --core-view: one location per CPU core, the threads that ran there */
	/* A backend that cuts (chrome): the window, ns since the trace's first event (0: no
	 * bound), and the shortest region it keeps. */
	uint64_t from_ns, to_ns, min_duration_ns;

	/* The registry. */
	char **strings;
	uint32_t nstrings, strings_cap;
	struct cv_strmap *string_map;
	struct cv_region *regions;
	uint32_t nregions, regions_cap;
	struct cv_strmap *region_map;	/* key: kind:name */
	uint32_t fn_regions[LT_FN_MAX]; /* region id + 1 of each intercepted function */
	struct cv_metric *metrics;
	uint32_t nmetrics, metrics_cap;
	struct cv_strmap *metric_map;
	uint32_t *hosts; /* string ids */
	uint32_t nhosts;
	struct cv_process *procs;
	size_t nprocs;
	struct cv_loc *locs;
	size_t nlocs, locs_cap;
	size_t max_procs; /* processes given (communicator ids of OpenMP teams follow theirs) */
	struct cv_team *teams;
	uint32_t nteams, teams_cap;
	struct cv_strmap *team_map; /* key: process:forker:level:size */

	struct cv_scl *scls; /* call sites */
	uint32_t nscls, scls_cap;
	uint32_t nsites;	   /* call sites with file and line: OTF2's SourceCodeLocations */
	struct cv_strmap *scl_map; /* key: file:line:function */
	struct cv_ctx *ctxs;	   /* calling contexts (LIBTRACE_CALLSITE_DEPTH > 1) */
	uint32_t nctxs, ctxs_cap;
	struct cv_strmap *ctx_map; /* key: region:scl:parent */
	uint64_t sample_period;	   /* the least CPU time (ns) a stack sample stood for; 0: none */
	int sampling; /* a process sampled stacks: calling contexts replace Enter and Leave */
	struct cv_papi *papis; /* PAPI event sets */
	uint32_t npapis, papis_cap;
	/*
	 * What belongs to the Enter (or Leave) that the record being converted produces: a
	 * backend writes them with its first Enter (the call site) or first Enter or Leave
	 * (the PAPI reading) and clears them; the converter clears what is left after each
	 * record.
	 */
	uint32_t cur_scl;	    /* call site id + 1, 0: none */
	uint32_t cur_ctx;	    /* calling context id + 1, 0: none */
	uint32_t cur_papi;	    /* PAPI set id + 1 of cur_values, 0: no reading */
	const uint64_t *cur_values; /* the reading, one value per member of the set */

	struct cv_leak *leaks;
	size_t nleaks, leaks_cap;
	char **props; /* archive properties: name, value, name, value... */
	size_t nprops;
	char **notes; /* why samplers or GPU layers were off: "sampler X: reason", once each */
	size_t nnotes;

	/* Samplers. */
	int *node_owner;	    /* per host: the process whose node metrics are shown, or -1 */
	struct cv_core_span *spans; /* --core-view */
	size_t nspans, spans_cap;
	size_t first_core_loc; /* cv->locs[first_core_loc ..] are CV_LOC_CORE locations */
	uint32_t ncore_hosts;  /* hosts with core locations (location groups after processes) */

	/* MPI. */
	struct cv_comm *comms;
	uint32_t ncomms, comms_cap;
	struct cv_idmap *comm_map; /* id -> index + 1 */
	uint32_t mpi_world;	   /* COMM_WORLD's size, 0: no MPI rank in the trace */
	uint32_t ncomm_refs;	   /* OpenMP teams' and MPI communicators, numbered in the
				    * order they appear (one numbering: OTF2 wants them dense) */
	int no_clock_align;	   /* keep each rank's own clock (--no-clock-align) */
	uint64_t mpi_aligned;	   /* ranks whose clock was moved onto rank 0's */

	/* GPU. */
	struct cv_gpu_group *gpu_groups;
	uint32_t ngpu_groups, gpu_groups_cap;
	struct cv_gpu_win *gpu_wins;
	uint32_t ngpu_wins, gpu_wins_cap;

	struct cv_stats stats;
	uint64_t total_bytes, done_bytes; /* for the progress bar */
	int progress_shown;

	/* A parallel conversion (NULL: serial).  mine[i]: this rank converts dirs[i]; marks:
	 * the registry's sizes as each process began (nprocs + 1, the last at the end);
	 * region_keys: each region's map key; after cv_convert, maps: this rank's ids in the
	 * archive, and on rank 0 global: the definitions of the whole trace, as a serial
	 * conversion has them. */
	struct cv_par *par;
	unsigned char *mine;
	struct cv_sizes *marks;
	char **region_keys;
	struct cv_maps maps;
	struct cv *global;
};

/* Registry. */
uint32_t cv_string(struct cv *cv, const char *text);
/* The COMM_WORLD rank of rank `rank` of communicator `comm` (an index into cv.comms) as
 * seen by the process of world rank `self`; LT_MPI_NO_RANK when unknown. */
uint32_t cv_world_rank(const struct cv *cv, uint32_t comm, uint32_t rank, uint32_t self);
/* Call site scl (an id + 1, as cv_leak.scl) as text: "function (file.c:42)", "function". */
void cv_scl_text(const struct cv *cv, uint32_t scl, char *buf, size_t len);
/* A region's kind as the profile and the JSON trace name it: its paradigm, the user's split
 * in "user" (annotated) and "function" (start routines, main); its role ("parallel"...). */
const char *cv_paradigm_name(enum cv_paradigm paradigm, enum cv_role role);
const char *cv_role_name(enum cv_role role);
/* A marker kind's category ("Lost events"). */
const char *cv_mark_category(int kind);
/* For backends, at each Enter and Leave: notes whether it had a PAPI reading (cur_papi). */
void cv_papi_seen(struct cv *cv, struct cv_loc *l);

/*
 * Converts the trace directory: every process in dirs (from rd_trace_list).  Returns 0,
 * or -1 when the output failed (the backend said why).  Reading problems are counted in
 * cv->stats and printed through warn.
 */
int cv_convert(struct cv *cv, char **dirs, int ndirs, rd_warn_fn warn, void *wctx);
void cv_free(struct cv *cv);
/*
 * A parallel conversion's definitions (called by cv_convert before the backend's finish):
 * every rank's registry goes to rank 0, which builds cv->global in the order a serial
 * conversion defines them; each rank learns its maps.  failed: this rank's conversion
 * failed.  0, or -1 when a rank failed, memory ran out or a collective failed.
 */
int cv_unify(struct cv *cv, int failed);

/* What an output backend writes: a directory it fills, or files NAME<ext> for each of its
 * extensions. */
enum cv_output_kind {
	CV_OUTPUT_DIRECTORY,
	CV_OUTPUT_FILES,
};

/* What a backend needs of the core beyond the events. */
#define CV_NEEDS_SOURCE_LINES 0x1u /* file and line of code addresses (libbfd, when built) */
#define CV_NEEDS_CORE_VIEW    0x2u /* it can show --core-view's per-core locations */
#define CV_NEEDS_WINDOW	      0x4u /* it cuts to cv.from_ns, to_ns, min_duration_ns */

/*
 * An output format as the converter offers it: one of these per backend, listed once in
 * the converter's backend table (tools/trace2otf2/backends.c).
 */
struct cv_backend {
	const char *name;	 /* --format NAME */
	const char *description; /* for --help: what it is for */
	enum cv_output_kind output;
	/* DIRECTORY: the default output is TRACE_DIR + exts[0]; FILES: NAME + each of exts
	 * (-o NAME may carry exts[0], which is dropped).  NULL-terminated. */
	const char *const *exts;
	const char *written; /* what the summary says it wrote, after the output's name */
	const char *what;    /* what it writes, for errors: "archive" */
	unsigned needs;	     /* CV_NEEDS_* */
	int parallel;	     /* several converter ranks can write it together (cv.par) */
	const struct cv_ops *ops;
	/* Creates the backend's state in cv->out for output `out` (the directory, created
	 * empty, or NAME, whose files exist empty).  Returns 0, or -1 with err set. */
	int (*open)(struct cv *cv, const char *out, char *err, size_t errlen);
	const char *(*error)(struct cv *cv); /* what failed, or NULL */
	void (*free)(struct cv *cv);
};

#endif /* LIBTRACE_CONVERT_H */
