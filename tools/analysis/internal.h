/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * internal.h - what the files of the analysis core share and backends must not see: a
 * process's and a thread's state while its records are merged, the maps, and the
 * functions one paradigm's file offers the others.
 */
#ifndef LIBTRACE_ANALYSIS_INTERNAL_H
#define LIBTRACE_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"

/*
 * Every callback of a backend is optional (NULL: the backend is not interested), so the core
 * calls them through these.  An Enter with attributes falls back to a plain Enter.
 */
#define CV_EMIT(cv, cb, ...)                              \
	do {                                              \
		if ((cv)->ops->cb)                        \
			(cv)->ops->cb((cv), __VA_ARGS__); \
	} while (0)
/* The same for those that return 0 or -1; an absent one succeeds. */
#define CV_EMIT_RC(cv, cb, ...) ((cv)->ops->cb ? (cv)->ops->cb((cv), __VA_ARGS__) : 0)

static inline void cv_enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
				  const struct cv_attr *attrs, unsigned nattrs)
{
	if (cv->ops->enter_attrs)
		cv->ops->enter_attrs(cv, l, t, region, attrs, nattrs);
	else
		CV_EMIT(cv, enter, l, t, region);
}

struct frame {
	uint32_t region;
	int fn; /* enum lt_fn, or -1 for a user or code region */
	uint64_t obj, obj2;
	uint32_t
	    aux; /* a GPU call's call site id + 1 (0: none); an OpenMP task: 1 while suspended */
};

struct held {
	uint32_t lock, order;
	enum cv_paradigm paradigm;
};

struct tstate {
	struct rd_cursor cur;
	const struct lt_rec *rec; /* the next record, NULL when done */
	uint64_t key;		  /* rec's ticks */
	size_t loc;		  /* index into cv->locs, or SIZE_MAX before its first event */
	uint64_t last_ns;
	struct frame *stack;
	uint32_t depth, cap;
	uint64_t too_deep; /* frames refused above STACK_MAX and still open: their leaves go */
	uint32_t index;
	int omp_park;	   /* a task went on below suspended ones: they leave at its next record */
	uint32_t task_gen; /* untied tasks it created (cv_ops.task_event) */
	int began, ended, created, program;
	int window;	   /* a flight recorder's window: a leave or release without its start is no
			    * anomaly, its start was not kept */
	uint32_t name;	   /* string id + 1 of a name given before the thread's first record */
	struct held *held; /* locks held, with the order of their acquisition */
	uint32_t nheld, held_cap;
	uint64_t deep[LT_REC_WORDS_MAX]; /* a CALLSITE record's frames, for the next record */
	unsigned ndeep;
	uint64_t values[16]; /* a COUNTERS reading, for the next record (ordered as the set) */
	int has_values;
	int done;	    /* its location is closed */
	int cpu;	    /* the CPU it runs on, -1: unknown */
	uint64_t cpu_since; /* since when (ns) */
	struct {	    /* the MPI collective whose call is open (its end is due) */
		int open;
		unsigned op;
		uint32_t comm, root;
		uint64_t sent, received;
	} coll;
};

struct lockent {
	uint64_t addr;
	uint32_t id, order;
};

/* A map of 64-bit keys (never 0) to 64-bit values: open addressing, deletion by backward
 * shift, so that it holds only what is live. */
struct idmap {
	uint64_t *keys, *vals;
	size_t n, cap;
};

/* A string -> uint32 map (open addressing; keys owned). */
struct cv_strmap {
	char **keys;
	uint32_t *vals;
	size_t n, cap;
};

/* cv.comm_map: communicator id -> index + 1 into cv.comms. */
struct cv_idmap {
	struct idmap m;
};

/* A live allocation (Kokkos's, or a GPU API call's), in a table by address. */
struct kalloc {
	uint64_t addr, bytes, ns;
	uint32_t label, space, loc; /* string ids; index into cv->locs */
	uint32_t scl;		    /* call site id + 1 of the allocating call, 0: none */
};

struct alloc_table {
	struct idmap map; /* address -> index + 1 into a, while allocated */
	struct kalloc *a; /* the live allocations */
	uint32_t n, cap;
};

/* A GPU API call whose correlation id the device's records may name: who made it, when. */
struct gcall {
	uint32_t loc; /* index into cv->locs */
	uint64_t ns;  /* its Enter */
};

/* A device operation (GPU_ACTIVITY), kept until the process's merge ends. */
struct gact {
	uint64_t w[8]; /* the record's payload (format.h), missing words 0 */
	uint32_t arg;
	uint16_t kind; /* enum lt_gpu_act */
};

struct kspace {
	uint32_t name, metric;
	int64_t bytes;
};

/* An OpenMP task suspended while its thread went back to what it ran before (omp.c): the
 * frames it had open, entered again where it goes on. */
struct parked {
	uint64_t task;
	uint32_t n;
	int switched; /* an untied task whose frames stay open on its own stack (task_event) */
	struct frame f[8];
};

struct pstate {
	struct cv *cv;
	struct rd_process *p;
	uint32_t pidx;
	int64_t offset_ns; /* added to the process's monotonic ns */
	/* An MPI rank's clock offsets to rank 0 that are trusted (of rd_process.mpi_clock),
	 * interpolated and added before offset_ns (which is then rank 0's); none: 0. */
	struct rd_mpi_clock
	    mpi_clock[sizeof(((struct rd_process *)0)->mpi_clock) / sizeof(struct rd_mpi_clock)];
	size_t nmpi_clock;
	uint64_t last_ns; /* the latest event time of the process */
	struct tstate *ts;
	size_t nts;
	struct tstate **heap;
	size_t nheap;
	struct lockent *locks; /* open addressing on addr */
	size_t nlocks, locks_cap;
	uint32_t *next_lock_id;
	uint32_t *user_regions; /* process string id -> user region id + 1 (0: not yet) */
	struct idmap pars;	/* parallel id -> code address, from fork to join */
	struct idmap levels;	/* parallel id -> nesting level + 1 of the fork */
	struct idmap tasks;	/* task id -> code address, from creation to completion */
	struct idmap outliners; /* outlined function -> the call that handed it to libgomp */
	struct idmap writers;	/* address -> the last task that wrote it (dependences) */
	struct idmap depends;	/* task id -> string id of the tasks it waits for */
	struct idmap untied;	/* untied task id -> its task_event identity (omp.c) */
	struct parked *parked;	/* suspended OpenMP tasks (omp.c) */
	size_t nparked, parked_cap;
	struct idmap ksections;	 /* Kokkos section id -> string id + 1 of its name */
	struct idmap kregions;	 /* (kind + 1) << 32 | process string id -> region + 1 */
	struct alloc_table kmem; /* the live Kokkos allocations */
	struct kspace *kspaces;	 /* bytes allocated per memory space */
	uint32_t nkspaces;
	uint32_t papi; /* its PAPI set id + 1, 0: none */
	/* Samplers: the sampler thread's records become metrics on two METRIC locations. */
	uint32_t *smetric;	   /* process metric id -> cv metric id + 1 (0: not yet) */
	size_t node_loc, proc_loc; /* index into cv->locs, SIZE_MAX: not yet */
	int node_metrics;	   /* this process shows its host's node metrics */
	uint32_t m_cpu, m_node;	   /* the per-thread CPU and NUMA node metrics */
	/* GPU. */
	struct idmap gregions; /* tag << 32 | process string id -> region + 1 (gpu_*_region) */
	struct idmap gknames;  /* process string id of a kernel name -> cv string id + 1 */
	struct idmap gcorr;    /* correlation id -> index + 1 into gcalls */
	struct gcall *gcalls;  /* the GPU calls with a correlation id */
	uint32_t ngcalls, gcalls_cap;
	struct alloc_table gmem; /* device memory allocated by GPU calls, live */
	struct gact *gacts;	 /* the device's operations */
	uint32_t ngacts, gacts_cap;
	int failed;
};

/* Deeper nesting is damage (enters never left): refused, so memory stays bounded. */
#define STACK_MAX (1u << 16)

#define FN_USER		(-1) /* an annotated region */
#define FN_MAIN		(-2) /* the main thread's "main", which ends with the process */
#define FN_START	(-3) /* a thread's start routine, which ends with the thread */
#define FN_OMP(c)	(1000 + (int)(c)) /* an OpenMP construct (enum lt_omp) */
#define FN_TEAM_BARRIER 5000 /* libgomp's barrier at the end of a team, until its join */
#define FN_MOVED	5001 /* an untied task's frame left behind when it moved on (omp.c) */
#define FN_MPI		2000 /* an MPI function */
#define FN_GPU		3000 /* a GPU API call */

/* How a thread's frames are closed. */
enum close_how {
	CLOSE_LEAVE,	  /* a leave that skipped inner frames: those were left open */
	CLOSE_THREAD_END, /* THREAD_END: the start routine, pthread_exit end normally */
	CLOSE_CUT,	  /* the records ended: all was left open but main and execve */
};

#define FN_KOKKOS(k) (2100 + (int)(k)) /* a Kokkos frame (enum lt_kokkos); not FN_MPI */

/* What the converter needs of MPI rank 0 before converting any process. */
struct rank0 {
	int found;
	char host[256];
	int64_t real_minus_mono;
};

/* maps.c */
uint32_t *cv_strmap_get(struct cv_strmap *m, const char *key, const uint32_t *val_if_new);
void cv_strmap_free(struct cv_strmap *m);
void *cv_grow(void *array, uint32_t *cap, size_t elem);
uint64_t *cv_idmap_get(struct idmap *m, uint64_t key, int create);
void cv_idmap_del(struct idmap *m, uint64_t key);
void cv_idmap_free(struct idmap *m);
void cv_alloc_remove(struct alloc_table *t, uint32_t i);
void cv_alloc_set(struct alloc_table *t, uint64_t *slot, const struct kalloc *k);
void cv_alloc_free(struct alloc_table *t);

/* registry.c */
uint32_t cv_region_id(struct cv *cv, char kind, const char *name, const struct cv_region *r);
uint32_t cv_fn_region(struct cv *cv, unsigned fn);
uint32_t cv_mpi_region(struct cv *cv, const char *name);
uint32_t cv_user_region(struct cv *cv, const char *name);
void cv_resolve_code(struct cv *cv, const struct rd_process *p, uint64_t addr,
		     struct sym_result *out);
uint32_t cv_code_region(struct cv *cv, const struct rd_process *p, uint64_t addr);
uint32_t cv_main_region(struct cv *cv, const struct rd_process *p);
uint32_t cv_metric_id(struct cv *cv, const char *name, int is_double, const char *unit);
uint32_t cv_papi_set(struct cv *cv, const struct rd_process *p);
const char *cv_pstring(struct pstate *ps, uint32_t id);
void cv_leak_add(struct pstate *ps, const struct kalloc *k, int kind, const char *text);
/* Call site c (its key: file:line:function), id + 1, defined on first use; 0: no memory. */
uint32_t cv_scl_id(struct cv *cv, const struct cv_scl *c);
/* PAPI set s (keyed by its names), id + 1, defined on first use; 0: no memory. */
uint32_t cv_papi_id(struct cv *cv, const struct cv_papi *s);
void cv_add_prop(struct cv *cv, const char *name, const char *value);
struct cv_loc *cv_new_loc(struct cv *cv);
void cv_callsite(struct pstate *ps, struct tstate *t, uint64_t ra);
/* The calling context (id + 1; 0: none) of a stack sample's frames ips[0..n), innermost
 * (the interrupted instruction) first, the others return addresses. */
uint32_t cv_stack_context(struct pstate *ps, const uint64_t *ips, unsigned n);
void cv_stack_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		     const struct lt_rec *r);
void cv_add_note(struct cv *cv, const char *what, const char *name, const char *why);
/* A note as it is written (once each). */
void cv_note(struct cv *cv, const char *text);

/* thread.c */
struct tstate *cv_thread_by_index(struct pstate *ps, uint32_t index);
void cv_heap_down(struct pstate *ps, size_t i);
uint64_t cv_mono_to_ns(struct pstate *ps, uint64_t mono);
void cv_note_time(struct pstate *ps, uint64_t v);
uint64_t cv_to_ns(struct pstate *ps, struct tstate *t, uint64_t ticks);
struct cv_loc *cv_loc_of(struct pstate *ps, struct tstate *t);
int cv_push(struct cv *cv, struct tstate *t, uint32_t region, int fn, uint64_t obj, uint64_t obj2);
int cv_closed_by_converter(int fn, enum close_how how);
int cv_omp_team_pending(const struct tstate *t);
int cv_omp_pool_start(const struct rd_process *p, uint64_t addr);
void cv_unwind(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, uint32_t to,
	       enum close_how how);
struct frame *cv_pop_match(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, int fn,
			   uint32_t region);
void cv_thread_done(struct pstate *ps, struct tstate *t);

/* sync.c */
int cv_is_lock_fn(unsigned fn);
int cv_is_cond_wait(unsigned fn);
void cv_lock_event(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns, int acquire,
		   uint64_t addr, enum cv_paradigm paradigm);
void cv_release_held(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns);

/* omp.c */
void cv_omp_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		   const struct lt_rec *r);

/* kokkos.c */
void cv_kokkos_leaks(struct pstate *ps);
void cv_kokkos_metadata(struct cv *cv, const struct rd_process *p);
void cv_kokkos_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      const struct lt_rec *r);

/* samplers.c */
void cv_core_span_end(struct pstate *ps, struct tstate *t, uint64_t ns);
void cv_cpu_change(struct pstate *ps, struct tstate *t, uint64_t ns, uint32_t cpu, unsigned node);
void cv_sampler_record(struct pstate *ps, struct tstate *t, const struct lt_rec *r);
int cv_write_core_view(struct cv *cv);

/* mpi.c */
int64_t cv_mpi_offset(const struct pstate *ps, int64_t local);
void cv_mpi_coll_close(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns);
void cv_mpi_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		   const struct lt_rec *r);
void cv_mpi_clock(struct cv *cv, struct pstate *ps, const struct rank0 *r0);

/* gpu.c */
void cv_gpu_enter(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		  const struct lt_rec *r);
void cv_gpu_leave(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		  const struct lt_rec *r);
void cv_gpu_collect(struct pstate *ps, const struct lt_rec *r);
void cv_gpu_flush(struct pstate *ps);
void cv_gpu_leaks(struct pstate *ps);

/* process.c */
int64_t cv_host_offset(struct cv *cv, uint32_t host, int64_t real_minus_mono);
uint32_t cv_host_index(struct cv *cv, const char *host);
void cv_link_creators(struct cv *cv, const int *parent_pid);

/* The records of one paradigm, on thread t's location l at time ns: thread.c, sync.c,
 * user.c, mpi.c, omp.c, kokkos.c, gpu.c. */
void cv_thread_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      const struct lt_rec *r);
void cv_call_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		    const struct lt_rec *r);
void cv_user_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		    const struct lt_rec *r);

#endif /* LIBTRACE_ANALYSIS_INTERNAL_H */
