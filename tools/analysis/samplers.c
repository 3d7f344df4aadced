// SPDX-License-Identifier: BSD-3-Clause
/*
 * samplers.c - the sampler thread's records as metrics on METRIC locations, the CPU a
 * thread runs on, and the per-core view (--core-view).
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

/* Process ps's METRIC location for its node's metrics (node) or its own, begun on first use:
 * ids (0xfffffffe or 0xfffffffd << 32) | process, which no thread has. */
static struct cv_loc *metric_loc(struct pstate *ps, int node)
{
	struct cv *cv = ps->cv;
	size_t *at = node ? &ps->node_loc : &ps->proc_loc;
	if (*at != SIZE_MAX)
		return &cv->locs[*at];
	struct cv_loc *l = cv_new_loc(cv);
	if (!l) {
		ps->failed = 1;
		return NULL;
	}
	char name[400];
	if (node)
		snprintf(name, sizeof(name), "%s node metrics",
			 cv->strings[cv->hosts[cv->procs[ps->pidx].host]]);
	else
		snprintf(name, sizeof(name), "Process metrics");
	uint32_t index = node ? 0xfffffffeu : 0xfffffffdu;
	*l = (struct cv_loc){.id = (uint64_t)index << 32 | ps->pidx,
			     .process = ps->pidx,
			     .index = index,
			     .name = cv_string(cv, name),
			     .kind = CV_LOC_METRIC};
	*at = cv->nlocs++;
	cv->procs[ps->pidx].nlocs++;
	if (CV_EMIT_RC(cv, location_begin, l)) {
		ps->failed = 1;
		return NULL;
	}
	return l;
}

/* The region that stands for thread t on the core locations (--core-view). */
static uint32_t thread_region(struct pstate *ps, struct tstate *t)
{
	struct cv *cv = ps->cv;
	char name[800];
	snprintf(name, sizeof(name), "%s %s", cv->strings[cv->procs[ps->pidx].name],
		 cv->strings[cv->locs[t->loc].name]);
	uint32_t sid = cv_string(cv, name);
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_USER, 0};
	return cv_region_id(cv, 'K', name, &r);
}

/* Thread t stops running on its CPU at ns: one span for --core-view. */
void cv_core_span_end(struct pstate *ps, struct tstate *t, uint64_t ns)
{
	struct cv *cv = ps->cv;
	if (!cv->core_view || t->cpu < 0 || t->loc == SIZE_MAX)
		return;
	if (cv->nspans == cv->spans_cap) {
		size_t cap = cv->spans_cap ? cv->spans_cap * 2 : 256;
		struct cv_core_span *a = realloc(cv->spans, cap * sizeof(*a));
		if (!a)
			return;
		cv->spans = a;
		cv->spans_cap = cap;
	}
	cv->spans[cv->nspans++] = (struct cv_core_span){cv->procs[ps->pidx].host, (uint32_t)t->cpu,
							thread_region(ps, t), t->cpu_since, ns};
}

/* Thread t runs on `cpu` (of NUMA node `node`, 0xffff: unknown) from ns on: the CPU and
 * NUMA node metrics of its location, written when they change. */
void cv_cpu_change(struct pstate *ps, struct tstate *t, uint64_t ns, uint32_t cpu, unsigned node)
{
	struct cv *cv = ps->cv;
	if (t->loc == SIZE_MAX || (int)cpu == t->cpu || cpu > 0x7fffffffu)
		return;
	if (!ps->m_cpu) {
		ps->m_cpu = cv_metric_id(cv, "CPU", 0, "") + 1;
		ps->m_node = cv_metric_id(cv, "NUMA node", 0, "") + 1;
	}
	struct cv_loc *l = &cv->locs[t->loc];
	CV_EMIT(cv, metric, l, ns, ps->m_cpu - 1, cpu);
	if (node != 0xffff)
		CV_EMIT(cv, metric, l, ns, ps->m_node - 1, node);
	cv_core_span_end(ps, t, ns);
	t->cpu = (int)cpu;
	t->cpu_since = ns;
}

/* A record of the sampler thread: metrics on the METRIC locations, other threads' CPUs. */
void cv_sampler_record(struct pstate *ps, struct tstate *t, const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const struct rd_process *p = ps->p;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	cv->stats.records++;
	cv->done_bytes += r->words * 8u;
	if (r->type == LT_REC_METRIC && np >= 1) {
		size_t i = r->arg;
		if (i >= p->nmetrics || p->metrics[i].id != r->arg)
			for (i = 0; i < p->nmetrics && p->metrics[i].id != r->arg; i++)
				;
		if (i == p->nmetrics) {
			cv->stats.anomalies++;
			return;
		}
		const struct rd_metric *m = &p->metrics[i];
		if (m->node && !ps->node_metrics)
			return; /* an earlier process on this host shows the node's metrics */
		if (!ps->smetric[i]) {
			uint32_t id = cv_metric_id(cv, m->name, r->sub == LT_VALUE_DOUBLE, m->unit);
			cv->metrics[id].accumulated = m->accumulated;
			ps->smetric[i] = id + 1;
		}
		struct cv_loc *l = metric_loc(ps, m->node);
		if (l)
			CV_EMIT(cv, metric, l, cv_to_ns(ps, t, r->ts), ps->smetric[i] - 1,
				pl[LT_W_METRIC_VALUE]);
	} else if (r->type == LT_REC_CPU && np >= 1) {
		struct tstate *o = cv_thread_by_index(ps, (uint32_t)pl[LT_W_CPU_THREAD]);
		if (o && o != t && o->loc != SIZE_MAX && !o->done && !o->ended)
			cv_cpu_change(ps, o, cv_to_ns(ps, o, r->ts), r->arg, r->sub);
	}
}

static int span_cmp(const void *x, const void *y)
{
	const struct cv_core_span *a = x, *b = y;
	if (a->host != b->host)
		return a->host < b->host ? -1 : 1;
	if (a->cpu != b->cpu)
		return a->cpu < b->cpu ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return a->to < b->to ? -1 : a->to > b->to;
}

/*
 * --core-view: one location per CPU of each host (after every process's, in a location
 * group of its own per host), on which each thread that ran there is a region from the
 * time it came to the time it left.  The CPU of a thread is known at its records' times
 * (start, affinity changes, the sampler's period): where two threads' spans overlap on a
 * CPU, the earlier one ends when the later one begins.
 */
int cv_write_core_view(struct cv *cv)
{
	if (!cv->core_view || !cv->nspans)
		return 0;
	qsort(cv->spans, cv->nspans, sizeof(*cv->spans), span_cmp);
	cv->first_core_loc = cv->nlocs;
	cv->ncore_hosts = cv->nhosts;
	for (size_t i = 0; i < cv->nspans;) {
		uint32_t host = cv->spans[i].host, cpu = cv->spans[i].cpu;
		struct cv_loc *l = cv_new_loc(cv);
		if (!l)
			return -1;
		char name[64];
		snprintf(name, sizeof(name), "CPU %u", cpu);
		uint32_t group = (uint32_t)cv->nprocs + host;
		*l = (struct cv_loc){.id = (uint64_t)cpu << 32 | group,
				     .process = group,
				     .index = cpu,
				     .name = cv_string(cv, name),
				     .kind = CV_LOC_CORE};
		cv->nlocs++;
		if (CV_EMIT_RC(cv, location_begin, l))
			return -1;
		uint64_t last = 0;
		for (; i < cv->nspans && cv->spans[i].host == host && cv->spans[i].cpu == cpu;
		     i++) {
			const struct cv_core_span *sp = &cv->spans[i];
			uint64_t from = sp->from > last ? sp->from : last, to = sp->to;
			if (i + 1 < cv->nspans && cv->spans[i + 1].host == host &&
			    cv->spans[i + 1].cpu == cpu && cv->spans[i + 1].from < to)
				to = cv->spans[i + 1].from;
			if (to < from)
				continue;
			CV_EMIT(cv, enter, l, from, sp->region);
			CV_EMIT(cv, leave, l, to, sp->region, 0);
			last = to;
		}
		if (CV_EMIT_RC(cv, location_end, l))
			return -1;
	}
	return 0;
}

/* A sample of a thread's call stack (LT_REC_STACK). */
void cv_stack_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		     const struct lt_rec *r)
{
	(void)t;
	struct cv *cv = ps->cv;
	unsigned n = r->words - 2u;
	uint32_t ctx = n ? cv_stack_context(ps, (const uint64_t *)(r + 1), n) : 0;
	if (!ctx) {
		cv->stats.anomalies++;
		return;
	}
	if (!cv->sample_period)
		cv_string(cv, "CPU time sampling"); /* the name of the interrupt generator */
	if (r->arg && (!cv->sample_period || r->arg < cv->sample_period))
		cv->sample_period = r->arg;
	CV_EMIT(cv, sample, l, ns, ctx - 1, r->arg);
}
