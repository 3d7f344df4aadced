// SPDX-License-Identifier: BSD-3-Clause
/*
 * accum.c - the profile's accumulator (accum.h): per live thread a stack of open calls and
 * a small table of that thread's regions, folded into the run's per-region totals when the
 * thread ends; then the run's regions and processes.  Whoever reads the events (a trace
 * directory, an OTF2 archive) calls acc_enter and acc_leave in each thread's time order.
 *
 * Inclusive time counts the outermost call of a region on a thread only: a region entered
 * while it is already open on the same thread (recursion) adds its calls, its exclusive time
 * and its per-call statistics, not its inclusive time again (what Score-P's profile does).
 * Exclusive time is a call's duration minus the durations of the calls made from it.
 *
 * Nothing here depends on the order in which threads end: sums and extremes commute, and
 * the busiest thread of a region is, among equals, the first by process and thread index.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "accum.h"
#include "json.h"

extern char **environ;

/* Deeper nesting is damage (enters never left): refused, so memory stays bounded.  The
 * converter's core refuses the same depth. */
#define STACK_MAX (1u << 16)

/* The call tree's size limit: calls on paths past it are left out of the tree. */
#define TREE_MAX (1u << 20)

/* One open call on a thread. */
struct acc_frame {
	uint32_t region;
	uint32_t node; /* its call tree node */
	uint8_t outer; /* the outermost open call of its region on this thread */
	uint8_t root;  /* the thread's start routine or main, at the bottom of the stack */
	uint64_t start, child;
};

/* A region as seen by one thread (key: region + 1; 0: empty slot). */
struct acc_entry {
	uint32_t key, open;
	uint64_t calls, incl, excl, sum, min, max;
};

/* A region over the run. */
struct acc_region {
	uint64_t calls, incl, excl, sum, min, max;
	uint32_t threads;
	uint64_t tmin, tmax, tsum;
	uint32_t tmax_proc, tmax_thread;
};

/* A process over the run: its threads as they end. */
struct acc_process {
	struct rp_thread *threads;
	size_t n, cap;
	uint64_t first, last;
	int seen;
};

int acc_init(struct acc *a, size_t nprocs)
{
	memset(a, 0, sizeof(*a));
	a->procs = calloc(nprocs ? nprocs : 1, sizeof(*a->procs));
	if (!a->procs)
		return -1;
	a->nprocs = nprocs;
	return 0;
}

/* A task switched away from: the regions of the calls it had open, outermost first. */
struct acc_suspended {
	struct acc_task task;
	uint32_t *regions;
	uint32_t n;
};

/* A region's sample counts: as a function (self, total) and as the region they fell in. */
struct acc_sfunc {
	uint64_t self, total, self_ns, total_ns;
	uint64_t in, in_ns;
	uint32_t mark; /* the last sample that counted it in total (recursion counts once) */
};

/* A call path: its functions, outermost first. */
struct acc_spath {
	uint32_t *f;
	unsigned n;
	uint64_t hash, count, ns;
};

/* A call path's node: region under parent, over all threads. */
struct acc_node {
	uint32_t region, parent;
	uint64_t calls, incl, excl;
};

void acc_free(struct acc *a)
{
	free(a->nodes);
	free(a->node_map);
	for (size_t i = 0; i < a->nseries; i++)
		acc_series_free(a->series[i]);
	free(a->series);
	free(a->mpi_msgs);
	free(a->mpi_bytes);
	free(a->rbytes);
	acc_free_memory(a);
	free(a->sfuncs);
	for (size_t i = 0; i < a->spaths_cap; i++)
		free(a->spaths[i].f);
	free(a->spaths);
	for (size_t i = 0; i < a->nsuspended; i++)
		free(a->suspended[i].regions);
	free(a->suspended);
	for (size_t i = 0; a->procs && i < a->nprocs; i++) {
		for (size_t j = 0; j < a->procs[i].n; j++) {
			free(a->procs[i].threads[j].name);
			free(a->procs[i].threads[j].timeline);
		}
		free(a->procs[i].threads);
	}
	free(a->procs);
	free(a->regions);
	memset(a, 0, sizeof(*a));
}

struct acc_thread *acc_thread_new(struct acc *a, uint32_t process, uint32_t index)
{
	struct acc_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		a->oom = 1;
		return NULL;
	}
	t->process = process;
	t->index = index;
	return t;
}

void acc_thread_free(struct acc_thread *t)
{
	if (!t)
		return;
	free(t->tl);
	free(t->stack);
	free(t->tab);
	free(t);
}

void acc_event(struct acc_thread *t, uint64_t ts)
{
	t->events++;
	if (!t->seen || ts < t->first)
		t->first = ts;
	if (!t->seen || ts > t->last)
		t->last = ts;
	t->seen = 1;
}

static struct acc_entry *entry_find(struct acc_thread *t, uint32_t key)
{
	if (!t->tabcap)
		return NULL;
	uint32_t j = key * 0x9e3779b1u & (t->tabcap - 1);
	while (t->tab[j].key && t->tab[j].key != key)
		j = (j + 1) & (t->tabcap - 1);
	return &t->tab[j];
}

/* The thread's entry of region, created on first use; NULL when out of memory. */
static struct acc_entry *entry_get(struct acc *a, struct acc_thread *t, uint32_t region)
{
	uint32_t key = region + 1;
	struct acc_entry *e = entry_find(t, key);
	if (e && e->key)
		return e;
	if ((t->ntab + 1) * 2 > t->tabcap) {
		uint32_t cap = t->tabcap ? t->tabcap * 2 : 16;
		struct acc_entry *n = calloc(cap, sizeof(*n));
		if (!n) {
			a->oom = 1;
			return NULL;
		}
		for (uint32_t i = 0; i < t->tabcap; i++) {
			if (!t->tab[i].key)
				continue;
			uint32_t j = t->tab[i].key * 0x9e3779b1u & (cap - 1);
			while (n[j].key)
				j = (j + 1) & (cap - 1);
			n[j] = t->tab[i];
		}
		free(t->tab);
		t->tab = n;
		t->tabcap = cap;
		e = entry_find(t, key);
	}
	*e = (struct acc_entry){.key = key, .min = UINT64_MAX};
	t->ntab++;
	return e;
}

static uint32_t node_hash(uint32_t parent, uint32_t region)
{
	return (parent * 0x9e3779b1u) ^ (region * 0x85ebca6bu);
}

/* The node of region called under node parent, made on first use; UINT32_MAX when the tree
 * is full or memory ran out (the call and those it makes are then left out of the tree). */
static uint32_t node_of(struct acc *a, uint32_t parent, uint32_t region)
{
	if (!a->nodes) {
		if (!(a->nodes = malloc(64 * sizeof(*a->nodes)))) {
			a->oom = 1;
			return UINT32_MAX;
		}
		a->nodes_cap = 64;
		a->nodes[0] = (struct acc_node){UINT32_MAX, UINT32_MAX, 0, 0, 0};
		a->nnodes = 1;
	}
	if ((a->nnodes + 1) * 2 > a->node_map_cap) {
		uint32_t cap = a->node_map_cap ? a->node_map_cap * 2 : 256;
		uint32_t *m = calloc(cap, sizeof(*m));
		if (!m) {
			a->oom = 1;
			return UINT32_MAX;
		}
		for (uint32_t i = 1; i < a->nnodes; i++) {
			uint32_t j = node_hash(a->nodes[i].parent, a->nodes[i].region) & (cap - 1);
			while (m[j])
				j = (j + 1) & (cap - 1);
			m[j] = i + 1;
		}
		free(a->node_map);
		a->node_map = m;
		a->node_map_cap = cap;
	}
	uint32_t j = node_hash(parent, region) & (a->node_map_cap - 1);
	for (; a->node_map[j]; j = (j + 1) & (a->node_map_cap - 1)) {
		const struct acc_node *n = &a->nodes[a->node_map[j] - 1];
		if (n->parent == parent && n->region == region)
			return a->node_map[j] - 1;
	}
	if (a->nnodes >= TREE_MAX) {
		a->tree_cut = 1;
		return UINT32_MAX;
	}
	if (a->nnodes == a->nodes_cap) {
		struct acc_node *n = realloc(a->nodes, 2 * a->nodes_cap * sizeof(*n));
		if (!n) {
			a->oom = 1;
			return UINT32_MAX;
		}
		a->nodes = n;
		a->nodes_cap *= 2;
	}
	a->nodes[a->nnodes] = (struct acc_node){region, parent, 0, 0, 0};
	a->node_map[j] = a->nnodes + 1;
	return a->nnodes++;
}

void acc_bytes(struct acc *a, uint32_t region, uint64_t bytes)
{
	if (region >= a->nrbytes) {
		uint32_t n = region + 64;
		uint64_t *b = realloc(a->rbytes, (size_t)n * sizeof(*b));
		if (!b) {
			a->oom = 1;
			return;
		}
		memset(b + a->nrbytes, 0, (size_t)(n - a->nrbytes) * sizeof(*b));
		a->rbytes = b;
		a->nrbytes = n;
	}
	a->rbytes[region] += bytes;
}

/* Opens a call of region at ts; `calls`: it counts as a call (not a task going on). */
static void push(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region, int function,
		 int calls)
{
	if (region == UINT32_MAX) {
		a->anomalies++;
		return;
	}
	if (t->depth == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		if (cap > STACK_MAX) {
			a->anomalies++;
			return;
		}
		struct acc_frame *s = realloc(t->stack, cap * sizeof(*s));
		if (!s) {
			a->oom = 1;
			return;
		}
		t->stack = s;
		t->cap = cap;
	}
	struct acc_entry *e = entry_get(a, t, region);
	if (!e)
		return;
	e->calls += (uint64_t)calls;
	e->open++;
	int root = t->depth == 0 && function;
	if (!t->tl && !(t->tl = acc_timeline_new(ts)))
		a->oom = 1;
	if (t->tl)
		acc_timeline_at(t->tl, ts, region + 1);
	uint32_t parent = t->depth ? t->stack[t->depth - 1].node : 0;
	uint32_t node = parent == UINT32_MAX ? UINT32_MAX : node_of(a, parent, region);
	if (node != UINT32_MAX)
		a->nodes[node].calls += (uint64_t)calls;
	t->stack[t->depth++] = (struct acc_frame){region, node, e->open == 1, (uint8_t)root, ts, 0};
}

void acc_enter(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region, int function)
{
	acc_event(t, ts);
	push(a, t, ts, region, function, 1);
}

/* Closes the innermost open call at time ts. */
static void pop(struct acc *a, struct acc_thread *t, uint64_t ts)
{
	struct acc_frame f = t->stack[--t->depth];
	uint64_t dur = ts > f.start ? ts - f.start : 0;
	uint64_t excl = dur > f.child ? dur - f.child : 0;
	if (f.node != UINT32_MAX) {
		a->nodes[f.node].incl += dur;
		a->nodes[f.node].excl += excl;
	}
	struct acc_entry *e = entry_find(t, f.region + 1); /* entered: it exists */
	e->excl += excl;
	e->sum += dur;
	if (dur < e->min)
		e->min = dur;
	if (dur > e->max)
		e->max = dur;
	if (f.outer)
		e->incl += dur;
	e->open--;
	if (t->depth > 0)
		t->stack[t->depth - 1].child += dur;
	if (!f.root && (t->depth == 0 || (t->depth == 1 && t->stack[0].root)))
		t->in_regions += dur;
	if (t->tl)
		acc_timeline_at(t->tl, ts, t->depth ? t->stack[t->depth - 1].region + 1 : 0);
}

void acc_leave(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t region)
{
	acc_event(t, ts);
	uint32_t i = t->depth;
	while (i > 0 && t->stack[i - 1].region != region)
		i--;
	if (i == 0) { /* the converter pairs every Leave with its Enter: not expected */
		a->anomalies++;
		return;
	}
	while (t->depth >= i)
		pop(a, t, ts);
}

static int same_task(const struct acc_task *x, uint32_t team, uint32_t creator, uint32_t gen)
{
	return x->team == team && x->creator == creator && x->gen == gen;
}

void acc_task_switch(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t team,
		     uint32_t creator, uint32_t gen)
{
	acc_event(t, ts);
	uint32_t base = t->task_base < t->depth ? t->task_base : t->depth;
	if (t->task.gen && t->depth > base) { /* its open calls wait for it */
		if (a->nsuspended == a->suspended_cap) {
			size_t cap = a->suspended_cap ? 2 * a->suspended_cap : 16;
			struct acc_suspended *s = realloc(a->suspended, cap * sizeof(*s));
			if (!s) {
				a->oom = 1;
				return;
			}
			a->suspended = s;
			a->suspended_cap = cap;
		}
		uint32_t n = t->depth - base;
		uint32_t *r = malloc(n * sizeof(*r));
		if (!r) {
			a->oom = 1;
			return;
		}
		for (uint32_t i = 0; i < n; i++)
			r[i] = t->stack[base + i].region;
		a->suspended[a->nsuspended++] = (struct acc_suspended){t->task, r, n};
		while (t->depth > base)
			pop(a, t, ts);
	}
	t->task = (struct acc_task){team, creator, gen};
	t->task_base = t->depth;
	if (!gen)
		return;
	for (size_t i = 0; i < a->nsuspended; i++) {
		struct acc_suspended s = a->suspended[i];
		if (!same_task(&s.task, team, creator, gen))
			continue;
		a->suspended[i] = a->suspended[--a->nsuspended];
		for (uint32_t j = 0; j < s.n; j++)
			push(a, t, ts, s.regions[j], 0, 0);
		free(s.regions);
		return;
	}
}

void acc_task_complete(struct acc *a, struct acc_thread *t, uint64_t ts, uint32_t team,
		       uint32_t creator, uint32_t gen)
{
	acc_event(t, ts);
	if (!same_task(&t->task, team, creator, gen)) {
		a->anomalies++;
		return;
	}
	if (t->depth > t->task_base) {
		a->anomalies++;
		while (t->depth > t->task_base)
			pop(a, t, ts);
	}
	t->task.gen = 0;
}

uint32_t acc_bottom(const struct acc_thread *t)
{
	return t->depth ? t->stack[0].region : UINT32_MAX;
}

uint32_t acc_depth(const struct acc_thread *t)
{
	return t->depth;
}

static struct acc_sfunc *sfunc(struct acc *a, uint32_t region)
{
	if (region >= a->nsfuncs) {
		uint32_t n = region + 64;
		struct acc_sfunc *f = realloc(a->sfuncs, (size_t)n * sizeof(*f));
		if (!f) {
			a->oom = 1;
			return NULL;
		}
		memset(f + a->nsfuncs, 0, (size_t)(n - a->nsfuncs) * sizeof(*f));
		a->sfuncs = f;
		a->nsfuncs = n;
	}
	return &a->sfuncs[region];
}

static void spath_add(struct acc *a, const uint32_t *f, unsigned n, uint64_t ns)
{
	uint64_t h = 1469598103934665603ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ f[i]) * 1099511628211ull;
	h |= 1; /* 0 marks an empty slot */
	if ((a->nspaths + 1) * 2 > a->spaths_cap) {
		size_t cap = a->spaths_cap ? 2 * a->spaths_cap : 256;
		struct acc_spath *t = calloc(cap, sizeof(*t));
		if (!t) {
			a->oom = 1;
			return;
		}
		for (size_t i = 0; i < a->spaths_cap; i++) {
			if (!a->spaths[i].hash)
				continue;
			size_t j = a->spaths[i].hash & (cap - 1);
			while (t[j].hash)
				j = (j + 1) & (cap - 1);
			t[j] = a->spaths[i];
		}
		free(a->spaths);
		a->spaths = t;
		a->spaths_cap = cap;
	}
	size_t j = h & (a->spaths_cap - 1);
	for (; a->spaths[j].hash; j = (j + 1) & (a->spaths_cap - 1)) {
		struct acc_spath *p = &a->spaths[j];
		if (p->hash == h && p->n == n && !memcmp(p->f, f, n * sizeof(*f))) {
			p->count++;
			p->ns += ns;
			return;
		}
	}
	uint32_t *copy = malloc((n + 1) * sizeof(*copy));
	if (!copy) {
		a->oom = 1;
		return;
	}
	memcpy(copy, f, n * sizeof(*f));
	a->spaths[j] = (struct acc_spath){copy, n, h, 1, ns};
	a->nspaths++;
}

void acc_sample(struct acc *a, struct acc_thread *t, uint64_t ts, uint64_t ns,
		const uint32_t *funcs, unsigned n)
{
	acc_event(t, ts);
	a->samples++;
	a->sample_ns += ns;
	uint32_t mark = (uint32_t)a->samples;
	for (unsigned i = 0; i < n; i++) {
		struct acc_sfunc *f = sfunc(a, funcs[i]);
		if (!f)
			return;
		if (f->mark != mark) {
			f->mark = mark;
			f->total++;
			f->total_ns += ns;
		}
		if (i == n - 1) {
			f->self++;
			f->self_ns += ns;
		}
	}
	uint32_t in = t->depth ? t->stack[t->depth - 1].region : UINT32_MAX;
	if (in != UINT32_MAX) {
		struct acc_sfunc *f = sfunc(a, in);
		if (f) {
			f->in++;
			f->in_ns += ns;
		}
	}
	if (n)
		spath_add(a, funcs, n, ns);
}

static int by_self(const void *x, const void *y)
{
	const struct rp_sample_row *a = x, *b = y;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* The run's sample rows, names from the reader's regions; -1 when out of memory. */
static int build_samples(struct acc *a, const struct acc_region_info *regions, uint32_t nregions,
			 struct rp_samples *s)
{
	s->count = a->samples;
	s->cpu_ns = a->sample_ns;
	if (!a->samples)
		return 0;
	size_t nf = 0, nw = 0;
	for (uint32_t i = 0; i < a->nsfuncs; i++) {
		nf += a->sfuncs[i].total != 0;
		nw += a->sfuncs[i].in != 0;
	}
	uint64_t none = a->samples, none_ns = a->sample_ns;
	s->functions = calloc(nf + 1, sizeof(*s->functions));
	s->regions = calloc(nw + 2, sizeof(*s->regions));
	s->paths = calloc(a->nspaths + 1, sizeof(*s->paths));
	if (!s->functions || !s->regions || !s->paths)
		return -1;
	for (uint32_t i = 0; i < a->nsfuncs && i < nregions; i++) {
		const struct acc_sfunc *f = &a->sfuncs[i];
		if (f->total) {
			struct rp_sample_row *r = &s->functions[s->nfunctions++];
			*r = (struct rp_sample_row){json_utf8_dup(regions[i].name), f->self,
						    f->total, f->self_ns, f->total_ns};
			if (!r->name)
				return -1;
		}
		if (f->in) {
			struct rp_sample_row *r = &s->regions[s->nregions++];
			*r = (struct rp_sample_row){json_utf8_dup(regions[i].name), f->in, f->in,
						    f->in_ns, f->in_ns};
			if (!r->name)
				return -1;
			none -= f->in;
			none_ns -= f->in_ns;
		}
	}
	if (none) {
		struct rp_sample_row *r = &s->regions[s->nregions++];
		*r = (struct rp_sample_row){strdup("-"), none, none, none_ns, none_ns};
		if (!r->name)
			return -1;
	}
	for (size_t i = 0; i < a->spaths_cap; i++) {
		const struct acc_spath *p = &a->spaths[i];
		if (!p->hash)
			continue;
		size_t len = 1;
		for (unsigned k = 0; k < p->n; k++)
			len += strlen(p->f[k] < nregions ? regions[p->f[k]].name : "?") + 3;
		char *name = malloc(len);
		if (!name)
			return -1;
		size_t at = 0;
		for (unsigned k = 0; k < p->n; k++)
			at += (size_t)snprintf(name + at, len - at, "%s%s", k ? " > " : "",
					       p->f[k] < nregions ? regions[p->f[k]].name : "?");
		struct rp_sample_row *r = &s->paths[s->npaths++];
		*r = (struct rp_sample_row){json_utf8_dup(name), p->count, p->count, p->ns, p->ns};
		free(name);
		if (!r->name)
			return -1;
	}
	qsort(s->functions, s->nfunctions, sizeof(*s->functions), by_self);
	qsort(s->regions, s->nregions, sizeof(*s->regions), by_self);
	qsort(s->paths, s->npaths, sizeof(*s->paths), by_self);
	return 0;
}

/* Whether thread (proc, index) comes before the region's busiest so far. */
static int before_busiest(const struct acc_region *r, uint32_t proc, uint32_t index)
{
	return proc < r->tmax_proc || (proc == r->tmax_proc && index < r->tmax_thread);
}

int acc_thread_end(struct acc *a, struct acc_thread *t, const char *name)
{
	int rc = 0;
	while (t->depth)
		pop(a, t, t->last);
	uint32_t need = 0;
	for (uint32_t i = 0; i < t->tabcap; i++)
		if (t->tab[i].key > need)
			need = t->tab[i].key;
	if (need > a->nregions) {
		struct acc_region *r = realloc(a->regions, need * sizeof(*r));
		if (!r)
			goto oom;
		memset(r + a->nregions, 0, (need - a->nregions) * sizeof(*r));
		a->regions = r;
		a->nregions = need;
	}
	for (uint32_t i = 0; i < t->tabcap; i++) {
		const struct acc_entry *e = &t->tab[i];
		if (!e->key)
			continue;
		struct acc_region *r = &a->regions[e->key - 1];
		if (!r->calls || e->min < r->min)
			r->min = e->min;
		if (e->max > r->max)
			r->max = e->max;
		if (!r->threads || e->incl < r->tmin)
			r->tmin = e->incl;
		if (!r->threads || e->incl > r->tmax ||
		    (e->incl == r->tmax && before_busiest(r, t->process, t->index))) {
			r->tmax = e->incl;
			r->tmax_proc = t->process;
			r->tmax_thread = t->index;
		}
		r->calls += e->calls;
		r->incl += e->incl;
		r->excl += e->excl;
		r->sum += e->sum;
		r->threads++;
		r->tsum += e->incl;
	}
	if (t->process < a->nprocs) {
		struct acc_process *p = &a->procs[t->process];
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 8;
			struct rp_thread *n = realloc(p->threads, cap * sizeof(*n));
			if (!n)
				goto oom;
			p->threads = n;
			p->cap = cap;
		}
		char *dup = json_utf8_dup(name ? name : "?");
		if (!dup)
			goto oom;
		struct rp_thread *th = &p->threads[p->n++];
		*th = (struct rp_thread){NULL,
					 t->index,
					 t->tid,
					 dup,
					 t->seen ? t->last - t->first : 0,
					 t->in_regions,
					 t->events,
					 t->lost,
					 t->dropped[LT_DROP_SHORT],
					 t->dropped[LT_DROP_FILTER]};
		if (t->tl) {
			acc_timeline_at(t->tl, t->last, 0);
			if (acc_timeline_build(t->tl, th))
				goto oom;
		}
		if (t->seen) {
			if (!p->seen || t->first < p->first)
				p->first = t->first;
			if (!p->seen || t->last > p->last)
				p->last = t->last;
			p->seen = 1;
		}
	}
	goto out;
oom:
	a->oom = 1;
	rc = -1;
out:
	acc_thread_free(t);
	return rc;
}

/* ---- the run ---- */

/* The call tree's nodes that were called, parents first (as they were made). */
static int build_tree(struct acc *a, const struct acc_region_info *regions, uint32_t nregions,
		      struct rp_run *run)
{
	run->tree_cut = a->tree_cut;
	if (a->nnodes < 2)
		return 0;
	uint32_t *index = malloc(a->nnodes * sizeof(*index)); /* node -> tree index + 1 */
	if (!(run->tree = calloc(a->nnodes, sizeof(*run->tree))) || !index) {
		free(index);
		return -1;
	}
	index[0] = 0;
	for (uint32_t i = 1; i < a->nnodes; i++) {
		const struct acc_node *n = &a->nodes[i];
		index[i] = 0;
		if (!n->calls || n->region >= nregions || (n->parent && !index[n->parent]))
			continue;
		struct rp_node *t = &run->tree[run->ntree];
		t->name = json_utf8_dup(regions[n->region].name);
		t->kind = strdup(regions[n->region].kind);
		if (!t->name || !t->kind) {
			free(t->name);
			free(t->kind);
			free(index);
			return -1;
		}
		t->parent = n->parent ? (int64_t)index[n->parent] - 1 : -1;
		t->calls = n->calls;
		t->incl_ns = n->incl;
		t->excl_ns = n->excl;
		index[i] = (uint32_t)++run->ntree;
	}
	free(index);
	return 0;
}

static int by_thread_index(const void *x, const void *y)
{
	const struct rp_thread *a = x, *b = y;
	return a->index < b->index ? -1 : a->index > b->index;
}

int acc_build(struct acc *a, const struct acc_region_info *regions, uint32_t nregions,
	      const struct acc_process_info *procs, size_t nprocs, struct rp_run *run)
{
	run->regions = calloc((size_t)a->nregions + 1, sizeof(*run->regions));
	if (!run->regions)
		return -1;
	for (uint32_t i = 0; i < a->nregions && i < nregions; i++) {
		const struct acc_region *r = &a->regions[i];
		if (!r->calls)
			continue;
		struct rp_region *g = &run->regions[run->nregions++];
		char who[PATH_MAX + 32];
		snprintf(who, sizeof(who), "%s/%u",
			 r->tmax_proc < nprocs ? procs[r->tmax_proc].name : "?", r->tmax_thread);
		g->name = json_utf8_dup(regions[i].name);
		g->kind = strdup(regions[i].kind);
		g->role = strdup(regions[i].role);
		g->max_thread = json_utf8_dup(who);
		if (!g->name || !g->kind || !g->role || !g->max_thread)
			return -1;
		g->calls = r->calls;
		g->incl_ns = r->incl;
		g->excl_ns = r->excl;
		g->min_ns = r->min;
		g->max_ns = r->max;
		g->mean_ns = r->sum / r->calls;
		g->threads = r->threads;
		g->thread_min_ns = r->tmin;
		g->thread_max_ns = r->tmax;
		g->thread_mean_ns = r->tsum / r->threads;
		double mean = (double)r->tsum / r->threads;
		g->imbalance = mean > 0 ? (double)r->tmax / mean : 1.0;
		g->bytes = i < a->nrbytes ? a->rbytes[i] : 0;
		g->id = i;
		if (regions[i].type && !(g->type = strdup(regions[i].type)))
			return -1;
	}
	rp_sort_regions(run);
	if (build_tree(a, regions, nregions, run))
		return -1;
	/* The timelines' region ids become the sorted regions' indices. */
	int32_t *index = malloc(((size_t)a->nregions + 1) * sizeof(*index));
	if (!index)
		return -1;
	for (uint32_t i = 0; i <= a->nregions; i++)
		index[i] = -1;
	for (size_t i = 0; i < run->nregions; i++)
		index[run->regions[i].id] = (int32_t)i;
	for (size_t p = 0; p < a->nprocs; p++)
		for (size_t j = 0; j < a->procs[p].n; j++) {
			struct rp_timeline *tl = a->procs[p].threads[j].timeline;
			for (uint32_t k = 0; tl && k < tl->n; k++) {
				uint32_t id = (uint32_t)tl->region[k];
				tl->region[k] = id && id - 1 < a->nregions ? index[id - 1] : -1;
			}
		}
	free(index);
	run->series = a->series;
	run->nseries = a->nseries;
	a->series = NULL;
	a->nseries = 0;
	run->mpi_size = a->mpi_size;
	run->mpi_msgs = a->mpi_msgs;
	run->mpi_bytes = a->mpi_bytes;
	a->mpi_msgs = a->mpi_bytes = NULL;
	if (build_samples(a, regions, nregions, &run->samples))
		return -1;

	run->procs = calloc(nprocs + 1, sizeof(*run->procs));
	if (!run->procs)
		return -1;
	for (size_t i = 0; i < nprocs; i++) {
		const struct acc_process_info *info = &procs[i];
		struct acc_process *pa = i < a->nprocs ? &a->procs[i] : NULL;
		struct rp_process *p = &run->procs[run->nprocs++];
		p->name = json_utf8_dup(info->name);
		p->host = json_utf8_dup(info->host);
		p->program = json_utf8_dup(info->program);
		if (!p->name || !p->host || !p->program)
			return -1;
		p->pid = info->pid;
		p->ppid = info->ppid;
		p->ended = info->ended;
		if (!pa)
			continue;
		p->lifetime_ns = pa->seen ? pa->last - pa->first : 0;
		if (pa->n)
			qsort(pa->threads, pa->n, sizeof(*pa->threads), by_thread_index);
		for (size_t j = 0; j < pa->n; j++) {
			struct rp_thread *t = &pa->threads[j];
			if (t->index == 0 && !t->tid)
				t->tid = (uint32_t)info->pid;
			p->in_regions_ns += t->in_regions_ns;
			p->events += t->events;
			p->lost += t->lost;
		}
		p->threads = pa->threads;
		p->nthreads = pa->n;
		pa->threads = NULL;
		pa->n = pa->cap = 0;
	}
	return 0;
}

const char *acc_base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/*
 * The git revision of the work tree holding the executable's directory (HEAD, now: the
 * report may be made after the checkout moved on), or NULL: no git, not in a work tree.
 */
char *acc_git_revision(const char *exe)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(exe, '/');
	if (exe[0] != '/' || !slash)
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - exe) ? (int)(slash - exe) : 1, exe);
	struct stat st;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC))
		return NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	char *argv[] = {"git", "-C", dir, "rev-parse", "--verify", "-q", "HEAD", NULL};
	pid_t pid;
	int rc = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	if (rc) {
		close(fds[0]);
		return NULL;
	}
	char buf[128];
	size_t n = 0;
	ssize_t k;
	while (n < sizeof(buf) - 1 && (k = read(fds[0], buf + n, sizeof(buf) - 1 - n)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			break;
		n += (size_t)k;
	}
	close(fds[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || (n != 40 && n != 64))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", buf[i]))
			return NULL;
	return strdup(buf);
}

char *acc_iso_date(uint64_t unix_ns)
{
	time_t sec = (time_t)(unix_ns / 1000000000u);
	struct tm tm;
	char buf[64];
	if (!gmtime_r(&sec, &tm))
		return strdup("?");
	size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, sizeof(buf) - n, ".%03uZ", (unsigned)(unix_ns / 1000000u % 1000u));
	return strdup(buf);
}
