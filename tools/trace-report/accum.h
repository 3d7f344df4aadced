/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * accum.h - the part of a profile that does not depend on where the events come from.
 * Both readers of a run feed it: profile.c (a trace directory, through the converter's
 * core) and otf2_in.c (an OTF2 archive, through libotf2's reader).  Per live thread, a
 * stack of open calls and a table of that thread's regions; when the thread ends, its
 * table is folded into the run's per-region totals and the thread into its process.
 * acc_build then makes struct rp_run's regions and processes of them.
 *
 * Memory: per region, per process and per live thread; never per event.
 */
#ifndef LIBTRACE_REPORT_ACCUM_H
#define LIBTRACE_REPORT_ACCUM_H

#include <stddef.h>
#include <stdint.h>

#include "convert.h"
#include "profile.h"

struct acc_frame;
struct acc_entry;
struct acc_region;
struct acc_process;
struct acc_node;
struct acc_space;
struct acc_timeline;

/* One thread while it is live (between acc_thread_new and acc_thread_end). */
struct acc_thread {
	struct acc_frame *stack;
	uint32_t depth, cap;
	struct acc_entry *tab; /* its regions: open addressing on region + 1 */
	uint32_t ntab, tabcap;
	uint64_t first, last; /* its first and last event */
	uint64_t events, in_regions;
	uint64_t lost;			  /* the reader adds what it learns of losses */
	uint64_t dropped[LT_DROP_CAUSES]; /* left out on purpose, by enum lt_drop */
	uint32_t process, index;
	uint32_t tid; /* the reader sets it when it knows it */
	int seen;     /* an event was seen */
	struct acc_task {
		uint32_t team, creator, gen; /* gen 0: the thread's implicit task */
	} task;				     /* the task it runs (acc_task_switch) */
	uint32_t task_base;		     /* the depth where that task's own calls begin */
	struct acc_timeline *tl;	     /* its bins over time, from its first call */
	struct acc_pending {		     /* an allocating call awaiting its result */
		uint64_t bytes;
		char space[64], label[512];
		int set;
	} pending;
};

/* The run. */
struct acc {
	struct acc_region *regions; /* by region id, grown as threads end */
	uint32_t nregions;
	struct acc_process *procs; /* by process index */
	size_t nprocs;
	uint64_t anomalies;		  /* leaves without their enter, nesting too deep */
	uint64_t dropped[LT_DROP_CAUSES]; /* the run's calls and regions left out on purpose */
	int oom;
	struct acc_suspended *suspended; /* tasks switched away from, with their open calls */
	size_t nsuspended, suspended_cap;
	/* Stack samples: per region id (the functions and the regions samples fell in), and
	 * per call path. */
	uint64_t samples, sample_ns;
	struct acc_sfunc *sfuncs;
	uint32_t nsfuncs;
	struct acc_spath *spaths; /* open addressing */
	size_t nspaths, spaths_cap;
	/* The call tree: nodes by (parent, region), node 0 the root. */
	struct acc_node *nodes;
	uint32_t nnodes, nodes_cap;
	uint32_t *node_map; /* open addressing: node index + 1 */
	uint32_t node_map_cap;
	int tree_cut;
	uint64_t *rbytes; /* per region id: bytes copied */
	uint32_t nrbytes;
	struct acc_space *spaces; /* memory spaces, per process */
	size_t nspaces;
	struct rp_series **series; /* over time: the spaces' bytes, the samplers' metrics */
	size_t nseries;
	uint32_t mpi_size; /* MPI messages: [sender * mpi_size + receiver] */
	uint64_t *mpi_msgs, *mpi_bytes;
};

/* What the reader knows of each region and process, for acc_build. */
struct acc_region_info {
	const char *name, *kind, *role;
	const char *type; /* a Kokkos kernel's pattern ("for"), or NULL */
};

struct acc_process_info {
	const char *name; /* the process directory <host>.<pid>[.<n>] */
	const char *host, *program;
	int pid, ppid, ended;
};

/* 0, or -1 when out of memory. */
int acc_init(struct acc *a, size_t nprocs);
void acc_free(struct acc *a);

/* A thread begins; NULL when out of memory (a->oom is set). */
struct acc_thread *acc_thread_new(struct acc *a, uint32_t process, uint32_t index);
/* An event that only counts (and moves the thread's first and last time). */
void acc_event(struct acc_thread *t, uint64_t ts);
/*
 * Region `region` (a dense id, below 2^32 - 1) is entered at ts.  function: the region is
 * a start routine or main, which does not count in the thread's time in regions when it
 * is the bottom of the stack.
 */
void acc_enter(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region, int function);
/*
 * OTF2's task events (untied OpenMP tasks): t switches to task (team, creator, gen) at ts; gen
 * 0 is t's implicit task.  The calls the task it ran had opened since it switched to it close
 * at ts and wait for a switch to that task, on any thread, which opens them again without
 * counting calls: a task's calls count once, its time where it ran.  An explicit task's calls
 * lie above what it interrupted.
 */
void acc_task_switch(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t team,
		     uint32_t creator, uint32_t gen);
/* The task t runs completes: what it left open closes (an anomaly); t runs no explicit task
 * until its next switch. */
void acc_task_complete(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t team,
		       uint32_t creator, uint32_t gen);
/*
 * A stack sample of t at ts that stands for ns of its CPU time: funcs[0..n) the regions of
 * the functions it found above t's open calls, outermost first (region ids).  The function
 * innermost has the sample's self time; every function on it its total; the innermost open
 * call of t is where it fell; the path itself is counted.
 */
void acc_sample(struct acc *a, struct acc_thread *t, uint64_t ts, uint64_t ns,
		const uint32_t *funcs, unsigned n);
/* The region of t's outermost open call, UINT32_MAX when none. */
uint32_t acc_bottom(const struct acc_thread *t);
/* The innermost open call's depth (the readers splice sample paths at it). */
uint32_t acc_depth(const struct acc_thread *t);
/* The innermost open call of region is left at ts, with what was opened above it; a leave
 * of a region that is not open counts as an anomaly. */
void acc_leave(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region);
/*
 * The thread ends: what is still open is closed at its last event, its regions are added
 * to the run's, and it joins its process's threads under `name`.  t is freed in any case.
 * Returns 0, or -1 when out of memory.
 */
int acc_thread_end(struct acc *a, struct acc_thread *t, const char *name);
/* A call of region copied `bytes` (a deep copy, a GPU copy). */
void acc_bytes(struct acc *a, uint32_t region, uint64_t bytes);

/* What a call's attributes say of memory and copies, as either reader finds them. */
#define ACC_HAS_BYTES	  0x1u	/* bytes: Kokkos' bytes allocated, freed or copied */
#define ACC_HAS_ADDRESS	  0x2u	/* address: a Kokkos allocation's */
#define ACC_HAS_GPU_BYTES 0x4u	/* gpu_bytes: a GPU copy's or set's */
#define ACC_HAS_SIZE	  0x8u	/* size: a GPU allocation's (its address comes with the Leave) */
#define ACC_HAS_FREED	  0x10u /* freed: the address a GPU free names */
struct acc_call {
	const char *region; /* its name: a Kokkos allocation's space is in it */
	enum cv_paradigm paradigm;
	enum cv_role role;
	const char *site;		 /* where it was called, or NULL */
	const char *label, *memory;	 /* the View; the GPU memory's kind ("device"); or NULL */
	uint64_t bytes, address;	 /* Kokkos */
	uint64_t gpu_bytes, size, freed; /* GPU */
	unsigned has;			 /* ACC_HAS_* */
};
/* A call with attributes entered region at ts (after acc_enter): bytes moved, memory
 * allocated or freed (memory.c). */
void acc_call_enter(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region,
		    const struct acc_call *c);
/* It returned: a GPU allocation's address, when it has one (result: 1). */
void acc_call_leave(struct acc *a, struct acc_thread *t, uint64_t ts, int result, uint64_t address);
/*
 * Memory (memory.c): `bytes` at addr allocated in space (of process) at ts, with a label;
 * freed.  A free of an address the space never saw allocated is passed over.  Memory: per
 * live allocation.  The bytes live over time go to the run's series "memory: SPACE (process
 * index P)", named after the process by acc_build_memory.
 */
void acc_alloc(struct acc *a, uint32_t process, const char *space, const char *label, uint64_t addr,
	       uint64_t bytes, uint64_t ts);
void acc_dealloc(struct acc *a, uint32_t process, const char *space, uint64_t addr, uint64_t ts);
/* The spaces into run->memory (process names from procs); at_ns counted from origin. */
int acc_build_memory(struct acc *a, const struct acc_process_info *procs, size_t nprocs,
		     uint64_t origin, struct rp_run *run);
void acc_free_memory(struct acc *a);

/* timeline.c: a thread's bins (see profile.h); a quantity over time. */
struct acc_timeline *acc_timeline_new(uint64_t origin);
/* From ts on, region (id + 1; 0: none) is the innermost open call. */
void acc_timeline_at(struct acc_timeline *tl, uint64_t ts, uint32_t region);
void acc_timeline_cpu(struct acc_timeline *tl, uint64_t ts, int cpu);
/* Into t->timeline, regions as ids + 1 (acc_build makes them indices). 0, or -1: memory. */
int acc_timeline_build(const struct acc_timeline *tl, struct rp_thread *t);
struct rp_series *acc_series_new(const char *name, const char *unit, uint64_t origin);
void acc_series_add(struct rp_series *s, uint64_t ts, double v);
void acc_series_free(struct rp_series *s);
/* The series named `name` of the run, made on first use; NULL when out of memory. */
struct rp_series *acc_series(struct acc *a, const char *name, const char *unit, uint64_t ts);
/* An MPI message of `bytes` from world rank src to dst (of size ranks). */
void acc_message(struct acc *a, uint32_t size, uint32_t src, uint32_t dst, uint64_t bytes);

/* Frees a thread without counting it (after a failure). */
void acc_thread_free(struct acc_thread *t);

/*
 * Fills run->regions (those called at least once, sorted by exclusive time) and
 * run->procs from what the threads left, regions[i] and procs[i] naming region i and
 * process i.  The processes' threads move to the run.  Returns 0, or -1 when out of memory
 * (run is then half made: rp_run_free frees it).
 */
int acc_build(struct acc *a, const struct acc_region_info *regions, uint32_t nregions,
	      const struct acc_process_info *procs, size_t nprocs, struct rp_run *run);

/* Shared by the readers' metadata. */
const char *acc_base_name(const char *path);
char *acc_iso_date(uint64_t unix_ns); /* NULL when out of memory */
/* The git revision of the work tree holding the executable's directory, or NULL. */
char *acc_git_revision(const char *exe);

#endif /* LIBTRACE_REPORT_ACCUM_H */
