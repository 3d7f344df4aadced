// SPDX-License-Identifier: BSD-3-Clause
/*
 * timeline.c - what the HTML report draws over time, summarised so that its size does not
 * grow with the events (accum.h): per thread, RP_BINS bins of equal width, each naming the
 * region the thread spent most of that bin in (its innermost open call) and the CPU it
 * last ran on; per quantity (a memory space's bytes, a sampler's metric), the bins'
 * maxima.  A bin's width starts at 1 us and doubles, pairs of bins merging, whenever the
 * time goes past the last bin: a thread of 1 ms and a run of an hour both fill the bins.
 * Merging keeps, of two bins, the region with more time (a summary, not a sum).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"

#define FIRST_WIDTH 1000 /* ns */

struct tl_bin {
	uint32_t region; /* region id + 1 of the most time; 0: none */
	int32_t cpu;	 /* -1: not known */
	uint64_t ns;	 /* that region's time in the bin */
};

struct acc_timeline {
	uint64_t origin, width, last;
	uint32_t cur; /* region id + 1 open now (innermost) */
	struct tl_bin b[RP_BINS];
};

static void tl_widen(struct acc_timeline *tl)
{
	for (uint32_t i = 0; i < RP_BINS / 2; i++) {
		struct tl_bin x = tl->b[2 * i], y = tl->b[2 * i + 1];
		tl->b[i] = y.ns > x.ns ? y : x;
		tl->b[i].cpu = y.cpu >= 0 ? y.cpu : x.cpu;
	}
	for (uint32_t i = RP_BINS / 2; i < RP_BINS; i++)
		tl->b[i] = (struct tl_bin){0, -1, 0};
	tl->width *= 2;
}

/* The bin of ts, widening as needed. */
static uint32_t tl_bin_of(struct acc_timeline *tl, uint64_t ts)
{
	uint64_t d = ts > tl->origin ? ts - tl->origin : 0;
	while (d / tl->width >= RP_BINS)
		tl_widen(tl);
	return (uint32_t)(d / tl->width);
}

struct acc_timeline *acc_timeline_new(uint64_t origin)
{
	struct acc_timeline *tl = malloc(sizeof(*tl));
	if (!tl)
		return NULL;
	tl->origin = tl->last = origin;
	tl->width = FIRST_WIDTH;
	tl->cur = 0;
	for (uint32_t i = 0; i < RP_BINS; i++)
		tl->b[i] = (struct tl_bin){0, -1, 0};
	return tl;
}

/* [last, ts) was spent in the region open until now; from ts on, `region` (id + 1, 0:
 * none) is. */
void acc_timeline_at(struct acc_timeline *tl, uint64_t ts, uint32_t region)
{
	if (ts > tl->last && tl->cur) {
		uint32_t end = tl_bin_of(tl, ts - 1);
		for (uint32_t i = tl_bin_of(tl, tl->last); i <= end; i++) {
			uint64_t lo = tl->origin + (uint64_t)i * tl->width, hi = lo + tl->width;
			uint64_t from = tl->last > lo ? tl->last : lo, to = ts < hi ? ts : hi;
			struct tl_bin *b = &tl->b[i];
			if (b->region == tl->cur)
				b->ns += to - from;
			else if (to - from > b->ns)
				*b = (struct tl_bin){tl->cur, b->cpu, to - from};
		}
	}
	if (ts > tl->last)
		tl->last = ts;
	tl->cur = region;
}

void acc_timeline_cpu(struct acc_timeline *tl, uint64_t ts, int cpu)
{
	tl->b[tl_bin_of(tl, ts)].cpu = cpu;
}

int acc_timeline_build(const struct acc_timeline *tl, struct rp_thread *t)
{
	struct rp_timeline *o = calloc(1, sizeof(*o));
	if (!o)
		return -1;
	o->origin = tl->origin;
	o->width = tl->width;
	uint64_t last = (tl->last > tl->origin ? tl->last - tl->origin : 0) / tl->width;
	uint32_t n = last < RP_BINS ? (uint32_t)last + 1 : RP_BINS; /* acc_timeline_at widened */
	o->n = n;
	for (uint32_t i = 0; i < n; i++) {
		o->region[i] = (int32_t)tl->b[i].region;
		o->cpu[i] = tl->b[i].cpu;
	}
	t->timeline = o;
	return 0;
}

/* ---- series ---- */

struct rp_series *acc_series_new(const char *name, const char *unit, uint64_t origin)
{
	struct rp_series *s = calloc(1, sizeof(*s));
	if (!s || !(s->name = strdup(name)) || !(s->unit = strdup(unit))) {
		if (s)
			free(s->name);
		free(s);
		return NULL;
	}
	s->origin = origin;
	s->width = FIRST_WIDTH;
	for (uint32_t i = 0; i < RP_BINS; i++)
		s->v[i] = NAN;
	return s;
}

void acc_series_add(struct rp_series *s, uint64_t ts, double v)
{
	uint64_t d = ts > s->origin ? ts - s->origin : 0;
	while (d / s->width >= RP_BINS) {
		for (uint32_t i = 0; i < RP_BINS / 2; i++) {
			double x = s->v[2 * i], y = s->v[2 * i + 1];
			s->v[i] = isnan(x) || y > x ? y : x;
		}
		for (uint32_t i = RP_BINS / 2; i < RP_BINS; i++)
			s->v[i] = NAN;
		s->width *= 2;
	}
	uint32_t i = (uint32_t)(d / s->width);
	if (isnan(s->v[i]) || v > s->v[i])
		s->v[i] = v;
	if (i + 1 > s->n)
		s->n = i + 1;
}

void acc_series_free(struct rp_series *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->unit);
	free(s);
}

struct rp_series *acc_series(struct acc *a, const char *name, const char *unit, uint64_t ts)
{
	for (size_t i = 0; i < a->nseries; i++)
		if (!strcmp(a->series[i]->name, name))
			return a->series[i];
	struct rp_series **n = realloc(a->series, (a->nseries + 1) * sizeof(*n));
	if (!n) {
		a->oom = 1;
		return NULL;
	}
	a->series = n;
	if (!(n[a->nseries] = acc_series_new(name, unit, ts))) {
		a->oom = 1;
		return NULL;
	}
	return n[a->nseries++];
}

void acc_message(struct acc *a, uint32_t size, uint32_t src, uint32_t dst, uint64_t bytes)
{
	if (!size || size > 4096 || src >= size || dst >= size)
		return;
	if (size != a->mpi_size) {
		if (a->mpi_size) /* one world per run */
			return;
		a->mpi_msgs = calloc((size_t)size * size, sizeof(*a->mpi_msgs));
		a->mpi_bytes = calloc((size_t)size * size, sizeof(*a->mpi_bytes));
		if (!a->mpi_msgs || !a->mpi_bytes) {
			free(a->mpi_msgs);
			free(a->mpi_bytes);
			a->mpi_msgs = a->mpi_bytes = NULL;
			a->oom = 1;
			return;
		}
		a->mpi_size = size;
	}
	a->mpi_msgs[(size_t)src * size + dst]++;
	a->mpi_bytes[(size_t)src * size + dst] += bytes;
}
