// SPDX-License-Identifier: BSD-3-Clause
/*
 * otf2_in.c - a run's profile from an OTF2 archive that trace2otf2 wrote, read with
 * libotf2's reader.  The converter's core hands each event to its OTF2 writer
 * (trace2otf2/otf2_out.c) exactly as it hands it to the profile backend (profile.c), so
 * replaying the archive's events into the same accumulator (accum.c) gives the profile of
 * the trace directory the archive was converted from:
 *
 *   definitions        the profile
 *   Region             a region: paradigm USER -> "user" or "function", PTHREAD ->
 *                      "pthread", NONE -> "process", OPENMP, KOKKOS; the role back from
 *                      OTF2's (CODE is a Kokkos phase)
 *   LocationGroup      a process, in the trace's order: "<program> [<pid>]", its host the
 *                      system tree node above it, its creator the process that forked or
 *                      exec'ed it (ppid); its directory <host>.<pid>[.<n>] rebuilt
 *   Location           a thread: (thread index << 32) | process, its name
 *   Attribute          "ThreadId" on ThreadBegin (tid), "libtrace:closed_by_converter"
 *                      on a Leave (unclosed_regions)
 *   ClockProperties    the start date (realtime) and the run's duration (trace length)
 *   events             Enter and Leave feed the region stacks, ThreadTaskSwitch and
 *                      ThreadTaskComplete switch them (an untied task's calls wait for it
 *                      where it was suspended: acc_task_switch); every event counts in its
 *                      thread's events, lifetime; ProgramBegin gives the executable and
 *                      its arguments
 *   markers            "Lost events" (their count), "Truncated trace" (threads cut short,
 *                      processes killed or cut)
 *
 * A start routine or main and an annotated region both are USER regions of role FUNCTION.
 * A start routine has a source file or a symbol other than its name ("work @a.c:12",
 * "work"); one without (a stripped program, "main") is the region a thread enters right
 * after its ThreadBegin or ProgramBegin, which an annotation never is.  (A stripped start
 * routine of a thread whose creation the trace missed, so without ThreadBegin, reads as
 * an annotation.)
 *
 * What the archive does not keep, the profile cannot say: the clock ("unknown"); the parent
 * of a process no other created (0: the first one, those started by posix_spawn); the start
 * date is the first event's, not the first process's (milliseconds later); reading problems
 * of the trace (damaged: only the archive's own).
 *
 * Memory: definitions, and per thread its region stack and table; the events stream
 * through libotf2's callbacks.  Any reference to a definition the archive lacks, and any
 * error of libotf2, makes the archive unreadable (exit 3), never a crash.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "accum.h"
#include "otf2_map.h"
#include "otf2_refs.h"
#include "json.h"
#include "profile.h"
#include "rdfile.h"

/* Grows array *a of *cap elements to hold n + 1.  0, or -1. */
static int grow(void **a, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	void *p = realloc(*a, c * elem);
	if (!p)
		return -1;
	*a = p;
	*cap = c;
	return 0;
}

enum { FN_NO, FN_YES, FN_MAYBE };

struct region {
	uint32_t name, canonical, file, desc; /* string refs */
	OTF2_RegionRole role;
	OTF2_Paradigm paradigm;
	uint8_t function; /* FN_* */
	uint8_t began;	  /* FN_MAYBE: entered right after a thread's begin */
};

struct node {
	uint32_t name;
};

struct group {
	uint32_t name, node, creator; /* refs */
	int pid;		      /* from its name "<program> [<pid>]"; 0: none */
	char *exe;		      /* from ProgramBegin */
	char **args;
	uint32_t nargs;
	int cut, killed; /* markers: files cut short; died without its end record */
	int cores;	 /* --core-view's "CPUs of <host>": not a process */
	int accelerator; /* a GPU context (its streams): not a process either */
	char *dir;	 /* <host>.<pid>[.<n>] */
	int ppid;
};

struct loc {
	uint32_t name, group_ref;
	uint32_t group; /* index */
	uint32_t index; /* thread index in its process */
	uint64_t ndef;	/* events the definition says it has */
	uint64_t nread;
	uint8_t begin_first; /* its first event is a ThreadBegin or ProgramBegin */
	uint8_t entered;     /* it entered a region (the first one may be its function) */
	uint8_t thread;	     /* a CPU thread (not a metric location): one of the profile's */
	struct acc_thread *t;
};

struct attr {
	uint32_t name;
};

enum { MARK_OTHER, MARK_LOST, MARK_TRUNCATED };

struct in {
	const char *anchor;
	OTF2_Reader *rd;
	struct refs srefs, nrefs, grefs, lrefs, rrefs, arefs, mrefs;
	char **strings;
	size_t strings_cap;
	struct node *nodes;
	size_t nodes_cap;
	struct group *groups;
	size_t groups_cap;
	struct loc *locs;
	size_t locs_cap;
	struct region *regions;
	size_t regions_cap;
	struct attr *attrs;
	size_t attrs_cap;
	uint8_t *marks; /* MARK_* by marker definition */
	size_t marks_cap;
	uint64_t attr_tid, attr_closed; /* attribute refs; UINT64_MAX: not defined */
	uint64_t attr_cpu;		/* "libtrace:cpu_time" of stack samples */
	uint64_t attr_call[CALL_ATTRS]; /* what calls say of memory and copies (call_attrs) */
	struct ctx {			/* calling contexts, by ref (trace2otf2 writes 0, 1...) */
		uint32_t region;	/* index into regions; UINT32_MAX: not defined */
		uint32_t parent;	/* ref; OTF2_UNDEFINED_CALLING_CONTEXT: none */
	} * ctxs;
	size_t nctxs, ctxs_cap;
	uint64_t sample_period; /* the interrupt generator's, ns */
	uint64_t resolution, offset, length, realtime;
	int clock;
	size_t nprocs;		    /* groups that are processes: groups[0 .. nprocs) */
	size_t nthreads;	    /* locations that are threads */
	uint64_t mpi_ranks;	    /* MPI's COMM_WORLD locations that exist (ranks traced) */
	uint64_t first_ns, last_ns; /* of the events */
	int seen;
	uint64_t unclosed, truncated, lost;
	int damaged;
	struct acc acc;
	int failed; /* a callback found damage: msg says what */
	char msg[400];
	const struct rp_options *opt;
};

/* ---- libotf2's errors ---- */

/* libotf2 reports errors through a process-wide callback (it prints them otherwise): the
 * first one of a call is kept for the message. */
static char otf2_msg[300];

static OTF2_ErrorCode on_otf2_error(void *ud, const char *file, uint64_t line, const char *fn,
				    OTF2_ErrorCode code, const char *fmt, va_list va)
{
	(void)ud;
	(void)file;
	(void)line;
	(void)fn;
	if (code != OTF2_SUCCESS && !otf2_msg[0] && fmt) {
		char text[240];
		vsnprintf(text, sizeof(text), fmt, va);
		snprintf(otf2_msg, sizeof(otf2_msg), "%s%s%s", OTF2_Error_GetDescription(code),
			 text[0] ? ": " : "", text);
	}
	return code;
}

/* What failed: err is "<anchor>: <what>: <libotf2's reason>". */
static void otf2_fail(struct in *in, char *err, size_t errlen, const char *what,
		      OTF2_ErrorCode code)
{
	if (in->failed)
		snprintf(err, errlen, "%s: damaged archive: %s", in->anchor, in->msg);
	else if (otf2_msg[0])
		snprintf(err, errlen, "%s: %s: %s", in->anchor, what, otf2_msg);
	else
		snprintf(err, errlen, "%s: %s: %s", in->anchor, what,
			 code == OTF2_SUCCESS ? "failed" : OTF2_Error_GetDescription(code));
}

/* The first problem a callback finds stops the reading. */
static OTF2_CallbackCode damage(struct in *in, const char *fmt, ...)
{
	if (!in->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(in->msg, sizeof(in->msg), fmt, ap);
		va_end(ap);
		in->failed = 1;
	}
	return OTF2_CALLBACK_INTERRUPT;
}

static OTF2_CallbackCode oom(struct in *in)
{
	return damage(in, "out of memory");
}

/* ---- global definitions ---- */

static OTF2_CallbackCode def_clock(void *ud, uint64_t resolution, uint64_t offset, uint64_t length,
				   uint64_t realtime)
{
	struct in *in = ud;
	if (resolution == 0)
		return damage(in, "the clock's resolution is 0");
	in->resolution = resolution;
	in->offset = offset;
	in->length = length;
	in->realtime = realtime;
	in->clock = 1;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_string(void *ud, OTF2_StringRef self, const char *text)
{
	struct in *in = ud;
	size_t n = in->srefs.n;
	if (grow((void **)&in->strings, &in->strings_cap, n, sizeof(*in->strings)))
		return oom(in);
	if (!(in->strings[n] = strdup(text ? text : "")))
		return oom(in);
	if (refs_add(&in->srefs, self)) {
		free(in->strings[n]);
		return oom(in);
	}
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_node(void *ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name,
				  OTF2_StringRef cls, OTF2_SystemTreeNodeRef parent)
{
	struct in *in = ud;
	(void)cls;
	(void)parent;
	if (grow((void **)&in->nodes, &in->nodes_cap, in->nrefs.n, sizeof(*in->nodes)))
		return oom(in);
	in->nodes[in->nrefs.n] = (struct node){name};
	return refs_add(&in->nrefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_group(void *ud, OTF2_LocationGroupRef self, OTF2_StringRef name,
				   OTF2_LocationGroupType type, OTF2_SystemTreeNodeRef node,
				   OTF2_LocationGroupRef creator)
{
	struct in *in = ud;
	if (grow((void **)&in->groups, &in->groups_cap, in->grefs.n, sizeof(*in->groups)))
		return oom(in);
	in->groups[in->grefs.n] =
	    (struct group){.name = name,
			   .node = node,
			   .creator = creator,
			   .accelerator = type == OTF2_LOCATION_GROUP_TYPE_ACCELERATOR};
	return refs_add(&in->grefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

/* MPI's COMM_LOCATIONS group holds every COMM_WORLD rank's main thread, undefined for a rank
 * whose trace is missing: the others are the ranks traced. */
static OTF2_CallbackCode def_comm_group(void *ud, OTF2_GroupRef self, OTF2_StringRef name,
					OTF2_GroupType type, OTF2_Paradigm paradigm,
					OTF2_GroupFlag flags, uint32_t nmembers,
					const uint64_t *members)
{
	struct in *in = ud;
	(void)self, (void)name, (void)flags;
	if (type != OTF2_GROUP_TYPE_COMM_LOCATIONS || paradigm != OTF2_PARADIGM_MPI)
		return OTF2_CALLBACK_SUCCESS;
	in->mpi_ranks = 0;
	for (uint32_t i = 0; i < nmembers; i++)
		in->mpi_ranks += members[i] != OTF2_UNDEFINED_LOCATION;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
				      OTF2_LocationType type, uint64_t nevents,
				      OTF2_LocationGroupRef group)
{
	struct in *in = ud;
	if (grow((void **)&in->locs, &in->locs_cap, in->lrefs.n, sizeof(*in->locs)))
		return oom(in);
	in->locs[in->lrefs.n] = (struct loc){.name = name,
					     .group_ref = group,
					     .ndef = nevents,
					     .thread = type == OTF2_LOCATION_TYPE_CPU_THREAD};
	return refs_add(&in->lrefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_region(void *ud, OTF2_RegionRef self, OTF2_StringRef name,
				    OTF2_StringRef canonical, OTF2_StringRef desc,
				    OTF2_RegionRole role, OTF2_Paradigm paradigm,
				    OTF2_RegionFlag flags, OTF2_StringRef file, uint32_t begin,
				    uint32_t end)
{
	struct in *in = ud;
	(void)flags;
	(void)begin;
	(void)end;
	if (grow((void **)&in->regions, &in->regions_cap, in->rrefs.n, sizeof(*in->regions)))
		return oom(in);
	in->regions[in->rrefs.n] =
	    (struct region){name, canonical, file, desc, role, paradigm, 0, 0};
	return refs_add(&in->rrefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_ctx(void *ud, OTF2_CallingContextRef self, OTF2_RegionRef region,
				 OTF2_SourceCodeLocationRef scl, OTF2_CallingContextRef parent)
{
	struct in *in = ud;
	(void)scl;
	if (self >= 1u << 28)
		return damage(in, "calling context %u: not a reference trace2otf2 writes", self);
	if (self >= in->nctxs) {
		if (grow((void **)&in->ctxs, &in->ctxs_cap, self, sizeof(*in->ctxs)))
			return oom(in);
		for (size_t i = in->nctxs; i <= self; i++)
			in->ctxs[i] = (struct ctx){UINT32_MAX, OTF2_UNDEFINED_CALLING_CONTEXT};
		in->nctxs = (size_t)self + 1;
	}
	/* Regions are defined before the contexts: found by their reference. */
	in->ctxs[self] = (struct ctx){refs_find(&in->rrefs, region), parent};
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_interrupt(void *ud, OTF2_InterruptGeneratorRef self,
				       OTF2_StringRef name, OTF2_InterruptGeneratorMode mode,
				       OTF2_Base base, int64_t exponent, uint64_t period)
{
	struct in *in = ud;
	(void)self;
	(void)name;
	if (mode == OTF2_INTERRUPT_GENERATOR_MODE_TIME && base == OTF2_BASE_DECIMAL &&
	    exponent == -9)
		in->sample_period = period;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode def_attribute(void *ud, OTF2_AttributeRef self, OTF2_StringRef name,
				       OTF2_StringRef desc, OTF2_Type type)
{
	struct in *in = ud;
	(void)desc;
	(void)type;
	if (grow((void **)&in->attrs, &in->attrs_cap, in->arefs.n, sizeof(*in->attrs)))
		return oom(in);
	in->attrs[in->arefs.n] = (struct attr){name};
	return refs_add(&in->arefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

static const char *string_of(const struct in *in, uint32_t ref)
{
	uint32_t i = ref == OTF2_UNDEFINED_STRING ? NO_INDEX : refs_find(&in->srefs, ref);
	return i == NO_INDEX ? NULL : in->strings[i];
}

/* Replaces each byte outside [A-Za-z0-9._-] by '_', as the tracer names its directories. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			*s = '_';
}

/* "<program> [<pid>]": the pid, or 0. */
static int pid_of(const char *name)
{
	size_t n = strlen(name);
	if (n < 3 || name[n - 1] != ']')
		return 0;
	const char *open = strrchr(name, '[');
	if (!open || open == name || open[-1] != ' ')
		return 0;
	long pid = 0;
	for (const char *p = open + 1; p < name + n - 1; p++) {
		if (*p < '0' || *p > '9' || pid > INT32_MAX / 10)
			return 0;
		pid = pid * 10 + (*p - '0');
	}
	return (int)pid;
}

static const char *host_of(const struct in *in, const struct group *g)
{
	uint32_t i =
	    g->node == OTF2_UNDEFINED_SYSTEM_TREE_NODE ? NO_INDEX : refs_find(&in->nrefs, g->node);
	return i == NO_INDEX ? NULL : string_of(in, in->nodes[i].name);
}

/* Checks the definitions that the events and the profile need, and links them.  0, or -1
 * with in->msg saying what is wrong. */
static int link_definitions(struct in *in)
{
	struct refs *all[] = {&in->srefs, &in->nrefs, &in->grefs,
			      &in->lrefs, &in->rrefs, &in->arefs};
	static const char *const what[] = {"string",   "system tree node", "location group",
					   "location", "region",	   "attribute"};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		uint64_t dup = 0;
		int rc = refs_sort(all[i], &dup);
		if (rc < 0)
			return oom(in), -1;
		if (rc > 0)
			return damage(in, "%s %llu is defined twice", what[i],
				      (unsigned long long)dup),
			       -1;
	}
	if (in->grefs.n == 0)
		return damage(in, "no location group (process) is defined"), -1;
	for (size_t i = 0; i < in->grefs.n; i++) {
		struct group *g = &in->groups[i];
		const char *name = string_of(in, g->name);
		if (!name)
			return damage(in, "location group %llu: its name is undefined",
				      (unsigned long long)in->grefs.ref[i]),
			       -1;
		if (!host_of(in, g))
			return damage(in, "location group %llu: its system tree node is undefined",
				      (unsigned long long)in->grefs.ref[i]),
			       -1;
		g->pid = pid_of(name);
		g->cores = !g->pid && !strncmp(name, "CPUs of ", 8);
	}
	/* trace2otf2 writes --core-view's groups and the GPU contexts' after the processes':
	 * those at the end are left out, their CPU and stream locations with them. */
	in->nprocs = in->grefs.n;
	while (in->nprocs > 1 &&
	       (in->groups[in->nprocs - 1].cores || in->groups[in->nprocs - 1].accelerator))
		in->nprocs--;
	uint32_t *threads = calloc(in->grefs.n, sizeof(*threads)); /* per group, so far */
	if (!threads)
		return oom(in), -1;
	for (size_t i = 0; i < in->lrefs.n; i++) {
		struct loc *l = &in->locs[i];
		if ((l->group = refs_find(&in->grefs, l->group_ref)) == NO_INDEX) {
			free(threads);
			return damage(in, "location %llu: its location group %u is undefined",
				      (unsigned long long)in->lrefs.ref[i], l->group_ref),
			       -1;
		}
		if (!string_of(in, l->name)) {
			free(threads);
			return damage(in, "location %llu: its name is undefined",
				      (unsigned long long)in->lrefs.ref[i]),
			       -1;
		}
		/* trace2otf2's ids: (thread index << 32) | process; others: by order. */
		uint64_t id = in->lrefs.ref[i];
		l->index = (uint32_t)id == in->grefs.ref[l->group] ? (uint32_t)(id >> 32)
								   : threads[l->group];
		if (l->group >= in->nprocs) /* a CPU of --core-view, a GPU stream */
			l->thread = 0;
		threads[l->group] += l->thread;
		in->nthreads += l->thread;
	}
	free(threads);
	for (size_t i = 0; i < in->rrefs.n; i++) {
		struct region *r = &in->regions[i];
		const char *name = string_of(in, r->name);
		if (!name)
			return damage(in, "region %llu: its name is undefined",
				      (unsigned long long)in->rrefs.ref[i]),
			       -1;
		r->function = FN_NO;
		if (r->paradigm == OTF2_PARADIGM_USER && r->role == OTF2_REGION_ROLE_FUNCTION) {
			const char *canon = string_of(in, r->canonical);
			int code =
			    r->file != OTF2_UNDEFINED_STRING || (canon && strcmp(canon, name));
			r->function = code ? FN_YES : FN_MAYBE;
		}
	}
	in->attr_tid = in->attr_closed = in->attr_cpu = UINT64_MAX;
	for (int k = 0; k < CALL_ATTRS; k++)
		in->attr_call[k] = UINT64_MAX;
	for (size_t i = 0; i < in->arefs.n; i++) {
		const char *name = string_of(in, in->attrs[i].name);
		for (int k = 0; name && k < CALL_ATTRS; k++)
			if (!strcmp(name, rp_call_attrs[k]))
				in->attr_call[k] = in->arefs.ref[i];
		if (name && !strcmp(name, "ThreadId"))
			in->attr_tid = in->arefs.ref[i];
		else if (name && !strcmp(name, "libtrace:closed_by_converter"))
			in->attr_closed = in->arefs.ref[i];
		else if (name && !strcmp(name, "libtrace:cpu_time"))
			in->attr_cpu = in->arefs.ref[i];
	}
	if (!in->clock)
		in->resolution = 1000000000;
	return 0;
}

/* ---- events ---- */

static uint64_t ns_of(const struct in *in, OTF2_TimeStamp t)
{
	if (in->resolution == 1000000000)
		return t;
	return (uint64_t)((unsigned __int128)t * 1000000000u / in->resolution);
}

/* An event's time in ns, kept for the run's span. */
static uint64_t stamp(struct in *in, OTF2_TimeStamp t)
{
	uint64_t ns = ns_of(in, t);
	if (!in->seen || ns < in->first_ns)
		in->first_ns = ns;
	if (!in->seen || ns > in->last_ns)
		in->last_ns = ns;
	in->seen = 1;
	return ns;
}

/* The thread of an event, counted; NULL (reading stops) when it is not defined.  Only
 * threads are selected for reading. */
static struct loc *loc_event(struct in *in, OTF2_LocationRef id)
{
	uint32_t i = refs_find(&in->lrefs, id);
	if (i == NO_INDEX || !in->locs[i].thread) {
		damage(in, "an event of location %llu, which is not a thread defined",
		       (unsigned long long)id);
		return NULL;
	}
	struct loc *l = &in->locs[i];
	l->nread++;
	return l;
}

/* Whether an event carries attribute ref (asking libotf2 for one it lacks is an error). */
static int has_attr(const OTF2_AttributeList *a, uint64_t ref)
{
	return a && ref != UINT64_MAX && OTF2_AttributeList_GetNumberOfElements(a) &&
	       OTF2_AttributeList_TestAttributeByID(a, (OTF2_AttributeRef)ref);
}

/* An event that only counts. */
static OTF2_CallbackCode count(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud)
{
	struct in *in = ud;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	acc_event(l->t, stamp(in, time));
	return OTF2_CALLBACK_SUCCESS;
}

/* MPI's events: read (the location's count of events includes them), not profiled (a trace's
 * profile counts no message either). */
static OTF2_CallbackCode seen(OTF2_LocationRef id, void *ud)
{
	return loc_event(ud, id) ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

static OTF2_CallbackCode ev_mpi_p2p(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				    OTF2_AttributeList *a, uint32_t peer, OTF2_CommRef comm,
				    uint32_t tag, uint64_t bytes)
{
	(void)time, (void)a, (void)peer, (void)comm, (void)tag, (void)bytes;
	return seen(id, ud);
}

static OTF2_CallbackCode ev_mpi_ip2p(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				     OTF2_AttributeList *a, uint32_t peer, OTF2_CommRef comm,
				     uint32_t tag, uint64_t bytes, uint64_t request)
{
	(void)time, (void)a, (void)peer, (void)comm, (void)tag, (void)bytes, (void)request;
	return seen(id, ud);
}

static OTF2_CallbackCode ev_mpi_request(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					OTF2_AttributeList *a, uint64_t request)
{
	(void)time, (void)a, (void)request;
	return seen(id, ud);
}

static OTF2_CallbackCode ev_mpi_coll_begin(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					   OTF2_AttributeList *a)
{
	return ev_mpi_request(id, time, ud, a, 0);
}

static OTF2_CallbackCode ev_mpi_coll_end(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					 OTF2_AttributeList *a, OTF2_CollectiveOp op,
					 OTF2_CommRef comm, uint32_t root, uint64_t sent,
					 uint64_t received)
{
	(void)time, (void)a, (void)op, (void)comm, (void)root, (void)sent, (void)received;
	return seen(id, ud);
}

static OTF2_CallbackCode ev_unknown(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				    OTF2_AttributeList *a)
{
	(void)a;
	return count(id, time, ud);
}

/* A uint64 attribute k of the list: 1 with it in *v, or 0. */
static int call_u64(const struct in *in, const OTF2_AttributeList *a, int k, uint64_t *v)
{
	return has_attr(a, in->attr_call[k]) &&
	       OTF2_AttributeList_GetUint64(a, (OTF2_AttributeRef)in->attr_call[k], v) ==
		   OTF2_SUCCESS;
}

static const char *call_str(const struct in *in, const OTF2_AttributeList *a, int k)
{
	OTF2_StringRef ref;
	if (!has_attr(a, in->attr_call[k]) ||
	    OTF2_AttributeList_GetStringRef(a, (OTF2_AttributeRef)in->attr_call[k], &ref) !=
		OTF2_SUCCESS)
		return NULL;
	return string_of(in, ref);
}

/* What an Enter's attributes say of memory and copies (as profile.c takes them from a trace;
 * an archive has no call sites for the labels of GPU allocations). */
static void call_enter(struct in *in, struct loc *l, uint64_t ts, uint32_t r,
		       const OTF2_AttributeList *a)
{
	const struct region *g = &in->regions[r];
	struct acc_call c = {.region = string_of(in, g->name)};
	if (!c.region)
		return;
	c.paradigm = g->paradigm == OTF2_PARADIGM_KOKKOS ? CV_PARADIGM_KOKKOS : CV_PARADIGM_USER;
	c.role = g->role == OTF2_REGION_ROLE_ALLOCATE	     ? CV_ROLE_ALLOCATE
		 : g->role == OTF2_REGION_ROLE_DEALLOCATE    ? CV_ROLE_DEALLOCATE
		 : g->role == OTF2_REGION_ROLE_DATA_TRANSFER ? CV_ROLE_DATA_TRANSFER
							     : CV_ROLE_FUNCTION;
	c.has |= call_u64(in, a, CA_KOKKOS_BYTES, &c.bytes) ? ACC_HAS_BYTES : 0;
	c.has |= call_u64(in, a, CA_KOKKOS_ADDRESS, &c.address) ? ACC_HAS_ADDRESS : 0;
	c.has |= call_u64(in, a, CA_GPU_BYTES, &c.gpu_bytes) ? ACC_HAS_GPU_BYTES : 0;
	c.has |= call_u64(in, a, CA_ALLOCATION_SIZE, &c.size) ? ACC_HAS_SIZE : 0;
	c.has |= call_u64(in, a, CA_ARGUMENT_ADDRESS, &c.freed) ? ACC_HAS_FREED : 0;
	c.label = call_str(in, a, CA_KOKKOS_LABEL);
	c.memory = call_str(in, a, CA_GPU_MEMORY);
	acc_call_enter(&in->acc, l->t, ts, r, &c);
}

static OTF2_CallbackCode ev_enter(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				  OTF2_AttributeList *a, OTF2_RegionRef ref)
{
	struct in *in = ud;
	(void)a;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	uint32_t r = refs_find(&in->rrefs, ref);
	if (r == NO_INDEX)
		return damage(in, "location %llu enters region %u, which is not defined",
			      (unsigned long long)id, ref);
	struct region *g = &in->regions[r];
	int function = g->function == FN_YES;
	/* The first region a thread enters, at its bottom, is its start routine or main (the
	 * trace's start-up events, such as its first CPU, may come before main). */
	if (g->function == FN_MAYBE && l->t->depth == 0 && !l->entered && l->begin_first)
		function = g->began = 1;
	l->entered = 1;
	acc_enter(&in->acc, l->t, stamp(in, time), r, function);
	if (a && OTF2_AttributeList_GetNumberOfElements(a))
		call_enter(in, l, stamp(in, time), r, a);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_leave(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				  OTF2_AttributeList *a, OTF2_RegionRef ref)
{
	struct in *in = ud;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	uint32_t r = refs_find(&in->rrefs, ref);
	if (r == NO_INDEX)
		return damage(in, "location %llu leaves region %u, which is not defined",
			      (unsigned long long)id, ref);
	uint8_t closed = 0;
	if (has_attr(a, in->attr_closed) &&
	    OTF2_AttributeList_GetUint8(a, (OTF2_AttributeRef)in->attr_closed, &closed) ==
		OTF2_SUCCESS &&
	    closed)
		in->unclosed++;
	uint64_t made = 0;
	int result =
	    has_attr(a, in->attr_call[CA_RESULT_ADDRESS]) &&
	    OTF2_AttributeList_GetUint64(a, (OTF2_AttributeRef)in->attr_call[CA_RESULT_ADDRESS],
					 &made) == OTF2_SUCCESS;
	acc_call_leave(&in->acc, l->t, stamp(in, time), result, made);
	acc_leave(&in->acc, l->t, stamp(in, time), r);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_program_begin(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					  OTF2_AttributeList *a, OTF2_StringRef name,
					  uint32_t nargs, const OTF2_StringRef *args)
{
	struct in *in = ud;
	(void)a;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	if (l->t->events == 0)
		l->begin_first = 1;
	acc_event(l->t, stamp(in, time));
	struct group *g = &in->groups[l->group];
	if (g->exe) /* an exec'ed image is a group of its own: one per group */
		return OTF2_CALLBACK_SUCCESS;
	const char *exe = string_of(in, name);
	if (!exe)
		return damage(in,
			      "location %llu: ProgramBegin names string %u, which is not "
			      "defined",
			      (unsigned long long)id, name);
	if (!(g->exe = strdup(exe)) || !(g->args = calloc(nargs + 1, sizeof(*g->args))))
		return oom(in);
	for (uint32_t i = 0; i < nargs; i++) {
		const char *s = args ? string_of(in, args[i]) : NULL;
		if (!s)
			return damage(in, "location %llu: ProgramBegin's argument %u is undefined",
				      (unsigned long long)id, i);
		if (!(g->args[g->nargs++] = strdup(s)))
			return oom(in);
	}
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_program_end(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					OTF2_AttributeList *a, int64_t status)
{
	(void)a;
	(void)status;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_thread_begin(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					 OTF2_AttributeList *a, OTF2_CommRef comm, uint64_t seq)
{
	struct in *in = ud;
	(void)comm;
	(void)seq;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	if (l->t->events == 0)
		l->begin_first = 1;
	acc_event(l->t, stamp(in, time));
	uint64_t tid;
	if (has_attr(a, in->attr_tid) &&
	    OTF2_AttributeList_GetUint64(a, (OTF2_AttributeRef)in->attr_tid, &tid) == OTF2_SUCCESS)
		l->t->tid = (uint32_t)tid;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_thread(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				   OTF2_AttributeList *a, OTF2_CommRef comm, uint64_t seq)
{
	(void)a;
	(void)comm;
	(void)seq;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_lock(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				 OTF2_AttributeList *a, OTF2_Paradigm model, uint32_t lock,
				 uint32_t order)
{
	(void)a;
	(void)model;
	(void)lock;
	(void)order;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_fork(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				 OTF2_AttributeList *a, OTF2_Paradigm model, uint32_t requested)
{
	(void)a;
	(void)model;
	(void)requested;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_join(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				 OTF2_AttributeList *a, OTF2_Paradigm model)
{
	(void)a;
	(void)model;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_team(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				 OTF2_AttributeList *a, OTF2_CommRef team)
{
	(void)a;
	(void)team;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_task_create(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					OTF2_AttributeList *a, OTF2_CommRef team, uint32_t creator,
					uint32_t gen)
{
	(void)a;
	(void)team;
	(void)creator;
	(void)gen;
	return count(id, time, ud);
}

static OTF2_CallbackCode ev_task_switch(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					OTF2_AttributeList *a, OTF2_CommRef team, uint32_t creator,
					uint32_t gen)
{
	struct in *in = ud;
	(void)a;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	acc_task_switch(&in->acc, l->t, stamp(in, time), team, creator, gen);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_task_complete(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
					  OTF2_AttributeList *a, OTF2_CommRef team,
					  uint32_t creator, uint32_t gen)
{
	struct in *in = ud;
	(void)a;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	acc_task_complete(&in->acc, l->t, stamp(in, time), team, creator, gen);
	return OTF2_CALLBACK_SUCCESS;
}

/* A stack sample: the frames of its context above the thread's open calls (trace2otf2 places
 * them under the last region entered). */
static OTF2_CallbackCode ev_sample(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				   OTF2_AttributeList *a, OTF2_CallingContextRef ctx,
				   uint32_t unwind, OTF2_InterruptGeneratorRef gen)
{
	struct in *in = ud;
	(void)unwind;
	(void)gen;
	struct loc *l = loc_event(in, id);
	if (!l)
		return OTF2_CALLBACK_INTERRUPT;
	uint32_t path[256];
	unsigned n = 0;
	for (OTF2_CallingContextRef c = ctx; c != OTF2_UNDEFINED_CALLING_CONTEXT && n < 256;
	     c = in->ctxs[c].parent) {
		if (c >= in->nctxs || in->ctxs[c].region == UINT32_MAX)
			return damage(in,
				      "location %llu samples calling context %u, which is not "
				      "defined",
				      (unsigned long long)id, c);
		path[n++] = in->ctxs[c].region;
	}
	for (unsigned i = 0; i < n / 2; i++) {
		uint32_t x = path[i];
		path[i] = path[n - 1 - i];
		path[n - 1 - i] = x;
	}
	uint32_t skip = acc_depth(l->t) < n ? acc_depth(l->t) : n;
	uint64_t ns = in->sample_period;
	if (has_attr(a, in->attr_cpu))
		OTF2_AttributeList_GetUint64(a, (OTF2_AttributeRef)in->attr_cpu, &ns);
	acc_sample(&in->acc, l->t, stamp(in, time), ns, path + skip, n - skip);
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode ev_metric(OTF2_LocationRef id, OTF2_TimeStamp time, void *ud,
				   OTF2_AttributeList *a, OTF2_MetricRef metric, uint8_t n,
				   const OTF2_Type *types, const OTF2_MetricValue *values)
{
	(void)a;
	(void)metric;
	(void)n;
	(void)types;
	(void)values;
	return count(id, time, ud);
}

/* ---- markers ---- */

static OTF2_CallbackCode def_marker(void *ud, OTF2_MarkerRef self, const char *group,
				    const char *category, OTF2_MarkerSeverity severity)
{
	struct in *in = ud;
	(void)group;
	(void)severity;
	if (grow((void **)&in->marks, &in->marks_cap, in->mrefs.n, sizeof(*in->marks)))
		return oom(in);
	in->marks[in->mrefs.n] = !category				? MARK_OTHER
				 : !strcmp(category, "Lost events")	? MARK_LOST
				 : !strcmp(category, "Truncated trace") ? MARK_TRUNCATED
									: MARK_OTHER;
	return refs_add(&in->mrefs, self) ? oom(in) : OTF2_CALLBACK_SUCCESS;
}

static int starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* The markers trace2otf2 writes (convert.c): a loss "<n> events lost: <cause>" on its
 * thread; "Truncated trace" on a thread cut short, or on the first thread of a process that
 * was cut short or died.  Markers are not events: they count in no thread's events. */
static OTF2_CallbackCode on_marker(void *ud, OTF2_TimeStamp time, OTF2_TimeStamp duration,
				   OTF2_MarkerRef ref, OTF2_MarkerScope scope, uint64_t scope_ref,
				   const char *text)
{
	struct in *in = ud;
	(void)time;
	(void)duration;
	uint32_t m = NO_INDEX;
	for (size_t i = 0; i < in->mrefs.n && m == NO_INDEX; i++) /* a handful of kinds */
		if (in->mrefs.ref[i] == ref)
			m = (uint32_t)i;
	if (m == NO_INDEX)
		return damage(in, "a marker of kind %u, which is not defined", ref);
	if (in->marks[m] == MARK_OTHER || scope != OTF2_MARKER_SCOPE_LOCATION)
		return OTF2_CALLBACK_SUCCESS;
	uint32_t i = refs_find(&in->lrefs, scope_ref);
	if (i == NO_INDEX)
		return damage(in, "a marker on location %llu, which is not defined",
			      (unsigned long long)scope_ref);
	struct loc *l = &in->locs[i];
	if (!l->thread)
		return OTF2_CALLBACK_SUCCESS;
	if (in->marks[m] == MARK_LOST) {
		uint64_t n = strtoull(text ? text : "0", NULL, 10);
		l->t->lost += n;
		in->lost += n;
		return OTF2_CALLBACK_SUCCESS;
	}
	struct group *g = &in->groups[l->group];
	g->cut = 1;
	if (starts(text, "the thread's records end where"))
		in->truncated++;
	else if (starts(text, "the process ended without its end record"))
		g->killed = 1;
	return OTF2_CALLBACK_SUCCESS;
}

/* ---- reading ---- */

static int read_definitions(struct in *in, char *err, size_t errlen)
{
	OTF2_GlobalDefReader *gd = OTF2_Reader_GetGlobalDefReader(in->rd);
	if (!gd) {
		otf2_fail(in, err, errlen, "cannot read the definitions", OTF2_SUCCESS);
		return -1;
	}
	OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
	if (!cb) {
		OTF2_Reader_CloseGlobalDefReader(in->rd, gd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, def_clock);
	OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, def_string);
	OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, def_node);
	OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, def_group);
	OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, def_comm_group);
	OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, def_location);
	OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, def_region);
	OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, def_attribute);
	OTF2_GlobalDefReaderCallbacks_SetCallingContextCallback(cb, def_ctx);
	OTF2_GlobalDefReaderCallbacks_SetInterruptGeneratorCallback(cb, def_interrupt);
	OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(in->rd, gd, cb, in);
	uint64_t n = 0;
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Reader_ReadAllGlobalDefinitions(in->rd, gd, &n);
	OTF2_GlobalDefReaderCallbacks_Delete(cb);
	OTF2_Reader_CloseGlobalDefReader(in->rd, gd);
	if (rc != OTF2_SUCCESS || in->failed) {
		otf2_fail(in, err, errlen, "reading the definitions", rc);
		return -1;
	}
	if (link_definitions(in)) {
		snprintf(err, errlen, "%s: damaged archive: %s", in->anchor, in->msg);
		return -1;
	}
	return 0;
}

static int read_events(struct in *in, char *err, size_t errlen)
{
	OTF2_ErrorCode rc = OTF2_SUCCESS;
	for (size_t i = 0; i < in->lrefs.n && rc == OTF2_SUCCESS; i++) /* threads only */
		if (in->locs[i].thread)
			rc = OTF2_Reader_SelectLocation(in->rd, in->lrefs.ref[i]);
	if (rc != OTF2_SUCCESS) {
		otf2_fail(in, err, errlen, "selecting the locations", rc);
		return -1;
	}
	if ((rc = OTF2_Reader_OpenEvtFiles(in->rd)) != OTF2_SUCCESS) {
		otf2_fail(in, err, errlen, "opening the event files", rc);
		return -1;
	}
	/* Local definitions (trace2otf2's are empty) give libotf2 its id mappings. */
	int defs = OTF2_Reader_OpenDefFiles(in->rd) == OTF2_SUCCESS;
	otf2_msg[0] = '\0';
	for (size_t i = 0; i < in->lrefs.n; i++) {
		if (!in->locs[i].thread)
			continue;
		if (defs) {
			OTF2_DefReader *d = OTF2_Reader_GetDefReader(in->rd, in->lrefs.ref[i]);
			if (d) {
				uint64_t n = 0;
				rc = OTF2_Reader_ReadAllLocalDefinitions(in->rd, d, &n);
				OTF2_Reader_CloseDefReader(in->rd, d);
				if (rc != OTF2_SUCCESS) {
					otf2_fail(in, err, errlen,
						  "reading a location's definitions", rc);
					OTF2_Reader_CloseDefFiles(in->rd);
					goto close;
				}
			}
		}
		if (!OTF2_Reader_GetEvtReader(in->rd, in->lrefs.ref[i])) {
			char what[96];
			snprintf(what, sizeof(what), "opening the events of location %llu",
				 (unsigned long long)in->lrefs.ref[i]);
			otf2_fail(in, err, errlen, what, OTF2_SUCCESS);
			if (defs)
				OTF2_Reader_CloseDefFiles(in->rd);
			rc = OTF2_ERROR_INVALID;
			goto close;
		}
	}
	if (defs)
		OTF2_Reader_CloseDefFiles(in->rd);
	otf2_msg[0] = '\0';

	OTF2_GlobalEvtReader *ge = OTF2_Reader_GetGlobalEvtReader(in->rd);
	OTF2_GlobalEvtReaderCallbacks *cb = ge ? OTF2_GlobalEvtReaderCallbacks_New() : NULL;
	if (!cb) {
		otf2_fail(in, err, errlen, "reading the events", OTF2_SUCCESS);
		if (ge)
			OTF2_Reader_CloseGlobalEvtReader(in->rd, ge);
		rc = OTF2_ERROR_INVALID;
		goto close;
	}
	OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cb, ev_unknown);
	OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
	OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
	OTF2_GlobalEvtReaderCallbacks_SetProgramBeginCallback(cb, ev_program_begin);
	OTF2_GlobalEvtReaderCallbacks_SetProgramEndCallback(cb, ev_program_end);
	OTF2_GlobalEvtReaderCallbacks_SetThreadBeginCallback(cb, ev_thread_begin);
	OTF2_GlobalEvtReaderCallbacks_SetThreadEndCallback(cb, ev_thread);
	OTF2_GlobalEvtReaderCallbacks_SetThreadCreateCallback(cb, ev_thread);
	OTF2_GlobalEvtReaderCallbacks_SetThreadWaitCallback(cb, ev_thread);
	OTF2_GlobalEvtReaderCallbacks_SetThreadAcquireLockCallback(cb, ev_lock);
	OTF2_GlobalEvtReaderCallbacks_SetThreadReleaseLockCallback(cb, ev_lock);
	OTF2_GlobalEvtReaderCallbacks_SetThreadForkCallback(cb, ev_fork);
	OTF2_GlobalEvtReaderCallbacks_SetThreadJoinCallback(cb, ev_join);
	OTF2_GlobalEvtReaderCallbacks_SetThreadTeamBeginCallback(cb, ev_team);
	OTF2_GlobalEvtReaderCallbacks_SetThreadTeamEndCallback(cb, ev_team);
	OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCreateCallback(cb, ev_task_create);
	OTF2_GlobalEvtReaderCallbacks_SetThreadTaskSwitchCallback(cb, ev_task_switch);
	OTF2_GlobalEvtReaderCallbacks_SetThreadTaskCompleteCallback(cb, ev_task_complete);
	OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, ev_metric);
	OTF2_GlobalEvtReaderCallbacks_SetCallingContextSampleCallback(cb, ev_sample);
	OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cb, ev_mpi_p2p);
	OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cb, ev_mpi_p2p);
	OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, ev_mpi_ip2p);
	OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_mpi_ip2p);
	OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_mpi_request);
	OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_mpi_request);
	OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(cb, ev_mpi_request);
	OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, ev_mpi_request);
	OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, ev_mpi_coll_begin);
	OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_mpi_coll_end);
	rc = OTF2_Reader_RegisterGlobalEvtCallbacks(in->rd, ge, cb, in);
	uint64_t n = 0;
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Reader_ReadAllGlobalEvents(in->rd, ge, &n);
	OTF2_GlobalEvtReaderCallbacks_Delete(cb);
	OTF2_Reader_CloseGlobalEvtReader(in->rd, ge);
	if (rc != OTF2_SUCCESS || in->failed)
		otf2_fail(in, err, errlen, "reading the events", rc);
close:
	OTF2_Reader_CloseEvtFiles(in->rd);
	return rc != OTF2_SUCCESS || in->failed ? -1 : 0;
}

/* The marker file, <name>.marker beside <name>.otf2, exists only where the converter wrote
 * a marker. */
static int read_markers(struct in *in, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	size_t n = strlen(in->anchor);
	if (n < 5 || strcmp(in->anchor + n - 5, ".otf2") || n + 2 >= sizeof(path))
		return 0;
	snprintf(path, sizeof(path), "%.*s.marker", (int)(n - 5), in->anchor);
	uint64_t size;
	int fd = rd_file_open(path, &size, err, errlen);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1; /* a FIFO must not reach OTF2's fopen */
	close(fd);
	OTF2_MarkerReader *mr = OTF2_Reader_GetMarkerReader(in->rd);
	if (!mr) {
		otf2_fail(in, err, errlen, "opening the markers", OTF2_SUCCESS);
		return -1;
	}
	OTF2_MarkerReaderCallbacks *cb = OTF2_MarkerReaderCallbacks_New();
	if (!cb) {
		OTF2_Reader_CloseMarkerReader(in->rd, mr);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	OTF2_MarkerReaderCallbacks_SetDefMarkerCallback(cb, def_marker);
	OTF2_MarkerReaderCallbacks_SetMarkerCallback(cb, on_marker);
	OTF2_ErrorCode rc = OTF2_Reader_RegisterMarkerCallbacks(in->rd, mr, cb, in);
	uint64_t count = 0;
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Reader_ReadAllMarkers(in->rd, mr, &count);
	OTF2_MarkerReaderCallbacks_Delete(cb);
	OTF2_Reader_CloseMarkerReader(in->rd, mr);
	if (rc != OTF2_SUCCESS || in->failed) {
		otf2_fail(in, err, errlen, "reading the markers", rc);
		return -1;
	}
	return 0;
}

/* The processes: directory name, parent, program, as far as the archive tells them. */
static int name_processes(struct in *in)
{
	for (size_t i = 0; i < in->nprocs; i++) {
		struct group *g = &in->groups[i];
		char host[256], dir[400];
		snprintf(host, sizeof(host), "%s", host_of(in, g));
		sanitize(host);
		if (g->pid) {
			unsigned again = 0; /* an exec'ed image: <host>.<pid>.<n> */
			for (size_t j = 0; j < i; j++)
				again += in->groups[j].pid == g->pid &&
					 !strcmp(host_of(in, &in->groups[j]), host_of(in, g));
			if (again)
				snprintf(dir, sizeof(dir), "%s.%d.%u", host, g->pid, again);
			else
				snprintf(dir, sizeof(dir), "%s.%d", host, g->pid);
		} else {
			snprintf(dir, sizeof(dir), "%s", string_of(in, g->name));
		}
		if (!(g->dir = strdup(dir)))
			return -1;
		uint32_t c = g->creator == OTF2_UNDEFINED_LOCATION_GROUP
				 ? NO_INDEX
				 : refs_find(&in->grefs, g->creator);
		if (c != NO_INDEX && c < i) {
			const struct group *p = &in->groups[c];
			g->ppid = p->pid == g->pid ? p->ppid : p->pid; /* exec'ed : forked */
			/* A forked child runs its parent's image (and has no ProgramBegin). */
			if (!g->exe && p->exe && p->pid != g->pid && !(g->exe = strdup(p->exe)))
				return -1;
		}
	}
	return 0;
}

/* "<program> [<pid>]" without " [<pid>]": a process's program where it has no ProgramBegin. */
static void group_program(const struct in *in, const struct group *g, char *buf, size_t len)
{
	const char *name = string_of(in, g->name);
	const char *open = g->pid ? strrchr(name, '[') : NULL;
	size_t n = open && open > name ? (size_t)(open - name - 1) : strlen(name);
	snprintf(buf, len, "%.*s", (int)n, name);
}

static int build(struct in *in, const char *path, struct rp_run *run)
{
	int rc = -1;
	char resolved[PATH_MAX];
	run->trace = strdup(realpath(path, resolved) ? resolved : path);
	struct acc_region_info *ri = calloc(in->rrefs.n + 1, sizeof(*ri));
	struct acc_process_info *pi = calloc(in->grefs.n + 1, sizeof(*pi));
	char(*programs)[256] = calloc(in->grefs.n + 1, sizeof(*programs));
	if (!run->trace || !ri || !pi || !programs)
		goto out;
	for (size_t i = 0; i < in->rrefs.n; i++) {
		const struct region *r = &in->regions[i];
		ri[i].name = string_of(in, r->name);
		const char *desc = string_of(in, r->desc), *pattern = "Kokkos::parallel_";
		if (r->paradigm == OTF2_PARADIGM_KOKKOS && desc &&
		    !strncmp(desc, pattern, strlen(pattern)))
			ri[i].type = desc + strlen(pattern);
		int function = r->function == FN_YES || (r->function == FN_MAYBE && r->began);
		enum cv_role role;
		int known = rp_otf2_role(r->role, function, &role);
		ri[i].role = known ? cv_role_name(role) : "other";
		ri[i].kind = rp_otf2_kind(r->paradigm, role);
	}
	for (size_t i = 0; i < in->nprocs; i++) {
		const struct group *g = &in->groups[i];
		if (g->exe)
			snprintf(programs[i], sizeof(programs[i]), "%s", acc_base_name(g->exe));
		else
			group_program(in, g, programs[i], sizeof(programs[i]));
		pi[i] = (struct acc_process_info){g->dir, host_of(in, g), programs[i],
						  g->pid, g->ppid,	  !g->killed};
	}
	if (acc_build(&in->acc, ri, (uint32_t)in->rrefs.n, pi, in->nprocs, run) ||
	    acc_build_memory(&in->acc, pi, in->nprocs,
			     in->clock ? ns_of(in, in->offset) : in->first_ns, run))
		goto out;

	struct rp_meta *m = &run->meta;
	const struct group *first = &in->groups[0];
	const char *exe = first->exe ? first->exe : programs[0];
	m->executable = json_utf8_dup(exe);
	m->program = json_utf8_dup(acc_base_name(exe));
	m->host = json_utf8_dup(host_of(in, first));
	m->args = calloc(first->nargs + 1, sizeof(*m->args));
	m->hosts = calloc(in->grefs.n + 1, sizeof(*m->hosts));
	if (!m->executable || !m->program || !m->host || !m->args || !m->hosts)
		goto out;
	for (uint32_t j = 1; j < first->nargs; j++)
		if (!(m->args[m->nargs++] = json_utf8_dup(first->args[j])))
			goto out;
	for (size_t i = 0; i < in->nprocs; i++) { /* in the order of first use */
		const char *h = host_of(in, &in->groups[i]);
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(host_of(in, &in->groups[j]), h);
		if (!seen && !(m->hosts[m->nhosts++] = json_utf8_dup(h)))
			goto out;
	}
	m->processes = in->nprocs;
	m->threads = in->nthreads;
	m->ranks = in->mpi_ranks ? in->mpi_ranks : 1;
	m->start_unix_ns = in->clock && in->realtime != OTF2_UNDEFINED_TIMESTAMP ? in->realtime : 0;
	m->start = acc_iso_date(m->start_unix_ns);
	if (in->clock && in->length) /* trace2otf2: last - first + 1 */
		m->duration_ns = ns_of(in, in->length - 1);
	else if (in->seen)
		m->duration_ns = in->last_ns - in->first_ns;
	m->git_revision = in->opt->no_git ? NULL : acc_git_revision(exe);
	m->clock = strdup("unknown");
	if (!m->start || !m->clock)
		goto out;

	struct rp_totals *t = &run->totals;
	for (size_t i = 0; i < run->nprocs; i++)
		t->events += run->procs[i].events;
	t->lost = in->lost;
	t->truncated = in->truncated;
	t->unclosed = in->unclosed;
	for (size_t i = 0; i < in->nprocs; i++)
		t->cut_processes += in->groups[i].cut;
	t->anomalies = in->acc.anomalies;
	t->damaged = in->damaged;
	rc = 0;
out:
	free(ri);
	free(pi);
	free(programs);
	return rc;
}

static void in_free(struct in *in)
{
	for (size_t i = 0; i < in->srefs.n; i++)
		free(in->strings[i]);
	free(in->strings);
	for (size_t i = 0; i < in->grefs.n; i++) {
		struct group *g = &in->groups[i];
		free(g->exe);
		for (uint32_t j = 0; j < g->nargs; j++)
			free(g->args[j]);
		free(g->args);
		free(g->dir);
	}
	free(in->groups);
	for (size_t i = 0; i < in->lrefs.n; i++)
		acc_thread_free(in->locs[i].t);
	free(in->locs);
	free(in->nodes);
	free(in->regions);
	free(in->attrs);
	free(in->ctxs);
	free(in->marks);
	struct refs *all[] = {&in->srefs, &in->nrefs, &in->grefs, &in->lrefs,
			      &in->rrefs, &in->arefs, &in->mrefs};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		refs_free(all[i]);
	acc_free(&in->acc);
}

/*
 * OTF2 opens the archive's files itself (NAME.def, NAME/ *.def and *.evt beside the anchor
 * NAME.otf2), with a plain fopen that waits for ever on a FIFO and reads a device without
 * end: each must be a regular file before OTF2 is let in.  Returns 0, or -1 with err.
 */
static int check_archive_files(const char *anchor, char *err, size_t errlen)
{
	char base[PATH_MAX], path[PATH_MAX + 300];
	struct stat st;
	size_t n = strlen(anchor);
	if (n < 5 || n - 5 >= sizeof(base))
		return 0;
	snprintf(base, sizeof(base), "%.*s", (int)(n - 5), anchor);
	snprintf(path, sizeof(path), "%s.def", base);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is %s, not a regular file", path,
			 rd_file_kind(st.st_mode));
		return -1;
	}
	DIR *d = opendir(base);
	if (!d)
		return 0; /* OTF2 says what is missing */
	int rc = 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "%s is %s, not a regular file", path,
				 rd_file_kind(st.st_mode));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

int rp_profile_otf2(const char *anchor, const struct rp_options *opt, struct rp_run *run, char *err,
		    size_t errlen)
{
	memset(run, 0, sizeof(*run));
	uint64_t size;
	int fd = rd_file_open(anchor, &size, err, errlen);
	if (fd < 0 || check_archive_files(anchor, err, errlen)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	struct in in = {.anchor = anchor, .opt = opt};
	OTF2_ErrorCallback previous = OTF2_Error_RegisterCallback(on_otf2_error, NULL);
	otf2_msg[0] = '\0';
	int rc = -1;
	in.rd = OTF2_Reader_Open(anchor);
	if (!in.rd) {
		snprintf(err, errlen, "%s: not a readable OTF2 archive%s%s", anchor,
			 otf2_msg[0] ? ": " : "", otf2_msg);
		goto out;
	}
	OTF2_ErrorCode e = OTF2_Reader_SetSerialCollectiveCallbacks(in.rd);
	if (e != OTF2_SUCCESS) {
		otf2_fail(&in, err, errlen, "opening the archive", e);
		goto out;
	}
	if (read_definitions(&in, err, errlen))
		goto out;
	if (acc_init(&in.acc, in.nprocs)) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < in.lrefs.n; i++) {
		struct loc *l = &in.locs[i];
		if (l->thread && !(l->t = acc_thread_new(&in.acc, l->group, l->index))) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	otf2_msg[0] = '\0';
	if (read_events(&in, err, errlen))
		goto out;
	otf2_msg[0] = '\0';
	if (read_markers(&in, err, errlen))
		goto out;
	/* The threads end: every location's events are in. */
	for (size_t i = 0; i < in.lrefs.n; i++) {
		struct loc *l = &in.locs[i];
		if (!l->thread)
			continue;
		if (l->nread != l->ndef && opt->warn) {
			char msg[PATH_MAX + 160];
			snprintf(msg, sizeof(msg),
				 "%s: location %llu has %llu events, its definition says %llu",
				 anchor, (unsigned long long)in.lrefs.ref[i],
				 (unsigned long long)l->nread, (unsigned long long)l->ndef);
			opt->warn(opt->wctx, msg);
			in.damaged = 1;
		}
		struct acc_thread *t = l->t;
		l->t = NULL;
		if (acc_thread_end(&in.acc, t, string_of(&in, l->name))) {
			snprintf(err, errlen, "out of memory");
			goto out;
		}
	}
	if (name_processes(&in) || build(&in, anchor, run)) {
		snprintf(err, errlen, "%s: out of memory", anchor);
		rp_run_free(run);
		goto out;
	}
	rc = 0;
out:
	if (in.rd)
		OTF2_Reader_Close(in.rd);
	OTF2_Error_RegisterCallback(previous, NULL);
	in_free(&in);
	return rc;
}
