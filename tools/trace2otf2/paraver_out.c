// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_out.c - the Paraver backend, following what Extrae's merger writes: NAME.prv (header,
 * then state, event and communication records in time order, times in ns from the trace's start),
 * NAME.pcf (states, event types, value labels) and NAME.row (object names).
 *
 *   One application; one Paraver task per process, on the node of its host; one Paraver
 *   thread per traced thread, in the order the threads appear.  CPUs are unknown: records
 *   name CPU 0 and each node has one CPU.
 *
 *   States (Extrae's numbers, so Paraver's standard configurations apply): Not created
 *   before a thread's first and after its last event; Running; Idle for an OpenMP worker
 *   between its teams; Synchronization in barriers, joins, condition and semaphore waits,
 *   taskwaits; Blocked while waiting for a mutex, rwlock, critical section or OpenMP lock;
 *   Scheduling and Fork/Join in pthread_create; Memory transfer in Kokkos deep copies.
 *
 *   GPU as Extrae shows it: each GPU stream is one more thread of its process's task
 *   (after the process's threads), Idle between its operations, Running in a kernel,
 *   Memory transfer in a copy or set, with 63100000 (the device operation: 1 kernel, 3
 *   copy, 34 set), 63000006 (the kernel), 63000001 (bytes), 63000011/63000012 (blocks per
 *   grid, threads per block).  API calls on the calling thread as 63000000 (CUDA) or
 *   63500000 (HIP) valued by Extrae's numbers for the calls Extrae knows, in states of
 *   Extrae's: Allocating memory, Freeing memory, Memory transfer, Synchronization.
 *
 *   Events: each region's Enter writes its type and value, its Leave the value of the
 *   enclosing region of the same type, or 0 ("End").  Extrae's types where Extrae has one
 *   (60000001 parallel, 60000018 outlined function, 60000019 user function, 60000020 thread
 *   function, 61000000 pthread call with Extrae's values, 40000001 application); our own
 *   numbers otherwise (table `kinds` below).  Function-like values are small ids (the
 *   region's id + 1) labelled "function [file:line]" in the .pcf, as Paraver's labels are
 *   32-bit.  Counters go out as events without labels, markers as events whose values name
 *   their text.
 *
 *   Communications: tag 1 from a pthread_create to the new thread's begin; tag 2 from the
 *   end of an OpenMP task to the start of a task that depended on it; tag 3 from a GPU API
 *   call to the start of what the device did for it (Extrae's host-to-stream links; size:
 *   the bytes of a copy).  MPI messages with
 *   their MPI tag and size, from the start of the sending call (MPI_Send, MPI_Isend...)
 *   to the completion of the receive (the end of MPI_Recv, the wait or test that
 *   completed an MPI_Irecv), on the ranks' clocks put on rank 0's: each send matched to
 *   its receive by communicator, the two ranks and tag, in the order they were sent and
 *   posted (MPI's non-overtaking rule).  The halves are kept until the end (24 bytes
 *   each per message).
 *
 * Records are gathered as fixed-size binary records; every RUN_RECORDS they are sorted and
 * spilled to a scratch file beside the output, and finish() merges the sorted runs into the
 * .prv.  Memory: one run, a read buffer per run, and per-thread stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paraver.h"

void prv_fail(struct out *o, const char *what, int err)
{
	if (!o->error[0])
		snprintf(o->error, sizeof(o->error), "%s: %s", what, strerror(err));
}

struct pending *prv_pmap_slot(struct pmap *m, uint64_t key, int create)
{
	if (create && (m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct pending *s = calloc(cap, sizeof(*s));
		if (!s)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slot[i].used)
				continue;
			size_t j = (m->slot[i].key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
			while (s[j].used)
				j = (j + 1) & (cap - 1);
			s[j] = m->slot[i];
		}
		free(m->slot);
		m->slot = s;
		m->cap = cap;
	}
	if (!m->cap)
		return NULL;
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (m->cap - 1);
	while (m->slot[j].used && m->slot[j].key != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->slot[j].used) {
		if (!create)
			return NULL;
		m->slot[j].used = 1;
		m->slot[j].key = key;
		m->n++;
	}
	return &m->slot[j];
}

static uint32_t loc_index(struct cv *cv, struct cv_loc *l)
{
	return (uint32_t)(l - cv->locs);
}

static struct ploc *ploc(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	uint32_t i = loc_index(cv, l);
	return i < o->nlocs ? &o->locs[i] : NULL;
}

static uint8_t current_state(const struct ploc *p)
{
	if (p->paused)
		return ST_TRACING_DISABLED;
	for (uint32_t i = p->depth; i-- > 0;)
		if (p->stack[i].state != ST_INHERIT)
			return p->stack[i].state;
	return p->base;
}

/* Called after every change of p's stack or base: closes the state written so far when the
 * thread's state changed. */
void prv_restate(struct out *o, uint32_t li, struct ploc *p, uint64_t t)
{
	uint8_t s = current_state(p);
	if (s == p->cur)
		return;
	if (t > p->since)
		prv_put_state(o, li, p->since, t, p->cur, p->since_cpu);
	p->cur = s;
	p->since = t;
	p->since_cpu = p->cpu;
}

/* Time t of a record of p: no earlier than p's floor, so that a call that began and ended
 * at one time stamp can end 1 ns after it began without a later record of p preceding it
 * (Paraver leaves calls of no duration out of every profile). */
static uint64_t at(const struct ploc *p, uint64_t t)
{
	return t < p->floor ? p->floor : t;
}

/* Notes time t on p (t from at()); the first time begins the thread's life. */
static void touch(struct ploc *p, uint64_t t)
{
	if (!p->begun) {
		p->begun = 1;
		p->first = p->since = t;
		p->since_cpu = p->cpu;
		p->base = p->cur = ST_RUNNING;
	}
	if (t > p->last)
		p->last = t;
}

enum kind prv_region_kind(const struct cv *cv, const struct cv_region *r)
{
	switch (r->paradigm) {
	case CV_PARADIGM_PTHREAD:
		return K_PTHREAD;
	case CV_PARADIGM_PROCESS:
		return K_PROCESS;
	case CV_PARADIGM_MPI:
		return K_MPI;
	case CV_PARADIGM_USER:
		return r->role == CV_ROLE_USER ? K_USER : K_THREAD_FN;
	case CV_PARADIGM_KOKKOS:
		switch (r->role) {
		case CV_ROLE_PARALLEL:
			return K_KOKKOS_KERNEL;
		case CV_ROLE_BARRIER:
			return K_KOKKOS_FENCE;
		case CV_ROLE_PHASE:
			return K_KOKKOS_SECTION;
		case CV_ROLE_DATA_TRANSFER:
			return K_KOKKOS_COPY;
		case CV_ROLE_ALLOCATE:
		case CV_ROLE_DEALLOCATE:
			return K_KOKKOS_MEMORY;
		default:
			return K_KOKKOS_REGION;
		}
	case CV_PARADIGM_CUDA:
	case CV_PARADIGM_HIP:
		return r->role == CV_ROLE_KERNEL	? K_GPU_KERNEL
		       : r->role == CV_ROLE_GPU_MEMORY	? K_GPU_DEVICE
		       : r->paradigm == CV_PARADIGM_HIP ? K_HIP
							: K_CUDA;
	case CV_PARADIGM_OPENMP:
		break;
	}
	switch (r->role) {
	case CV_ROLE_PARALLEL:
		return K_OMP_OUTLINED;
	case CV_ROLE_LOOP:
	case CV_ROLE_SECTIONS:
	case CV_ROLE_SINGLE:
	case CV_ROLE_WORKSHARE:
	case CV_ROLE_MASTER:
		return K_OMP_WORKSHARE;
	case CV_ROLE_BARRIER:
		return K_OMP_SYNC;
	case CV_ROLE_IMPLICIT_BARRIER:
		return K_OMP_JOIN;
	case CV_ROLE_CRITICAL:
		return K_OMP_CRITICAL;
	case CV_ROLE_ATOMIC:
	case CV_ROLE_ORDERED:
		return K_OMP_LOCK;
	case CV_ROLE_TASK:
		return K_OMP_TASK;
	case CV_ROLE_TASK_CREATE:
		return K_OMP_TASK_CREATE;
	case CV_ROLE_TASK_WAIT:
		return strstr(cv->strings[r->name], "taskgroup") ? K_OMP_TASKGROUP
								 : K_OMP_TASK_WAIT;
	default:
		return K_OMP_OTHER;
	}
}

/* The state a region puts its thread in (MPI calls: as Extrae's merger). */
static uint8_t region_state(const struct cv *cv, const struct cv_region *r, enum kind k, int pvalue)
{
	const char *name = cv->strings[r->name];
	uint32_t type;
	uint8_t state;
	switch (k) {
	case K_PTHREAD:
		switch (pvalue) {
		case 2:
			return ST_FORK_JOIN;
		case 3:
		case 12:
		case 13:
		case 14:
			return ST_SYNC;
		case 5:
		case 6:
		case 8:
			return ST_BLOCKED;
		}
		return ST_INHERIT;
	case K_OMP_OUTLINED:
	case K_OMP_TASK:
	case K_KOKKOS_KERNEL:
	case K_GPU_KERNEL:
		return ST_RUNNING;
	case K_GPU_DEVICE:
		return ST_MEMORY_TRANSFER;
	case K_CUDA:
	case K_HIP: /* as Extrae's states of the calls */
		switch (r->role) {
		case CV_ROLE_ALLOCATE:
			return ST_ALLOC;
		case CV_ROLE_DEALLOCATE:
			return ST_FREE;
		case CV_ROLE_DATA_TRANSFER:
			return ST_MEMORY_TRANSFER;
		case CV_ROLE_GPU_SYNC:
			return ST_SYNC;
		default:
			return ST_INHERIT;
		}
	case K_OMP_SYNC:
	case K_OMP_JOIN:
	case K_OMP_TASK_WAIT:
	case K_OMP_TASKGROUP:
	case K_KOKKOS_FENCE:
		return ST_SYNC;
	case K_OMP_LOCK:
	case K_OMP_CRITICAL:
		return ST_BLOCKED; /* until the lock is acquired */
	case K_OMP_OTHER:
		/* omp_set_lock and omp_set_nest_lock end when they hold the lock */
		return strstr(name, "set_")	      ? ST_BLOCKED
		       : strstr(name, "depend(sink)") ? ST_SYNC
						      : ST_INHERIT;
	case K_KOKKOS_COPY:
		return ST_MEMORY_TRANSFER;
	case K_KOKKOS_MEMORY:
		return r->role == CV_ROLE_ALLOCATE ? ST_ALLOC : ST_FREE;
	case K_MPI:
		prv_mpi_call(name, &type, &state);
		return state;
	default:
		return ST_INHERIT;
	}
}

/* What region r writes (made at its first use). */
const struct rinfo *prv_region_info(struct cv *cv, uint32_t r)
{
	struct out *o = cv->out;
	struct rinfo *ri = &o->spare;
	if (r >= o->nregions) {
		uint32_t n = cv->nregions > r ? cv->nregions : r + 1;
		struct rinfo *a = realloc(o->regions, n * sizeof(*a));
		if (a) {
			memset(a + o->nregions, 0, (n - o->nregions) * sizeof(*a));
			o->regions = a;
			o->nregions = n;
		}
	}
	if (r < o->nregions)
		ri = &o->regions[r];
	if (!ri->known || ri == &o->spare) {
		const struct cv_region *reg = &cv->regions[r];
		const char *name = cv->strings[reg->name];
		enum kind k = prv_region_kind(cv, reg);
		uint8_t state;
		ri->kind = (uint8_t)k;
		ri->type = prv_kinds[k].type;
		ri->value = 0;
		if (k == K_PTHREAD) {
			ri->value = (uint32_t)prv_pthread_value(cv->strings[reg->canonical]);
			if (!ri->value)
				ri->type = 0; /* a call Extrae has no number for */
		} else if (k == K_CUDA || k == K_HIP || k == K_GPU_DEVICE) {
			ri->value = (uint32_t)prv_gpu_value(cv, r, k);
		} else if (k == K_MPI) {
			int v = prv_mpi_call(name, &ri->type, &state);
			ri->value = v ? (uint32_t)v : MPI_VALUE_OTHER + r;
		} else {
			ri->value = prv_omp_value(reg, k);
		}
		ri->state = region_state(cv, reg, k, (int)ri->value);
		ri->known = 1;
	}
	return ri;
}

/* Remembers that events of `type` carry string sid + 1, for the .pcf. */
void prv_note_label(struct out *o, uint32_t type, uint32_t sid)
{
	struct pending *e = prv_pmap_slot(&o->label_set, (uint64_t)type << 32 | sid, 1);
	if (!e || e->done)
		return;
	e->done = 1;
	if (o->nlabels == o->labels_cap) {
		size_t cap = o->labels_cap ? 2 * o->labels_cap : 64;
		struct label *a = realloc(o->labels, cap * sizeof(*a));
		if (!a)
			return;
		o->labels = a;
		o->labels_cap = cap;
	}
	o->labels[o->nlabels++] = (struct label){type, sid, o->process};
}

/* Grows the array *a of *n words to at least need, zeroed. */
static int grow(uint32_t **a, uint32_t *n, size_t need)
{
	if (need <= *n)
		return 0;
	size_t cap = need > 2 * (size_t)*n ? need : 2 * (size_t)*n;
	uint32_t *b = realloc(*a, cap * sizeof(*b));
	if (!b)
		return -1;
	memset(b + *n, 0, (cap - *n) * sizeof(*b));
	*a = b;
	*n = (uint32_t)cap;
	return 0;
}

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	uint32_t i = loc_index(cv, l);
	if (l->process != o->process || !o->began) {
		/* A process's tasks and requests are its own: keys of another process, whose
		 * task ids or request handles may collide with this one's, are forgotten. */
		struct pmap *maps[] = {&o->tasks, &o->irecvs, &o->isends};
		for (int k = 0; k < 3; k++) {
			free(maps[k]->slot);
			*maps[k] = (struct pmap){0};
		}
		o->process = l->process;
		o->began = 1;
	}
	if (grow(&o->first_thread, &o->nfirst_thread, (size_t)l->process + 1) ||
	    grow(&o->host_cpus, &o->nhost_cpus,
		 (size_t)(l->process < cv->nprocs ? cv->procs[l->process].host : 0) + 1) ||
	    grow(&o->host_cpus, &o->nhost_cpus, cv->nhosts)) {
		prv_fail(o, "out of memory", ENOMEM);
		return -1;
	}
	if (i >= o->nlocs) {
		size_t n = i + 1 > 2 * o->nlocs ? i + 1 : 2 * o->nlocs;
		struct ploc *a = realloc(o->locs, n * sizeof(*a));
		if (!a) {
			prv_fail(o, "out of memory", ENOMEM);
			return -1;
		}
		memset(a + o->nlocs, 0, (n - o->nlocs) * sizeof(*a));
		o->locs = a;
		o->nlocs = n;
	}
	return 0;
}

static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	if (p && p->begun && !p->ended) {
		p->depth = 0;
		p->base = ST_NOT_CREATED;
		prv_restate(o, loc_index(cv, l), p, p->last);
		p->ended = 1;
	}
	return o->error[0] ? -1 : 0;
}

static void event(struct out *o, uint32_t li, uint64_t t, uint32_t type, uint64_t value)
{
	prv_put_event(o, li, t, type, value);
}

const char *prv_base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* A native event's type: 44000000 + a hash of its name below one million, as Extrae numbers
 * them; a type another name already has is passed over. */
static uint32_t native_type(struct out *o, const struct cv *cv, uint32_t name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)cv->strings[name]; *c; c++)
		h = (h ^ *c) * 16777619u;
	for (uint32_t k = 0;; k++) {
		uint32_t type = TY_PAPI_NATIVE + (h + k) % 1000000u;
		uint32_t owner = name;
		for (uint32_t s = 0; s < o->npapi_types && owner == name; s++)
			for (unsigned i = 0; i < cv->papis[s].n; i++)
				if (o->papi_types[s][i] == type)
					owner = cv->papis[s].names[i];
		if (owner == name)
			return type;
	}
}

/* The event types of PAPI set s (made at its first use). */
const uint32_t *prv_papi_types(struct cv *cv, uint32_t s)
{
	struct out *o = cv->out;
	while (o->npapi_types <= s) {
		uint32_t n = o->npapi_types;
		uint32_t(*a)[16] = realloc(o->papi_types, (n + 1) * sizeof(*a));
		if (!a) {
			prv_fail(o, "out of memory", ENOMEM);
			return NULL;
		}
		o->papi_types = a;
		memset(a[n], 0, sizeof(a[n]));
		const struct cv_papi *ps = &cv->papis[n];
		for (unsigned i = 0; i < ps->n; i++) {
			uint32_t code = ps->codes[i];
			a[n][i] = (code & 0xc0000000u) == 0x80000000u /* PAPI_PRESET_MASK */
				      ? TY_PAPI_PRESET + (code & 0xffffu)
				      : native_type(o, cv, ps->names[i]);
		}
		o->npapi_types = n + 1;
	}
	return o->papi_types[s];
}

/* The label "LINE (file)" of call site s, as Extrae writes caller lines: string id. */
static uint32_t line_label(struct cv *cv, uint32_t s)
{
	struct out *o = cv->out;
	if (s >= o->nscl_line) {
		uint32_t n = s + 1 > 2 * o->nscl_line ? s + 1 : 2 * o->nscl_line;
		uint32_t *a = realloc(o->scl_line, n * sizeof(*a));
		if (!a)
			return CV_NO_STRING;
		memset(a + o->nscl_line, 0, (n - o->nscl_line) * sizeof(*a));
		o->scl_line = a;
		o->nscl_line = n;
	}
	if (!o->scl_line[s]) {
		const struct cv_scl *c = &cv->scls[s];
		const char *file = cv->strings[c->file];
		char text[512];
		if (c->line && *file)
			snprintf(text, sizeof(text), "%u (%s)", c->line, prv_base_name(file));
		else
			snprintf(text, sizeof(text), "unknown line (%s)", cv->strings[c->function]);
		o->scl_line[s] = cv_string(cv, text) + 1;
	}
	return o->scl_line[s] - 1;
}

static void caller(struct cv *cv, uint32_t li, uint64_t t, uint32_t depth, uint32_t s)
{
	struct out *o = cv->out;
	uint32_t fn = cv->scls[s].function, line = line_label(cv, s);
	prv_note_label(o, TY_CALLER + depth, fn);
	event(o, li, t, TY_CALLER + depth, (uint64_t)fn + 1);
	if (line != CV_NO_STRING) {
		prv_note_label(o, TY_CALLER_LINE + depth, line);
		event(o, li, t, TY_CALLER_LINE + depth, (uint64_t)line + 1);
	}
	if (depth > o->max_caller)
		o->max_caller = depth;
}

/*
 * A stack sample, as Extrae writes its samples: at each depth (0: the function it was taken
 * in, 1: its caller...; the innermost MAX_SAMPLE frames) the function and the line as events
 * of types TY_SAMPLE + depth and TY_SAMPLE_LINE + depth.  It changes no state.
 */
static void sample(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t ctx, uint64_t cpu_ns)
{
	(void)cpu_ns;
	struct out *o = cv->out;
	uint32_t li = loc_index(cv, l);
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = at(p, t);
	touch(p, t);
	uint32_t d = 0;
	for (uint32_t c = ctx + 1; c && d < MAX_SAMPLE; c = cv->ctxs[c - 1].parent, d++) {
		const struct cv_ctx *x = &cv->ctxs[c - 1];
		uint32_t fn = cv->regions[x->region].name;
		prv_note_label(o, TY_SAMPLE + d, fn);
		event(o, li, t, TY_SAMPLE + d, (uint64_t)fn + 1);
		uint32_t line = x->scl != UINT32_MAX ? line_label(cv, x->scl) : CV_NO_STRING;
		if (line != CV_NO_STRING) {
			prv_note_label(o, TY_SAMPLE_LINE + d, line);
			event(o, li, t, TY_SAMPLE_LINE + d, (uint64_t)line + 1);
		}
	}
	if (d > o->samples)
		o->samples = d;
}

/*
 * The PAPI reading as events of the counters' types, each the delta since the thread's
 * previous reading (Extrae's convention), with the set's number when it changes; on an
 * Enter, the call site as caller events, one function and one line per depth.
 */
static void decorate(struct cv *cv, struct cv_loc *l, struct ploc *p, uint64_t t, int is_enter)
{
	struct out *o = cv->out;
	uint32_t li = loc_index(cv, l);
	cv_papi_seen(cv, l);
	if (cv->cur_papi) {
		const struct cv_papi *ps = &cv->papis[cv->cur_papi - 1];
		const uint32_t *types = prv_papi_types(cv, cv->cur_papi - 1);
		if (types && p->papi != cv->cur_papi) {
			event(o, li, t, TY_PAPI_SET, cv->cur_papi);
			memset(p->papi_last, 0, sizeof(p->papi_last));
			p->papi = cv->cur_papi;
		}
		for (unsigned i = 0; types && i < ps->n; i++) {
			uint64_t v = cv->cur_values[i], last = p->papi_last[i];
			uint64_t d = v >= last ? v - last : v; /* a counter that was reset */
			event(o, li, t, types[i], d > INT64_MAX ? INT64_MAX : d);
			p->papi_last[i] = v;
		}
		cv->cur_papi = 0;
	}
	if (!is_enter)
		return;
	if (cv->cur_ctx) {
		uint32_t depth = 1;
		for (uint32_t c = cv->cur_ctx; c && depth <= MAX_CALLER; c = cv->ctxs[c - 1].parent)
			caller(cv, li, t, depth++, cv->ctxs[c - 1].scl);
	} else if (cv->cur_scl) {
		caller(cv, li, t, 1, cv->cur_scl - 1);
	}
	cv->cur_scl = cv->cur_ctx = 0;
}

/* A new frame on p's stack, NULL when there is no memory. */
static struct frame *push(struct out *o, struct ploc *p)
{
	if (p->depth == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 16;
		struct frame *a = realloc(p->stack, cap * sizeof(*a));
		if (!a) {
			prv_fail(o, "out of memory", ENOMEM);
			return NULL;
		}
		p->stack = a;
		p->cap = cap;
	}
	struct frame *f = &p->stack[p->depth++];
	memset(f, 0, sizeof(*f));
	return f;
}

/* Enters region at t; returns the time written (t, or p's floor). */
static uint64_t enter_frame(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			    uint64_t task)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	uint32_t li = loc_index(cv, l);
	if (!p)
		return t;
	t = at(p, t);
	touch(p, t);
	decorate(cv, l, p, t, 1);
	const struct rinfo *ri = prv_region_info(cv, region);
	struct frame *f = push(o, p);
	if (!f)
		return t;
	f->type = ri->type;
	f->value = ri->value ? ri->value : (uint64_t)region + 1;
	f->state = ri->state;
	f->task = ri->kind == K_OMP_TASK ? task : 0;
	f->begin = t;
	if (f->type)
		event(o, li, t, f->type, f->value);
	prv_restate(o, li, p, t);
	return t;
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	t = enter_frame(cv, l, t, region, 0);
	struct ploc *p = ploc(cv, l);
	if (p && cv->regions[region].paradigm == CV_PARADIGM_MPI)
		p->mpi_enter = t;
}

/* A task that depended on others: a communication from each one's end. */
static void task_depends(struct cv *cv, struct cv_loc *l, uint64_t t, const char *list)
{
	struct out *o = cv->out;
	while (*list) {
		char *end;
		uint64_t id = strtoull(list, &end, 10);
		if (end == list)
			break;
		struct pending *e = prv_pmap_slot(&o->tasks, (uint64_t)l->process << 40 ^ id, 0);
		if (e)
			prv_put_comm_cpus(o, e->loc, e->cpu, e->time, loc_index(cv, l),
					  o->locs[loc_index(cv, l)].cpu, t, t, 0, 2);
		list = *end == ',' ? end + 1 : end;
	}
}

/* Attributes as events of thread li at t (prv_attr_types). */
static void attr_events(struct cv *cv, uint32_t li, uint64_t t, const struct cv_attr *attrs,
			unsigned n)
{
	struct out *o = cv->out;
	for (unsigned i = 0; i < n; i++) {
		enum cv_attr_id id = attrs[i].id;
		uint32_t type = prv_attr_types[id].type ? prv_attr_types[id].type : TY_ATTR + id;
		uint64_t v = attrs[i].value;
		if (!prv_attr_types[id].label)
			continue;
		o->attrs_used |= UINT64_C(1) << id;
		if (prv_attr_types[id].labelled) {
			prv_note_label(o, type, (uint32_t)v);
			event(o, li, t, type, v + 1);
		} else {
			/* a result is signed; other values above INT64_MAX show as the maximum */
			event(o, li, t, type,
			      id == CV_ATTR_GPU_RESULT || v <= INT64_MAX ? v : INT64_MAX);
		}
	}
}

static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	struct out *o = cv->out;
	uint64_t task = 0;
	const char *depends = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (attrs[i].id == CV_ATTR_TASK_ID)
			task = attrs[i].value;
		else if (attrs[i].id == CV_ATTR_TASK_DEPENDS)
			depends = cv->strings[attrs[i].value];
	}
	t = enter_frame(cv, l, t, region, task);
	struct ploc *p = ploc(cv, l);
	if (!p || !p->depth)
		return;
	uint32_t li = loc_index(cv, l);
	uint64_t id = p->stack[p->depth - 1].task, key = (uint64_t)l->process << 40;
	if (depends && id) { /* once: a task resumed after a switch enters again */
		struct pending *e = prv_pmap_slot(&o->tasks, key ^ id ^ 1ull << 63, 1);
		if (e && !e->done) {
			e->done = 1;
			task_depends(cv, l, t, depends);
		}
	}
	if (task && prv_region_info(cv, region)->kind == K_OMP_TASK_CREATE) {
		struct pending *e = prv_pmap_slot(&o->tasks, key ^ task ^ 1ull << 62, 1);
		if (e && !e->half) { /* its creation, until the task starts */
			e->half = 1;
			e->loc = li;
			e->time = t;
			e->cpu = p->cpu;
		}
	} else if (id) { /* a communication from its creation to its first start */
		struct pending *e = prv_pmap_slot(&o->tasks, key ^ id ^ 1ull << 62, 0);
		if (e && e->half == 1 && !e->done) {
			e->done = 1;
			prv_put_comm_cpus(o, e->loc, e->cpu, e->time, li, p->cpu, t, t, 0,
					  TAG_TASK);
		}
	}
	attr_events(cv, li, t, attrs, n);
}

/* An OpenMP fork ends: its frame (stack index i) goes, and the parallel event closes. */
static void join_frame(struct out *o, uint32_t li, struct ploc *p, uint32_t i, uint64_t t)
{
	memmove(&p->stack[i], &p->stack[i + 1], (p->depth - i - 1) * sizeof(*p->stack));
	p->depth--;
	event(o, li, t, TY_OMP_PARALLEL, 0);
	prv_restate(o, li, p, t);
}

/* Leaves the top frame at t, or 1 ns after it began if it began at t. */
static uint64_t leave_frame(struct cv *cv, struct cv_loc *l, struct ploc *p, uint64_t t)
{
	struct out *o = cv->out;
	uint32_t li = loc_index(cv, l);
	t = at(p, t);
	/* A fork whose join is missing ends with the region around it. */
	while (p->depth && p->stack[p->depth - 1].fork)
		join_frame(o, li, p, p->depth - 1, t);
	if (!p->depth)
		return t;
	uint32_t i = p->depth - 1;
	struct frame f = p->stack[i];
	if (t <= f.begin)
		t = f.begin + 1;
	p->floor = t;
	touch(p, t);
	decorate(cv, l, p, t, 0);
	p->depth = i;
	if (f.type) {
		uint64_t outer = 0;
		for (uint32_t j = i; j-- > 0;)
			if (p->stack[j].type == f.type) {
				outer = p->stack[j].value;
				break;
			}
		event(o, li, t, f.type, outer);
	}
	if (f.task) {
		struct pending *e =
		    prv_pmap_slot(&o->tasks, (uint64_t)l->process << 40 ^ f.task, 1);
		if (e) {
			e->loc = li;
			e->time = t;
			e->cpu = p->cpu;
		}
	}
	prv_restate(o, li, p, t);
	return t;
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	(void)closed; /* the converter's marker says it */
	(void)region; /* the converter leaves in stack order: the region is the top frame */
	struct ploc *p = ploc(cv, l);
	if (p && p->depth)
		leave_frame(cv, l, p, t);
}

static void leave_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	(void)region;
	struct ploc *p = ploc(cv, l);
	if (!p || !p->depth)
		return;
	t = leave_frame(cv, l, p, t);
	attr_events(cv, loc_index(cv, l), t, attrs, n);
}

/* Thread creation: a communication from the creating call to the thread's begin (the
 * runtime records the creation first; either order is taken). */
static void create_half(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, int send)
{
	struct out *o = cv->out;
	uint64_t key = (uint64_t)l->process << 32 | (seq & 0xffffffffu);
	struct pending *e = prv_pmap_slot(&o->creates, key, 1);
	uint32_t li = loc_index(cv, l);
	if (!e || e->done)
		return;
	uint32_t cpu = o->locs[li].cpu;
	if (!e->half) {
		e->half = send ? 1 : 2;
		e->loc = li;
		e->time = t;
		e->cpu = cpu;
		return;
	}
	if (e->half == (send ? 1 : 2))
		return; /* the same side twice: damage */
	e->done = 1;
	uint32_t sl = send ? li : e->loc, rl = send ? e->loc : li;
	uint32_t sc = send ? cpu : e->cpu, rc = send ? e->cpu : cpu;
	uint64_t st = send ? t : e->time, rt = send ? e->time : t;
	prv_put_comm_cpus(o, sl, sc, st, rl, rc, rt, rt, 0, 1);
}

/* p (may be NULL) has a record at t: the time it is written at. */
static uint64_t mark(struct ploc *p, uint64_t t)
{
	if (!p)
		return t;
	t = at(p, t);
	touch(p, t);
	return t;
}

static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	create_half(cv, l, mark(ploc(cv, l), t), seq, 1);
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	(void)tid;
	create_half(cv, l, mark(ploc(cv, l), t), seq, 0);
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)seq;
	mark(ploc(cv, l), t);
}

static void thread_wait(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	thread_end(cv, l, t, seq);
}

/* A stream's operation: its region's events and state (the stream idles between them),
 * Extrae's device events, and a communication from the call that asked for it. */
static void gpu_activity(struct cv *cv, struct cv_loc *l, const struct cv_gpu_op *op)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	uint32_t li = loc_index(cv, l);
	if (!p)
		return;
	int fresh = !p->begun, kernel = op->kind == LT_GPU_ACT_KERNEL;
	uint64_t start = mark(p, op->start), end;
	if (fresh)
		p->base = p->cur = ST_IDLE;
	enter_frame(cv, l, start, op->region, 0);
	if (kernel) {
		event(o, li, start, TY_GPU_OP, GPU_OP_KERNEL);
		event(o, li, start, TY_GPU_BLOCKS, op->blocks);
		event(o, li, start, TY_GPU_THREADS, op->threads);
	} else {
		event(o, li, start, TY_GPU_BYTES, op->bytes);
	}
	for (unsigned i = 0; i < op->nattrs; i++)
		if (op->attrs[i].id == CV_ATTR_GPU_CORRELATION)
			attr_events(cv, li, start, &op->attrs[i], 1);
	if (op->host_loc != UINT32_MAX)
		prv_put_comm(o, op->host_loc, op->host_ns, li, start, start, op->bytes, TAG_GPU);
	end = p->depth ? leave_frame(cv, l, p, op->end) : op->end;
	if (kernel) {
		event(o, li, end, TY_GPU_OP, 0);
		event(o, li, end, TY_GPU_BLOCKS, 0);
		event(o, li, end, TY_GPU_THREADS, 0);
	} else {
		event(o, li, end, TY_GPU_BYTES, 0);
	}
}

static void lock(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm paradigm,
		 int acquire, uint32_t id, uint32_t order)
{
	(void)paradigm, (void)id, (void)order;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = mark(p, t);
	/* A critical section or lock region waits until the lock is held, then runs. */
	struct frame *f = p->depth ? &p->stack[p->depth - 1] : NULL;
	if (acquire && f && f->state == ST_BLOCKED) {
		f->state = ST_RUNNING;
		if (f->type == TY_OMP_CRITICAL) { /* Lock, then Locked status: both last */
			if (t <= f->begin)
				t = p->floor = f->begin + 1;
			touch(p, t);
			f->value = OMP_LOCKED;
			event(cv->out, loc_index(cv, l), t, f->type, f->value);
		}
		prv_restate(cv->out, loc_index(cv, l), p, t);
	}
}

/* An OpenMP fork, at the runtime call's entry (GOMP_parallel, __kmpc_fork_call): the
 * parallel event opens and the master schedules (Scheduling and Fork/Join) until it runs
 * its part of the team's work, and again from its end to the join, as Extrae shows it. */
static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	(void)requested;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = mark(p, t);
	p->forking++;
	struct frame *f = push(cv->out, p);
	if (!f)
		return;
	f->type = TY_OMP_PARALLEL;
	f->value = 3; /* Extrae's PAR_REGION_VAL: a parallel region */
	f->state = ST_FORK_JOIN;
	f->fork = 1;
	f->begin = t;
	event(cv->out, loc_index(cv, l), t, TY_OMP_PARALLEL, f->value);
	prv_restate(cv->out, loc_index(cv, l), p, t);
}

static void thread_join(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = mark(p, t);
	if (p->forking)
		p->forking--;
	for (uint32_t i = p->depth; i-- > 0;)
		if (p->stack[i].fork) {
			if (t <= p->stack[i].begin)
				t = p->stack[i].begin + 1;
			p->floor = t;
			touch(p, t);
			join_frame(cv->out, loc_index(cv, l), p, i, t);
			return;
		}
}

static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)team;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = mark(p, t);
	p->base = ST_RUNNING;
	prv_restate(cv->out, loc_index(cv, l), p, t);
}

/* A worker that leaves its team waits, idle, for the next one. */
static void team_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)team;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	t = mark(p, t);
	if (!p->forking)
		p->base = ST_IDLE;
	prv_restate(cv->out, loc_index(cv, l), p, t);
}

/* Where the records of location l go: a process's metrics are events of its first thread, as
 * Extrae's are (a thread of their own would be a thread in no state, or in one that every
 * analysis would count). */
static struct cv_loc *shown_on(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	if (l->kind != CV_LOC_METRIC)
		return l;
	uint32_t *first = &o->first_thread[l->process];
	if (!*first) {
		const struct cv_process *pr = &cv->procs[l->process];
		for (size_t i = pr->first_loc; i < pr->first_loc + pr->nlocs && i < cv->nlocs; i++)
			if (cv->locs[i].kind == CV_LOC_THREAD) {
				*first = (uint32_t)i + 1;
				break;
			}
	}
	if (*first)
		return &cv->locs[*first - 1];
	struct ploc *p = ploc(cv, l);
	if (p)
		p->kept = 1; /* no thread to show them on: it stays a thread of its own */
	return l;
}

/* Thread l runs on CPU `cpu` of its node from t on: Extrae's Executing CPU event, and the
 * CPU field of its records from then on. */
static void cpu_change(struct cv *cv, struct cv_loc *l, struct ploc *p, uint64_t t, uint64_t cpu)
{
	struct out *o = cv->out;
	uint32_t li = loc_index(cv, l), host = cv->procs[l->process].host;
	if (cpu >= UINT32_MAX - 1)
		return;
	t = mark(p, t);
	if (t > p->since) { /* the state goes on, on the other CPU */
		prv_put_state(o, li, p->since, t, p->cur, p->since_cpu);
		p->since = t;
	}
	p->cpu = (uint32_t)cpu + 1;
	p->since_cpu = p->cpu;
	if (o->host_cpus[host] < p->cpu)
		o->host_cpus[host] = p->cpu;
	event(o, li, t, TY_CPU, p->cpu);
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	struct out *o = cv->out;
	if (!o->cpu_metric && !strcmp(cv->strings[cv->metrics[m].name], "CPU"))
		o->cpu_metric = m + 1;
	l = shown_on(cv, l);
	struct ploc *p = ploc(cv, l);
	if (p && m + 1 == o->cpu_metric && l->kind == CV_LOC_THREAD) {
		cpu_change(cv, l, p, t, raw);
		return;
	}
	int64_t v = (int64_t)raw;
	if (cv->metrics[m].is_double) { /* in thousandths: Paraver values are integers */
		double d;
		memcpy(&d, &raw, sizeof(d));
		d *= 1000.0;
		v = d >= 9.2e18	   ? INT64_MAX
		    : d <= -9.2e18 ? INT64_MIN
				   : (int64_t)(d + (d < 0 ? -0.5 : 0.5));
	}
	event(o, loc_index(cv, l), t, TY_METRIC + m, (uint64_t)v);
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	struct out *o = cv->out;
	l = shown_on(cv, l);
	struct ploc *p = ploc(cv, l);
	if (p && !p->ended && l->kind != CV_LOC_METRIC)
		t = mark(p, t);
	uint32_t sid = cv_string(cv, text);
	prv_note_label(o, TY_MARKER + (uint32_t)kind, sid);
	event(o, loc_index(cv, l), t, TY_MARKER + (uint32_t)kind, (uint64_t)sid + 1);
}

/* A pause of the recording is Extrae's state Tracing Disabled, until the resume. */
static void measurement(struct cv *cv, struct cv_loc *l, uint64_t t, int on)
{
	struct ploc *p = ploc(cv, l);
	if (!p || p->ended)
		return;
	t = mark(p, t);
	p->paused = !on;
	prv_restate(cv->out, loc_index(cv, l), p, t);
}

static void program_begin(struct cv *cv, struct cv_loc *l, uint64_t t, const struct rd_process *pr)
{
	(void)pr;
	t = mark(ploc(cv, l), t);
	event(cv->out, loc_index(cv, l), t, TY_APPLICATION, 1);
	event(cv->out, loc_index(cv, l), t, TY_PID, (uint64_t)cv->procs[l->process].pid);
}

static void program_end(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	t = mark(ploc(cv, l), t);
	event(cv->out, loc_index(cv, l), t, TY_APPLICATION, 0);
}

/* The tracer's own end: Extrae's "Flushing Traces", its event and its state (I/O), so that
 * the program's useful time ends where the program's did. */
static void tracer_end(struct cv *cv, struct cv_loc *l, uint64_t begin, uint64_t end)
{
	struct ploc *p = ploc(cv, l);
	if (!p || p->ended)
		return;
	uint32_t li = loc_index(cv, l);
	begin = mark(p, begin);
	event(cv->out, li, begin, TY_FLUSH, 1);
	p->base = ST_IO;
	prv_restate(cv->out, li, p, begin);
	end = mark(p, end > begin ? end : begin + 1);
	event(cv->out, li, end, TY_FLUSH, 0);
}

static void add_half(struct out *o, struct msg **a, size_t *n, size_t *cap, struct msg m)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		struct msg *b = realloc(*a, c * sizeof(*b));
		if (!b) {
			prv_fail(o, "out of memory", ENOMEM);
			return;
		}
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = m;
}

static void mpi_p2p(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
		    uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	int self = cv->procs[l->process].mpi_rank;
	if (!p || self < 0)
		return;
	t = mark(p, t);
	uint32_t other = cv_world_rank(cv, comm, peer, (uint32_t)self);
	uint64_t key = (uint64_t)l->process << 40 ^ request;
	struct msg m = {cv->comms[comm].id, 0, 0, tag, loc_index(cv, l), 0, t, bytes, p->cpu};
	switch (kind) {
	case LT_MPI_SEND:
	case LT_MPI_ISEND:
		if (other == LT_MPI_NO_RANK)
			break;
		m.from = (uint32_t)self;
		m.to = other;
		m.order = m.time = p->mpi_enter;
		add_half(o, &o->sends, &o->nsends, &o->sends_cap, m);
		if (kind == LT_MPI_ISEND) {
			struct pending *e = prv_pmap_slot(&o->isends, key, 1);
			if (e)
				e->time = o->nsends; /* its index + 1 */
		}
		break;
	case LT_MPI_CANCELLED: {
		/* A cancelled send sent nothing: out of its channel (a receive was never
		 * posted, or was cancelled: its half was never added). */
		struct pending *e = prv_pmap_slot(&o->isends, key, 0);
		if (e && e->time && e->time <= o->nsends)
			o->sends[e->time - 1].comm = UINT64_MAX;
		break;
	}
	case LT_MPI_IRECV_POSTED: {
		struct pending *e = prv_pmap_slot(&o->irecvs, key, 1);
		if (e)
			e->time = t;
		break;
	}
	case LT_MPI_RECV:
	case LT_MPI_IRECV_DONE: {
		if (other == LT_MPI_NO_RANK)
			break;
		struct pending *e =
		    kind == LT_MPI_IRECV_DONE ? prv_pmap_slot(&o->irecvs, key, 0) : NULL;
		m.from = other;
		m.to = (uint32_t)self;
		m.order = e ? e->time : p->mpi_enter;
		add_half(o, &o->recvs, &o->nrecvs, &o->recvs_cap, m);
		break;
	}
	}
}

/* A collective's sizes, communicator and root, as Extrae's global-operation events at the
 * start of its call. */
static void mpi_coll_end(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned op, uint32_t comm,
			 uint32_t root, uint64_t sent, uint64_t received)
{
	(void)t, (void)op;
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	int self = cv->procs[l->process].mpi_rank;
	if (!p || self < 0)
		return;
	uint32_t li = loc_index(cv, l);
	event(o, li, p->mpi_enter, TY_MPI_SENT, sent > INT64_MAX ? INT64_MAX : sent);
	event(o, li, p->mpi_enter, TY_MPI_RECEIVED, received > INT64_MAX ? INT64_MAX : received);
	event(o, li, p->mpi_enter, TY_MPI_COMM, (uint64_t)comm + 1);
	if (root != LT_MPI_NO_RANK &&
	    cv_world_rank(cv, comm, root, (uint32_t)self) == (uint32_t)self)
		event(o, li, p->mpi_enter, TY_MPI_ROOT, 1);
	o->mpi_colls = 1;
}

/* The communicators, after the header (`c:1:<id>:<tasks>:<task>...`, ids as the
 * communicator events of mpi_coll_end give them): COMM_WORLD and those whose members are
 * known, each member the task of its COMM_WORLD rank. */
static void write_communicators(const struct cv *cv, FILE *f, const struct numbering *n)
{
	uint32_t *task_of = calloc(cv->mpi_world ? cv->mpi_world : 1, sizeof(*task_of));
	uint32_t ncomms = 0;
	for (uint32_t k = 0; task_of && k < n->ntasks; k++) {
		int r = cv->procs[n->order[k]].mpi_rank;
		if (r >= 0 && (uint32_t)r < cv->mpi_world)
			task_of[r] = k + 1;
	}
	for (uint32_t c = 0; task_of && c < cv->ncomms; c++)
		ncomms += cv->comms[c].id == LT_MPI_COMM_WORLD || cv->comms[c].ranks;
	fprintf(f, ",%u\n", ncomms);
	for (uint32_t c = 0; task_of && c < cv->ncomms; c++) {
		const struct cv_comm *cm = &cv->comms[c];
		int world = cm->id == LT_MPI_COMM_WORLD;
		if (!world && !cm->ranks)
			continue;
		uint32_t size = world ? cv->mpi_world : cm->size;
		fprintf(f, "c:1:%u:%u", c + 1, size);
		for (uint32_t i = 0; i < size; i++) {
			uint32_t r = world ? i : cm->ranks[i];
			fprintf(f, ":%u", r < cv->mpi_world && task_of[r] ? task_of[r] : 1);
		}
		fputc('\n', f);
	}
	free(task_of);
}

/* NAME.prv (header and the records of the sorted runs of src), .pcf and .row; -1 with
 * o->error set on a failure. */
int prv_write_outputs(struct cv *cv, struct out *o, const struct prv_source *src, size_t nsrc)
{
	struct numbering n = {0};
	if (prv_number_objects(cv, &n))
		prv_fail(o, "out of memory", ENOMEM);
	if (!o->error[0]) {
		FILE *f = prv_open_output(o, ".prv");
		if (f) {
			uint64_t t0 = cv->stats.first_ns, end = prv_end(cv) - t0;
			time_t real =
			    (time_t)((t0 + (cv->nprocs ? cv->procs[0].real_minus_mono : 0)) /
				     1000000000u);
			struct tm tm;
			localtime_r(&real, &tm);
			fprintf(f, "#Paraver (%02d/%02d/%04d at %02d:%02d):%" PRIu64 "_ns:%u(",
				tm.tm_mday, tm.tm_mon + 1, tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
				end ? end : 1, cv->nhosts);
			for (uint32_t h = 0; h < cv->nhosts; h++)
				fprintf(f, "%s%u", h ? "," : "", prv_host_cpus(cv, &n, h));
			fprintf(f, "):1:%u(", n.ntasks);
			for (uint32_t k = 0; k < n.ntasks; k++) {
				uint32_t i = n.order[k];
				fprintf(f, "%s%u:%u", k ? "," : "", n.nthreads_of[i],
					cv->procs[i].host + 1);
			}
			fputc(')', f);
			if (cv->mpi_world)
				write_communicators(cv, f, &n);
			else
				fputc('\n', f);
			struct writer w = {.f = f, .cv = cv, .n = &n, .t0 = t0};
			prv_write_sources(o, &w, src, nsrc);
			prv_close_output(o, f, ".prv");
		}
		if ((f = prv_open_output(o, ".pcf"))) {
			prv_write_pcf(cv, f);
			prv_close_output(o, f, ".pcf");
		}
		if ((f = prv_open_output(o, ".row"))) {
			prv_write_row(cv, f, &n);
			prv_close_output(o, f, ".row");
		}
	}
	prv_free_numbering(&n);
	return o->error[0] ? -1 : 0;
}

/* Where each sorted run of o's scratch file ends (a copy); NULL when memory ran out. */
uint64_t *prv_run_ends(const struct out *o)
{
	uint64_t *run_end = malloc((o->nruns ? o->nruns : 1) * sizeof(*run_end));
	if (run_end && o->nruns)
		memcpy(run_end, o->ends, o->nruns * sizeof(*run_end));
	return run_end;
}

/* Removes what was written of the outputs: no half-written trace is left behind. */
void prv_remove_outputs(const struct out *o)
{
	static const char *const exts[] = {".prv", ".pcf", ".row"};
	for (int i = 0; i < 3; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s%s", o->name, exts[i]);
		unlink(path);
	}
}

static int finish(struct cv *cv)
{
	struct out *o = cv->out;
	if (cv->par)
		return prv_finish_parallel(cv);
	prv_match_messages(o);
	prv_close_states(cv);
	/* The run ends, before the last run is spilled. */
	prv_spill(o);
	if (fflush(o->scratch) != 0)
		prv_fail(o, "writing the scratch file", errno);
	uint64_t *run_end = o->error[0] ? NULL : prv_run_ends(o);
	if (!o->error[0] && !run_end)
		prv_fail(o, "out of memory", ENOMEM);
	if (!o->error[0]) {
		struct prv_source src = {fileno(o->scratch), o->nruns, run_end};
		prv_write_outputs(cv, o, &src, 1);
	}
	free(run_end);
	cv->stats.events = o->records; /* Paraver records, before events of one time join */
	if (o->error[0]) {
		prv_remove_outputs(o);
		return -1;
	}
	return 0;
}

static int prv_open(struct cv *cv, const char *name, char *err, size_t errlen)
{
	struct out *o = calloc(1, sizeof(*o));
	char path[4096];
	snprintf(path, sizeof(path), "%s.prv.sort-XXXXXX", name);
	int fd = -1;
	if (o && (o->name = strdup(name)) && (o->run = malloc(RUN_RECORDS * sizeof(*o->run))) &&
	    (fd = mkstemp(path)) >= 0 && (o->scratch = fdopen(fd, "w+"))) {
		/* Gone with the process, whatever happens; a parallel conversion's rank 0 reads
		 * the others' by name first. */
		if (!cv->par || !(o->scratch_path = strdup(path)))
			unlink(path);
		cv->out = o;
		return 0;
	}
	snprintf(err, errlen, "%s: %s", fd < 0 && o && o->run ? path : name,
		 fd < 0 && o && o->run ? strerror(errno) : "out of memory");
	if (fd >= 0) {
		unlink(path);
		close(fd);
	}
	if (o) {
		free(o->name);
		free(o->run);
		free(o);
	}
	return -1;
}

static const char *prv_error(struct cv *cv)
{
	struct out *o = cv->out;
	return o && o->error[0] ? o->error : NULL;
}

static void prv_free(struct cv *cv)
{
	struct out *o = cv->out;
	if (!o)
		return;
	for (size_t i = 0; i < o->nlocs; i++)
		free(o->locs[i].stack);
	free(o->locs);
	free(o->run);
	free(o->ends);
	free(o->regions);
	free(o->host_cpus);
	free(o->first_thread);
	free(o->creates.slot);
	free(o->tasks.slot);
	free(o->irecvs.slot);
	free(o->isends.slot);
	free(o->sends);
	free(o->recvs);
	free(o->label_set.slot);
	free(o->labels);
	free(o->scl_line);
	free(o->papi_types);
	if (o->scratch)
		fclose(o->scratch);
	if (o->scratch_path)
		unlink(o->scratch_path);
	free(o->scratch_path);
	free(o->name);
	free(o);
	cv->out = NULL;
}

static const struct cv_ops prv_ops = {
    .name = "paraver",
    .location_begin = location_begin,
    .location_end = location_end,
    .enter = enter,
    .leave = leave,
    .thread_create = thread_create,
    .thread_begin = thread_begin,
    .thread_end = thread_end,
    .thread_wait = thread_wait,
    .lock = lock,
    .thread_fork = thread_fork,
    .thread_join = thread_join,
    .team_begin = team_begin,
    .team_end = team_end,
    .enter_attrs = enter_attrs,
    .metric = metric,
    .marker = marker,
    .measurement = measurement,
    .program_begin = program_begin,
    .program_end = program_end,
    .tracer_end = tracer_end,
    .mpi_p2p = mpi_p2p,
    .mpi_coll_end = mpi_coll_end,
    .leave_attrs = leave_attrs,
    .gpu_activity = gpu_activity,
    .sample = sample,
    .finish = finish,
};

static const char *const prv_exts[] = {".prv", ".pcf", ".row", NULL};

const struct cv_backend cv_prv_backend = {
    .name = "paraver",
    .description = "a Paraver trace: OUT.prv, OUT.pcf and OUT.row",
    .output = CV_OUTPUT_FILES,
    .exts = prv_exts,
    .written = ".prv (.pcf, .row)",
    .what = "Paraver trace",
    .needs = CV_NEEDS_SOURCE_LINES,
    .parallel = 1,
    .ops = &prv_ops,
    .open = prv_open,
    .error = prv_error,
    .free = prv_free,
};
