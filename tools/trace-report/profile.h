/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * profile.h - a run's profile, as trace-report makes it from a trace directory (profile.c)
 * or an OTF2 archive converted from one (otf2_in.c), or reads it back from a saved JSON
 * profile (store.c): the run's metadata, per region calls and times, per process and per
 * thread totals.  All times are nanoseconds.
 *
 * Regions are told apart by kind and name: the kind is the paradigm, with the user
 * paradigm split in two ("user": annotated regions; "function": a thread's start routine,
 * main), so pthread_mutex_lock (pthread) and an annotated region "lock" (user) differ.
 */
#ifndef LIBTRACE_REPORT_PROFILE_H
#define LIBTRACE_REPORT_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RP_SCHEMA		"libtrace-profile/1"
#define RP_COMPARE_SCHEMA	"libtrace-compare/1"
#define RP_COMPARE_SUITE_SCHEMA "libtrace-compare-suite/1"

/* Exit statuses of trace-report (see the usage text and docs/profiles-and-ci.md). */
enum {
	RP_EXIT_OK = 0,
	RP_EXIT_REGRESSION = 1,
	RP_EXIT_NOT_COMPARABLE = 2,
	RP_EXIT_ERROR = 3,
};

struct rp_region {
	char *name, *kind, *role;
	uint64_t calls;
	uint64_t incl_ns; /* outermost calls only: a recursive call is not counted twice */
	uint64_t excl_ns; /* minus the time in the regions called from it */
	uint64_t min_ns, mean_ns, max_ns; /* per call, each call's own duration */
	/* Over the threads that called it: their inclusive time. */
	uint32_t threads;
	uint64_t thread_min_ns, thread_mean_ns, thread_max_ns;
	double imbalance; /* thread_max_ns / thread_mean_ns (1: balanced) */
	char *max_thread; /* "<process dir>/<thread index>", as trace-dump prints them */
	char *type;	  /* a Kokkos kernel's pattern: "for", "reduce", "scan"; NULL: none */
	uint32_t id;	  /* the reader's region id, while the run is built */
	uint64_t bytes;	  /* bytes its calls copied (deep copies, GPU copies); 0: none */
};

/* A node of the call tree: a region reached by one call path, over every thread (the tree
 * of all threads' paths merged, as kokkos-tools' space-time-stack shows it).  parent: the
 * index of the caller's node, -1 for a thread's outermost calls; parents come first. */
struct rp_node {
	char *name, *kind;
	int64_t parent;
	uint64_t calls, incl_ns, excl_ns;
};

/* An allocation live at a memory space's high-water mark. */
struct rp_live {
	char *label; /* the View's label, or the GPU call that allocated */
	uint64_t bytes;
};

#define RP_LIVE_MAX 10 /* the largest allocations kept of those live at a high-water mark */

/* A memory space of a process: Kokkos' (HostSpace, CudaSpace...) or a GPU runtime's
 * ("device memory"), from the allocations the trace saw. */
struct rp_memory {
	char *process, *space;
	uint64_t high_water; /* the most bytes live at once */
	uint64_t at_ns;	     /* when, since the run's start */
	uint64_t end_bytes;  /* live at the process's end */
	uint64_t allocations, frees;
	uint64_t live_at_high; /* allocations live at the high-water mark */
	struct rp_live *top;   /* the largest of them, at most RP_LIVE_MAX, largest first */
	size_t ntop;
};

/* What the HTML report draws over time, in RP_BINS bins of `width` ns from `origin` (the
 * trace's monotonic clock): per thread, the region it spent most of each bin in and the CPU
 * it ran on; per quantity, each bin's maximum (timeline.c). */
#define RP_BINS 1024

struct rp_timeline {
	uint64_t origin, width;
	uint32_t n;		 /* bins used */
	int32_t region[RP_BINS]; /* index into rp_run.regions; -1: none */
	int32_t cpu[RP_BINS];	 /* -1: not known */
};

struct rp_series {
	char *name, *unit;
	uint64_t origin, width;
	uint32_t n;
	double v[RP_BINS]; /* NaN: no value in that bin */
};

struct rp_thread {
	struct rp_timeline *timeline; /* NULL: none (a saved profile) */
	uint32_t index, tid;
	char *name;
	uint64_t lifetime_ns;	/* first to last event */
	uint64_t in_regions_ns; /* inside some region other than its start routine or main */
	uint64_t events, lost;
	uint64_t dropped_short, dropped_filter; /* calls and regions left out on purpose */
};

struct rp_process {
	char *name; /* the process directory: <host>.<pid>[.<n>] */
	int pid, ppid;
	char *host, *program;
	int ended; /* ended normally (not killed, not cut short) */
	uint64_t lifetime_ns, in_regions_ns, events, lost;
	struct rp_thread *threads;
	size_t nthreads;
};

struct rp_meta {
	char *program;	  /* the executable's base name: what --compare checks */
	char *executable; /* its path */
	char **args;	  /* the arguments, argv[1..] */
	size_t nargs;
	char *host; /* of the first process */
	char **hosts;
	size_t nhosts;
	uint64_t processes, threads, ranks; /* ranks: the MPI ranks traced, 1 without MPI */
	uint64_t start_unix_ns;		    /* CLOCK_REALTIME at the first process's start */
	char *start;			    /* the same, ISO 8601 UTC */
	uint64_t duration_ns;		    /* first to last event of the run */
	char *git_revision;		    /* NULL: unknown */
	char *clock;			    /* "tsc", "monotonic"; "unknown" (archive) */
	uint64_t writer_cpu_ns; /* CPU time of the tracer's writer threads (meta "writer_cpu",
				 * summed over the processes), where has_writer_cpu */
	int has_writer_cpu;
	uint64_t tracer_end_ns; /* the tracer's own end after the program's (meta "ending" to
				 * "end"), in no thread's time; summed over the processes */
};

struct rp_totals {
	uint64_t events, lost, truncated, unclosed, cut_processes, anomalies;
	uint64_t dropped_short, dropped_filter; /* left out on purpose (selective recording) */
	uint64_t flight; /* processes that ran as flight recorders (LIBTRACE_MODE=flight) */
	int damaged;
};

/* Stack samples (LIBTRACE_STACK_SAMPLING): a row of functions, regions or call paths. */
struct rp_sample_row {
	char *name;		    /* a function, a region, or a call path "main > f > g" */
	uint64_t self, total;	    /* samples: in it (innermost) / with it on the stack */
	uint64_t self_ns, total_ns; /* the CPU time they stand for */
};

/* A thread that blocked the sampling signal (meta "stack_blocked"). */
struct rp_blocked {
	char *thread; /* <process>/<index>, as the threads table names it */
	uint32_t tid;
	uint64_t not_taken; /* samples it would have had */
};

struct rp_samples {
	uint64_t count, cpu_ns;
	struct rp_blocked *blocked; /* from a trace only (an archive does not say) */
	size_t nblocked;
	struct rp_sample_row *functions; /* by self samples, most first */
	size_t nfunctions;
	struct rp_sample_row *regions; /* the innermost open region each fell in ("-": none) */
	size_t nregions;
	struct rp_sample_row *paths; /* whole call paths, by samples (self) */
	size_t npaths;
};

struct rp_run {
	char *trace; /* where it came from: a trace directory, an archive, or FILE.json#N */
	struct rp_meta meta;
	struct rp_totals totals;
	struct rp_samples samples;
	struct rp_region *regions; /* by exclusive time, largest first */
	size_t nregions;
	struct rp_process *procs;
	size_t nprocs;
	struct rp_node *tree; /* the call tree: empty in a profile saved before it existed */
	size_t ntree;
	int tree_cut; /* the tree reached its size limit: deeper paths count in their parent */
	struct rp_memory *memory;
	size_t nmemory;
	/* Over time (not saved in JSON): memory spaces' bytes, samplers' metrics. */
	struct rp_series **series;
	size_t nseries;
	/* MPI messages sent from world rank s to d: [s * mpi_size + d]; mpi_size 0: none. */
	uint32_t mpi_size;
	uint64_t *mpi_msgs, *mpi_bytes;
};

typedef void (*rp_warn_fn)(void *ctx, const char *msg);

struct rp_options {
	const char *debug_dir; /* separate debug files (default /usr/lib/debug) */
	int no_git;	       /* do not look for a git revision */
	rp_warn_fn warn;       /* reading problems (damage), one message each */
	void *wctx;
};

/*
 * Profiles the trace directory (or one process directory) `path` into run.  Returns 0, or
 * -1 when nothing of it can be read (err says why).  Damage is reported through opt->warn
 * and counted in run->totals; what is valid is profiled.
 */
int rp_profile_trace(const char *path, const struct rp_options *opt, struct rp_run *run, char *err,
		     size_t errlen);
/*
 * Profiles the OTF2 archive whose anchor file (traces.otf2) is `anchor`, as trace2otf2
 * wrote it, into run: the same regions, calls and times as the trace directory it was
 * converted from, and what the archive keeps of the run's metadata (otf2_in.c).  Returns 0,
 * or -1 when the archive cannot be read or is damaged (err names the file and the problem),
 * and always -1 in a trace-report built without OTF2.
 */
int rp_profile_otf2(const char *anchor, const struct rp_options *opt, struct rp_run *run, char *err,
		    size_t errlen);
/*
 * Whether `path` is an OTF2 archive: a file named *.otf2, or a directory that holds
 * traces.otf2 and no process directory of a trace.  Returns 1 with its anchor file in
 * anchor, or 0.
 */
int rp_is_otf2(const char *path, char *anchor, size_t len);
void rp_run_free(struct rp_run *run);
/* Sorts the regions by exclusive time, largest first (then kind, name). */
void rp_sort_regions(struct rp_run *run);
/* The region's identity across runs. */
int rp_region_cmp_key(const struct rp_region *a, const struct rp_region *b);

/* store.c: the libtrace-profile/1 JSON (documented in docs/profiles-and-ci.md); its regions,
 * call tree ("tree", "tree_cut") and memory ("memory") members, which the HTML page shares. */
struct jw;
void rp_write_regions_json(struct jw *w, const struct rp_run *run);
void rp_write_tree_json(struct jw *w, const struct rp_run *run);
void rp_write_memory_json(struct jw *w, const struct rp_run *run);
void rp_write_json(FILE *f, struct rp_run *runs, size_t nruns);
/*
 * Reads the runs of the profile at path and appends them to *runs.  Returns 0, or -1 with
 * err naming what is wrong where ("line 3, column 5: ...", "runs[0].regions[2]: ...").
 */
int rp_read_json(const char *path, struct rp_run **runs, size_t *nruns, char *err, size_t errlen);

/* output.c: an output file, written whole or not at all (rp_out_open says why not, on
 * stderr); rp_out_close(o, ok) puts it in place when ok and every write succeeded.  0 or
 * -1 (said why). */
struct rp_out {
	FILE *f;
	const char *path;
	char tmp[4096 + 8];
};
FILE *rp_out_open(struct rp_out *o, const char *path);
int rp_out_close(struct rp_out *o, int ok);

/* output.c: the readable table and CSV. */
void rp_write_table(FILE *f, const struct rp_run *runs, size_t nruns, size_t top);
void rp_write_csv(FILE *f, const struct rp_run *runs, size_t nruns);
/* The call tree, top-down (nodes of at least `min` of the run's time) and bottom-up. */
void rp_write_tree(FILE *f, const struct rp_run *run, double min);
/* The memory spaces' high-water marks and what was live then. */
void rp_write_memory(FILE *f, const struct rp_run *run);
/* html.c: one self-contained page of the runs.  0, or -1 (said on stderr). */
int rp_write_html(FILE *f, const struct rp_run *runs, size_t nruns);
/* What the run's totals warn of (lost events, damage, cut processes, anomalies, regions left
 * open), one text each in out; severe[i]: the profile is short of what ran.  Returns how
 * many. */
#define RP_WARNINGS_MAX 7 /* one per warning rp_warnings can give: keep them equal */
#define RP_WARNING_LEN	256
size_t rp_warnings(const struct rp_run *r, char (*out)[RP_WARNING_LEN], int *severe);
/* "12.345 ms": a duration in a readable unit (signed: "+1.200 ms"). */
char *rp_fmt_ns(char *buf, size_t len, double ns, int sign);
/*
 * s as a table prints it: bytes below 0x20 and 0x7f (ESC among them) as \xNN, as trace-dump
 * writes them, so a name cannot move the cursor or change the colours; with max > 3, at most
 * max characters, a longer one cut with "...".  Also cut to fit len.  Returns buf.
 */
char *rp_fmt_name(char *buf, size_t len, const char *s, size_t max);
/* "slow_region 2 2": program and arguments, shortened to fit len. */
char *rp_fmt_command(char *buf, size_t len, const struct rp_meta *m);

#endif /* LIBTRACE_REPORT_PROFILE_H */
