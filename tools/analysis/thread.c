// SPDX-License-Identifier: BSD-3-Clause
/*
 * thread.c - per-thread state: the time of a record on the trace's timeline, the
 * thread's location, its region stack (push, matched pop, unwind of what was left open),
 * and the heap that merges a process's threads in time.
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

struct tstate *cv_thread_by_index(struct pstate *ps, uint32_t index)
{
	size_t lo = 0, hi = ps->nts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ps->ts[mid].index == index)
			return &ps->ts[mid];
		if (ps->ts[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int before(const struct tstate *a, const struct tstate *b)
{
	return a->key < b->key || (a->key == b->key && a->index < b->index);
}

void cv_heap_down(struct pstate *ps, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < ps->nheap && before(ps->heap[l], ps->heap[m]))
			m = l;
		if (l + 1 < ps->nheap && before(ps->heap[l + 1], ps->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		struct tstate *t = ps->heap[i];
		ps->heap[i] = ps->heap[m];
		ps->heap[m] = t;
		i = m;
	}
}

/* Process ps's CLOCK_MONOTONIC nanoseconds `mono` on the trace's timeline: moved onto rank
 * 0's clock (an MPI rank), then by the host's offset. */
uint64_t cv_mono_to_ns(struct pstate *ps, uint64_t mono)
{
	int64_t ns, local = mono > (UINT64_C(1) << 62) ? INT64_C(1) << 62 : (int64_t)mono;
	if (ps->nmpi_clock && __builtin_add_overflow(local, cv_mpi_offset(ps, local), &local))
		local = INT64_MAX;
	/* the offset comes from another host's clock readings: saturate */
	if (__builtin_add_overflow(local, ps->offset_ns, &ns))
		ns = ps->offset_ns < 0 ? 0 : INT64_MAX;
	return ns < 0 ? 0 : (uint64_t)ns;
}

/* A time written: the process's and the trace's extent. */
void cv_note_time(struct pstate *ps, uint64_t v)
{
	if (v > ps->last_ns)
		ps->last_ns = v;
	if (v < ps->cv->stats.first_ns)
		ps->cv->stats.first_ns = v;
	if (v > ps->cv->stats.last_ns)
		ps->cv->stats.last_ns = v;
}

uint64_t cv_to_ns(struct pstate *ps, struct tstate *t, uint64_t ticks)
{
	uint64_t v = cv_mono_to_ns(ps, rd_ticks_to_ns(ps->p, ticks));
	if (v < t->last_ns) /* never backwards on a location */
		v = t->last_ns;
	t->last_ns = v;
	cv_note_time(ps, v);
	return v;
}

/* The location of thread t, begun on its first event.  NULL after an output error. */
struct cv_loc *cv_loc_of(struct pstate *ps, struct tstate *t)
{
	struct cv *cv = ps->cv;
	if (t->loc != SIZE_MAX)
		return &cv->locs[t->loc];
	if (cv->nlocs == cv->locs_cap) {
		uint32_t cap = (uint32_t)cv->locs_cap;
		struct cv_loc *a = cv_grow(cv->locs, &cap, sizeof(*a));
		if (!a) {
			ps->failed = 1;
			return NULL;
		}
		cv->locs = a;
		cv->locs_cap = cap;
	}
	char name[300];
	if (t->index == 0)
		snprintf(name, sizeof(name), "Master thread");
	else
		snprintf(name, sizeof(name), "Pthread thread %u", t->index);
	struct cv_loc *l = &cv->locs[cv->nlocs];
	uint32_t sid = t->name ? t->name - 1 : cv_string(cv, name);
	*l = (struct cv_loc){.id = (uint64_t)t->index << 32 | ps->pidx,
			     .process = ps->pidx,
			     .index = t->index,
			     .name = sid};
	t->loc = cv->nlocs++;
	cv->procs[ps->pidx].nlocs++;
	cv->stats.threads++;
	if (CV_EMIT_RC(cv, location_begin, l)) {
		ps->failed = 1;
		return NULL;
	}
	return l;
}

/* Pushes a frame; 0, or -1 when it cannot (then the caller writes no Enter either). */
int cv_push(struct cv *cv, struct tstate *t, uint32_t region, int fn, uint64_t obj, uint64_t obj2)
{
	if (t->too_deep || (t->depth == t->cap && t->cap == STACK_MAX)) {
		t->too_deep++; /* its leave is dropped too (pop_match), so the others still pair */
		cv->stats.too_deep++;
		return -1;
	}
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		struct frame *a = realloc(t->stack, cap * sizeof(*a));
		if (!a) {
			cv->stats.anomalies++;
			return -1;
		}
		t->stack = a;
		t->cap = cap;
	}
	t->stack[t->depth++] = (struct frame){region, fn, obj, obj2, 0};
	return 0;
}

int cv_closed_by_converter(int fn, enum close_how how)
{
	if (fn == FN_MAIN || fn == LT_FN_execve) /* ends with the process / never returns */
		return 0;
	if (how == CLOSE_THREAD_END)
		return fn != FN_START && fn != LT_FN_pthread_exit;
	return 1;
}

/* Closes the frames above depth `to`, marking those the trace left open. */
void cv_unwind(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, uint32_t to,
	       enum close_how how)
{
	while (t->depth > to) {
		t->depth--;
		const struct frame *f = &t->stack[t->depth];
		int c = cv_closed_by_converter(f->fn, how);
		if (f->fn == FN_MPI)
			cv_mpi_coll_close(cv, l, t, ns);
		CV_EMIT(cv, leave, l, ns, f->region, c);
		if (f->fn == FN_OMP(LT_OMP_parallel))
			CV_EMIT(cv, team_end, l, ns, (uint32_t)f->obj2);
		if (c)
			cv->stats.unclosed++;
	}
}

/* Pops up to and including the innermost frame matching (fn, region); NULL if none. */
struct frame *cv_pop_match(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, int fn,
			   uint32_t region)
{
	if (t->too_deep) { /* the leave of the innermost frame push refused */
		t->too_deep--;
		return NULL;
	}
	for (uint32_t i = t->depth; i-- > 0;) {
		struct frame *f = &t->stack[i];
		if (fn >= 0 ? f->fn == fn : (f->fn == FN_USER && f->region == region)) {
			cv_unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
			t->depth = i;
			return f;
		}
	}
	if (!t->window)
		cv->stats.anomalies++;
	return NULL;
}

/* What selective recording left out of thread t ("dropped" lines of meta), as markers. */
static void dropped_markers(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns)
{
	static const char *const why[LT_DROP_CAUSES] = {
	    [LT_DROP_SHORT] = "shorter than LIBTRACE_MIN_DURATION",
	    [LT_DROP_FILTER] = "names filtered out (LIBTRACE_EXCLUDE, LIBTRACE_INCLUDE)",
	};
	for (size_t i = 0; i < ps->p->ndropped; i++) {
		const struct rd_lost *d = &ps->p->dropped[i];
		if (d->thread != t->index || d->cause >= LT_DROP_CAUSES)
			continue;
		char text[160];
		snprintf(text, sizeof(text), "%" PRIu64 " calls and regions not recorded: %s",
			 d->count, why[d->cause]);
		CV_EMIT(ps->cv, marker, l, ns, CV_MARK_DROPPED, text);
	}
}

/* After a thread's last record: close what the trace left open. */
void cv_thread_done(struct pstate *ps, struct tstate *t)
{
	struct cv *cv = ps->cv;
	if (t->loc != SIZE_MAX) {
		struct cv_loc *l = &cv->locs[t->loc];
		uint64_t ns = t->last_ns, end_ns = 0;
		dropped_markers(ps, t, l, ns);
		/* The main thread ends with the process, and so does a thread still alive when
		 * the process ended normally (a pool thread waiting until exit): what it left
		 * open lasted until then, not until its last record.  "Then" is when the tracer
		 * began its own end: what follows is the tracer's time, not the program's. */
		if (ps->p->ended && (t->program || (!t->ended && !t->cur.truncated))) {
			/* (cv_to_ns never goes back on a location: the earlier stamp first) */
			uint64_t ending =
			    ps->p->ending_ticks ? cv_to_ns(ps, t, ps->p->ending_ticks) : 0;
			end_ns = cv_to_ns(ps, t, ps->p->end_ticks);
			ns = ending && ending < end_ns ? ending : end_ns;
		}
		if (t->cur.truncated) {
			cv->stats.truncated++;
			CV_EMIT(cv, marker, l, ns, CV_MARK_TRUNCATED,
				"the thread's records end where the trace file was cut "
				"short: what followed is missing");
		}
		if (!t->ended) {
			uint32_t open = 0;
			for (uint32_t i = 0; i < t->depth; i++)
				open += cv_closed_by_converter(t->stack[i].fn, CLOSE_CUT);
			if (open) {
				char text[128];
				snprintf(
				    text, sizeof(text),
				    "%u regions left open by the trace, closed by the converter",
				    open);
				CV_EMIT(cv, marker, l, ns, CV_MARK_CLOSED, text);
			}
			cv_release_held(ps, l, t, ns);
			cv_unwind(cv, l, t, ns, 0, CLOSE_CUT);
			if (t->began)
				CV_EMIT(cv, thread_end, l, ns, t->index);
			if (t->program) {
				CV_EMIT(cv, program_end, l, ns);
				if (end_ns > ns)
					CV_EMIT(cv, tracer_end, l, ns, end_ns);
			}
			t->ended = 1;
		}
		cv_core_span_end(ps, t, ns);
		if (CV_EMIT_RC(cv, location_end, l))
			ps->failed = 1;
		t->done = 1;
	}
	rd_cursor_fini(&t->cur);
	free(t->stack);
	t->stack = NULL;
	free(t->held);
	t->held = NULL;
}

/* A thread's life: THREAD_BEGIN, _END, _CREATE, _WAIT, _NAME. */
void cv_thread_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	switch (r->type) {
	case LT_REC_THREAD_BEGIN: {
		uint64_t start = lt_rec_word(r, LT_W_THREAD_BEGIN_START);
		uint32_t parent = np > LT_W_THREAD_BEGIN_PARENT
				      ? (uint32_t)(pl[LT_W_THREAD_BEGIN_PARENT] >> 32)
				      : LT_NO_THREAD;
		uint32_t tid = (uint32_t)lt_rec_word(r, LT_W_THREAD_BEGIN_PARENT);
		if (parent != LT_NO_THREAD && t->created && !t->began) {
			CV_EMIT(cv, thread_begin, l, ns, t->index, tid);
			t->began = 1;
		}
		if (t->index == 0 && parent == LT_NO_THREAD && !t->program) {
			CV_EMIT(cv, program_begin, l, ns, ps->p);
			t->program = 1;
			if (ps->p->started_paused) /* LIBTRACE_START_PAUSED: off until a resume */
				CV_EMIT(cv, measurement, l, ns, 0);
		}
		int pushed = -1;
		if (start && cv_omp_pool_start(ps->p, start)) {
			/* An OpenMP runtime's thread, named as Score-P names them; its time
			 * between teams is idle, not a function of its own. */
			char name[64];
			snprintf(name, sizeof(name), "OpenMP thread %u", t->index);
			if (!t->name)
				l->name = cv_string(cv, name);
		} else if (start) {
			pushed = cv_push(cv, t, cv_code_region(cv, ps->p, start), FN_START, 0, 0);
		} else if (t->index == 0 && parent == LT_NO_THREAD && !ps->p->main_recorded) {
			pushed = cv_push(cv, t, cv_main_region(cv, ps->p), FN_MAIN, 0, 0);
		}
		if (pushed == 0)
			CV_EMIT(cv, enter, l, ns, t->stack[t->depth - 1].region);
		break;
	}
	case LT_REC_MAIN: /* the program's main begins or returns (start.c) */
		if (r->sub && !cv_push(cv, t, cv_main_region(cv, ps->p), FN_MAIN, 0, 0)) {
			CV_EMIT(cv, enter, l, ns, t->stack[t->depth - 1].region);
		} else if (!r->sub) {
			uint32_t i = t->depth;
			while (i-- > 0 && t->stack[i].fn != FN_MAIN)
				;
			if (i == UINT32_MAX) {
				cv->stats.anomalies += !t->window;
				break;
			}
			cv_unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
			t->depth = i;
			CV_EMIT(cv, leave, l, ns, t->stack[i].region, 0);
		}
		break;
	case LT_REC_THREAD_END:
		cv_release_held(ps, l, t, ns);
		cv_unwind(cv, l, t, ns, 0, CLOSE_THREAD_END);
		if (t->began)
			CV_EMIT(cv, thread_end, l, ns, t->index);
		if (t->program)
			CV_EMIT(cv, program_end, l, ns);
		t->ended = 1;
		break;
	case LT_REC_THREAD_CREATE: {
		struct tstate *child = cv_thread_by_index(ps, r->arg);
		CV_EMIT(cv, thread_create, l, ns, r->arg);
		if (child)
			child->created = 1;
		break;
	}
	case LT_REC_THREAD_WAIT: {
		struct tstate *joined = cv_thread_by_index(ps, r->arg);
		if (joined && joined->began && joined->ended)
			CV_EMIT(cv, thread_wait, l, ns, r->arg);
		break;
	}
	case LT_REC_THREAD_NAME: {
		const char *name = rd_string(ps->p, r->arg);
		struct tstate *named =
		    np > LT_W_THREAD_NAME_THREAD
			? cv_thread_by_index(ps, (uint32_t)pl[LT_W_THREAD_NAME_THREAD])
			: NULL;
		if (name && named) {
			char buf[400];
			snprintf(buf, sizeof(buf), "%s (thread %u)", name, named->index);
			named->name = cv_string(cv, buf) + 1;
			if (named->loc != SIZE_MAX) /* else: its location takes it when it begins */
				cv->locs[named->loc].name = named->name - 1;
		}
		break;
	}
	default:
		break;
	}
}
