// SPDX-License-Identifier: BSD-3-Clause
/*
 * store.c - profiles as JSON, schema "libtrace-profile/1" (docs/profiles-and-ci.md,
 * "Profiles and CI"): rp_write_json writes runs, rp_read_json reads them back for
 * --compare and for printing.  Reading is strict about what the schema requires and about
 * types; members it does not know are ignored (later versions only append members).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "profile.h"
#include "rdfile.h"

/* A saved profile larger than this is not one trace-report wrote (it is read whole). */
#define MAX_PROFILE_SIZE (1u << 30)

/* ---- writing ---- */

void rp_write_regions_json(struct jw *w, const struct rp_run *r)
{
	jw_array(w, "regions");
	for (size_t i = 0; i < r->nregions; i++) {
		const struct rp_region *g = &r->regions[i];
		jw_object(w, NULL);
		jw_str(w, "name", g->name);
		jw_str(w, "kind", g->kind);
		jw_str(w, "role", g->role);
		jw_u64(w, "calls", g->calls);
		jw_u64(w, "inclusive_ns", g->incl_ns);
		jw_u64(w, "exclusive_ns", g->excl_ns);
		jw_u64(w, "min_ns", g->min_ns);
		jw_u64(w, "mean_ns", g->mean_ns);
		jw_u64(w, "max_ns", g->max_ns);
		jw_u64(w, "threads", g->threads);
		jw_u64(w, "thread_min_ns", g->thread_min_ns);
		jw_u64(w, "thread_mean_ns", g->thread_mean_ns);
		jw_u64(w, "thread_max_ns", g->thread_max_ns);
		jw_double_exact(w, "imbalance", g->imbalance); /* prints back the same */
		jw_str(w, "max_thread", g->max_thread);
		if (g->type)
			jw_str(w, "type", g->type);
		if (g->bytes) {
			double ns = (double)g->mean_ns * (double)g->calls;
			jw_u64(w, "bytes", g->bytes);
			if (ns > 0)
				jw_double(w, "bytes_per_second", (double)g->bytes * 1e9 / ns);
		}
		jw_end(w);
	}
	jw_end(w);
}

void rp_write_tree_json(struct jw *w, const struct rp_run *r)
{
	jw_array(w, "tree");
	for (size_t i = 0; i < r->ntree; i++) {
		const struct rp_node *t = &r->tree[i];
		jw_object(w, NULL);
		jw_str(w, "name", t->name);
		jw_str(w, "kind", t->kind);
		jw_i64(w, "parent", t->parent);
		jw_u64(w, "calls", t->calls);
		jw_u64(w, "inclusive_ns", t->incl_ns);
		jw_u64(w, "exclusive_ns", t->excl_ns);
		jw_end(w);
	}
	jw_end(w);
	if (r->tree_cut)
		jw_bool(w, "tree_cut", 1);
}

void rp_write_memory_json(struct jw *w, const struct rp_run *r)
{
	jw_array(w, "memory");
	for (size_t i = 0; i < r->nmemory; i++) {
		const struct rp_memory *m = &r->memory[i];
		jw_object(w, NULL);
		jw_str(w, "process", m->process);
		jw_str(w, "space", m->space);
		jw_u64(w, "high_water_bytes", m->high_water);
		jw_u64(w, "high_water_at_ns", m->at_ns);
		jw_u64(w, "end_bytes", m->end_bytes);
		jw_u64(w, "allocations", m->allocations);
		jw_u64(w, "frees", m->frees);
		jw_u64(w, "live_at_high_water", m->live_at_high);
		jw_array(w, "largest_live");
		for (size_t j = 0; j < m->ntop; j++) {
			jw_object(w, NULL);
			jw_str(w, "label", m->top[j].label);
			jw_u64(w, "bytes", m->top[j].bytes);
			jw_end(w);
		}
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
}

static void write_run(struct jw *w, const struct rp_run *r)
{
	const struct rp_meta *m = &r->meta;
	jw_object(w, NULL);
	jw_str(w, "trace", r->trace);
	jw_object(w, "metadata");
	jw_str(w, "program", m->program);
	jw_str(w, "executable", m->executable);
	jw_array(w, "arguments");
	for (size_t i = 0; i < m->nargs; i++)
		jw_str(w, NULL, m->args[i]);
	jw_end(w);
	jw_str(w, "host", m->host);
	jw_array(w, "hosts");
	for (size_t i = 0; i < m->nhosts; i++)
		jw_str(w, NULL, m->hosts[i]);
	jw_end(w);
	jw_u64(w, "processes", m->processes);
	jw_u64(w, "threads", m->threads);
	jw_u64(w, "ranks", m->ranks);
	jw_str(w, "start", m->start);
	jw_u64(w, "start_unix_ns", m->start_unix_ns);
	jw_u64(w, "duration_ns", m->duration_ns);
	jw_str(w, "git_revision", m->git_revision);
	jw_str(w, "clock", m->clock);
	if (m->has_writer_cpu)
		jw_u64(w, "writer_cpu_ns", m->writer_cpu_ns);
	else
		jw_null(w, "writer_cpu_ns");
	jw_u64(w, "tracer_end_ns", m->tracer_end_ns);
	jw_end(w);

	const struct rp_totals *t = &r->totals;
	jw_object(w, "totals");
	jw_u64(w, "events", t->events);
	jw_u64(w, "lost_events", t->lost);
	jw_u64(w, "truncated_threads", t->truncated);
	jw_u64(w, "cut_processes", t->cut_processes);
	jw_u64(w, "flight_processes", t->flight);
	jw_u64(w, "unclosed_regions", t->unclosed);
	jw_u64(w, "anomalies", t->anomalies);
	jw_u64(w, "dropped_short", t->dropped_short);
	jw_u64(w, "dropped_filtered", t->dropped_filter);
	jw_bool(w, "damaged", t->damaged);
	jw_end(w);

	rp_write_regions_json(w, r);
	rp_write_tree_json(w, r);
	rp_write_memory_json(w, r);

	const struct rp_samples *sp = &r->samples;
	if (sp->count || sp->nblocked) {
		jw_object(w, "samples");
		jw_u64(w, "count", sp->count);
		jw_u64(w, "cpu_ns", sp->cpu_ns);
		if (sp->nblocked) {
			jw_array(w, "blocked");
			for (size_t i = 0; i < sp->nblocked; i++) {
				jw_object(w, NULL);
				jw_str(w, "thread", sp->blocked[i].thread);
				jw_u64(w, "tid", sp->blocked[i].tid);
				jw_u64(w, "not_taken", sp->blocked[i].not_taken);
				jw_end(w);
			}
			jw_end(w);
		}
		const struct {
			const char *key;
			const struct rp_sample_row *rows;
			size_t n;
		} lists[] = {{"functions", sp->functions, sp->nfunctions},
			     {"regions", sp->regions, sp->nregions},
			     {"paths", sp->paths, sp->npaths}};
		for (size_t k = 0; k < 3; k++) {
			jw_array(w, lists[k].key);
			for (size_t i = 0; i < lists[k].n; i++) {
				const struct rp_sample_row *row = &lists[k].rows[i];
				jw_object(w, NULL);
				jw_str(w, "name", row->name);
				jw_u64(w, "self", row->self);
				jw_u64(w, "self_ns", row->self_ns);
				if (k == 0) {
					jw_u64(w, "total", row->total);
					jw_u64(w, "total_ns", row->total_ns);
				}
				jw_end(w);
			}
			jw_end(w);
		}
		jw_end(w);
	}

	jw_array(w, "processes");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		jw_object(w, NULL);
		jw_str(w, "name", p->name);
		jw_i64(w, "pid", p->pid);
		jw_i64(w, "ppid", p->ppid);
		jw_str(w, "host", p->host);
		jw_str(w, "program", p->program);
		jw_bool(w, "ended", p->ended);
		jw_u64(w, "lifetime_ns", p->lifetime_ns);
		jw_u64(w, "in_regions_ns", p->in_regions_ns);
		jw_u64(w, "events", p->events);
		jw_u64(w, "lost_events", p->lost);
		jw_array(w, "threads");
		for (size_t j = 0; j < p->nthreads; j++) {
			const struct rp_thread *th = &p->threads[j];
			jw_object(w, NULL);
			jw_u64(w, "index", th->index);
			jw_u64(w, "tid", th->tid);
			jw_str(w, "name", th->name);
			jw_u64(w, "lifetime_ns", th->lifetime_ns);
			jw_u64(w, "in_regions_ns", th->in_regions_ns);
			jw_u64(w, "events", th->events);
			jw_u64(w, "lost_events", th->lost);
			jw_u64(w, "dropped_short", th->dropped_short);
			jw_u64(w, "dropped_filtered", th->dropped_filter);
			jw_end(w);
		}
		jw_end(w);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
}

void rp_write_json(FILE *f, struct rp_run *runs, size_t nruns)
{
	struct jw w;
	jw_init(&w, f);
	jw_object(&w, NULL);
	jw_str(&w, "schema", RP_SCHEMA);
	jw_str(&w, "generator", "trace-report");
	jw_array(&w, "runs");
	for (size_t i = 0; i < nruns; i++)
		write_run(&w, &runs[i]);
	jw_end(&w);
	jw_end(&w);
	jw_finish(&w);
}

/* ---- reading ---- */

struct rctx {
	char *err;
	size_t errlen;
	char where[160]; /* "runs[0].regions[3]" */
	int failed;
};

static void bad(struct rctx *c, const char *fmt, ...)
{
	if (c->failed)
		return;
	c->failed = 1;
	char what[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->errlen, "%s%s%s", c->where, c->where[0] ? ": " : "", what);
}

/* Member key of o: NULL when absent (an error when required) or of another type. */
static const struct jv *member(struct rctx *c, const struct jv *o, const char *key,
			       enum jv_type type, int required)
{
	const struct jv *v = jv_get(o, key);
	if (!v) {
		if (required)
			bad(c, "\"%s\" is missing", key);
		return NULL;
	}
	if (v->type == JV_NULL && !required)
		return NULL;
	if (v->type != type) {
		bad(c, "\"%s\" must be %s, not %s", key, jv_type_name(type), jv_type_name(v->type));
		return NULL;
	}
	return v;
}

static uint64_t get_u64(struct rctx *c, const struct jv *o, const char *key, int required)
{
	const struct jv *v = member(c, o, key, JV_NUMBER, required);
	if (!v)
		return 0;
	if (!v->is_uint) {
		bad(c, "\"%s\" must be a non-negative integer", key);
		return 0;
	}
	return v->u;
}

static int64_t get_i64(struct rctx *c, const struct jv *o, const char *key)
{
	const struct jv *v = member(c, o, key, JV_NUMBER, 0);
	if (!v)
		return 0;
	if (v->number != (double)(int64_t)v->number) {
		bad(c, "\"%s\" must be an integer", key);
		return 0;
	}
	return (int64_t)v->number;
}

static double get_double(struct rctx *c, const struct jv *o, const char *key)
{
	const struct jv *v = member(c, o, key, JV_NUMBER, 0);
	return v ? v->number : 0;
}

static int get_bool(struct rctx *c, const struct jv *o, const char *key)
{
	const struct jv *v = member(c, o, key, JV_BOOL, 0);
	return v ? v->boolean : 0;
}

/* A copy of the string member key; NULL when absent and not required (or null). */
static char *get_str(struct rctx *c, const struct jv *o, const char *key, int required,
		     const char *dflt)
{
	const struct jv *v = member(c, o, key, JV_STRING, required);
	const char *s = v ? v->string : dflt;
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		bad(c, "out of memory");
	return d;
}

static char **get_strs(struct rctx *c, const struct jv *o, const char *key, size_t *n)
{
	*n = 0;
	const struct jv *a = member(c, o, key, JV_ARRAY, 0);
	char **out = calloc((a ? a->n : 0) + 1, sizeof(*out));
	if (!out) {
		bad(c, "out of memory");
		return NULL;
	}
	for (size_t i = 0; a && i < a->n; i++) {
		if (a->items[i]->type != JV_STRING) {
			bad(c, "\"%s\"[%zu] must be a string", key, i);
			break;
		}
		if (!(out[*n] = strdup(a->items[i]->string))) {
			bad(c, "out of memory");
			break;
		}
		(*n)++;
	}
	return out;
}

static void read_meta(struct rctx *c, const struct jv *o, struct rp_meta *m)
{
	m->program = get_str(c, o, "program", 1, NULL);
	if (m->program && !m->program[0])
		bad(c, "\"program\" is empty");
	m->executable = get_str(c, o, "executable", 0, m->program);
	m->args = get_strs(c, o, "arguments", &m->nargs);
	m->host = get_str(c, o, "host", 0, "?");
	m->hosts = get_strs(c, o, "hosts", &m->nhosts);
	m->processes = get_u64(c, o, "processes", 0);
	m->threads = get_u64(c, o, "threads", 0);
	m->ranks = get_u64(c, o, "ranks", 0);
	m->start = get_str(c, o, "start", 0, "?");
	m->start_unix_ns = get_u64(c, o, "start_unix_ns", 0);
	m->duration_ns = get_u64(c, o, "duration_ns", 0);
	m->git_revision = get_str(c, o, "git_revision", 0, NULL);
	m->clock = get_str(c, o, "clock", 0, "?");
	const struct jv *wc = jv_get(o, "writer_cpu_ns"); /* absent or null: not known */
	m->has_writer_cpu = wc && wc->type == JV_NUMBER;
	m->writer_cpu_ns = m->has_writer_cpu ? get_u64(c, o, "writer_cpu_ns", 0) : 0;
	m->tracer_end_ns = get_u64(c, o, "tracer_end_ns", 0);
}

static void read_region(struct rctx *c, const struct jv *o, struct rp_region *g)
{
	g->name = get_str(c, o, "name", 1, NULL);
	g->kind = get_str(c, o, "kind", 1, NULL);
	g->role = get_str(c, o, "role", 0, "?");
	g->calls = get_u64(c, o, "calls", 1);
	g->incl_ns = get_u64(c, o, "inclusive_ns", 1);
	g->excl_ns = get_u64(c, o, "exclusive_ns", 1);
	g->min_ns = get_u64(c, o, "min_ns", 0);
	g->mean_ns = get_u64(c, o, "mean_ns", 0);
	g->max_ns = get_u64(c, o, "max_ns", 0);
	g->threads = (uint32_t)get_u64(c, o, "threads", 0);
	g->thread_min_ns = get_u64(c, o, "thread_min_ns", 0);
	g->thread_mean_ns = get_u64(c, o, "thread_mean_ns", 0);
	g->thread_max_ns = get_u64(c, o, "thread_max_ns", 0);
	g->imbalance = get_double(c, o, "imbalance");
	g->max_thread = get_str(c, o, "max_thread", 0, "?");
	g->type = get_str(c, o, "type", 0, NULL);
	g->bytes = get_u64(c, o, "bytes", 0);
}

/* The call tree (optional: profiles saved before it have none); a parent comes before its
 * children. */
static void read_tree(struct rctx *c, const struct jv *o, struct rp_run *r, size_t len)
{
	const struct jv *a = member(c, o, "tree", JV_ARRAY, 0);
	r->tree_cut = get_bool(c, o, "tree_cut");
	if (!a || c->failed)
		return;
	if (!(r->tree = calloc(a->n + 1, sizeof(*r->tree)))) {
		bad(c, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		snprintf(c->where + len, sizeof(c->where) - len, ".tree[%zu]", i);
		const struct jv *v = a->items[i];
		if (v->type != JV_OBJECT) {
			bad(c, "must be an object, not %s", jv_type_name(v->type));
			break;
		}
		struct rp_node *t = &r->tree[r->ntree++];
		t->name = get_str(c, v, "name", 1, NULL);
		t->kind = get_str(c, v, "kind", 1, NULL);
		t->parent = get_i64(c, v, "parent");
		t->calls = get_u64(c, v, "calls", 1);
		t->incl_ns = get_u64(c, v, "inclusive_ns", 1);
		t->excl_ns = get_u64(c, v, "exclusive_ns", 1);
		if (!c->failed && (t->parent < -1 || t->parent >= (int64_t)i))
			bad(c, "\"parent\" must be -1 or the index of an earlier node");
	}
	c->where[len] = '\0';
}

static void read_memory(struct rctx *c, const struct jv *o, struct rp_run *r, size_t len)
{
	const struct jv *a = member(c, o, "memory", JV_ARRAY, 0);
	if (!a || c->failed)
		return;
	if (!(r->memory = calloc(a->n + 1, sizeof(*r->memory)))) {
		bad(c, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		snprintf(c->where + len, sizeof(c->where) - len, ".memory[%zu]", i);
		const struct jv *v = a->items[i];
		if (v->type != JV_OBJECT) {
			bad(c, "must be an object, not %s", jv_type_name(v->type));
			break;
		}
		struct rp_memory *m = &r->memory[r->nmemory++];
		m->process = get_str(c, v, "process", 1, NULL);
		m->space = get_str(c, v, "space", 1, NULL);
		m->high_water = get_u64(c, v, "high_water_bytes", 1);
		m->at_ns = get_u64(c, v, "high_water_at_ns", 0);
		m->end_bytes = get_u64(c, v, "end_bytes", 0);
		m->allocations = get_u64(c, v, "allocations", 0);
		m->frees = get_u64(c, v, "frees", 0);
		m->live_at_high = get_u64(c, v, "live_at_high_water", 0);
		const struct jv *l = member(c, v, "largest_live", JV_ARRAY, 0);
		if (!(m->top = calloc((l ? l->n : 0) + 1, sizeof(*m->top)))) {
			bad(c, "out of memory");
			break;
		}
		for (size_t j = 0; l && j < l->n && !c->failed; j++) {
			if (l->items[j]->type != JV_OBJECT) {
				bad(c, "largest_live[%zu] must be an object", j);
				break;
			}
			m->top[m->ntop].label = get_str(c, l->items[j], "label", 1, NULL);
			m->top[m->ntop++].bytes = get_u64(c, l->items[j], "bytes", 1);
		}
	}
	c->where[len] = '\0';
}

/* A list of sample rows ("functions", "regions" or "paths" of "samples"); totals: the rows
 * have total and total_ns (functions), else they are their self counts. */
static struct rp_sample_row *read_rows(struct rctx *c, const struct jv *o, const char *key,
				       int totals, size_t *n)
{
	*n = 0;
	const struct jv *a = member(c, o, key, JV_ARRAY, 1);
	if (!a || c->failed)
		return NULL;
	struct rp_sample_row *rows = calloc(a->n + 1, sizeof(*rows));
	if (!rows) {
		bad(c, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		const struct jv *r = a->items[i];
		if (r->type != JV_OBJECT) {
			bad(c, "\"%s\"[%zu] must be an object", key, i);
			break;
		}
		struct rp_sample_row *w = &rows[(*n)++];
		w->name = get_str(c, r, "name", 1, NULL);
		w->self = get_u64(c, r, "self", 1);
		w->self_ns = get_u64(c, r, "self_ns", 1);
		w->total = totals ? get_u64(c, r, "total", 1) : w->self;
		w->total_ns = totals ? get_u64(c, r, "total_ns", 1) : w->self_ns;
	}
	return rows;
}

static void read_samples(struct rctx *c, const struct jv *o, struct rp_samples *s)
{
	s->count = get_u64(c, o, "count", 1);
	s->cpu_ns = get_u64(c, o, "cpu_ns", 1);
	s->functions = read_rows(c, o, "functions", 1, &s->nfunctions);
	s->regions = read_rows(c, o, "regions", 0, &s->nregions);
	s->paths = read_rows(c, o, "paths", 0, &s->npaths);
	const struct jv *a = member(c, o, "blocked", JV_ARRAY, 0);
	if (!a || c->failed)
		return;
	if (!(s->blocked = calloc(a->n + 1, sizeof(*s->blocked)))) {
		bad(c, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		const struct jv *r = a->items[i];
		if (r->type != JV_OBJECT) {
			bad(c, "\"blocked\"[%zu] must be an object", i);
			break;
		}
		struct rp_blocked *b = &s->blocked[s->nblocked++];
		b->thread = get_str(c, r, "thread", 1, NULL);
		b->tid = (uint32_t)get_u64(c, r, "tid", 0);
		b->not_taken = get_u64(c, r, "not_taken", 1);
	}
}

static void read_process(struct rctx *c, const struct jv *o, struct rp_process *p)
{
	p->name = get_str(c, o, "name", 1, NULL);
	p->pid = (int)get_i64(c, o, "pid");
	p->ppid = (int)get_i64(c, o, "ppid");
	p->host = get_str(c, o, "host", 0, "?");
	p->program = get_str(c, o, "program", 0, "?");
	p->ended = get_bool(c, o, "ended");
	p->lifetime_ns = get_u64(c, o, "lifetime_ns", 0);
	p->in_regions_ns = get_u64(c, o, "in_regions_ns", 0);
	p->events = get_u64(c, o, "events", 0);
	p->lost = get_u64(c, o, "lost_events", 0);
	const struct jv *a = member(c, o, "threads", JV_ARRAY, 0);
	if (!a || c->failed)
		return;
	if (!(p->threads = calloc(a->n + 1, sizeof(*p->threads)))) {
		bad(c, "out of memory");
		return;
	}
	size_t len = strlen(c->where);
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		snprintf(c->where + len, sizeof(c->where) - len, ".threads[%zu]", i);
		const struct jv *t = a->items[i];
		if (t->type != JV_OBJECT) {
			bad(c, "must be an object, not %s", jv_type_name(t->type));
			break;
		}
		struct rp_thread *th = &p->threads[p->nthreads++];
		th->index = (uint32_t)get_u64(c, t, "index", 1);
		th->tid = (uint32_t)get_u64(c, t, "tid", 0);
		th->name = get_str(c, t, "name", 0, "?");
		th->lifetime_ns = get_u64(c, t, "lifetime_ns", 0);
		th->in_regions_ns = get_u64(c, t, "in_regions_ns", 0);
		th->events = get_u64(c, t, "events", 0);
		th->lost = get_u64(c, t, "lost_events", 0);
		th->dropped_short = get_u64(c, t, "dropped_short", 0);
		th->dropped_filter = get_u64(c, t, "dropped_filtered", 0);
	}
	c->where[len] = '\0';
}

static int by_key(const void *x, const void *y)
{
	return rp_region_cmp_key(x, y);
}

static void read_run(struct rctx *c, const struct jv *o, struct rp_run *r, const char *path,
		     size_t index)
{
	/* Named by the file it was read from, then the trace it was made of: a baseline and a
	 * candidate profiled from one trace path (another day, another build) read apart. */
	const struct jv *tr = member(c, o, "trace", JV_STRING, 0);
	if (asprintf(&r->trace, tr ? "%s#%zu (%s)" : "%s#%zu", path, index, tr ? tr->string : "") <
	    0) {
		r->trace = NULL;
		bad(c, "out of memory");
	}
	const struct jv *m = member(c, o, "metadata", JV_OBJECT, 1);
	if (c->failed)
		return;
	size_t len = strlen(c->where);
	snprintf(c->where + len, sizeof(c->where) - len, ".metadata");
	read_meta(c, m, &r->meta);
	c->where[len] = '\0';
	const struct jv *t = member(c, o, "totals", JV_OBJECT, 0);
	if (t) {
		snprintf(c->where + len, sizeof(c->where) - len, ".totals");
		r->totals.events = get_u64(c, t, "events", 0);
		r->totals.lost = get_u64(c, t, "lost_events", 0);
		r->totals.truncated = get_u64(c, t, "truncated_threads", 0);
		r->totals.cut_processes = get_u64(c, t, "cut_processes", 0);
		r->totals.flight = get_u64(c, t, "flight_processes", 0);
		r->totals.unclosed = get_u64(c, t, "unclosed_regions", 0);
		r->totals.anomalies = get_u64(c, t, "anomalies", 0);
		r->totals.dropped_short = get_u64(c, t, "dropped_short", 0);
		r->totals.dropped_filter = get_u64(c, t, "dropped_filtered", 0);
		r->totals.damaged = get_bool(c, t, "damaged");
		c->where[len] = '\0';
	}
	const struct jv *a = member(c, o, "regions", JV_ARRAY, 1);
	if (c->failed)
		return;
	if (!(r->regions = calloc(a->n + 1, sizeof(*r->regions)))) {
		bad(c, "out of memory");
		return;
	}
	for (size_t i = 0; i < a->n && !c->failed; i++) {
		snprintf(c->where + len, sizeof(c->where) - len, ".regions[%zu]", i);
		if (a->items[i]->type != JV_OBJECT) {
			bad(c, "must be an object, not %s", jv_type_name(a->items[i]->type));
			break;
		}
		read_region(c, a->items[i], &r->regions[r->nregions++]);
	}
	c->where[len] = '\0';
	if (c->failed)
		return;
	/* A region is its kind and name: one entry each. */
	qsort(r->regions, r->nregions, sizeof(*r->regions), by_key);
	for (size_t i = 1; i < r->nregions; i++)
		if (!rp_region_cmp_key(&r->regions[i - 1], &r->regions[i])) {
			snprintf(c->where + len, sizeof(c->where) - len, ".regions");
			bad(c, "region \"%s\" (%s) appears twice", r->regions[i].name,
			    r->regions[i].kind);
			return;
		}
	read_tree(c, o, r, len);
	read_memory(c, o, r, len);
	if (c->failed)
		return;
	const struct jv *smp = member(c, o, "samples", JV_OBJECT, 0);
	if (smp) {
		snprintf(c->where + len, sizeof(c->where) - len, ".samples");
		read_samples(c, smp, &r->samples);
		c->where[len] = '\0';
		if (c->failed)
			return;
	}
	const struct jv *ps = member(c, o, "processes", JV_ARRAY, 0);
	if (!ps || c->failed)
		return;
	if (!(r->procs = calloc(ps->n + 1, sizeof(*r->procs)))) {
		bad(c, "out of memory");
		return;
	}
	for (size_t i = 0; i < ps->n && !c->failed; i++) {
		snprintf(c->where + len, sizeof(c->where) - len, ".processes[%zu]", i);
		if (ps->items[i]->type != JV_OBJECT) {
			bad(c, "must be an object, not %s", jv_type_name(ps->items[i]->type));
			break;
		}
		read_process(c, ps->items[i], &r->procs[r->nprocs++]);
	}
	c->where[len] = '\0';
	rp_sort_regions(r);
}

int rp_read_json(const char *path, struct rp_run **runs, size_t *nruns, char *err, size_t errlen)
{
	size_t len;
	char *text = rd_file_read(path, MAX_PROFILE_SIZE, &len, err, errlen);
	if (!text)
		return -1;
	char perr[300];
	struct jv *doc = json_parse(text, len, perr, sizeof(perr));
	free(text);
	if (!doc) {
		snprintf(err, errlen, "%s: not valid JSON: %s", path, perr);
		return -1;
	}
	struct rctx c = {.err = perr, .errlen = sizeof(perr)};
	const struct jv *schema = NULL, *a = NULL;
	if (doc->type != JV_OBJECT) {
		bad(&c, "not a profile: the top level is %s, not an object",
		    jv_type_name(doc->type));
	} else if (!(schema = jv_get(doc, "schema")) || schema->type != JV_STRING) {
		bad(&c, "not a profile: no \"schema\" string (expected \"%s\")", RP_SCHEMA);
	} else if (strcmp(schema->string, RP_SCHEMA)) {
		if (!strncmp(schema->string, "libtrace-profile/", 17))
			bad(&c, "schema \"%s\" is not supported (this trace-report reads \"%s\")",
			    schema->string, RP_SCHEMA);
		else
			bad(&c, "not a profile: schema \"%s\" (expected \"%s\")", schema->string,
			    RP_SCHEMA);
	} else if ((a = member(&c, doc, "runs", JV_ARRAY, 1)) && a->n == 0) {
		bad(&c, "\"runs\" is empty");
	}
	size_t first = *nruns;
	if (!c.failed) {
		struct rp_run *r = realloc(*runs, (*nruns + a->n) * sizeof(*r));
		if (!r) {
			bad(&c, "out of memory");
		} else {
			*runs = r;
			for (size_t i = 0; i < a->n && !c.failed; i++) {
				snprintf(c.where, sizeof(c.where), "runs[%zu]", i);
				struct rp_run *run = &r[(*nruns)++];
				memset(run, 0, sizeof(*run));
				if (a->items[i]->type != JV_OBJECT)
					bad(&c, "must be an object, not %s",
					    jv_type_name(a->items[i]->type));
				else
					read_run(&c, a->items[i], run, path, i);
			}
		}
	}
	jv_free(doc);
	if (c.failed) {
		for (size_t i = first; i < *nruns; i++)
			rp_run_free(&(*runs)[i]);
		*nruns = first;
		snprintf(err, errlen, "%s: %s", path, perr);
		return -1;
	}
	return 0;
}
