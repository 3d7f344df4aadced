// SPDX-License-Identifier: BSD-3-Clause
/*
 * merge.c - the analysis core's driver (see convert.h): reads each process, merges its
 * threads in time with a heap of record cursors, and hands each record to the file that
 * knows its meaning.
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

static const char *lost_cause(unsigned cause)
{
	switch (cause) {
	case LT_LOST_BUFFER:
		return "the thread's buffer was full (overflow policy drop)";
	case LT_LOST_IO:
		return "the events file could not be written";
	case LT_LOST_NORING:
		return "the thread got no buffer";
	case LT_LOST_UNSEEN:
		return "recorded in a process this thread made with a raw clone (not fork), which "
		       "has no trace of its own";
	}
	return "unknown cause";
}

static void handle_rec(struct pstate *ps, struct tstate *t, const struct lt_rec *r)
{
	if (r->type == LT_REC_GPU_ACTIVITY) { /* the device's, whichever thread wrote it */
		ps->cv->stats.records++;
		ps->cv->done_bytes += r->words * 8u;
		cv_gpu_collect(ps, r);
		return;
	}
	if (t->index == ps->p->sampler_thread) {
		cv_sampler_record(ps, t, r);
		return;
	}
	struct cv *cv = ps->cv;
	struct cv_loc *l = cv_loc_of(ps, t);
	if (!l)
		return;
	uint64_t ns = cv_to_ns(ps, t, r->ts);
	cv->stats.records++;
	cv->done_bytes += r->words * 8u;
	if (t->ended && r->type != LT_REC_LOST) {
		cv->stats.anomalies++; /* nothing follows a thread's end */
		return;
	}
	switch (r->type) {
	case LT_REC_THREAD_BEGIN:
	case LT_REC_THREAD_END:
	case LT_REC_THREAD_CREATE:
	case LT_REC_THREAD_WAIT:
	case LT_REC_THREAD_NAME:
	case LT_REC_MAIN:
		cv_thread_record(ps, t, l, ns, r);
		break;
	case LT_REC_CALL_ENTER:
	case LT_REC_CALL_LEAVE:
	case LT_REC_CALL:
		cv_call_record(ps, t, l, ns, r);
		break;
	case LT_REC_REGION_ENTER:
	case LT_REC_REGION_LEAVE:
	case LT_REC_MARKER:
	case LT_REC_COUNTER:
		cv_user_record(ps, t, l, ns, r);
		break;
	case LT_REC_MPI_ENTER:
	case LT_REC_MPI_LEAVE:
	case LT_REC_MPI_P2P:
	case LT_REC_MPI_COLL:
	case LT_REC_MPI_COMM:
		cv_mpi_record(ps, t, l, ns, r);
		break;
	case LT_REC_GPU_ENTER:
		cv_gpu_enter(ps, t, l, ns, r);
		break;
	case LT_REC_GPU_LEAVE:
		cv_gpu_leave(ps, t, l, ns, r);
		break;
	case LT_REC_CPU:
		cv_cpu_change(ps, t, ns, r->arg, r->sub);
		break;
	case LT_REC_STACK:
		cv_stack_record(ps, t, l, ns, r);
		break;
	case LT_REC_LOST: {
		uint64_t n = lt_rec_word(r, LT_W_LOST_COUNT);
		char text[160];
		snprintf(text, sizeof(text), "%" PRIu64 " events lost: %s", n, lost_cause(r->sub));
		cv->stats.lost += n;
		CV_EMIT(cv, marker, l, ns, CV_MARK_LOST, text);
		break;
	}
	default:
		if (r->type >= LT_REC_OMP_FORK && r->type <= LT_REC_OMP_CHUNK)
			cv_omp_record(ps, t, l, ns, r);
		else if (r->type >= LT_REC_KOKKOS_BEGIN && r->type <= LT_REC_KOKKOS_INFO)
			cv_kokkos_record(ps, t, l, ns, r);
		else
			cv->stats.anomalies++;
	}
}

/* CALLSITE and COUNTERS belong to the record after them; the others are converted with
 * them (handle_rec). */
static void handle(struct pstate *ps, struct tstate *t, const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	if (r->type == LT_REC_CALLSITE || r->type == LT_REC_COUNTERS) {
		cv->stats.records++;
		cv->done_bytes += r->words * 8u;
		if (r->type == LT_REC_CALLSITE) {
			t->ndeep = np;
			memcpy(t->deep, pl, np * 8u);
		} else if (ps->papi && r->sub == (1u << cv->papis[ps->papi - 1].n) - 1 &&
			   np == cv->papis[ps->papi - 1].n) {
			memcpy(t->values, pl, np * 8u);
			t->has_values = 1;
		} else {
			cv->stats.anomalies++; /* a partial reading: OTF2 has no such metric */
		}
		return;
	}
	if (t->cur.callsite && r->type != LT_REC_LOST)
		cv_callsite(ps, t, t->cur.callsite);
	if (t->has_values) {
		cv->cur_papi = ps->papi;
		cv->cur_values = t->values;
	}
	handle_rec(ps, t, r);
	t->ndeep = 0;
	t->has_values = 0;
	cv->cur_scl = cv->cur_ctx = cv->cur_papi = 0;
	cv->cur_values = NULL;
}

static void progress(struct cv *cv, int last)
{
	if (!cv->progress || !cv->total_bytes)
		return;
	/* File sizes count headers and unused ring space: the end is 100 % by definition. */
	unsigned pct = last || cv->done_bytes >= cv->total_bytes
			   ? 100
			   : (unsigned)(cv->done_bytes * 100 / cv->total_bytes);
	if (!last && pct == (unsigned)cv->progress_shown)
		return;
	cv->progress_shown = (int)pct;
	char bar[41];
	memset(bar, '#', pct * 40 / 100);
	memset(bar + pct * 40 / 100, '.', 40 - pct * 40 / 100);
	bar[40] = '\0';
	fprintf(stderr, "\rtrace2otf2 [%s] %3u%%", bar, pct);
	if (last)
		fputc('\n', stderr);
	fflush(stderr);
}

/* Where a flight recorder's window is whole from: a marker on the thread whose record comes
 * first from then on. */
static void flight_marker(struct pstate *ps, struct tstate *t)
{
	struct cv_loc *l = cv_loc_of(ps, t);
	if (!l)
		return;
	char text[160];
	snprintf(text, sizeof(text),
		 "flight-recorder window (LIBTRACE_MODE=flight): every thread's records are whole "
		 "from here on; older ones were not kept, not lost");
	CV_EMIT(ps->cv, marker, l, cv_to_ns(ps, t, ps->p->flight_ticks), CV_MARK_FLIGHT, text);
}

static void convert_process(struct cv *cv, struct rd_process *p, uint32_t pidx,
			    const struct rank0 *r0, uint32_t *next_lock_id, rd_warn_fn warn,
			    void *wctx, int *failed)
{
	struct pstate ps = {.cv = cv,
			    .p = p,
			    .pidx = pidx,
			    .next_lock_id = next_lock_id,
			    .node_loc = SIZE_MAX,
			    .proc_loc = SIZE_MAX};
	struct cv_process *cp = &cv->procs[pidx];
	ps.node_metrics = cv->node_owner && cv->node_owner[cp->host] == (int)pidx;
	ps.offset_ns = cv_host_offset(cv, cp->host, cp->real_minus_mono);
	cv_mpi_clock(cv, &ps, r0);
	cp->first_loc = cv->nlocs;
	uint64_t truncated_before = cv->stats.truncated;
	ps.user_regions = calloc(p->nstrings + 1, sizeof(*ps.user_regions));
	/* The sampler thread (kept out of p->threads) merges in too, last: its index is the
	 * highest, so ps.ts stays sorted. */
	ps.ts = calloc(p->nthreads + 1, sizeof(*ps.ts));
	ps.heap = calloc(p->nthreads + 1, sizeof(*ps.heap));
	ps.smetric = calloc(p->nmetrics + 1, sizeof(*ps.smetric));
	if (!ps.ts || !ps.heap || !ps.user_regions || !ps.smetric) {
		*failed = 1;
		goto out;
	}
	ps.nts = p->nthreads + (p->sampler.count > 0);
	ps.papi = cv_papi_set(cv, p);
	for (size_t i = 0; i < ps.nts; i++) {
		struct tstate *t = &ps.ts[i];
		const struct rd_thread *th = i < p->nthreads ? &p->threads[i] : &p->sampler;
		t->index = th->index;
		t->loc = SIZE_MAX;
		t->cpu = -1;
		t->window = p->flight != 0;
		rd_cursor_init(&t->cur, p, th, warn, wctx);
	}
	/* Prime every cursor (a small first read each), then merge. */
	for (size_t i = 0; i < ps.nts; i++) {
		struct tstate *t = &ps.ts[i];
		t->rec = rd_cursor_next(&t->cur);
		if (!t->rec) {
			cv_thread_done(&ps, t);
			continue;
		}
		t->key = t->rec->ts;
		ps.heap[ps.nheap++] = t;
	}
	for (size_t i = ps.nheap / 2; i-- > 0;)
		cv_heap_down(&ps, i);
	uint64_t n = 0, flight_at = p->flight_ticks;
	cv->stats.flight += p->flight != 0;
	while (ps.nheap && !ps.failed && !cv->out_failed) {
		struct tstate *t = ps.heap[0];
		if (t->rec && flight_at && t->rec->ts >= flight_at &&
		    t->index != p->sampler_thread) {
			flight_marker(&ps, t);
			flight_at = 0; /* said once */
		}
		if (t->rec) {
			handle(&ps, t, t->rec);
			t->rec = rd_cursor_next(&t->cur);
		}
		if (t->rec) {
			t->key = t->rec->ts;
		} else if (t->key != UINT64_MAX && cv_omp_team_pending(t)) {
			t->key = UINT64_MAX; /* done after the others: its team's join is to come */
		} else {
			cv_thread_done(&ps, t);
			ps.heap[0] = ps.heap[--ps.nheap];
		}
		cv_heap_down(&ps, 0);
		if ((++n & 0xfffff) == 0)
			progress(cv, 0);
	}
	if (cv->out_failed)
		ps.failed = 1;
	/* After an output error: release what is still open. */
	for (size_t i = 0; i < ps.nheap; i++) {
		rd_cursor_fini(&ps.heap[i]->cur);
		free(ps.heap[i]->stack);
		free(ps.heap[i]->held);
	}
	for (int node = 0; node < 2 && !ps.failed; node++) {
		size_t at = node ? ps.node_loc : ps.proc_loc;
		if (at != SIZE_MAX && CV_EMIT_RC(cv, location_end, &cv->locs[at]))
			ps.failed = 1;
	}
	if (!ps.failed)
		cv_gpu_flush(&ps);
	if (ps.failed)
		*failed = 1;
	/* A process without records still gets its main thread, without events: a readable
	 * archive says the process was there. */
	if (cp->nlocs == 0 && !*failed) {
		struct tstate t0 = {.index = 0, .loc = SIZE_MAX};
		struct cv_loc *l = cv_loc_of(&ps, &t0);
		if (!l || CV_EMIT_RC(cv, location_end, l))
			*failed = 1;
	}
	/* Files cut short where no thread's records showed it (whole chunks missing). */
	if (p->truncated && cv->stats.truncated == truncated_before && cp->nlocs && !*failed)
		CV_EMIT(cv, marker, &cv->locs[cp->first_loc], ps.last_ns, CV_MARK_TRUNCATED,
			"the process's trace files were cut short: what followed is missing");
	if (!*failed) {
		cv_kokkos_leaks(&ps);
		cv_gpu_leaks(&ps);
	}
	/* A process without an end line died (killed, crashed): say so on its first thread. */
	if (!p->ended && cp->nlocs && !*failed)
		CV_EMIT(cv, marker, &cv->locs[cp->first_loc], ps.last_ns, CV_MARK_TRUNCATED,
			"the process ended without its end record (killed or crashed): "
			"the trace holds everything up to its death");
out:
	free(ps.user_regions);
	free(ps.smetric);
	cv_idmap_free(&ps.pars);
	cv_idmap_free(&ps.levels);
	cv_idmap_free(&ps.tasks);
	cv_idmap_free(&ps.outliners);
	cv_idmap_free(&ps.writers);
	cv_idmap_free(&ps.depends);
	cv_idmap_free(&ps.untied);
	cv_idmap_free(&ps.ksections);
	cv_idmap_free(&ps.kregions);
	cv_alloc_free(&ps.kmem);
	free(ps.kspaces);
	cv_idmap_free(&ps.gregions);
	cv_idmap_free(&ps.gknames);
	cv_idmap_free(&ps.gcorr);
	free(ps.gcalls);
	cv_alloc_free(&ps.gmem);
	free(ps.gacts);
	free(ps.parked);
	free(ps.ts);
	free(ps.heap);
	free(ps.locks);
}

static uint64_t file_size(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

static void mark(struct cv *cv, size_t at)
{
	struct cv_sizes *m = &cv->marks[at];
	m->strings = cv->nstrings;
	m->regions = cv->nregions;
	m->metrics = cv->nmetrics;
	m->scls = cv->nscls;
	m->ctxs = cv->nctxs;
	m->papis = cv->npapis;
	m->comm_refs = cv->ncomm_refs;
	m->notes = (uint32_t)cv->nnotes;
}

struct sized {
	uint64_t size;
	int index;
};

static int by_size(const void *x, const void *y) /* largest first; ties by index */
{
	const struct sized *a = x, *b = y;
	if (a->size != b->size)
		return a->size > b->size ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

/*
 * A parallel conversion's share of the processes: balanced by their files' sizes, the
 * largest first, each to the rank with the least so far (the same on every rank).
 */
static int share(struct cv *cv, char **dirs, int ndirs)
{
	int n = cv->par->size;
	struct sized *order = calloc((size_t)ndirs + 1, sizeof(*order));
	uint64_t *load = calloc((size_t)n, sizeof(*load));
	cv->mine = calloc((size_t)ndirs + 1, 1);
	cv->marks = calloc((size_t)ndirs + 1, sizeof(*cv->marks));
	if (!order || !load || !cv->mine || !cv->marks) {
		free(order);
		free(load);
		return -1;
	}
	for (int i = 0; i < ndirs; i++)
		order[i] = (struct sized){
		    file_size(dirs[i], LT_EVENTS_FILE) + file_size(dirs[i], "ring"), i};
	qsort(order, (size_t)ndirs, sizeof(*order), by_size);
	for (int k = 0; k < ndirs; k++) {
		int least = 0;
		for (int r = 1; r < n; r++)
			if (load[r] < load[least])
				least = r;
		load[least] += order[k].size + 1;
		cv->mine[order[k].index] = least == cv->par->rank;
		if (least == cv->par->rank)
			cv->total_bytes += order[k].size; /* for the progress bar */
	}
	free(order);
	free(load);
	return 0;
}

int cv_convert(struct cv *cv, char **dirs, int ndirs, rd_warn_fn warn, void *wctx)
{
	int failed = 0;
	uint32_t next_lock_id = 0;
	if (ndirs < 0)
		ndirs = 0;
	cv->stats.first_ns = UINT64_MAX;
	if (cv->par && share(cv, dirs, ndirs))
		return -1;
	for (int i = 0; i < ndirs && !cv->par; i++)
		cv->total_bytes += file_size(dirs[i], LT_EVENTS_FILE) + file_size(dirs[i], "ring");
	cv->procs = calloc((size_t)ndirs, sizeof(*cv->procs));
	cv->max_procs = (size_t)ndirs;
	int *parent_pid = calloc((size_t)ndirs, sizeof(*parent_pid));
	cv->node_owner = calloc(cv->max_procs + 1, sizeof(*cv->node_owner));
	if (!cv->procs || !parent_pid || !cv->node_owner) {
		free(parent_pid);
		return -1;
	}
	for (size_t i = 0; i < cv->max_procs; i++)
		cv->node_owner[i] = -1; /* hosts are never more than processes */
	/* MPI rank 0's host and clock, the reference of the other ranks' clocks. */
	struct rank0 r0 = {0};
	for (int i = 0; i < ndirs; i++) { /* and whether a process sampled stacks */
		struct rd_process p;
		char err[PATH_MAX + 256];
		if (rd_process_meta(&p, dirs[i], quiet, NULL, err, sizeof(err)))
			continue;
		cv->sampling |= p.stack_period != 0;
		if (p.mpi_rank == 1 && p.mpi_size > 0 && p.nsyncs && !r0.found) {
			r0.found = 1;
			snprintf(r0.host, sizeof(r0.host), "%s", p.host[0] ? p.host : "localhost");
			r0.real_minus_mono = (int64_t)(p.syncs[0].real_ns - p.syncs[0].mono_ns);
		}
		rd_process_close(&p);
	}
	for (int i = 0; i < ndirs && !failed; i++) {
		struct rd_process p;
		char err[PATH_MAX + 256];
		if (rd_process_open(&p, dirs[i], warn, wctx, err, sizeof(err))) {
			warn(wctx, err);
			cv->stats.unreadable++;
			continue;
		}
		uint32_t pidx = (uint32_t)cv->nprocs++;
		if (cv->par) {
			mark(cv, pidx);
			cv->marks[pidx].converted = cv->mine[i];
		}
		struct cv_process *cp = &cv->procs[pidx];
		cp->dir_name = strdup(p.name);
		cp->pid = p.pid;
		cp->ppid = p.ppid;
		cp->host = cv_host_index(cv, p.host[0] ? p.host : "localhost");
		cp->ended = p.ended;
		cp->real_minus_mono = p.syncs[0].real_ns - p.syncs[0].mono_ns;
		parent_pid[pidx] = p.parent_pid;
		const char *exe = p.nargs ? p.args[0] : p.exe;
		const char *base = strrchr(exe, '/');
		char name[PATH_MAX + 32];
		if (p.mpi_rank > 0 && p.mpi_size > 0) /* as Score-P names ranks */
			snprintf(name, sizeof(name), "MPI Rank %d", p.mpi_rank - 1);
		else
			snprintf(name, sizeof(name), "%s [%d]", base ? base + 1 : exe, p.pid);
		cp->name = cv_string(cv, name);
		cp->program = strdup(base ? base + 1 : exe);
		cv_kokkos_metadata(cv, &p);
		for (size_t k = 0; k < p.nsampler_off; k++)
			cv_add_note(cv, "sampler", p.sampler_off[2 * k], p.sampler_off[2 * k + 1]);
		for (size_t k = 0; k < p.nstack_blocked; k++) {
			const struct rd_lost *b = &p.stack_blocked[k];
			char text[PATH_MAX + 200];
			snprintf(
			    text, sizeof(text),
			    "stack sampling: %s thread %u (tid %u) blocked the sampling signal: "
			    "%" PRIu64 " samples not taken",
			    name, b->thread, b->cause, b->count);
			cv_note(cv, text);
		}
		for (size_t k = 0; k < p.ngpu_off; k++)
			cv_add_note(cv, "gpu", p.gpu_off[2 * k], p.gpu_off[2 * k + 1]);
		if (p.gpu[0])
			cv_add_prop(cv, "LIBTRACE::GPU", p.gpu);
		if (p.gpu_clock[0])
			cv_add_prop(cv, "LIBTRACE::GPU_CLOCK", p.gpu_clock);
		cp->mpi_rank = p.mpi_size > 0 && p.mpi_rank > 0 ? p.mpi_rank - 1 : -1;
		if (p.mpi_size > 0 && (uint32_t)p.mpi_size > cv->mpi_world)
			cv->mpi_world = (uint32_t)p.mpi_size;
		/* The first process of a host to sample its node shows the node's metrics. */
		for (size_t k = 0; k < p.nmetrics && cv->node_owner; k++)
			if (p.metrics[k].node) {
				if (cv->node_owner[cp->host] < 0)
					cv->node_owner[cp->host] = (int)pidx;
				break;
			}
		uint64_t too_deep = cv->stats.too_deep;
		if (!cv->par || cv->mine[i])
			convert_process(cv, &p, pidx, &r0, &next_lock_id, warn, wctx, &failed);
		if (cv->stats.too_deep > too_deep) { /* never silently: damage, and said */
			char msg[PATH_MAX + 200];
			snprintf(msg, sizeof(msg),
				 "%s: %llu regions nested deeper than %u levels left out (with "
				 "their leaves): the converter follows no deeper",
				 p.dir, (unsigned long long)(cv->stats.too_deep - too_deep),
				 STACK_MAX);
			warn(wctx, msg);
			cv->stats.damaged = 1;
		}
		if (p.errors)
			cv->stats.damaged = 1;
		if (p.truncated || !p.ended)
			cv->stats.cut_processes++;
		cv->stats.processes++;
		rd_process_close(&p);
	}
	cv_link_creators(cv, parent_pid);
	free(parent_pid);
	if (!failed && cv_write_core_view(cv))
		failed = 1;
	progress(cv, 1);
	if (cv->par) {
		mark(cv, cv->nprocs);
		if (cv_unify(cv, failed))
			failed = 1;
	}
	if (cv->stats.first_ns == UINT64_MAX)
		cv->stats.first_ns = cv->stats.last_ns = 0;
	int rc =
	    cv->ops->finish ? cv->ops->finish(cv) : 0; /* closes the archive even after a failure */
	return failed ? -1 : rc;
}

void cv_free(struct cv *cv)
{
	for (uint32_t i = 0; i < cv->nstrings; i++)
		free(cv->strings[i]);
	free(cv->strings);
	cv_strmap_free(cv->string_map);
	cv_strmap_free(cv->region_map);
	cv_strmap_free(cv->metric_map);
	cv_strmap_free(cv->scl_map);
	cv_strmap_free(cv->ctx_map);
	free(cv->scls);
	free(cv->ctxs);
	free(cv->papis);
	free(cv->regions);
	free(cv->metrics);
	free(cv->hosts);
	for (size_t i = 0; i < cv->nprocs; i++) {
		free(cv->procs[i].dir_name);
		free(cv->procs[i].program);
	}
	free(cv->procs);
	free(cv->locs);
	for (uint32_t i = 0; i < cv->nteams; i++) {
		free(cv->teams[i].members);
		free(cv->teams[i].nums);
	}
	free(cv->teams);
	cv_strmap_free(cv->team_map);
	free(cv->leaks);
	free(cv->node_owner);
	for (size_t i = 0; i < cv->nnotes; i++)
		free(cv->notes[i]);
	free(cv->notes);
	free(cv->gpu_groups);
	for (uint32_t i = 0; i < cv->ngpu_wins; i++)
		free(cv->gpu_wins[i].members);
	free(cv->gpu_wins);
	free(cv->spans);
	for (size_t i = 0; i < cv->nprops * 2; i++)
		free(cv->props[i]);
	free(cv->props);
	for (uint32_t i = 0; i < cv->ncomms; i++)
		free(cv->comms[i].ranks);
	free(cv->comms);
	if (cv->comm_map)
		cv_idmap_free(&cv->comm_map->m);
	free(cv->comm_map);
	free(cv->mine);
	free(cv->marks);
	for (uint32_t i = 0; cv->region_keys && i < cv->nregions; i++)
		free(cv->region_keys[i]);
	free(cv->region_keys);
	struct cv_maps *m = &cv->maps;
	free(m->strings);
	free(m->regions);
	free(m->metrics);
	free(m->scls);
	free(m->sites);
	free(m->ctxs);
	free(m->papis);
	free(m->comm_refs);
	free(m->wins);
	free(m->locs);
	free(m->comms);
	if (cv->global) {
		cv_free(cv->global);
		free(cv->global);
	}
}
