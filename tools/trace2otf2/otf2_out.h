/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2_out.h - what the files of the OTF2 backend share: otf2_out.c writes the events (and
 * a parallel conversion's mapping tables), otf2_defs.c the global definitions.
 */
#ifndef LIBTRACE_OTF2_OUT_H
#define LIBTRACE_OTF2_OUT_H

#include <otf2/otf2.h>
#include <stdint.h>

#include "convert.h"

#define EVT_CHUNK  (256u * 1024u) /* OTF2's minimum event chunk */
#define DEF_CHUNK  (256u * 1024u) /* the minimum too: every location has its own */
#define EVT_CHUNKS 2u		  /* chunks a buffer may hold before OTF2 must flush */

enum { ATTR_THREAD_ID, ATTR_CLOSED, ATTR_CALLSITE, ATTR_CALLPATH, ATTR_CPU_TIME, ATTR_COUNT };

/*
 * Metric classes.  A conversion meets metrics as it goes (the samplers', the annotation
 * API's counters, the CPU a thread runs on), while the archive's definitions number the
 * metrics' classes first, then one class per PAPI set: an event written before the last
 * metric was met cannot know its class's number there.  The events name classes in the
 * order of their first use instead, and each location's mapping table (Score-P writes
 * them too) maps these to the definitions'.  What a class stands for: a metric id, or
 * CLASS_PAPI | the index of a PAPI set.
 */
#define CLASS_PAPI 0x80000000u

/* The converter's attributes (enum cv_attr_id), after ours (otf2_defs.c). */
struct otf2_attr_def {
	const char *name, *desc;
	OTF2_Type type;
};
extern const struct otf2_attr_def otf2_attrs[CV_ATTR_COUNT];

/* With stack samples (cv.sampling): a location's open regions as calling contexts (ids + 1),
 * innermost last. */
struct cstack {
	uint32_t *v;
	uint32_t n, cap;
	uint32_t base; /* where the explicit task it runs began (task) */
	uint64_t task; /* that task (team << 44 | creator << 32 | gen); 0: its implicit task */
};

/* An untied task switched away from, with the contexts of its open regions. */
struct suspended {
	uint64_t task;
	uint32_t *v, n;
};

/* A marker kept until the end (a parallel conversion: rank 0 writes them all). */
struct kept_marker {
	uint64_t loc, t;
	int kind;
	char *text;
	size_t seq; /* its place among all gathered */
};

struct out {
	struct kept_marker *kept;
	size_t nkept, kept_cap;
	struct cstack *cs; /* by location index */
	size_t ncs;
	struct suspended *susp;
	size_t nsusp, susp_cap;
	OTF2_Archive *ar;
	OTF2_MarkerWriter *markers;
	OTF2_AttributeList *attrs;
	int marker_defined[CV_MARK_KINDS];
	uint32_t *class_what; /* by class: what it stands for (see otf2_class) */
	uint32_t nclasses, classes_cap;
	uint32_t *class_of_metric, *class_of_papi; /* class + 1 (0: none yet) */
	uint32_t of_metric_cap, of_papi_cap;
	OTF2_ErrorCode error; /* the first failure */
	struct cv *cv;	      /* whose out_failed the first failure sets */
	const char *error_what;
};

/* Keeps the first failure (the conversion then fails with it). */
void otf2_check(struct cv *cv, OTF2_ErrorCode rc, const char *what);
OTF2_Paradigm otf2_paradigm(enum cv_paradigm p);
/* Global definitions, in the order Score-P writes them (dependencies first). */
void otf2_write_definitions(struct cv *cv, OTF2_GlobalDefWriter *g);

/* Communicators: each process's thread contingent (one per process given, readable or
 * not), then the OpenMP teams and the MPI communicators in the order they appeared. */
static inline OTF2_CommRef team_comm(struct cv *cv, uint32_t team)
{
	return (OTF2_CommRef)(cv->max_procs + cv->teams[team].comm);
}

static inline OTF2_CommRef mpi_comm(struct cv *cv, uint32_t comm)
{
	return (OTF2_CommRef)(cv->max_procs + cv->comms[comm].comm);
}

#endif /* LIBTRACE_OTF2_OUT_H */
