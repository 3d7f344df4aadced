// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpu.c - GPU (CUDA, HIP): API calls on the host, the device's operations on stream
 * locations, device memory never freed.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/*
 * The host side: each GPU_ENTER/GPU_LEAVE pair is a region of the calling thread named
 * after the function, its arguments as attributes of the Enter, its result (an error, the
 * allocated address) as attributes of the Leave.  Calls with a correlation id are kept
 * (gcalls) so that the device's operations can name the thread and time that asked for
 * them; allocations are followed to their free so that what is never freed is reported.
 *
 * The device side: GPU_ACTIVITY records arrive late, on any thread, in any order (CUPTI
 * delivers them by the buffer), so a process's are kept (gacts) and shown after its merge
 * (gpu_flush): per stream, in time order, on a location of its own.
 */

/* Grid or block dimensions, "XxYxZ", of LAUNCH's words w[0..2] (block: from w[1] >> 32). */
static uint32_t gpu_dims(struct cv *cv, const uint64_t *w, int block, uint64_t *count)
{
	uint32_t d[3] = {(uint32_t)w[0], (uint32_t)(w[0] >> 32), (uint32_t)w[1]};
	if (block) {
		d[0] = (uint32_t)(w[1] >> 32);
		d[1] = (uint32_t)w[2];
		d[2] = (uint32_t)(w[2] >> 32);
	}
	*count = (uint64_t)d[0] * d[1] * d[2];
	char text[48];
	snprintf(text, sizeof(text), "%ux%ux%u", d[0], d[1], d[2]);
	return cv_string(cv, text);
}

/* The name of the kernel of process string `sid`: demangled where it demangles (CUPTI and
 * the registration calls give the mangled name).  A cv string id. */
static uint32_t gpu_kernel_name(struct pstate *ps, uint32_t sid)
{
	uint64_t *cached = cv_idmap_get(&ps->gknames, sid, 1);
	if (cached && *cached)
		return (uint32_t)*cached - 1;
	const char *raw = cv_pstring(ps, sid);
	char *d = ps->cv->syms && !strncmp(raw, "_Z", 2) ? sym_demangle(ps->cv->syms, raw) : NULL;
	uint32_t id = cv_string(ps->cv, d ? d : raw);
	free(d);
	if (cached && rd_string(ps->p, sid))
		*cached = id + 1;
	return id;
}

static enum cv_role gpu_role(unsigned op)
{
	switch (op) {
	case LT_GPU_OP_ALLOC:
		return CV_ROLE_ALLOCATE;
	case LT_GPU_OP_FREE:
		return CV_ROLE_DEALLOCATE;
	case LT_GPU_OP_COPY:
	case LT_GPU_OP_SET:
		return CV_ROLE_DATA_TRANSFER;
	case LT_GPU_OP_SYNC:
		return CV_ROLE_GPU_SYNC;
	}
	return CV_ROLE_WRAPPER; /* as Score-P's CUDA API regions */
}

/* The region of GPU API function `sid` (a process string) called through `api`. */
static uint32_t gpu_call_region(struct pstate *ps, unsigned api, unsigned op, uint32_t sid)
{
	struct cv *cv = ps->cv;
	uint64_t *cached = cv_idmap_get(&ps->gregions, (uint64_t)(api + 1) << 32 | sid, 1);
	if (cached && *cached)
		return (uint32_t)*cached - 1;
	static const char *const layers[] = {"CUDA runtime API", "CUDA driver API",
					     "HIP runtime API"};
	unsigned layer = api == LT_GPU_HIP ? 2 : api == LT_GPU_CUPTI_DRIVER;
	const char *name = cv_pstring(ps, sid);
	uint32_t s = cv_string(cv, name);
	struct cv_region r = {s,
			      s,
			      CV_NO_STRING,
			      0,
			      gpu_role(op),
			      api == LT_GPU_HIP ? CV_PARADIGM_HIP : CV_PARADIGM_CUDA,
			      cv_string(cv, layers[layer]) + 1};
	char key[1100];
	snprintf(key, sizeof(key), "%u:%s", layer, name);
	uint32_t reg = cv_region_id(cv, 'G', key, &r);
	if (cached && rd_string(ps->p, sid))
		*cached = reg + 1;
	return reg;
}

/* A region of a GPU stream: a kernel (role CV_ROLE_KERNEL; canonical: the mangled name) or
 * a copy or set (CV_ROLE_GPU_MEMORY). */
static uint32_t gpu_device_region(struct cv *cv, uint32_t name, uint32_t canonical,
				  enum cv_role role)
{
	struct cv_region r = {name, canonical, CV_NO_STRING, 0, role, CV_PARADIGM_CUDA, 0};
	return cv_region_id(cv, 'D', cv->strings[name], &r);
}

/* A GPU call begins: its region, with what its arguments say. */
void cv_gpu_enter(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		  const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u, op = LT_GPU_OP(r->sub), api = LT_GPU_API(r->sub);
	uint64_t w[7] = {0}, n;
	memcpy(w, pl, (np < 7 ? np : 7) * sizeof(*w));
	uint32_t reg = gpu_call_region(ps, api, op, r->arg), scl = cv->cur_scl;
	struct cv_attr a[8];
	unsigned na = 0;
	if (w[LT_W_GPU_CORRELATION])
		a[na++] = (struct cv_attr){CV_ATTR_GPU_CORRELATION, w[LT_W_GPU_CORRELATION]};
	switch (op) {
	case LT_GPU_OP_ALLOC:
		a[na++] = (struct cv_attr){CV_ATTR_ALLOCATION_SIZE, w[LT_W_GPU_ALLOC_BYTES]};
		a[na++] = (struct cv_attr){
		    CV_ATTR_GPU_MEMORY,
		    cv_string(cv, rd_gpu_mem_name((unsigned)w[LT_W_GPU_ALLOC_MEM]))};
		break;
	case LT_GPU_OP_FREE: {
		a[na++] = (struct cv_attr){CV_ATTR_ARGUMENT_ADDRESS, w[LT_W_GPU_FREE_ADDR]};
		a[na++] = (struct cv_attr){
		    CV_ATTR_GPU_MEMORY,
		    cv_string(cv, rd_gpu_mem_name((unsigned)w[LT_W_GPU_FREE_MEM]))};
		uint64_t *slot = cv_idmap_get(&ps->gmem.map, w[LT_W_GPU_FREE_ADDR], 0);
		if (slot && *slot)
			a[na++] = (struct cv_attr){CV_ATTR_DEALLOCATION_SIZE,
						   ps->gmem.a[*slot - 1].bytes};
		break;
	}
	case LT_GPU_OP_COPY:
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BYTES, w[LT_W_GPU_COPY_BYTES]};
		a[na++] = (struct cv_attr){
		    CV_ATTR_GPU_COPY_KIND,
		    cv_string(cv, rd_gpu_copy_name((unsigned)w[LT_W_GPU_COPY_KIND]))};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_DST, w[LT_W_GPU_COPY_DST]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_SRC, w[LT_W_GPU_COPY_SRC]};
		if (w[LT_W_GPU_COPY_STREAM])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[LT_W_GPU_COPY_STREAM]};
		break;
	case LT_GPU_OP_SET:
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BYTES, w[LT_W_GPU_SET_BYTES]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_DST, w[LT_W_GPU_SET_DST]};
		if (w[LT_W_GPU_SET_STREAM])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[LT_W_GPU_SET_STREAM]};
		break;
	case LT_GPU_OP_LAUNCH:
		if (w[LT_W_GPU_LAUNCH_KERNEL])
			a[na++] = (struct cv_attr){
			    CV_ATTR_GPU_KERNEL,
			    gpu_kernel_name(ps, (uint32_t)w[LT_W_GPU_LAUNCH_KERNEL])};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_GRID,
					   gpu_dims(cv, &w[LT_W_GPU_LAUNCH_DIMS], 0, &n)};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BLOCK,
					   gpu_dims(cv, &w[LT_W_GPU_LAUNCH_DIMS], 1, &n)};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[LT_W_GPU_LAUNCH_STREAM]};
		break;
	default: /* CALL and SYNC: the stream (or event) they name */
		if (w[LT_W_GPU_CALL_OBJ])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[LT_W_GPU_CALL_OBJ]};
	}
	/* The frame keeps the op's first two words: what a FREE frees, an ALLOC's memory kind. */
	if (cv_push(cv, t, reg, FN_GPU, w[1], w[2] | (uint64_t)op << 56))
		return;
	t->stack[t->depth - 1].aux = scl;
	if (w[LT_W_GPU_CORRELATION]) { /* the device's records of this call name it by its
					  correlation id */
		uint64_t *slot = cv_idmap_get(&ps->gcorr, w[LT_W_GPU_CORRELATION], 1);
		if (slot && !*slot) {
			struct gcall *g = ps->gcalls;
			if (ps->ngcalls == ps->gcalls_cap &&
			    !(g = cv_grow(ps->gcalls, &ps->gcalls_cap, sizeof(*g)))) {
				cv_idmap_del(&ps->gcorr, w[LT_W_GPU_CORRELATION]);
				slot = NULL;
			} else {
				ps->gcalls = g;
				*slot = ++ps->ngcalls;
			}
		}
		if (slot)
			ps->gcalls[*slot - 1] = (struct gcall){(uint32_t)(l - cv->locs), ns};
	}
	cv_enter_attrs(cv, l, ns, reg, a, na);
}

/* It returned: its Leave, with its error or what it made; allocations are followed. */
void cv_gpu_leave(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		  const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	struct frame *f = cv_pop_match(cv, l, t, ns, FN_GPU, 0);
	if (!f)
		return;
	unsigned op = (unsigned)(f->obj2 >> 56);
	int32_t rc = (int32_t)r->arg;
	uint64_t made = r->words >= 3 ? ((const uint64_t *)(r + 1))[0] : 0;
	struct cv_attr a[2];
	unsigned na = 0;
	if (rc)
		a[na++] = (struct cv_attr){CV_ATTR_GPU_RESULT, (uint64_t)(int64_t)rc};
	if (op == LT_GPU_OP_ALLOC && made && !rc) {
		a[na++] = (struct cv_attr){CV_ATTR_RESULT_ADDRESS, made};
		uint64_t *slot = cv_idmap_get(&ps->gmem.map, made, 1);
		char mem[64];
		snprintf(mem, sizeof(mem), "%s memory",
			 rd_gpu_mem_name((unsigned)(f->obj2 & 0xffffffffu)));
		struct kalloc k = {made,
				   f->obj,
				   ns,
				   cv->regions[f->region].name,
				   cv_string(cv, mem),
				   (uint32_t)(l - cv->locs),
				   f->aux};
		if (slot)
			cv_alloc_set(&ps->gmem, slot, &k);
	} else if (op == LT_GPU_OP_FREE && f->obj && !rc) {
		uint64_t *slot = cv_idmap_get(&ps->gmem.map, f->obj, 0);
		if (slot && *slot)
			cv_alloc_remove(&ps->gmem, (uint32_t)*slot - 1);
	}
	if (na && cv->ops->leave_attrs)
		cv->ops->leave_attrs(cv, l, ns, f->region, a, na);
	else
		CV_EMIT(cv, leave, l, ns, f->region, 0);
}

/* A device operation: kept until the process's merge ends (SYNC: the host call shows it). */
void cv_gpu_collect(struct pstate *ps, const struct lt_rec *r)
{
	unsigned np = r->words - 2u;
	if (r->sub == LT_GPU_ACT_SYNC)
		return;
	if (r->sub > LT_GPU_ACT_SYNC || np < 5) {
		ps->cv->stats.anomalies++;
		return;
	}
	if (ps->ngacts == ps->gacts_cap) {
		struct gact *a = cv_grow(ps->gacts, &ps->gacts_cap, sizeof(*a));
		if (!a) {
			ps->cv->stats.anomalies++;
			return;
		}
		ps->gacts = a;
	}
	struct gact *g = &ps->gacts[ps->ngacts++];
	memset(g, 0, sizeof(*g));
	memcpy(g->w, r + 1, (np < 8 ? np : 8) * sizeof(uint64_t));
	g->arg = r->arg;
	g->kind = r->sub;
}

static int gact_cmp(const void *x, const void *y)
{
	const struct gact *a = x, *b = y;
	static const int order[] = {2, 3, 0, 1}; /* device and context, stream, start, end */
	for (int i = 0; i < 4; i++)
		if (a->w[order[i]] != b->w[order[i]])
			return a->w[order[i]] < b->w[order[i]] ? -1 : 1;
	return 0;
}

/* Process ps's RMA window of host-device copies, its members the process's threads so far. */
static struct cv_gpu_win *gpu_window(struct pstate *ps)
{
	struct cv *cv = ps->cv;
	const struct cv_process *cp = &cv->procs[ps->pidx];
	if (cv->ngpu_wins == cv->gpu_wins_cap) {
		struct cv_gpu_win *a = cv_grow(cv->gpu_wins, &cv->gpu_wins_cap, sizeof(*a));
		if (!a)
			return NULL;
		cv->gpu_wins = a;
	}
	char name[400];
	snprintf(name, sizeof(name), "GPU copies of %s", cv->strings[cp->name]);
	struct cv_gpu_win *w = &cv->gpu_wins[cv->ngpu_wins];
	*w = (struct cv_gpu_win){ps->pidx, cv_string(cv, name), cv->ncomm_refs, NULL, 0, 0};
	for (size_t i = cp->first_loc; i < cp->first_loc + cp->nlocs; i++) {
		if (cv->locs[i].kind != CV_LOC_THREAD)
			continue;
		if (w->nmembers == w->cap) {
			uint32_t *m = cv_grow(w->members, &w->cap, sizeof(*m));
			if (!m) {
				free(w->members);
				return NULL;
			}
			w->members = m;
		}
		w->members[w->nmembers++] = (uint32_t)i;
	}
	cv->ncomm_refs++;
	cv->ngpu_wins++;
	return w;
}

/* A stream's location (begun), its context's location group made when new (*group). */
static struct cv_loc *gpu_stream_loc(struct pstate *ps, const struct gact *g, uint32_t *group,
				     uint32_t nth)
{
	struct cv *cv = ps->cv;
	unsigned dev = (unsigned)(g->w[LT_W_GPU_ACT_CONTEXT] >> 32),
		 ctx = (unsigned)g->w[LT_W_GPU_ACT_CONTEXT];
	char name[96];
	if (*group == UINT32_MAX) {
		if (cv->ngpu_groups == cv->gpu_groups_cap) {
			struct cv_gpu_group *a =
			    cv_grow(cv->gpu_groups, &cv->gpu_groups_cap, sizeof(*a));
			if (!a)
				return NULL;
			cv->gpu_groups = a;
		}
		snprintf(name, sizeof(name), "CUDA[%u] context %u", dev, ctx);
		cv->gpu_groups[cv->ngpu_groups] =
		    (struct cv_gpu_group){ps->pidx, cv_string(cv, name)};
		*group = cv->ngpu_groups++;
	}
	struct cv_loc *l = cv_new_loc(cv);
	if (!l)
		return NULL;
	snprintf(name, sizeof(name), "CUDA[%u:%u] stream %llu", dev, ctx,
		 (unsigned long long)g->w[LT_W_GPU_ACT_STREAM]);
	uint32_t index = 0x80000000u + nth; /* above every thread's index */
	*l = (struct cv_loc){.id = (uint64_t)index << 32 | ps->pidx,
			     .process = ps->pidx,
			     .index = index,
			     .name = cv_string(cv, name),
			     .kind = CV_LOC_GPU_STREAM,
			     .gpu = *group};
	cv->nlocs++;
	cv->procs[ps->pidx].nlocs++;
	if (CV_EMIT_RC(cv, location_begin, l))
		return NULL;
	return l;
}

/* The operation that device record g is: its region, attributes and RMA side. */
static void gpu_op(struct pstate *ps, const struct gact *g, const struct cv_gpu_win *win,
		   uint32_t master, struct cv_gpu_op *op)
{
	struct cv *cv = ps->cv;
	uint64_t corr = g->w[LT_W_GPU_ACT_CORRELATION];
	*op = (struct cv_gpu_op){.kind = g->kind, .corr = corr, .host_loc = UINT32_MAX};
	if (corr)
		op->attrs[op->nattrs++] = (struct cv_attr){CV_ATTR_GPU_CORRELATION, corr};
	if (g->kind == LT_GPU_ACT_KERNEL) {
		uint32_t name = gpu_kernel_name(ps, g->arg);
		const char *raw = rd_string(ps->p, g->arg);
		op->region =
		    gpu_device_region(cv, name, raw ? cv_string(cv, raw) : name, CV_ROLE_KERNEL);
		op->attrs[op->nattrs++] = (struct cv_attr){
		    CV_ATTR_GPU_GRID, gpu_dims(cv, &g->w[LT_W_GPU_ACT_DIMS], 0, &op->blocks)};
		op->attrs[op->nattrs++] = (struct cv_attr){
		    CV_ATTR_GPU_BLOCK, gpu_dims(cv, &g->w[LT_W_GPU_ACT_DIMS], 1, &op->threads)};
	} else {
		char name[64];
		op->copy = g->kind == LT_GPU_ACT_COPY ? g->arg : LT_GPU_COPY_UNKNOWN;
		if (g->kind == LT_GPU_ACT_COPY)
			snprintf(name, sizeof(name), "cudaMemcpy %s", rd_gpu_copy_name(g->arg));
		else
			snprintf(name, sizeof(name), "cudaMemset");
		uint32_t s = cv_string(cv, name);
		op->region = gpu_device_region(cv, s, s, CV_ROLE_GPU_MEMORY);
		op->bytes = g->w[LT_W_GPU_ACT_BYTES];
		op->attrs[op->nattrs++] = (struct cv_attr){CV_ATTR_GPU_BYTES, op->bytes};
		if (g->kind == LT_GPU_ACT_COPY)
			op->attrs[op->nattrs++] = (struct cv_attr){
			    CV_ATTR_GPU_COPY_KIND, cv_string(cv, rd_gpu_copy_name(g->arg))};
	}
	uint64_t *slot = corr ? cv_idmap_get(&ps->gcorr, corr, 0) : NULL;
	const struct gcall *call = slot && *slot ? &ps->gcalls[*slot - 1] : NULL;
	if (call) {
		op->host_loc = call->loc;
		op->host_ns = call->ns;
	}
	if (win && g->kind == LT_GPU_ACT_COPY &&
	    (g->arg == LT_GPU_COPY_HTOD || g->arg == LT_GPU_COPY_DTOH)) {
		op->rma = 1;
		op->win = (uint32_t)(win - cv->gpu_wins);
		op->remote = master;
		for (uint32_t i = 0; call && i < win->nmembers; i++)
			if (win->members[i] == call->loc)
				op->remote = i;
	}
}

/*
 * After the process's merge: its device operations on one location per stream (in a
 * location group per device context), each stream's in time order.  Device times are the
 * process's CLOCK_MONOTONIC, put on the timeline as its threads' are; where an operation
 * would start before the previous one on its stream ended (clock interpolation, CUPTI's
 * own rounding), it is moved to that end, and counted.
 */
void cv_gpu_flush(struct pstate *ps)
{
	struct cv *cv = ps->cv;
	if (!ps->ngacts || !cv->ops->gpu_activity)
		return;
	qsort(ps->gacts, ps->ngacts, sizeof(*ps->gacts), gact_cmp);
	struct cv_gpu_win *win = gpu_window(ps);
	uint32_t master = 0;
	for (uint32_t i = 0; win && i < win->nmembers; i++)
		if (cv->locs[win->members[i]].index == 0)
			master = i;
	uint32_t group = UINT32_MAX, nstreams = 0;
	size_t at = SIZE_MAX; /* the current stream's location */
	uint64_t last = 0;
	for (uint32_t i = 0; i < ps->ngacts && !ps->failed; i++) {
		const struct gact *g = &ps->gacts[i];
		int new_ctx = i == 0 || g->w[LT_W_GPU_ACT_CONTEXT] != g[-1].w[LT_W_GPU_ACT_CONTEXT];
		if (new_ctx || g->w[LT_W_GPU_ACT_STREAM] != g[-1].w[LT_W_GPU_ACT_STREAM]) {
			if (at != SIZE_MAX && CV_EMIT_RC(cv, location_end, &cv->locs[at]))
				ps->failed = 1;
			if (new_ctx)
				group = UINT32_MAX;
			struct cv_loc *l = gpu_stream_loc(ps, g, &group, nstreams++);
			if (!l) {
				ps->failed = 1;
				return;
			}
			at = (size_t)(l - cv->locs);
			if (win && win->nmembers == win->cap) {
				uint32_t *m = cv_grow(win->members, &win->cap, sizeof(*m));
				if (m)
					win->members = m;
			}
			if (win && win->nmembers < win->cap)
				win->members[win->nmembers++] = (uint32_t)at;
			last = 0;
		}
		struct cv_gpu_op op;
		gpu_op(ps, g, win, master, &op);
		op.start = cv_mono_to_ns(ps, g->w[LT_W_GPU_ACT_START]);
		op.end = cv_mono_to_ns(ps, g->w[LT_W_GPU_ACT_END]);
		if (op.start < last || op.end < op.start) {
			cv->stats.gpu_clamped++;
			if (op.start < last)
				op.start = last;
			if (op.end < op.start)
				op.end = op.start;
		}
		last = op.end;
		cv_note_time(ps, op.start);
		cv_note_time(ps, op.end);
		cv->stats.gpu_ops++;
		CV_EMIT(cv, gpu_activity, &cv->locs[at], &op);
	}
	if (at != SIZE_MAX && CV_EMIT_RC(cv, location_end, &cv->locs[at]))
		ps->failed = 1;
}

/* At the process's end: device memory GPU calls allocated and nothing freed. */
void cv_gpu_leaks(struct pstate *ps)
{
	struct cv *cv = ps->cv;
	for (uint32_t i = 0; i < ps->gmem.n; i++) {
		const struct kalloc *k = &ps->gmem.a[i];
		char where[600], text[1400];
		cv_scl_text(cv, k->scl, where, sizeof(where));
		snprintf(text, sizeof(text),
			 "never freed (leak): %" PRIu64 " bytes of %s at 0x%" PRIx64
			 ", allocated by %s at %s",
			 k->bytes, cv->strings[k->space], k->addr, cv->strings[k->label], where);
		cv_leak_add(ps, k, CV_MARK_GPU_LEAK, text);
	}
}
