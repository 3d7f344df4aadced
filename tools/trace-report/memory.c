// SPDX-License-Identifier: BSD-3-Clause
/*
 * memory.c - the memory spaces of a run's processes (accum.h): per space, the allocations
 * live now, the high-water mark and the largest allocations live at it.  The readers hand
 * over Kokkos' allocations (the View's label, its space) and GPU runtime allocations (the
 * call and where it was made, "device memory"...).
 *
 * What was live at the mark is taken when the mark is passed for good: at the first free
 * after a new mark, or at the end.  Memory: per live allocation; a free looks the address
 * up from the newest allocation back (programs mostly free what they allocated last).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accum.h"
#include "json.h"

struct acc_alloc_live {
	uint64_t addr, bytes;
	char *label;
};

struct acc_space {
	uint32_t process;
	char *name;
	struct rp_series *series; /* the bytes live over time */
	struct acc_alloc_live *live;
	size_t nlive, cap;
	uint64_t cur, high, high_ts, allocs, frees;
	int dirty; /* the mark is newer than what was taken of it */
	struct rp_live top[RP_LIVE_MAX];
	size_t ntop;
	uint64_t live_at_high;
};

/* The space `name` of process, made when `make` (else NULL when it has had no allocation). */
static struct acc_space *space_of(struct acc *a, uint32_t process, const char *name, int make)
{
	for (size_t i = 0; i < a->nspaces; i++)
		if (a->spaces[i].process == process && !strcmp(a->spaces[i].name, name))
			return &a->spaces[i];
	if (!make)
		return NULL;
	struct acc_space *s = realloc(a->spaces, (a->nspaces + 1) * sizeof(*s));
	if (!s) {
		a->oom = 1;
		return NULL;
	}
	a->spaces = s;
	s = &a->spaces[a->nspaces];
	memset(s, 0, sizeof(*s));
	s->process = process;
	char title[300];
	snprintf(title, sizeof(title), "memory: %s (process index %u)", name, process);
	if (!(s->name = json_utf8_dup(name)) || !(s->series = acc_series(a, title, "B", 0))) {
		free(s->name);
		a->oom = 1;
		return NULL;
	}
	a->nspaces++;
	return s;
}

/* What is live at the mark: the largest RP_LIVE_MAX allocations, and how many there are. */
static void take_high(struct acc *a, struct acc_space *s)
{
	for (size_t i = 0; i < s->ntop; i++)
		free(s->top[i].label);
	s->ntop = 0;
	s->live_at_high = s->nlive;
	s->dirty = 0;
	for (size_t i = 0; i < s->nlive; i++) {
		const struct acc_alloc_live *l = &s->live[i];
		size_t at = s->ntop;
		while (at > 0 && s->top[at - 1].bytes < l->bytes)
			at--;
		if (at >= RP_LIVE_MAX)
			continue;
		if (s->ntop == RP_LIVE_MAX)
			free(s->top[--s->ntop].label);
		memmove(&s->top[at + 1], &s->top[at], (s->ntop - at) * sizeof(s->top[0]));
		s->top[at] = (struct rp_live){strdup(l->label), l->bytes};
		if (!s->top[at].label)
			a->oom = 1;
		s->ntop++;
	}
}

void acc_alloc(struct acc *a, uint32_t process, const char *space, const char *label, uint64_t addr,
	       uint64_t bytes, uint64_t ts)
{
	struct acc_space *s = space_of(a, process, space, 1);
	if (!s)
		return;
	if (s->nlive == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct acc_alloc_live *n = realloc(s->live, cap * sizeof(*n));
		if (!n) {
			a->oom = 1;
			return;
		}
		s->live = n;
		s->cap = cap;
	}
	char *dup = json_utf8_dup(label);
	if (!dup) {
		a->oom = 1;
		return;
	}
	s->live[s->nlive++] = (struct acc_alloc_live){addr, bytes, dup};
	s->allocs++;
	s->cur += bytes;
	if (!s->series->n) /* the series begins with the space's first allocation */
		s->series->origin = ts;
	acc_series_add(s->series, ts, (double)s->cur);
	if (s->cur > s->high) {
		s->high = s->cur;
		s->high_ts = ts;
		s->dirty = 1;
	}
}

void acc_dealloc(struct acc *a, uint32_t process, const char *space, uint64_t addr, uint64_t ts)
{
	struct acc_space *s = space_of(a, process, space, 0);
	if (!s) /* nothing of it was seen allocated */
		return;
	size_t i = s->nlive;
	while (i > 0 && s->live[i - 1].addr != addr)
		i--;
	if (i == 0) /* allocated before the trace saw it */
		return;
	if (s->dirty)
		take_high(a, s);
	struct acc_alloc_live *l = &s->live[i - 1];
	s->cur -= l->bytes;
	s->frees++;
	acc_series_add(s->series, ts, (double)s->cur);
	free(l->label);
	memmove(l, l + 1, (s->nlive - i) * sizeof(*l));
	s->nlive--;
}

static int by_process_space(const void *x, const void *y)
{
	const struct rp_memory *a = x, *b = y;
	int c = strcmp(a->process, b->process);
	return c ? c : strcmp(a->space, b->space);
}

int acc_build_memory(struct acc *a, const struct acc_process_info *procs, size_t nprocs,
		     uint64_t origin, struct rp_run *run)
{
	if (!a->nspaces)
		return 0;
	if (!(run->memory = calloc(a->nspaces, sizeof(*run->memory))))
		return -1;
	for (size_t i = 0; i < a->nspaces; i++) {
		struct acc_space *s = &a->spaces[i];
		if (s->dirty)
			take_high(a, s);
		struct rp_memory *m = &run->memory[run->nmemory++];
		m->process = json_utf8_dup(s->process < nprocs ? procs[s->process].name : "?");
		char *title = NULL;
		if (asprintf(&title, "memory: %s, %s", m->process ? m->process : "?", s->name) < 0)
			return -1;
		free(s->series->name);
		s->series->name = title;
		m->space = strdup(s->name);
		m->top = calloc(s->ntop + 1, sizeof(*m->top));
		if (!m->process || !m->space || !m->top)
			return -1;
		m->high_water = s->high;
		m->at_ns = s->high_ts > origin ? s->high_ts - origin : 0;
		m->end_bytes = s->cur;
		m->allocations = s->allocs;
		m->frees = s->frees;
		m->live_at_high = s->live_at_high;
		for (size_t j = 0; j < s->ntop; j++) {
			m->top[m->ntop++] = s->top[j];
			s->top[j].label = NULL;
		}
		s->ntop = 0;
	}
	qsort(run->memory, run->nmemory, sizeof(*run->memory), by_process_space);
	return a->oom ? -1 : 0;
}

void acc_free_memory(struct acc *a)
{
	for (size_t i = 0; i < a->nspaces; i++) {
		struct acc_space *s = &a->spaces[i];
		for (size_t j = 0; j < s->nlive; j++)
			free(s->live[j].label);
		for (size_t j = 0; j < s->ntop; j++)
			free(s->top[j].label);
		free(s->live);
		free(s->name);
	}
	free(a->spaces);
	a->spaces = NULL;
	a->nspaces = 0;
}

void acc_call_enter(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region,
		    const struct acc_call *c)
{
	if (c->paradigm == CV_PARADIGM_KOKKOS && (c->has & ACC_HAS_ADDRESS)) {
		/* "Kokkos allocate HostSpace" */
		const char *space = strchr(c->region, ' ');
		space = space ? strchr(space + 1, ' ') : NULL;
		space = space ? space + 1 : "?";
		if (c->role == CV_ROLE_ALLOCATE)
			acc_alloc(a, t->process, space, c->label ? c->label : "?", c->address,
				  c->bytes, ts);
		else if (c->role == CV_ROLE_DEALLOCATE)
			acc_dealloc(a, t->process, space, c->address, ts);
		return;
	}
	if (c->role == CV_ROLE_DATA_TRANSFER && (c->has & ACC_HAS_BYTES)) {
		acc_bytes(a, region, c->bytes);
		return;
	}
	if (c->has & ACC_HAS_GPU_BYTES)
		acc_bytes(a, region, c->gpu_bytes);
	if (!c->memory)
		return;
	if (c->has & ACC_HAS_SIZE) { /* the address comes with its Leave */
		t->pending.bytes = c->size;
		snprintf(t->pending.space, sizeof(t->pending.space), "%s memory", c->memory);
		snprintf(t->pending.label, sizeof(t->pending.label), "%s%s%s", c->region,
			 c->site ? " at " : "", c->site ? c->site : "");
		t->pending.set = 1;
	} else if (c->has & ACC_HAS_FREED) {
		char space[80];
		snprintf(space, sizeof(space), "%s memory", c->memory);
		acc_dealloc(a, t->process, space, c->freed, ts);
	}
}

void acc_call_leave(struct acc *a, struct acc_thread *t, uint64_t ts, int result, uint64_t address)
{
	if (t->pending.set && result)
		acc_alloc(a, t->process, t->pending.space, t->pending.label, address,
			  t->pending.bytes, ts);
	t->pending.set = 0;
}
