// SPDX-License-Identifier: BSD-3-Clause
/*
 * otf2_out.c - the OTF2 backend, following what Score-P writes:
 *
 *   system tree "machine" -> one node per host -> one PROCESS location group per process
 *   (created by the process that forked or exec'ed it), one CPU_THREAD location per thread
 *   with id (thread << 32) | process; a thread contingent per process (a COMM_GROUP over the
 *   COMM_LOCATIONS group of all threads) for ThreadCreate/Begin/End/Wait, the sequence
 *   number being the created thread's index; ThreadAcquire/ReleaseLock for mutexes,
 *   rwlocks and the mutex of condition waits; annotation counters as asynchronous metric
 *   classes recorded on the thread's location; markers (annotations, losses, truncation,
 *   regions closed by the converter) in the archive's marker file.
 *
 *   MPI as Score-P writes it: a COMM_LOCATIONS group "MPI" of every rank's main thread in
 *   COMM_WORLD rank order; per communicator a COMM_GROUP of world ranks (COMM_SELF: a
 *   COMM_SELF group) and a Comm; messages as MpiSend/MpiIsend(Complete)/MpiIrecvRequest/
 *   MpiIrecv/MpiRecv whose peer is a rank of the communicator; collectives as
 *   MpiCollectiveBegin/End inside their call's region.
 *
 *   GPU as Score-P writes CUDA: API calls as regions of paradigm CUDA or HIP on the
 *   calling thread, their arguments as attributes of the Enter, their result as attributes
 *   of the Leave; one ACCELERATOR location group per device context ("CUDA[0] context
 *   1"), created by its process, with one ACCELERATOR_STREAM location per stream ("CUDA[0:1]
 *   stream 7"); kernels as regions on their stream; copies and sets as regions there too,
 *   a copy between host and device also as RmaGet (host to device) or RmaPut (device to
 *   host) at its start and RmaOpCompleteBlocking at its end, matched by the correlation
 *   id, over an RMA window per process whose communicator's group (paradigm CUDA, over a
 *   COMM_LOCATIONS group of every location) holds the process's threads, then its streams.
 *
 * Memory: OTF2 keeps a location's events in memory until its writer closes; the memory
 * callbacks below refuse more than EVT_CHUNKS chunks per buffer, which makes OTF2 flush to
 * disk, so a long thread costs EVT_CHUNKS x EVT_CHUNK bytes however many events it has.
 * post_flush is NULL: otherwise every flush would insert a BufferFlush event.
 */
#define _GNU_SOURCE
#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otf2_out.h"

/* The chunks of one OTF2 buffer, for the memory callbacks. */
struct chunks {
	void **mem;
	unsigned n, cap, limit;
};

static void *chunk_alloc(void *ud, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
			 uint64_t size)
{
	(void)ud;
	(void)loc;
	struct chunks *c = *per_buffer;
	if (!c) {
		if (!(c = calloc(1, sizeof(*c))))
			return NULL;
		/* Definition and marker buffers are small and are never made to flush. */
		c->limit = type == OTF2_FILETYPE_EVENTS ? EVT_CHUNKS : ~0u;
		*per_buffer = c;
	}
	if (c->n == c->limit)
		return NULL; /* OTF2 flushes this buffer, frees all, and asks again */
	if (c->n == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 4;
		void **a = realloc(c->mem, cap * sizeof(*a));
		if (!a)
			return NULL;
		c->mem = a;
		c->cap = cap;
	}
	void *m = malloc(size);
	if (m)
		c->mem[c->n++] = m;
	return m;
}

static void chunk_free_all(void *ud, OTF2_FileType type, OTF2_LocationRef loc, void **per_buffer,
			   bool final)
{
	(void)ud;
	(void)type;
	(void)loc;
	struct chunks *c = *per_buffer;
	if (!c)
		return;
	for (unsigned i = 0; i < c->n; i++)
		free(c->mem[i]);
	c->n = 0;
	if (final) {
		free(c->mem);
		free(c);
		*per_buffer = NULL;
	}
}

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType type, OTF2_LocationRef loc, void *cb,
				bool final)
{
	(void)ud;
	(void)type;
	(void)loc;
	(void)cb;
	(void) final;
	return OTF2_FLUSH;
}

void otf2_check(struct cv *cv, OTF2_ErrorCode rc, const char *what)
{
	struct out *o = cv->out;
	if (rc != OTF2_SUCCESS && o->error == OTF2_SUCCESS) {
		o->error = rc;
		o->error_what = what;
		cv->out_failed = 1;
	}
}

/*
 * OTF2 reports failures inside its own calls (a full disk while a buffer is flushed) only
 * through this callback, not always through the return value of the call we made: the
 * first one is kept, and makes the conversion fail.
 */
static char otf2_first_error[512];

static OTF2_ErrorCode on_otf2_error(void *ud, const char *file, uint64_t line, const char *fn,
				    OTF2_ErrorCode code, const char *fmt, va_list va)
{
	struct out *o = ud;
	(void)file;
	(void)line;
	(void)fn;
	if (code != OTF2_SUCCESS && code != OTF2_WARNING && o && o->error == OTF2_SUCCESS) {
		o->error = code;
		vsnprintf(otf2_first_error, sizeof(otf2_first_error), fmt, va);
		o->error_what = otf2_first_error;
		/* No more events: OTF2 goes on writing from a buffer whose flush failed, and
		 * crashes (a full disk, a file size limit). */
		if (o->cv)
			o->cv->out_failed = 1;
	}
	return code;
}

/* Grows *a (of *cap entries) to hold index i, the new entries zero.  0, or -1. */
static int grow_to(uint32_t **a, uint32_t *cap, uint32_t i)
{
	if (i < *cap)
		return 0;
	uint32_t c = *cap ? *cap : 16;
	while (c <= i)
		c *= 2;
	uint32_t *n = realloc(*a, c * sizeof(*n));
	if (!n)
		return -1;
	memset(n + *cap, 0, (c - *cap) * sizeof(*n));
	*a = n;
	*cap = c;
	return 0;
}

/* The class of `what` as the events name it (otf2_out.h), assigned at its first use; 0 and
 * a failure kept (otf2_check) when out of memory. */
static OTF2_MetricRef otf2_class(struct cv *cv, uint32_t what)
{
	struct out *o = cv->out;
	int papi = (what & CLASS_PAPI) != 0;
	uint32_t i = what & ~CLASS_PAPI;
	uint32_t **of = papi ? &o->class_of_papi : &o->class_of_metric;
	uint32_t *cap = papi ? &o->of_papi_cap : &o->of_metric_cap;
	if (grow_to(of, cap, i)) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MetricClass");
		return 0;
	}
	if (!(*of)[i]) {
		if (grow_to(&o->class_what, &o->classes_cap, o->nclasses)) {
			otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MetricClass");
			return 0;
		}
		o->class_what[o->nclasses++] = what;
		(*of)[i] = o->nclasses;
	}
	return (OTF2_MetricRef)((*of)[i] - 1);
}

static int otf2_open(struct cv *cv, const char *dir, char *err, size_t errlen)
{
	struct out *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->cv = cv;
	OTF2_Error_RegisterCallback(on_otf2_error, o);
	o->ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, EVT_CHUNK, DEF_CHUNK,
				  OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!o->ar) {
		snprintf(err, errlen, "%s: OTF2 cannot create an archive there", dir);
		free(o);
		return -1;
	}
	static const OTF2_FlushCallbacks flush = {pre_flush, NULL};
	static const OTF2_MemoryCallbacks memory = {chunk_alloc, chunk_free_all};
	OTF2_ErrorCode rc = OTF2_Archive_SetFlushCallbacks(o->ar, &flush, NULL);
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Archive_SetMemoryCallbacks(o->ar, &memory, NULL);
	if (rc == OTF2_SUCCESS && cv->par)
		rc = cv->par->otf2_collectives(cv->par, o->ar) ? OTF2_ERROR_COLLECTIVE_CALLBACK
							       : OTF2_SUCCESS;
	else if (rc == OTF2_SUCCESS)
		rc = OTF2_Archive_SetSerialCollectiveCallbacks(o->ar);
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Archive_SetCreator(o->ar, "libtrace trace2otf2");
	if (rc == OTF2_SUCCESS)
		rc = OTF2_Archive_OpenEvtFiles(o->ar);
	if (rc != OTF2_SUCCESS) {
		snprintf(err, errlen, "%s/traces: %s", dir, OTF2_Error_GetDescription(rc));
		OTF2_Archive_Close(o->ar);
		free(o);
		return -1;
	}
	o->attrs = OTF2_AttributeList_New();
	cv->out = o;
	return 0;
}

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	if (l->out)
		return 0;
	l->out = OTF2_Archive_GetEvtWriter(o->ar, l->id);
	if (!l->out) {
		otf2_check(cv, OTF2_ERROR_INVALID_CALL, "opening an event writer");
		return -1;
	}
	return 0;
}

static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	OTF2_EvtWriter *w = l->out;
	if (!w)
		return 0;
	uint64_t n = 0;
	OTF2_EvtWriter_GetNumberOfEvents(w, &n);
	l->nevents = n;
	cv->stats.events += n;
	otf2_check(cv, OTF2_Archive_CloseEvtWriter(o->ar, w), "closing an event writer");
	l->out = NULL;
	size_t i = (size_t)(l - cv->locs);
	if (i < o->ncs) {
		free(o->cs[i].v);
		o->cs[i] = (struct cstack){0};
	}
	return o->error != OTF2_SUCCESS ? -1 : 0;
}

/*
 * What the record being converted adds to its first Enter or Leave (convert.h, cv.cur_*):
 * the PAPI reading as a Metric event of its synchronous class just before, at the same
 * time; on an Enter, the call site (and the call path) as attributes, added to the list
 * the Enter is written with.  Returns that list, or NULL when it stays empty.
 */
static OTF2_AttributeList *decorate(struct cv *cv, struct cv_loc *l, uint64_t t, int is_enter)
{
	struct out *o = cv->out;
	cv_papi_seen(cv, l);
	if (cv->cur_papi) {
		const struct cv_papi *ps = &cv->papis[cv->cur_papi - 1];
		OTF2_Type types[16];
		OTF2_MetricValue v[16];
		for (unsigned i = 0; i < ps->n; i++) {
			types[i] = OTF2_TYPE_UINT64;
			v[i].unsigned_int = cv->cur_values[i];
		}
		otf2_check(cv,
			   OTF2_EvtWriter_Metric(l->out, NULL, t,
						 otf2_class(cv, CLASS_PAPI | (cv->cur_papi - 1)),
						 (uint8_t)ps->n, types, v),
			   "Metric");
		cv->cur_papi = 0;
	}
	/* A call site without file and line is no SourceCodeLocation (otf2_defs.c). */
	uint32_t site = cv->cur_scl ? cv->scls[cv->cur_scl - 1].site : CV_NO_SITE;
	if (!is_enter || !o->attrs || (site == CV_NO_SITE && !cv->cur_ctx))
		return NULL;
	if (site != CV_NO_SITE)
		OTF2_AttributeList_AddSourceCodeLocationRef(o->attrs, ATTR_CALLSITE, site);
	if (cv->cur_ctx)
		OTF2_AttributeList_AddCallingContextRef(o->attrs, ATTR_CALLPATH, cv->cur_ctx - 1);
	cv->cur_scl = cv->cur_ctx = 0;
	return o->attrs;
}

static struct cstack *cstack_of(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	size_t i = (size_t)(l - cv->locs);
	if (i >= o->ncs) {
		size_t n = i + 16;
		struct cstack *a = realloc(o->cs, n * sizeof(*a));
		if (!a)
			return NULL;
		memset(a + o->ncs, 0, (n - o->ncs) * sizeof(*a));
		o->cs = a;
		o->ncs = n;
	}
	return &o->cs[i];
}

/*
 * OTF2 forbids Enter and Leave beside calling-context events: in an archive with stack
 * samples, a region is entered as a CallingContextEnter of the context (region, its caller's
 * context), as Score-P writes them when it samples.  Its unwind distance is 2: one region
 * newly entered, the one below it made progress.
 */
/* Room for `need` contexts on cs; -1 when memory ran out. */
static int cstack_reserve(struct cstack *cs, uint32_t need)
{
	if (need <= cs->cap)
		return 0;
	uint32_t cap = cs->cap ? 2 * cs->cap : 32;
	if (cap < need)
		cap = need + 32;
	uint32_t *v = realloc(cs->v, cap * sizeof(*v));
	if (!v)
		return -1;
	cs->v = v;
	cs->cap = cap;
	return 0;
}

static void enter_region(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			 OTF2_AttributeList *a)
{
	struct cstack *cs = cv->sampling ? cstack_of(cv, l) : NULL;
	if (!cs) {
		otf2_check(cv, OTF2_EvtWriter_Enter(l->out, a, t, region), "Enter");
		return;
	}
	if (cstack_reserve(cs, cs->n + 1)) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "CallingContextEnter");
		return;
	}
	uint32_t ctx = cv_context(cv, region, 0, cs->n ? cs->v[cs->n - 1] : 0);
	if (!ctx) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "CallingContextEnter");
		return;
	}
	cs->v[cs->n++] = ctx;
	otf2_check(cv, OTF2_EvtWriter_CallingContextEnter(l->out, a, t, ctx - 1, 2),
		   "CallingContextEnter");
}

static void leave_region(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			 OTF2_AttributeList *a)
{
	struct cstack *cs = cv->sampling ? cstack_of(cv, l) : NULL;
	if (!cs) {
		otf2_check(cv, OTF2_EvtWriter_Leave(l->out, a, t, region), "Leave");
		return;
	}
	/* The converter leaves the innermost region first; should another be left, what is
	 * above it goes with it. */
	uint32_t i = cs->n;
	while (i > 0 && cv->ctxs[cs->v[i - 1] - 1].region != region)
		i--;
	uint32_t ctx = i ? cs->v[i - 1] : cv_context(cv, region, 0, 0);
	if (i)
		cs->n = i - 1;
	if (ctx)
		otf2_check(cv, OTF2_EvtWriter_CallingContextLeave(l->out, a, t, ctx - 1),
			   "CallingContextLeave");
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	OTF2_AttributeList *a = decorate(cv, l, t, 1);
	enter_region(cv, l, t, region, a);
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	struct out *o = cv->out;
	OTF2_AttributeList *a = decorate(cv, l, t, 0);
	if (closed && o->attrs &&
	    OTF2_AttributeList_AddUint8(o->attrs, ATTR_CLOSED, 1) == OTF2_SUCCESS)
		a = o->attrs;
	leave_region(cv, l, t, region, a);
}

static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadCreate(l->out, NULL, t, l->process, seq),
		   "ThreadCreate");
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	struct out *o = cv->out;
	OTF2_AttributeList *a = NULL;
	if (o->attrs && OTF2_AttributeList_AddUint64(o->attrs, ATTR_THREAD_ID, tid) == OTF2_SUCCESS)
		a = o->attrs;
	otf2_check(cv, OTF2_EvtWriter_ThreadBegin(l->out, a, t, l->process, seq), "ThreadBegin");
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadEnd(l->out, NULL, t, l->process, seq), "ThreadEnd");
}

static void thread_wait(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadWait(l->out, NULL, t, l->process, seq), "ThreadWait");
}

static void lock(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm p, int acquire,
		 uint32_t id, uint32_t order)
{
	if (acquire)
		otf2_check(
		    cv,
		    OTF2_EvtWriter_ThreadAcquireLock(l->out, NULL, t, otf2_paradigm(p), id, order),
		    "ThreadAcquireLock");
	else
		otf2_check(
		    cv,
		    OTF2_EvtWriter_ThreadReleaseLock(l->out, NULL, t, otf2_paradigm(p), id, order),
		    "ThreadReleaseLock");
}

static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadFork(l->out, NULL, t, OTF2_PARADIGM_OPENMP, requested),
		   "ThreadFork");
}

static void thread_join(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadJoin(l->out, NULL, t, OTF2_PARADIGM_OPENMP),
		   "ThreadJoin");
}

static uint32_t mpi_rank(uint32_t rank)
{
	return rank == LT_MPI_NO_RANK ? OTF2_UNDEFINED_UINT32 : rank;
}

static void mpi_p2p(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
		    uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request)
{
	OTF2_EvtWriter *w = l->out;
	OTF2_CommRef c = mpi_comm(cv, comm);
	switch (kind) {
	case LT_MPI_SEND:
		otf2_check(cv, OTF2_EvtWriter_MpiSend(w, NULL, t, mpi_rank(peer), c, tag, bytes),
			   "MpiSend");
		break;
	case LT_MPI_RECV:
		otf2_check(cv, OTF2_EvtWriter_MpiRecv(w, NULL, t, mpi_rank(peer), c, tag, bytes),
			   "MpiRecv");
		break;
	case LT_MPI_ISEND:
		otf2_check(
		    cv, OTF2_EvtWriter_MpiIsend(w, NULL, t, mpi_rank(peer), c, tag, bytes, request),
		    "MpiIsend");
		break;
	case LT_MPI_ISEND_DONE:
		otf2_check(cv, OTF2_EvtWriter_MpiIsendComplete(w, NULL, t, request),
			   "MpiIsendComplete");
		break;
	case LT_MPI_IRECV_POSTED:
		otf2_check(cv, OTF2_EvtWriter_MpiIrecvRequest(w, NULL, t, request),
			   "MpiIrecvRequest");
		break;
	case LT_MPI_IRECV_DONE:
		otf2_check(
		    cv, OTF2_EvtWriter_MpiIrecv(w, NULL, t, mpi_rank(peer), c, tag, bytes, request),
		    "MpiIrecv");
		break;
	case LT_MPI_CANCELLED:
		otf2_check(cv, OTF2_EvtWriter_MpiRequestCancelled(w, NULL, t, request),
			   "MpiRequestCancelled");
		break;
	}
}

static void mpi_coll_begin(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	otf2_check(cv, OTF2_EvtWriter_MpiCollectiveBegin(l->out, NULL, t), "MpiCollectiveBegin");
}

static void mpi_coll_end(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned op, uint32_t comm,
			 uint32_t root, uint64_t sent, uint64_t received)
{
	/* enum lt_mpi_coll is OTF2's order */
	otf2_check(cv,
		   OTF2_EvtWriter_MpiCollectiveEnd(l->out, NULL, t, (OTF2_CollectiveOp)op,
						   mpi_comm(cv, comm), mpi_rank(root), sent,
						   received),
		   "MpiCollectiveEnd");
}

static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadTeamBegin(l->out, NULL, t, team_comm(cv, team)),
		   "ThreadTeamBegin");
}

static void team_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	otf2_check(cv, OTF2_EvtWriter_ThreadTeamEnd(l->out, NULL, t, team_comm(cv, team)),
		   "ThreadTeamEnd");
}

/*
 * A stack sample.  Its context lies under the location's open regions (OTF2: a sample's
 * context descends from the last region entered): the unwound frames, outermost first, from
 * the one after the thread's bottom function when its outermost region is that function
 * (main, a start routine: the C library's frames below it are left out), else all of them.
 * The unwind distance: the frames placed, newly entered, plus the region that made progress.
 */
static void sample(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t ctx, uint64_t cpu_ns)
{
	struct out *o = cv->out;
	struct cstack *cs = cstack_of(cv, l);
	if (!cs)
		return;
	uint32_t chain[LT_STACK_MAX];
	unsigned n = cv_sample_frames(cv, ctx, cs->n ? cv->ctxs[cs->v[0] - 1].region : UINT32_MAX,
				      chain),
		 from = 0;
	uint32_t at = cs->n ? cs->v[cs->n - 1] : 0;
	for (unsigned i = from; i < n; i++) {
		const struct cv_ctx *c = &cv->ctxs[chain[i] - 1];
		uint32_t next = cv_context(cv, c->region, c->scl + 1, at);
		if (!next)
			break;
		at = next;
	}
	/* What it stands for: one period, or more where the timer's ticks made it so. */
	OTF2_AttributeList *a = NULL;
	if (o->attrs &&
	    OTF2_AttributeList_AddUint64(o->attrs, ATTR_CPU_TIME, cpu_ns) == OTF2_SUCCESS)
		a = o->attrs;
	if (at)
		otf2_check(
		    cv, OTF2_EvtWriter_CallingContextSample(l->out, a, t, at - 1, n - from + 1, 0),
		    "CallingContextSample");
}

/* With stack samples, a location's contexts follow its task switches as a reader's stacks do
 * (the regions an untied task left open wait for it), so that a sample lies under the regions
 * of the task it interrupted. */
static void switch_contexts(struct cv *cv, struct cv_loc *l, enum cv_task_event what, uint64_t task)
{
	struct out *o = cv->out;
	struct cstack *cs = cstack_of(cv, l);
	if (!cs || what == CV_TASK_CREATE)
		return;
	if (what == CV_TASK_COMPLETE) {
		cs->task = 0;
		return;
	}
	if (cs->task && cs->n > cs->base) { /* the task it ran waits */
		if (o->nsusp == o->susp_cap) {
			size_t cap = o->susp_cap ? 2 * o->susp_cap : 16;
			struct suspended *a = realloc(o->susp, cap * sizeof(*a));
			if (!a)
				return;
			o->susp = a;
			o->susp_cap = cap;
		}
		uint32_t n = cs->n - cs->base;
		uint32_t *v = malloc(n * sizeof(*v));
		if (!v)
			return;
		memcpy(v, cs->v + cs->base, n * sizeof(*v));
		o->susp[o->nsusp++] = (struct suspended){cs->task, v, n};
		cs->n = cs->base;
	}
	cs->task = task & 0xffffffffu ? task : 0; /* generation 0: the implicit task */
	cs->base = cs->n;
	for (size_t i = 0; cs->task && i < o->nsusp; i++) {
		if (o->susp[i].task != task)
			continue;
		struct suspended sp = o->susp[i];
		o->susp[i] = o->susp[--o->nsusp];
		if (cstack_reserve(cs, cs->n + sp.n)) {
			free(sp.v);
			return;
		}
		memcpy(cs->v + cs->n, sp.v, sp.n * sizeof(*sp.v));
		cs->n += sp.n;
		free(sp.v);
		break;
	}
}

static void task_event(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_task_event what,
		       uint32_t team, uint32_t creator, uint32_t gen)
{
	if (cv->sampling)
		switch_contexts(cv, l, what, (uint64_t)team << 44 | (uint64_t)creator << 32 | gen);
	OTF2_CommRef c = team_comm(cv, team);
	if (what == CV_TASK_CREATE)
		otf2_check(cv, OTF2_EvtWriter_ThreadTaskCreate(l->out, NULL, t, c, creator, gen),
			   "ThreadTaskCreate");
	else if (what == CV_TASK_SWITCH)
		otf2_check(cv, OTF2_EvtWriter_ThreadTaskSwitch(l->out, NULL, t, c, creator, gen),
			   "ThreadTaskSwitch");
	else
		otf2_check(cv, OTF2_EvtWriter_ThreadTaskComplete(l->out, NULL, t, c, creator, gen),
			   "ThreadTaskComplete");
}

/* The converter's attributes added to the shared list: the list, or NULL when it could not
 * take them (it is left empty then). */
static OTF2_AttributeList *add_attrs(struct cv *cv, const struct cv_attr *attrs, unsigned n)
{
	struct out *o = cv->out;
	OTF2_AttributeList *a = o->attrs;
	for (unsigned i = 0; a && i < n; i++) {
		OTF2_AttributeRef ref = ATTR_COUNT + attrs[i].id;
		OTF2_ErrorCode rc;
		switch (otf2_attrs[attrs[i].id].type) {
		case OTF2_TYPE_STRING:
			rc = OTF2_AttributeList_AddStringRef(a, ref, (uint32_t)attrs[i].value);
			break;
		case OTF2_TYPE_INT64:
			rc = OTF2_AttributeList_AddInt64(a, ref, (int64_t)attrs[i].value);
			break;
		default:
			rc = OTF2_AttributeList_AddUint64(a, ref, attrs[i].value);
		}
		if (rc != OTF2_SUCCESS) {
			OTF2_AttributeList_RemoveAllAttributes(a);
			a = NULL;
		}
	}
	return a;
}

static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	decorate(cv, l, t, 1);
	enter_region(cv, l, t, region, add_attrs(cv, attrs, n));
}

static void leave_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	decorate(cv, l, t, 0);
	leave_region(cv, l, t, region, add_attrs(cv, attrs, n));
}

/* A stream's operation: its region; a host-device copy's RMA operation inside it. */
static void gpu_activity(struct cv *cv, struct cv_loc *l, const struct cv_gpu_op *op)
{
	enter_attrs(cv, l, op->start, op->region, op->attrs, op->nattrs);
	if (op->rma) {
		if (op->copy == LT_GPU_COPY_HTOD) /* the device gets from the host */
			otf2_check(cv,
				   OTF2_EvtWriter_RmaGet(l->out, NULL, op->start, op->win,
							 op->remote, op->bytes, op->corr),
				   "RmaGet");
		else
			otf2_check(cv,
				   OTF2_EvtWriter_RmaPut(l->out, NULL, op->start, op->win,
							 op->remote, op->bytes, op->corr),
				   "RmaPut");
		otf2_check(
		    cv,
		    OTF2_EvtWriter_RmaOpCompleteBlocking(l->out, NULL, op->end, op->win, op->corr),
		    "RmaOpCompleteBlocking");
	}
	leave(cv, l, op->end, op->region, 0);
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	OTF2_Type type = cv->metrics[m].is_double ? OTF2_TYPE_DOUBLE : OTF2_TYPE_INT64;
	OTF2_MetricValue v;
	if (cv->metrics[m].is_double)
		memcpy(&v.floating_point, &raw, sizeof(double));
	else
		v.signed_int = (int64_t)raw;
	otf2_check(cv, OTF2_EvtWriter_Metric(l->out, NULL, t, otf2_class(cv, m), 1, &type, &v),
		   "Metric");
}

/* What Vampir shows as a measurement gap: Score-P writes the same around its recording off. */
static void measurement(struct cv *cv, struct cv_loc *l, uint64_t t, int on)
{
	otf2_check(cv,
		   OTF2_EvtWriter_MeasurementOnOff(l->out, NULL, t,
						   on ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF),
		   "MeasurementOnOff");
}

/* How grave each kind of marker is (its category is cv_mark_category's). */
static const OTF2_MarkerSeverity marker_severity[CV_MARK_KINDS] = {
    [CV_MARK_USER] = OTF2_SEVERITY_NONE,
    [CV_MARK_LOST] = OTF2_SEVERITY_HIGH,
    [CV_MARK_TRUNCATED] = OTF2_SEVERITY_HIGH,
    [CV_MARK_CLOSED] = OTF2_SEVERITY_MEDIUM,
    [CV_MARK_KOKKOS_EVENT] = OTF2_SEVERITY_NONE,
    [CV_MARK_KOKKOS_DUALVIEW] = OTF2_SEVERITY_NONE,
    [CV_MARK_KOKKOS_LEAK] = OTF2_SEVERITY_HIGH,
    [CV_MARK_KOKKOS_KEPT] = OTF2_SEVERITY_LOW,
    [CV_MARK_KOKKOS_UNFINALIZED] = OTF2_SEVERITY_MEDIUM,
    [CV_MARK_GPU_LEAK] = OTF2_SEVERITY_HIGH,
    [CV_MARK_FLIGHT] = OTF2_SEVERITY_LOW,
};

static void write_marker(struct cv *cv, uint64_t loc, uint64_t t, int kind, const char *text)
{
	struct out *o = cv->out;
	if (!o->markers && !(o->markers = OTF2_Archive_GetMarkerWriter(o->ar))) {
		otf2_check(cv, OTF2_ERROR_INVALID_CALL, "opening the marker writer");
		return;
	}
	if (!o->marker_defined[kind]) {
		otf2_check(cv,
			   OTF2_MarkerWriter_WriteDefMarker(o->markers, (OTF2_MarkerRef)kind,
							    "libtrace", cv_mark_category(kind),
							    marker_severity[kind]),
			   "DefMarker");
		o->marker_defined[kind] = 1;
	}
	otf2_check(cv,
		   OTF2_MarkerWriter_WriteMarker(o->markers, t, 0, (OTF2_MarkerRef)kind,
						 OTF2_MARKER_SCOPE_LOCATION, loc, text),
		   "Marker");
}

/* Keeps m (a parallel conversion's marker, for rank 0); -1 when memory ran out. */
static int keep_marker(struct cv *cv, struct kept_marker m)
{
	struct out *o = cv->out;
	if (o->nkept == o->kept_cap) {
		size_t cap = o->kept_cap ? 2 * o->kept_cap : 64;
		struct kept_marker *a = realloc(o->kept, cap * sizeof(*a));
		if (!a) {
			otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Marker");
			return -1;
		}
		o->kept = a;
		o->kept_cap = cap;
	}
	o->kept[o->nkept++] = m;
	return 0;
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	if (!cv->par) {
		write_marker(cv, l->id, t, kind, text);
		return;
	}
	char *copy = strdup(text);
	if (!copy || keep_marker(cv, (struct kept_marker){l->id, t, kind, copy, 0}))
		free(copy);
}

static int kept_cmp(const void *x, const void *y)
{
	const struct kept_marker *a = x, *b = y;
	uint32_t pa = (uint32_t)a->loc, pb = (uint32_t)b->loc; /* their processes */
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq; /* as they came */
}

/*
 * A parallel conversion: every rank's markers to rank 0, which writes them process by
 * process, each process's in the order its rank met them (as a serial conversion does).
 */
static void gather_markers(struct cv *cv)
{
	struct out *o = cv->out;
	size_t len = 0;
	for (size_t i = 0; i < o->nkept; i++)
		len += 8 + 8 + 4 + strlen(o->kept[i].text) + 1;
	char *buf = malloc(len + 1), *at = buf;
	for (size_t i = 0; buf && i < o->nkept; i++) {
		uint32_t kind = (uint32_t)o->kept[i].kind;
		memcpy(at, &o->kept[i].loc, 8);
		memcpy(at + 8, &o->kept[i].t, 8);
		memcpy(at + 16, &kind, 4);
		size_t n = strlen(o->kept[i].text) + 1;
		memcpy(at + 20, o->kept[i].text, n);
		at += 20 + n;
	}
	if (!buf)
		len = 0;
	for (size_t i = 0; i < o->nkept; i++)
		free(o->kept[i].text);
	free(o->kept);
	o->kept = NULL;
	o->nkept = o->kept_cap = 0;
	void **all = NULL;
	size_t *lens = NULL;
	if (cv->par->gather(cv->par, buf ? buf : "", len, &all, &lens))
		otf2_check(cv, OTF2_ERROR_COLLECTIVE_CALLBACK, "gathering the markers");
	free(buf);
	if (!all)
		return;
	for (int r = 0; r < cv->par->size; r++) { /* every rank's, in rank order */
		const char *p = all[r], *end = p + lens[r];
		while (p && end - p >= 21) {
			struct kept_marker m;
			uint32_t kind;
			memcpy(&m.loc, p, 8);
			memcpy(&m.t, p + 8, 8);
			memcpy(&kind, p + 16, 4);
			m.text = (char *)p + 20;
			size_t n = strnlen(m.text, (size_t)(end - m.text));
			if (m.text + n == end || kind >= CV_MARK_KINDS)
				break;
			m.kind = (int)kind;
			m.seq = o->nkept;
			if (keep_marker(cv, m))
				break;
			p = m.text + n + 1;
		}
	}
	qsort(o->kept, o->nkept, sizeof(*o->kept), kept_cmp);
	for (size_t i = 0; i < o->nkept; i++)
		write_marker(cv, o->kept[i].loc, o->kept[i].t, o->kept[i].kind, o->kept[i].text);
	free(o->kept);
	o->kept = NULL;
	o->nkept = o->kept_cap = 0;
	for (int r = 0; r < cv->par->size; r++)
		free(all[r]);
	free(all);
	free(lens);
}

static void program_begin(struct cv *cv, struct cv_loc *l, uint64_t t, const struct rd_process *p)
{
	uint32_t n = p->nargs > 64 ? 64 : (uint32_t)p->nargs;
	OTF2_StringRef args[64];
	for (uint32_t i = 0; i < n; i++)
		args[i] = cv_string(cv, p->args[i]);
	uint32_t name = cv_string(cv, p->exe[0] ? p->exe : n ? p->args[0] : "?");
	otf2_check(cv, OTF2_EvtWriter_ProgramBegin(l->out, NULL, t, name, n, args), "ProgramBegin");
}

static void program_end(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	otf2_check(cv, OTF2_EvtWriter_ProgramEnd(l->out, NULL, t, OTF2_UNDEFINED_INT64),
		   "ProgramEnd");
}

/* The definitions' class of `what` (otf2_class): the metrics', then the PAPI sets'. */
static uint32_t class_in_archive(struct cv *cv, uint32_t what)
{
	uint32_t x = what & ~CLASS_PAPI;
	if (!cv->par)
		return what & CLASS_PAPI ? cv->nmetrics + x : x;
	const struct cv_maps *m = &cv->maps;
	if (what & CLASS_PAPI)
		return x < m->npapis ? m->global_nmetrics + m->papis[x] : x;
	return x < m->nmetrics ? m->metrics[x] : x;
}

/* The map of the events' metric classes to the definitions', for every location; NULL
 * when no event named one (or cv_unify failed: no maps at all). */
static uint32_t *metric_map(struct cv *cv)
{
	const struct out *o = cv->out;
	const struct cv_maps *m = &cv->maps;
	if (!o->nclasses || (cv->par && ((m->nmetrics && !m->metrics) || (m->npapis && !m->papis))))
		return NULL;
	uint32_t *a = malloc(o->nclasses * sizeof(*a));
	if (!a) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MappingTable");
		return NULL;
	}
	for (uint32_t c = 0; c < o->nclasses; c++)
		a[c] = class_in_archive(cv, o->class_what[c]);
	return a;
}

/* One mapping table, unless it maps every id to itself (OTF2 then wants none). */
static void write_mapping(struct cv *cv, OTF2_DefWriter *d, OTF2_MappingType type,
			  const uint32_t *map, uint32_t n)
{
	uint32_t i = 0;
	while (map && i < n && map[i] == i)
		i++;
	if (i == n || !map) /* the identity, or no maps: cv_unify failed */
		return;
	OTF2_IdMap *m = OTF2_IdMap_CreateFromUint32Array(n, map, true);
	if (!m) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MappingTable");
		return;
	}
	otf2_check(cv, OTF2_DefWriter_WriteMappingTable(d, type, m), "MappingTable");
	OTF2_IdMap_Free(m);
}

/*
 * A parallel conversion: this rank's events name its own ids; each of its locations' local
 * definitions maps them to the archive's (OTF2 mapping tables, as Score-P writes them).
 * Comms: the processes' thread groups keep their numbers, the teams', MPI's and the GPU
 * windows' follow in one numbering.  Metric classes: `classes` (metric_map), in a serial
 * conversion too.
 */
static void write_mappings(struct cv *cv, OTF2_DefWriter *d, const uint32_t *classes)
{
	write_mapping(cv, d, OTF2_MAPPING_METRIC, classes, ((struct out *)cv->out)->nclasses);
	if (!cv->par)
		return;
	const struct cv_maps *m = &cv->maps;
	struct {
		OTF2_MappingType type;
		const uint32_t *map;
		uint32_t n;
	} plain[] = {
	    {OTF2_MAPPING_STRING, m->strings, m->nstrings},
	    {OTF2_MAPPING_REGION, m->regions, m->nregions},
	    {OTF2_MAPPING_CALLING_CONTEXT, m->ctxs, m->nctxs},
	    {OTF2_MAPPING_RMA_WIN, m->wins, m->nwins},
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		write_mapping(cv, d, plain[i].type, plain[i].map, plain[i].n);
	/* SourceCodeLocations: this rank's call sites with a line, by their own numbers. */
	uint32_t *sites = malloc((cv->nsites + 1) * sizeof(*sites));
	for (uint32_t i = 0; sites && m->sites && i < cv->nscls && i < m->nscls; i++)
		if (cv->scls[i].site < cv->nsites)
			sites[cv->scls[i].site] = m->sites[i];
	if (!sites)
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MappingTable");
	else if (m->sites)
		write_mapping(cv, d, OTF2_MAPPING_SOURCE_CODE_LOCATION, sites, cv->nsites);
	free(sites);
	if (m->ncomm_refs && !m->comm_refs)
		return; /* cv_unify failed */
	uint32_t nc = (uint32_t)cv->max_procs + m->ncomm_refs;
	uint32_t *a = malloc((nc + 1) * sizeof(*a));
	if (!a) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MappingTable");
		return;
	}
	for (uint32_t i = 0; i < nc; i++)
		a[i] = i < cv->max_procs
			   ? i
			   : (uint32_t)cv->max_procs + m->comm_refs[i - cv->max_procs];
	write_mapping(cv, d, OTF2_MAPPING_COMM, a, nc);
	free(a);
}

static int finish(struct cv *cv)
{
	struct out *o = cv->out;
	for (size_t i = 0; i < o->ncs; i++)
		free(o->cs[i].v);
	free(o->cs);
	o->cs = NULL;
	o->ncs = 0;
	for (size_t i = 0; i < o->nsusp; i++)
		free(o->susp[i].v);
	free(o->susp);
	o->susp = NULL;
	o->nsusp = 0;
	if (cv->par) /* every rank's markers, written by rank 0 */
		gather_markers(cv);
	if (o->markers)
		otf2_check(cv, OTF2_Archive_CloseMarkerWriter(o->ar, o->markers),
			   "closing the markers");
	otf2_check(cv, OTF2_Archive_CloseEvtFiles(o->ar), "closing the event files");
	otf2_check(cv, OTF2_Archive_OpenDefFiles(o->ar), "opening the definition files");
	uint32_t *classes = metric_map(cv);
	for (size_t i = 0; i < cv->nlocs; i++) {
		OTF2_DefWriter *d = OTF2_Archive_GetDefWriter(o->ar, cv->locs[i].id);
		if (!d)
			continue;
		write_mappings(cv, d, classes);
		otf2_check(cv, OTF2_Archive_CloseDefWriter(o->ar, d),
			   "closing a definition writer");
	}
	free(classes);
	otf2_check(cv, OTF2_Archive_CloseDefFiles(o->ar), "closing the definition files");
	/* The global definitions: rank 0's, of the whole trace, in a parallel conversion. */
	struct cv *defs = cv->par ? cv->global : cv;
	if (defs) {
		OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(o->ar);
		if (g) {
			otf2_write_definitions(defs, g);
			otf2_check(cv, OTF2_Archive_CloseGlobalDefWriter(o->ar, g),
				   "closing the definitions");
		} else {
			otf2_check(cv, OTF2_ERROR_INVALID_CALL,
				   "opening the global definition writer");
		}
	}
	for (size_t i = 0; i < cv->nprops; i++)
		otf2_check(
		    cv, OTF2_Archive_SetProperty(o->ar, cv->props[2 * i], cv->props[2 * i + 1], 0),
		    "SetProperty");
	otf2_check(cv, OTF2_Archive_Close(o->ar), "closing the archive");
	if (o->attrs)
		OTF2_AttributeList_Delete(o->attrs);
	int rc = o->error == OTF2_SUCCESS ? 0 : -1;
	return rc;
}

static const char *otf2_error(struct cv *cv)
{
	struct out *o = cv->out;
	static char buf[256];
	if (!o || o->error == OTF2_SUCCESS)
		return NULL;
	snprintf(buf, sizeof(buf), "%s: %s", o->error_what, OTF2_Error_GetDescription(o->error));
	return buf;
}

static void otf2_free(struct cv *cv)
{
	struct out *o = cv->out;
	OTF2_Error_RegisterCallback(NULL, NULL);
	if (o) {
		free(o->class_what);
		free(o->class_of_metric);
		free(o->class_of_papi);
	}
	free(o);
	cv->out = NULL;
}

static const struct cv_ops otf2_ops = {
    .name = "otf2",
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
    .task_event = task_event,
    .sample = sample,
    .team_end = team_end,
    .enter_attrs = enter_attrs,
    .metric = metric,
    .marker = marker,
    .measurement = measurement,
    .program_begin = program_begin,
    .program_end = program_end,
    .mpi_p2p = mpi_p2p,
    .mpi_coll_begin = mpi_coll_begin,
    .mpi_coll_end = mpi_coll_end,
    .leave_attrs = leave_attrs,
    .gpu_activity = gpu_activity,
    .finish = finish,
};

static const char *const otf2_exts[] = {".otf2", NULL};

const struct cv_backend cv_otf2_backend = {
    .name = "otf2",
    .description = "an OTF2 archive for Vampir: OUT/traces.otf2 and the files beside it",
    .output = CV_OUTPUT_DIRECTORY,
    .exts = otf2_exts,
    .written = "/traces.otf2",
    .what = "archive",
    .needs = CV_NEEDS_SOURCE_LINES | CV_NEEDS_CORE_VIEW,
    .parallel = 1,
    .ops = &otf2_ops,
    .open = otf2_open,
    .error = otf2_error,
    .free = otf2_free,
};
