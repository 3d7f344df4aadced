// SPDX-License-Identifier: BSD-3-Clause
/*
 * convert.c - the converter's core (see convert.h): reads each process, merges its threads
 * in time with a heap of record cursors, and turns records into events for the backend.
 *
 * Why merge in time: lock acquisitions carry an order per lock, and a thread's begin must
 * follow its creation, its wait must follow its end; a time-ordered walk over the threads
 * of a process sees each fact before the facts that depend on it, with only per-thread
 * state (a read window and a region stack) alive for the threads that are live.
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

#include "convert.h"

/* A string -> uint32 map (open addressing; keys owned). */
struct cv_strmap {
	char **keys;
	uint32_t *vals;
	size_t n, cap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int strmap_grow(struct cv_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	char **keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash_str(m->keys[i]) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

/* Looks key up; when absent and val_if_new != NULL, inserts *val_if_new.  Returns a
 * pointer to the value, or NULL (absent, or no memory). */
static uint32_t *strmap_get(struct cv_strmap *m, const char *key, const uint32_t *val_if_new)
{
	if (m->cap) {
		size_t j = hash_str(key) & (m->cap - 1);
		while (m->keys[j]) {
			if (!strcmp(m->keys[j], key))
				return &m->vals[j];
			j = (j + 1) & (m->cap - 1);
		}
	}
	if (!val_if_new)
		return NULL;
	if ((m->n + 1) * 2 > m->cap && strmap_grow(m))
		return NULL;
	size_t j = hash_str(key) & (m->cap - 1);
	while (m->keys[j])
		j = (j + 1) & (m->cap - 1);
	m->keys[j] = strdup(key);
	if (!m->keys[j])
		return NULL;
	m->vals[j] = *val_if_new;
	m->n++;
	return &m->vals[j];
}

static void strmap_free(struct cv_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	free(m);
}

static void *grow(void *array, uint32_t *cap, size_t elem)
{
	uint32_t n = *cap ? *cap * 2 : 64;
	void *a = realloc(array, (size_t)n * elem);
	if (a)
		*cap = n;
	return a;
}

uint32_t cv_string(struct cv *cv, const char *text)
{
	if (!cv->string_map && !(cv->string_map = calloc(1, sizeof(*cv->string_map))))
		return 0;
	uint32_t id = cv->nstrings;
	uint32_t *v = strmap_get(cv->string_map, text, &id);
	if (!v)
		return 0;
	if (*v != id || id < cv->nstrings)
		return *v;
	if (cv->nstrings == cv->strings_cap) {
		char **a = grow(cv->strings, &cv->strings_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->strings = a;
	}
	cv->strings[cv->nstrings++] = strdup(text);
	return id;
}

/* The region of kind (a one-letter namespace) and name; created with r on first use. */
static uint32_t region(struct cv *cv, char kind, const char *name, const struct cv_region *r)
{
	char key[2048];
	snprintf(key, sizeof(key), "%c:%s", kind, name);
	if (!cv->region_map && !(cv->region_map = calloc(1, sizeof(*cv->region_map))))
		return 0;
	uint32_t id = cv->nregions;
	uint32_t *v = strmap_get(cv->region_map, key, &id);
	if (!v || *v != id || id < cv->nregions)
		return v ? *v : 0;
	if (cv->nregions == cv->regions_cap) {
		struct cv_region *a = grow(cv->regions, &cv->regions_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->regions = a;
	}
	cv->regions[cv->nregions++] = *r;
	return id;
}

static uint32_t fn_region(struct cv *cv, unsigned fn)
{
	if (cv->fn_regions[fn])
		return cv->fn_regions[fn] - 1;
	const char *name = rd_fn_name(fn);
	enum cv_role role = CV_ROLE_WRAPPER;
	if (fn == LT_FN_pthread_create)
		role = CV_ROLE_THREAD_CREATE;
	else if (fn == LT_FN_pthread_join || fn == LT_FN_pthread_tryjoin_np ||
		 fn == LT_FN_pthread_timedjoin_np || fn == LT_FN_pthread_clockjoin_np)
		role = CV_ROLE_THREAD_WAIT;
	int proc = fn == LT_FN_fork || fn == LT_FN_execve || fn == LT_FN_posix_spawn ||
		   fn == LT_FN_dlopen || fn == LT_FN_dlclose;
	uint32_t sid = cv_string(cv, name);
	struct cv_region r = {sid, sid,	 cv_string(cv, proc ? "PROCESS" : "PTHREAD"),
			      0,   role, proc ? CV_PARADIGM_PROCESS : CV_PARADIGM_PTHREAD,
			      0};
	uint32_t id = region(cv, 'C', name, &r);
	cv->fn_regions[fn] = id + 1;
	return id;
}

/* An MPI function's region: point to point, collective or other, by its name. */
static uint32_t mpi_region(struct cv *cv, const char *name)
{
	static const char *const colls[] = {
	    "Barrier",	  "Bcast",     "Reduce",    "Allreduce",      "Gather",
	    "Gatherv",	  "Scatter",   "Scatterv",  "Allgather",      "Allgatherv",
	    "Alltoall",	  "Alltoallv", "Alltoallw", "Reduce_scatter", "Scan",
	    "Exscan",	  "Ibarrier",  "Ibcast",    "Ireduce",	      "Iallreduce",
	    "Iallgather", "Ialltoall", "Igather",   "Iscatter",	      "Reduce_scatter_block"};
	static const char *const p2p[] = {"Send",   "Ssend", "Bsend",	 "Rsend",
					  "Recv",   "Isend", "Issend",	 "Ibsend",
					  "Irsend", "Irecv", "Sendrecv", "Sendrecv_replace",
					  "Probe",  "Iprobe"};
	uint32_t sid = cv_string(cv, name);
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_MPI, 0};
	const char *op = strncmp(name, "MPI_", 4) ? name : name + 4;
	for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++)
		if (!strcmp(op, colls[i]))
			r.role = CV_ROLE_COLLECTIVE;
	for (size_t i = 0; i < sizeof(p2p) / sizeof(p2p[0]); i++)
		if (!strcmp(op, p2p[i]))
			r.role = CV_ROLE_POINT2POINT;
	return region(cv, 'M', name, &r);
}

static uint32_t user_region(struct cv *cv, const char *name)
{
	uint32_t sid = cv_string(cv, name);
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_USER, CV_PARADIGM_USER, 0};
	return region(cv, 'U', name, &r);
}

/* What code address addr of process p is. */
static void resolve_code(struct cv *cv, const struct rd_process *p, uint64_t addr,
			 struct sym_result *out)
{
	struct sym_result s;
	const struct rd_map *map = NULL;
	for (size_t i = p->nmaps; i-- > 0;) /* the newest mapping wins: dlopen after dlclose */
		if (addr >= p->maps[i].start && addr < p->maps[i].end) {
			map = &p->maps[i];
			break;
		}
	if (map)
		sym_resolve(cv->syms, map->path, addr - map->start + map->offset, &s);
	else
		sym_unmapped(cv->syms, addr, &s);
	/* A PLT stub (a non-PIE executable's address of a library function): the function
	 * itself, in whichever module of the process defines it. */
	for (size_t i = 0; map && s.plt && i < p->nmaps; i++) {
		uint64_t off;
		if (strcmp(p->maps[i].path, map->path) &&
		    sym_find(cv->syms, p->maps[i].path, s.plt, &off) == 0) {
			sym_resolve(cv->syms, p->maps[i].path, off, &s);
			break;
		}
	}
	*out = s;
}

/* The region of a code address of process p (a start routine). */
static uint32_t code_region(struct cv *cv, const struct rd_process *p, uint64_t addr)
{
	struct sym_result s;
	resolve_code(cv, p, addr, &s);
	char name[2048];
	if (s.file && s.line) {
		const char *base = strrchr(s.file, '/');
		snprintf(name, sizeof(name), "%s @%s:%u", s.function, base ? base + 1 : s.file,
			 s.line);
	} else {
		snprintf(name, sizeof(name), "%s", s.function);
	}
	struct cv_region r = {cv_string(cv, name),
			      cv_string(cv, s.symbol ? s.symbol : s.function),
			      s.file ? cv_string(cv, s.file) : CV_NO_STRING,
			      s.line,
			      CV_ROLE_FUNCTION,
			      CV_PARADIGM_USER,
			      0};
	return region(cv, 'F', name, &r);
}

/* The main thread's outermost region: the executable's main, with file and line where the
 * executable has them; plain "main" where it is stripped. */
static uint32_t main_region(struct cv *cv, const struct rd_process *p)
{
	uint64_t off;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct rd_map *m = &p->maps[i];
		if (!strcmp(m->path, p->exe) && sym_find(cv->syms, m->path, "main", &off) == 0 &&
		    off >= m->offset && off - m->offset < m->end - m->start)
			return code_region(cv, p, m->start + (off - m->offset));
	}
	uint32_t sid = cv_string(cv, "main");
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_USER, 0};
	return region(cv, 'F', "main", &r);
}

static enum cv_role omp_role(unsigned c)
{
	switch (c) {
	case LT_OMP_parallel:
	case LT_OMP_teams:
		return CV_ROLE_PARALLEL;
	case LT_OMP_loop:
	case LT_OMP_taskloop:
		return CV_ROLE_LOOP;
	case LT_OMP_sections:
		return CV_ROLE_SECTIONS;
	case LT_OMP_single:
		return CV_ROLE_SINGLE;
	case LT_OMP_barrier:
		return CV_ROLE_BARRIER;
	case LT_OMP_implicit_barrier:
		return CV_ROLE_IMPLICIT_BARRIER;
	case LT_OMP_taskwait:
	case LT_OMP_taskgroup:
		return CV_ROLE_TASK_WAIT;
	case LT_OMP_critical:
		return CV_ROLE_CRITICAL;
	case LT_OMP_atomic:
		return CV_ROLE_ATOMIC;
	case LT_OMP_ordered:
		return CV_ROLE_ORDERED;
	case LT_OMP_task_create:
		return CV_ROLE_TASK_CREATE;
	case LT_OMP_task:
		return CV_ROLE_TASK;
	case LT_OMP_masked:
		return CV_ROLE_MASTER;
	case LT_OMP_workshare:
		return CV_ROLE_WORKSHARE;
	}
	return CV_ROLE_WRAPPER; /* the lock API, taskyield, cancel */
}

/*
 * The region of OpenMP construct c.  Parallel regions and tasks are named after their code
 * as Score-P does: "!$omp parallel @file.c:42" (the outlined function's line, or the call
 * site's for an OMPT return address), "!$omp parallel <function>" without line numbers.
 */
static uint32_t omp_region(struct cv *cv, const struct rd_process *p, unsigned c, uint64_t addr,
			   int return_address)
{
	const char *what = rd_omp_name(c);
	struct cv_region r = {0, 0, CV_NO_STRING, 0, omp_role(c), CV_PARADIGM_OPENMP, 0};
	if (!addr) {
		r.name = r.canonical = cv_string(cv, what);
		return region(cv, 'O', what, &r);
	}
	struct sym_result s;
	resolve_code(cv, p, return_address ? addr - 1 : addr, &s);
	char name[2048];
	if (s.file && s.line) {
		const char *base = strrchr(s.file, '/');
		snprintf(name, sizeof(name), "%s @%s:%u", what, base ? base + 1 : s.file, s.line);
	} else {
		snprintf(name, sizeof(name), "%s %s", what, s.function);
	}
	r.name = cv_string(cv, name);
	r.canonical = cv_string(cv, s.symbol ? s.symbol : s.function);
	r.file = s.file ? cv_string(cv, s.file) : CV_NO_STRING;
	r.line = s.line;
	return region(cv, 'O', name, &r);
}

/* The team thread `forker` of process `process` forks at nesting level `level` with `size`
 * threads; loc joins it. */
static uint32_t team_of(struct cv *cv, uint32_t process, uint32_t forker, uint32_t level,
			uint32_t size, uint32_t loc)
{
	char key[80];
	snprintf(key, sizeof(key), "%u:%u:%u:%u", process, forker, level, size);
	if (!cv->team_map && !(cv->team_map = calloc(1, sizeof(*cv->team_map))))
		return 0;
	uint32_t id = cv->nteams;
	uint32_t *v = strmap_get(cv->team_map, key, &id);
	if (!v)
		return 0;
	if (*v == id && id == cv->nteams) {
		if (cv->nteams == cv->teams_cap) {
			struct cv_team *a = grow(cv->teams, &cv->teams_cap, sizeof(*a));
			if (!a)
				return 0;
			cv->teams = a;
		}
		cv->teams[cv->nteams++] =
		    (struct cv_team){process, forker, size, NULL, 0, 0, cv->ncomm_refs++};
	}
	struct cv_team *tm = &cv->teams[*v];
	for (uint32_t i = 0; i < tm->nmembers; i++)
		if (tm->members[i] == loc)
			return *v;
	if (tm->nmembers == tm->cap) {
		uint32_t *a = grow(tm->members, &tm->cap, sizeof(*a));
		if (!a)
			return *v;
		tm->members = a;
	}
	tm->members[tm->nmembers++] = loc;
	return *v;
}

static uint32_t metric(struct cv *cv, const char *name, int is_double, const char *unit)
{
	char key[1100];
	snprintf(key, sizeof(key), "%d:%s", is_double, name);
	if (!cv->metric_map && !(cv->metric_map = calloc(1, sizeof(*cv->metric_map))))
		return 0;
	uint32_t id = cv->nmetrics;
	uint32_t *v = strmap_get(cv->metric_map, key, &id);
	if (!v || *v != id || id < cv->nmetrics)
		return v ? *v : 0;
	if (cv->nmetrics == cv->metrics_cap) {
		struct cv_metric *a = grow(cv->metrics, &cv->metrics_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->metrics = a;
	}
	cv->metrics[cv->nmetrics++] = (struct cv_metric){
	    .name = cv_string(cv, name), .unit = cv_string(cv, unit), .is_double = is_double};
	return id;
}

/* ---- call sites and PAPI sets ---- */

/* The call site of return address ra (the line of the call: the address before it). */
static uint32_t scl_of(struct cv *cv, const struct rd_process *p, uint64_t ra, uint32_t *func)
{
	struct sym_result s;
	resolve_code(cv, p, ra - 1, &s);
	struct cv_scl c = {cv_string(cv, s.file ? s.file : ""), s.line, cv_string(cv, s.function)};
	*func = c.function;
	char key[64];
	snprintf(key, sizeof(key), "%u:%u:%u", c.file, c.line, c.function);
	if (!cv->scl_map && !(cv->scl_map = calloc(1, sizeof(*cv->scl_map))))
		return 0;
	uint32_t id = cv->nscls;
	uint32_t *v = strmap_get(cv->scl_map, key, &id);
	if (!v || *v != id || id < cv->nscls)
		return v ? *v + 1 : 0;
	if (cv->nscls == cv->scls_cap) {
		struct cv_scl *a = grow(cv->scls, &cv->scls_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->scls = a;
	}
	cv->scls[cv->nscls++] = c;
	return id + 1;
}

/* The calling context of a frame: the function `func` (a region), its line scl + 1, the
 * context of its caller (id + 1, 0: none).  Returns id + 1, 0 on failure. */
static uint32_t ctx_of(struct cv *cv, uint32_t func, uint32_t scl, uint32_t parent)
{
	struct cv_region r = {func, func, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_USER, 0};
	uint32_t reg = region(cv, 'C', cv->strings[func], &r);
	char key[64];
	snprintf(key, sizeof(key), "%u:%u:%u", reg, scl, parent);
	if (!cv->ctx_map && !(cv->ctx_map = calloc(1, sizeof(*cv->ctx_map))))
		return 0;
	uint32_t id = cv->nctxs;
	uint32_t *v = strmap_get(cv->ctx_map, key, &id);
	if (!v || *v != id || id < cv->nctxs)
		return v ? *v + 1 : 0;
	if (cv->nctxs == cv->ctxs_cap) {
		struct cv_ctx *a = grow(cv->ctxs, &cv->ctxs_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->ctxs = a;
	}
	cv->ctxs[cv->nctxs++] = (struct cv_ctx){reg, scl - 1, parent};
	return id + 1;
}

/* The PAPI set of process p's "papi" lines (id + 1; 0: none or unusable). */
static uint32_t papi_set(struct cv *cv, const struct rd_process *p)
{
	struct cv_papi s = {.n = p->npapi, .strict = 1};
	for (unsigned i = 0; i < p->npapi; i++) {
		if (!p->papi[i])
			return 0;
		s.names[i] = cv_string(cv, p->papi[i]);
		s.codes[i] = p->papi_code[i];
	}
	if (!s.n)
		return 0;
	cv_string(cv, "#"); /* their unit */
	for (uint32_t k = 0; k < cv->npapis; k++)
		if (cv->papis[k].n == s.n && !memcmp(cv->papis[k].names, s.names, sizeof(s.names)))
			return k + 1;
	if (cv->npapis == cv->papis_cap) {
		struct cv_papi *a = grow(cv->papis, &cv->papis_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->papis = a;
	}
	cv->papis[cv->npapis++] = s;
	return cv->npapis;
}

void cv_papi_seen(struct cv *cv, struct cv_loc *l)
{
	if (cv->cur_papi)
		l->papi = cv->cur_papi;
	else
		l->papi_missed = 1;
}

/* ---- one process ---- */

struct frame {
	uint32_t region;
	int fn; /* enum lt_fn, or -1 for a user or code region */
	uint64_t obj, obj2;
	uint32_t aux; /* a GPU call's call site id + 1 (0: none) */
};

struct held {
	uint32_t lock, order;
	enum cv_paradigm paradigm;
};

struct tstate {
	struct rd_cursor cur;
	const struct lt_rec *rec; /* the next record, NULL when done */
	uint64_t key;		  /* rec's ticks */
	size_t loc;		  /* index into cv->locs, or SIZE_MAX before its first event */
	uint64_t last_ns;
	struct frame *stack;
	uint32_t depth, cap;
	uint64_t too_deep; /* frames refused above STACK_MAX and still open: their leaves go */
	uint32_t index;
	int began, ended, created, program;
	uint32_t name;	   /* string id + 1 of a name given before the thread's first record */
	struct held *held; /* locks held, with the order of their acquisition */
	uint32_t nheld, held_cap;
	uint64_t deep[LT_REC_WORDS_MAX]; /* a CALLSITE record's frames, for the next record */
	unsigned ndeep;
	uint64_t values[16]; /* a COUNTERS reading, for the next record (ordered as the set) */
	int has_values;
	int done;	    /* its location is closed */
	int cpu;	    /* the CPU it runs on, -1: unknown */
	uint64_t cpu_since; /* since when (ns) */
	struct {	    /* the MPI collective whose call is open (its end is due) */
		int open;
		unsigned op;
		uint32_t comm, root;
		uint64_t sent, received;
	} coll;
};

struct lockent {
	uint64_t addr;
	uint32_t id, order;
};

/* A map of 64-bit keys (never 0) to 64-bit values: open addressing, deletion by backward
 * shift, so that it holds only what is live. */
struct idmap {
	uint64_t *keys, *vals;
	size_t n, cap;
};

static size_t idmap_slot(const struct idmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);
}

static uint64_t *idmap_get(struct idmap *m, uint64_t key, int create)
{
	if (!key)
		return NULL;
	if (create && (m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *k = calloc(cap, sizeof(*k)), *v = calloc(cap, sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return NULL;
		}
		struct idmap nm = {k, v, 0, cap};
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t j = idmap_slot(&nm, m->keys[i]);
				while (k[j])
					j = (j + 1) & (cap - 1);
				k[j] = m->keys[i];
				v[j] = m->vals[i];
			}
		nm.n = m->n;
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	if (!m->cap)
		return NULL;
	size_t j = idmap_slot(m, key);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j]) {
		if (!create)
			return NULL;
		m->keys[j] = key;
		m->vals[j] = 0;
		m->n++;
	}
	return &m->vals[j];
}

static void idmap_del(struct idmap *m, uint64_t key)
{
	if (!key || !m->cap)
		return;
	size_t j = idmap_slot(m, key);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		return;
	m->keys[j] = 0;
	m->n--;
	for (size_t i = (j + 1) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		size_t home = idmap_slot(m, m->keys[i]);
		/* Move i back to j when its home is not in (j, i] (cyclically). */
		if ((i > j && (home <= j || home > i)) || (i < j && home <= j && home > i)) {
			m->keys[j] = m->keys[i];
			m->vals[j] = m->vals[i];
			m->keys[i] = 0;
			j = i;
		}
	}
}

static void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct idmap){0};
}

/* A live allocation (Kokkos's, or a GPU API call's), in a table by address. */
struct kalloc {
	uint64_t addr, bytes, ns;
	uint32_t label, space, loc; /* string ids; index into cv->locs */
	uint32_t scl;		    /* call site id + 1 of the allocating call, 0: none */
};

struct alloc_table {
	struct idmap map; /* address -> index + 1 into a, while allocated */
	struct kalloc *a; /* the live allocations */
	uint32_t n, cap;
};

/* A GPU API call whose correlation id the device's records may name: who made it, when. */
struct gcall {
	uint32_t loc; /* index into cv->locs */
	uint64_t ns;  /* its Enter */
};

/* A device operation (GPU_ACTIVITY), kept until the process's merge ends. */
struct gact {
	uint64_t w[8]; /* the record's payload (format.h), missing words 0 */
	uint32_t arg;
	uint16_t kind; /* enum lt_gpu_act */
};

struct kspace {
	uint32_t name, metric;
	int64_t bytes;
};

struct pstate {
	struct cv *cv;
	struct rd_process *p;
	uint32_t pidx;
	int64_t offset_ns; /* added to the process's monotonic ns */
	/* An MPI rank's clock offsets to rank 0 that are trusted (of rd_process.mpi_clock),
	 * interpolated and added before offset_ns (which is then rank 0's); none: 0. */
	struct rd_mpi_clock
	    mpi_clock[sizeof(((struct rd_process *)0)->mpi_clock) / sizeof(struct rd_mpi_clock)];
	size_t nmpi_clock;
	uint64_t last_ns; /* the latest event time of the process */
	struct tstate *ts;
	size_t nts;
	struct tstate **heap;
	size_t nheap;
	struct lockent *locks; /* open addressing on addr */
	size_t nlocks, locks_cap;
	uint32_t *next_lock_id;
	uint32_t *user_regions;	 /* process string id -> user region id + 1 (0: not yet) */
	struct idmap pars;	 /* parallel id -> code address, from fork to join */
	struct idmap levels;	 /* parallel id -> nesting level + 1 of the fork */
	struct idmap tasks;	 /* task id -> code address, from creation to completion */
	struct idmap writers;	 /* address -> the last task that wrote it (dependences) */
	struct idmap depends;	 /* task id -> string id of the tasks it waits for */
	struct idmap ksections;	 /* Kokkos section id -> string id + 1 of its name */
	struct idmap kregions;	 /* (kind + 1) << 32 | process string id -> region + 1 */
	struct alloc_table kmem; /* the live Kokkos allocations */
	struct kspace *kspaces;	 /* bytes allocated per memory space */
	uint32_t nkspaces;
	uint32_t papi; /* its PAPI set id + 1, 0: none */
	/* Samplers: the sampler thread's records become metrics on two METRIC locations. */
	uint32_t *smetric;	   /* process metric id -> cv metric id + 1 (0: not yet) */
	size_t node_loc, proc_loc; /* index into cv->locs, SIZE_MAX: not yet */
	int node_metrics;	   /* this process shows its host's node metrics */
	uint32_t m_cpu, m_node;	   /* the per-thread CPU and NUMA node metrics */
	/* GPU. */
	struct idmap gregions; /* tag << 32 | process string id -> region + 1 (gpu_*_region) */
	struct idmap gknames;  /* process string id of a kernel name -> cv string id + 1 */
	struct idmap gcorr;    /* correlation id -> index + 1 into gcalls */
	struct gcall *gcalls;  /* the GPU calls with a correlation id */
	uint32_t ngcalls, gcalls_cap;
	struct alloc_table gmem; /* device memory allocated by GPU calls, live */
	struct gact *gacts;	 /* the device's operations */
	uint32_t ngacts, gacts_cap;
	int failed;
};

static struct tstate *thread_by_index(struct pstate *ps, uint32_t index)
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

static struct lockent *lock_get(struct pstate *ps, uint64_t addr)
{
	if ((ps->nlocks + 1) * 2 > ps->locks_cap) {
		size_t cap = ps->locks_cap ? ps->locks_cap * 2 : 64;
		struct lockent *a = calloc(cap, sizeof(*a));
		if (!a)
			return NULL;
		for (size_t i = 0; i < ps->locks_cap; i++) {
			if (!ps->locks[i].addr)
				continue;
			size_t j =
			    (ps->locks[i].addr >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (cap - 1);
			while (a[j].addr)
				j = (j + 1) & (cap - 1);
			a[j] = ps->locks[i];
		}
		free(ps->locks);
		ps->locks = a;
		ps->locks_cap = cap;
	}
	size_t j = (addr >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (ps->locks_cap - 1);
	while (ps->locks[j].addr && ps->locks[j].addr != addr)
		j = (j + 1) & (ps->locks_cap - 1);
	if (!ps->locks[j].addr) {
		ps->locks[j] = (struct lockent){addr, (*ps->next_lock_id)++, 0};
		ps->nlocks++;
	}
	return &ps->locks[j];
}

static int before(const struct tstate *a, const struct tstate *b)
{
	return a->key < b->key || (a->key == b->key && a->index < b->index);
}

static void heap_down(struct pstate *ps, size_t i)
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

/* The offset to rank 0's clock at local time `local`: linear between the measurements,
 * constant before the first and after the last. */
static int64_t mpi_offset(const struct pstate *ps, int64_t local)
{
	const struct rd_mpi_clock *c = ps->mpi_clock; /* the reader bounds them by 2^60 */
	size_t n = ps->nmpi_clock;
	if (local <= c[0].local_ns)
		return c[0].offset_ns;
	for (size_t i = 1; i < n; i++)
		if (local < c[i].local_ns) {
			double f = (double)(local - c[i - 1].local_ns) /
				   (double)(c[i].local_ns - c[i - 1].local_ns);
			return c[i - 1].offset_ns +
			       (int64_t)(f * (double)(c[i].offset_ns - c[i - 1].offset_ns));
		}
	return c[n - 1].offset_ns;
}

/* Process ps's CLOCK_MONOTONIC nanoseconds `mono` on the trace's timeline: moved onto rank
 * 0's clock (an MPI rank), then by the host's offset. */
static uint64_t mono_to_ns(struct pstate *ps, uint64_t mono)
{
	int64_t ns, local = mono > (UINT64_C(1) << 62) ? INT64_C(1) << 62 : (int64_t)mono;
	if (ps->nmpi_clock && __builtin_add_overflow(local, mpi_offset(ps, local), &local))
		local = INT64_MAX;
	/* the offset comes from another host's clock readings: saturate */
	if (__builtin_add_overflow(local, ps->offset_ns, &ns))
		ns = ps->offset_ns < 0 ? 0 : INT64_MAX;
	return ns < 0 ? 0 : (uint64_t)ns;
}

/* A time written: the process's and the trace's extent. */
static void note_time(struct pstate *ps, uint64_t v)
{
	if (v > ps->last_ns)
		ps->last_ns = v;
	if (v < ps->cv->stats.first_ns)
		ps->cv->stats.first_ns = v;
	if (v > ps->cv->stats.last_ns)
		ps->cv->stats.last_ns = v;
}

static uint64_t to_ns(struct pstate *ps, struct tstate *t, uint64_t ticks)
{
	uint64_t v = mono_to_ns(ps, rd_ticks_to_ns(ps->p, ticks));
	if (v < t->last_ns) /* never backwards on a location */
		v = t->last_ns;
	t->last_ns = v;
	note_time(ps, v);
	return v;
}

/* The location of thread t, begun on its first event.  NULL after an output error. */
static struct cv_loc *loc_of(struct pstate *ps, struct tstate *t)
{
	struct cv *cv = ps->cv;
	if (t->loc != SIZE_MAX)
		return &cv->locs[t->loc];
	if (cv->nlocs == cv->locs_cap) {
		uint32_t cap = (uint32_t)cv->locs_cap;
		struct cv_loc *a = grow(cv->locs, &cap, sizeof(*a));
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
	if (cv->ops->location_begin(cv, l)) {
		ps->failed = 1;
		return NULL;
	}
	return l;
}

/* Deeper nesting is damage (enters never left): refused, so memory stays bounded. */
#define STACK_MAX (1u << 16)

/* Pushes a frame; 0, or -1 when it cannot (then the caller writes no Enter either). */
static int push(struct cv *cv, struct tstate *t, uint32_t region, int fn, uint64_t obj,
		uint64_t obj2)
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

#define FN_USER	  (-1)		    /* an annotated region */
#define FN_MAIN	  (-2)		    /* the main thread's "main", which ends with the process */
#define FN_START  (-3)		    /* a thread's start routine, which ends with the thread */
#define FN_OMP(c) (1000 + (int)(c)) /* an OpenMP construct (enum lt_omp) */
#define FN_MPI	  2000		    /* an MPI function */
#define FN_GPU	  3000		    /* a GPU API call */

/* How a thread's frames are closed. */
enum close_how {
	CLOSE_LEAVE,	  /* a leave that skipped inner frames: those were left open */
	CLOSE_THREAD_END, /* THREAD_END: the start routine, pthread_exit end normally */
	CLOSE_CUT,	  /* the records ended: all was left open but main and execve */
};

static int closed_by_converter(int fn, enum close_how how)
{
	if (fn == FN_MAIN || fn == LT_FN_execve) /* ends with the process / never returns */
		return 0;
	if (how == CLOSE_THREAD_END)
		return fn != FN_START && fn != LT_FN_pthread_exit;
	return 1;
}

/* The end of the open MPI collective of t, if any: before the Leave of its call. */
static void coll_end(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns)
{
	if (!t->coll.open)
		return;
	t->coll.open = 0;
	if (cv->ops->mpi_coll_end)
		cv->ops->mpi_coll_end(cv, l, ns, t->coll.op, t->coll.comm, t->coll.root,
				      t->coll.sent, t->coll.received);
}

/* Closes the frames above depth `to`, marking those the trace left open. */
static void unwind(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, uint32_t to,
		   enum close_how how)
{
	while (t->depth > to) {
		t->depth--;
		const struct frame *f = &t->stack[t->depth];
		int c = closed_by_converter(f->fn, how);
		if (f->fn == FN_MPI)
			coll_end(cv, l, t, ns);
		cv->ops->leave(cv, l, ns, f->region, c);
		if (f->fn == FN_OMP(LT_OMP_parallel))
			cv->ops->team_end(cv, l, ns, (uint32_t)f->obj2);
		if (c)
			cv->stats.unclosed++;
	}
}

/* Pops up to and including the innermost frame matching (fn, region); NULL if none. */
static struct frame *pop_match(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns,
			       int fn, uint32_t region)
{
	if (t->too_deep) { /* the leave of the innermost frame push refused */
		t->too_deep--;
		return NULL;
	}
	for (uint32_t i = t->depth; i-- > 0;) {
		struct frame *f = &t->stack[i];
		if (fn >= 0 ? f->fn == fn : (f->fn == FN_USER && f->region == region)) {
			unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
			t->depth = i;
			return f;
		}
	}
	cv->stats.anomalies++;
	return NULL;
}

static int is_lock_fn(unsigned fn)
{
	switch (fn) {
	case LT_FN_pthread_mutex_lock:
	case LT_FN_pthread_mutex_trylock:
	case LT_FN_pthread_mutex_timedlock:
	case LT_FN_pthread_mutex_clocklock:
	case LT_FN_pthread_rwlock_rdlock:
	case LT_FN_pthread_rwlock_tryrdlock:
	case LT_FN_pthread_rwlock_timedrdlock:
	case LT_FN_pthread_rwlock_clockrdlock:
	case LT_FN_pthread_rwlock_wrlock:
	case LT_FN_pthread_rwlock_trywrlock:
	case LT_FN_pthread_rwlock_timedwrlock:
	case LT_FN_pthread_rwlock_clockwrlock:
		return 1;
	}
	return 0;
}

static int is_cond_wait(unsigned fn)
{
	return fn == LT_FN_pthread_cond_wait || fn == LT_FN_pthread_cond_timedwait ||
	       fn == LT_FN_pthread_cond_clockwait;
}

/*
 * Lock events.  An acquisition takes the lock's next order number; a release carries the
 * number of the acquisition it ends, which the releasing thread holds (the runtime stamps a
 * release before the next acquisition's return, but a clock read may still tie).
 * A release of a lock the thread does not hold (its acquisition lost) is left out.
 */
#define HELD_MAX 64 /* locks one thread holds at once; beyond, acquisitions are not shown */

static void lock_event(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns,
		       int acquire, uint64_t addr, enum cv_paradigm paradigm)
{
	struct lockent *e = addr ? lock_get(ps, addr) : NULL;
	if (!e)
		return;
	if (acquire) {
		if (t->nheld == HELD_MAX) {
			ps->cv->stats.anomalies++;
			return;
		}
		if (t->nheld == t->held_cap) {
			uint32_t cap = t->held_cap ? t->held_cap * 2 : 4;
			struct held *a = realloc(t->held, cap * sizeof(*a));
			if (!a)
				return;
			t->held = a;
			t->held_cap = cap;
		}
		t->held[t->nheld++] = (struct held){e->id, ++e->order, paradigm};
		ps->cv->ops->lock(ps->cv, l, ns, paradigm, 1, e->id, e->order);
		return;
	}
	for (uint32_t i = t->nheld; i-- > 0;) {
		if (t->held[i].lock != e->id)
			continue;
		ps->cv->ops->lock(ps->cv, l, ns, t->held[i].paradigm, 0, e->id, t->held[i].order);
		t->held[i] = t->held[--t->nheld];
		return;
	}
	ps->cv->stats.anomalies++;
}

/* A thread that ends holding locks releases them as it ends (what Vampir needs to close
 * them; glibc leaves such a mutex locked, a robust one to the next owner). */
static void release_held(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns)
{
	while (t->nheld) {
		struct held *h = &t->held[--t->nheld];
		ps->cv->ops->lock(ps->cv, l, ns, h->paradigm, 0, h->lock, h->order);
	}
}

static const char *lost_cause(unsigned cause)
{
	switch (cause) {
	case LT_LOST_BUFFER:
		return "the thread's buffer was full (overflow policy drop)";
	case LT_LOST_IO:
		return "the events file could not be written";
	case LT_LOST_NORING:
		return "the thread got no buffer";
	}
	return "unknown cause";
}

static int omp_lock_kind(unsigned c)
{
	return c == LT_OMP_set_lock || c == LT_OMP_set_nest_lock;
}

/* Enters OpenMP region `reg` (construct c) on t; for tasks with the task's attributes. */
static int omp_enter(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns,
		     uint32_t reg, unsigned c, uint64_t obj, uint64_t obj2)
{
	struct cv *cv = ps->cv;
	if (push(cv, t, reg, FN_OMP(c), obj, obj2))
		return -1;
	if ((c == LT_OMP_task || c == LT_OMP_task_create) && obj) {
		uint64_t *dep = idmap_get(&ps->depends, obj, 0);
		struct cv_attr a[] = {{CV_ATTR_TASK_ID, obj},
				      {CV_ATTR_TASK_DEPENDS, dep && *dep ? *dep - 1 : 0}};
		cv->ops->enter_attrs(cv, l, ns, reg, a, dep && *dep ? 2 : 1);
	} else {
		cv->ops->enter(cv, l, ns, reg);
	}
	return 0;
}

/* A task's dependence on address addr: it waits for the address's last writer. */
static void omp_dependence(struct pstate *ps, uint64_t task, uint64_t addr, unsigned kind)
{
	uint64_t *w = idmap_get(&ps->writers, addr, kind != LT_OMP_DEP_IN);
	uint64_t pred = w ? *w : 0;
	if (kind != LT_OMP_DEP_IN && w)
		*w = task;
	if (!pred || pred == task)
		return;
	uint64_t *d = idmap_get(&ps->depends, task, 1);
	if (!d)
		return;
	char list[1024];
	const char *old = *d ? ps->cv->strings[*d - 1] : NULL;
	if (old && strlen(old) > sizeof(list) - 32)
		return; /* a long list: the first edges are kept */
	snprintf(list, sizeof(list), "%s%s%" PRIu64, old ? old : "", old ? "," : "", pred);
	*d = cv_string(ps->cv, list) + 1;
}

static void handle_omp(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		       const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const struct cv_ops *o = cv->ops;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u, c = r->sub;
	uint64_t p0 = np >= 1 ? pl[0] : 0, p1 = np >= 2 ? pl[1] : 0;
	if (c >= LT_OMP_MAX && r->type != LT_REC_OMP_TASK_BEGIN && r->type != LT_REC_OMP_TASK_END &&
	    r->type != LT_REC_OMP_TASK_DEP) {
		cv->stats.anomalies++;
		return;
	}
	int ompt = 0; /* code addresses from OMPT are return addresses */
	switch (r->type) {
	case LT_REC_OMP_FORK: {
		uint64_t *a = idmap_get(&ps->pars, p0, 1);
		if (a)
			*a = p1;
		uint64_t level = 1; /* teams forked inside teams are teams of their own */
		for (uint32_t i = 0; i < t->depth; i++)
			level += t->stack[i].fn == FN_OMP(LT_OMP_parallel);
		uint64_t *lv = idmap_get(&ps->levels, p0, 1);
		if (lv)
			*lv = level;
		o->thread_fork(cv, l, ns, r->arg);
		break;
	}
	case LT_REC_OMP_JOIN:
		idmap_del(&ps->pars, p0);
		idmap_del(&ps->levels, p0);
		o->thread_join(cv, l, ns);
		break;
	case LT_REC_OMP_TEAM_BEGIN: {
		uint64_t *a = idmap_get(&ps->pars, p0, 0);
		uint64_t addr = a ? *a : 0;
		/* A GOMP fork names the outlined function; OMPT gives the call site. */
		ompt = ps->p->ompt;
		uint64_t *lv = idmap_get(&ps->levels, p0, 0);
		uint32_t team = team_of(cv, ps->pidx, (uint32_t)(p0 >> 40), lv ? (uint32_t)*lv : 0,
					(uint32_t)p1, (uint32_t)(l - cv->locs));
		o->team_begin(cv, l, ns, team);
		uint32_t reg = omp_region(cv, ps->p, LT_OMP_parallel, addr, ompt);
		if (omp_enter(ps, l, t, ns, reg, LT_OMP_parallel, p0, team))
			o->team_end(cv, l, ns, team);
		break;
	}
	case LT_REC_OMP_TEAM_END: {
		struct frame *f = pop_match(cv, l, t, ns, FN_OMP(LT_OMP_parallel), 0);
		if (f) {
			o->leave(cv, l, ns, f->region, 0);
			o->team_end(cv, l, ns, (uint32_t)f->obj2);
		}
		break;
	}
	case LT_REC_OMP_ENTER: {
		uint64_t addr = c == LT_OMP_task_create ? p1 : 0;
		if (c == LT_OMP_task_create && p0) {
			uint64_t *a = idmap_get(&ps->tasks, p0, 1);
			if (a)
				*a = p1;
		}
		uint32_t reg = omp_region(cv, ps->p, c, addr, ps->p->ompt);
		omp_enter(ps, l, t, ns, reg, c, p0, 0);
		break;
	}
	case LT_REC_OMP_ACQUIRED:
		if (p0)
			lock_event(ps, l, t, ns, 1, p0, CV_PARADIGM_OPENMP);
		if (omp_lock_kind(c)) { /* the set call returns holding the lock */
			struct frame *f = t->depth ? &t->stack[t->depth - 1] : NULL;
			if (f && f->fn == FN_OMP(c)) {
				t->depth--;
				o->leave(cv, l, ns, f->region, 0);
			}
		}
		break;
	case LT_REC_OMP_LEAVE: {
		if (c == LT_OMP_unset_lock || c == LT_OMP_unset_nest_lock) {
			uint32_t reg = omp_region(cv, ps->p, c, 0, 0);
			o->enter(cv, l, ns, reg);
			if (p0)
				lock_event(ps, l, t, ns, 0, p0, CV_PARADIGM_OPENMP);
			o->leave(cv, l, ns, reg, 0);
			break;
		}
		if (p0 && (c == LT_OMP_critical || c == LT_OMP_atomic || c == LT_OMP_ordered))
			lock_event(ps, l, t, ns, 0, p0, CV_PARADIGM_OPENMP);
		struct frame *f = pop_match(cv, l, t, ns, FN_OMP(c), 0);
		if (f)
			o->leave(cv, l, ns, f->region, 0);
		break;
	}
	case LT_REC_OMP_TASK_BEGIN: {
		uint64_t addr = p1;
		ompt = 0;
		if (!addr) { /* OMPT: the creation's call site */
			uint64_t *a = idmap_get(&ps->tasks, p0, 0);
			addr = a ? *a : 0;
			ompt = 1;
		}
		uint32_t reg = omp_region(cv, ps->p, LT_OMP_task, addr, ompt);
		omp_enter(ps, l, t, ns, reg, LT_OMP_task, p0, 0);
		break;
	}
	case LT_REC_OMP_TASK_END: {
		struct frame *f = pop_match(cv, l, t, ns, FN_OMP(LT_OMP_task), 0);
		if (f)
			o->leave(cv, l, ns, f->region, 0);
		if (!(r->arg & LT_OMP_F_SWITCH)) {
			idmap_del(&ps->tasks, p0);
			idmap_del(&ps->depends, p0);
		}
		break;
	}
	case LT_REC_OMP_TASK_DEP:
		omp_dependence(ps, p0, p1, r->arg);
		break;
	case LT_REC_OMP_CHUNK:
		break; /* chunks are in the trace (trace-dump); no OTF2 record fits them */
	}
}

/* ---- Kokkos ---- */

#define FN_KOKKOS(k) (2000 + (int)(k)) /* a Kokkos frame (enum lt_kokkos) */

/* Kokkos up to 4.4 names an unnamed kernel after typeid().name() of its functor (and
 * "/" and its work tag's): a mangled type, which demangles as the symbol "_Z<type>"
 * ("Z4mainEUliE_": main::{lambda(int)#1}).  Demangled per part where the demangler takes
 * it, kept as it is otherwise.  From 4.5 on Kokkos demangles itself. */
/* Whether `part` (len bytes) reads as a mangled type: a local or nested name, or one
 * source name of 2 characters or more whose length prefix covers it exactly ("7Functor";
 * not labels like "1D", "1st" or "3D_laplacian"). */
static int mangled_type(const char *part, size_t len)
{
	if (part[0] == 'Z' || part[0] == 'N')
		return len > 2;
	size_t digits = 0, n = 0;
	while (digits < len && part[digits] >= '0' && part[digits] <= '9')
		n = n * 10 + (size_t)(part[digits++] - '0');
	return digits && part[0] != '0' && n >= 2 && n == len - digits;
}

static void kokkos_kernel_name(struct cv *cv, uint64_t version, const char *raw, char *out,
			       size_t len)
{
	snprintf(out, len, "%s", raw);
	if (version >= 20240906 || !cv->syms || !*raw)
		return;
	char buf[2048], part[1100];
	size_t n = 0;
	buf[0] = '\0';
	for (const char *p = raw; *p;) {
		size_t k = strcspn(p, "/");
		if (k == 0 || k >= sizeof(part) - 3 || !mangled_type(p, k))
			return;
		snprintf(part, sizeof(part), "_Z%.*s", (int)k, p); /* a type: as a symbol */
		char *d = sym_demangle(cv->syms, part);
		if (!d)
			return;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "/" : "", d);
		free(d);
		if (n >= sizeof(buf))
			return;
		p += k;
		if (*p == '/')
			p++;
	}
	snprintf(out, len, "%s", buf);
}

/* The execution space instance a device id names (interface version: its encoding). */
static uint32_t kokkos_device(struct cv *cv, uint64_t version, uint32_t dev, int fence)
{
	static const char *const types[] = {"Serial", "OpenMP",	 "Cuda", "HIP",	   "OpenMPTarget",
					    "HPX",    "Threads", "SYCL", "OpenACC"};
	unsigned type = dev >> 24;
	char name[32], buf[96];
	if (type < sizeof(types) / sizeof(types[0]))
		snprintf(name, sizeof(name), "%s", types[type]);
	else
		snprintf(name, sizeof(name), "device type %u", type);
	if (version >= 20211015) { /* 3.6 on: 8 bits type, 7 bits device, 17 bits instance */
		unsigned device = (dev >> 17) & 0x7fu, inst = dev & 0x1ffffu;
		int gpu = type == 2 || type == 3 || type == 4 || type == 7 || type == 8;
		if (fence && (dev & 0xffffffu) == 0)
			snprintf(buf, sizeof(buf), "%s (global fence)", name);
		else if (fence && (dev & 0xffffffu) == 0xffffffu)
			snprintf(buf, sizeof(buf), "%s (deep copy resources)", name);
		else if (gpu)
			snprintf(buf, sizeof(buf), "%s device %u instance %u", name, device, inst);
		else
			snprintf(buf, sizeof(buf), "%s instance %u", name, inst);
	} else if (dev & 0xffffffu) { /* 3.4, 3.5: type << 24 | instance */
		snprintf(buf, sizeof(buf), "%s instance %u", name, dev & 0xffffffu);
	} else {
		snprintf(buf, sizeof(buf), "%s", name);
	}
	return cv_string(cv, buf);
}

static enum cv_role kokkos_role(unsigned k)
{
	switch (k) {
	case LT_KOKKOS_parallel_for:
	case LT_KOKKOS_parallel_reduce:
	case LT_KOKKOS_parallel_scan:
		return CV_ROLE_PARALLEL;
	case LT_KOKKOS_fence:
		return CV_ROLE_BARRIER;
	case LT_KOKKOS_section:
		return CV_ROLE_PHASE;
	case LT_KOKKOS_deep_copy:
		return CV_ROLE_DATA_TRANSFER;
	}
	return CV_ROLE_USER;
}

/* The region of Kokkos construct k named `name` (one per construct and name). */
static uint32_t kokkos_region(struct cv *cv, unsigned k, const char *name, const char *raw)
{
	char key[1100];
	snprintf(key, sizeof(key), "%u:%s", k, name);
	struct cv_region r = {cv_string(cv, name),
			      cv_string(cv, raw ? raw : name),
			      CV_NO_STRING,
			      0,
			      kokkos_role(k),
			      CV_PARADIGM_KOKKOS,
			      cv_string(cv, rd_kokkos_name(k)) + 1};
	return region(cv, 'K', key, &r);
}

static const char *pstring(struct pstate *ps, uint32_t id)
{
	const char *s = rd_string(ps->p, id);
	if (!s)
		ps->cv->stats.anomalies++;
	return s ? s : "(undefined string)";
}

static struct kspace *kokkos_space(struct pstate *ps, const char *name)
{
	uint32_t sid = cv_string(ps->cv, name);
	for (uint32_t i = 0; i < ps->nkspaces; i++)
		if (ps->kspaces[i].name == sid)
			return &ps->kspaces[i];
	if (ps->nkspaces == 64) /* Kokkos has a handful */
		return NULL;
	struct kspace *a = realloc(ps->kspaces, (ps->nkspaces + 1) * sizeof(*a));
	if (!a)
		return NULL;
	ps->kspaces = a;
	char mname[128];
	snprintf(mname, sizeof(mname), "Kokkos %s memory", name);
	a[ps->nkspaces] = (struct kspace){sid, metric(ps->cv, mname, 0, "B"), 0};
	return &a[ps->nkspaces++];
}

/* Forgets live allocation i: the last one takes its place, so t->a holds the live ones. */
static void alloc_remove(struct alloc_table *t, uint32_t i)
{
	idmap_del(&t->map, t->a[i].addr);
	if (i != --t->n) {
		t->a[i] = t->a[t->n];
		uint64_t *moved = idmap_get(&t->map, t->a[i].addr, 0);
		if (moved)
			*moved = i + 1;
	}
}

/* Keeps allocation k at its address's slot of t->map (idmap_get(..., 1)): a new entry, or
 * in place of the one the address had (allocated again without a free between). */
static void alloc_set(struct alloc_table *t, uint64_t *slot, const struct kalloc *k)
{
	if (!*slot) {
		if (t->n == t->cap) {
			struct kalloc *a = grow(t->a, &t->cap, sizeof(*a));
			if (!a) {
				idmap_del(&t->map, k->addr);
				return;
			}
			t->a = a;
		}
		*slot = ++t->n;
	}
	t->a[*slot - 1] = *k;
}

static void alloc_free(struct alloc_table *t)
{
	idmap_free(&t->map);
	free(t->a);
	*t = (struct alloc_table){0};
}

/* An allocation (sub 0) or deallocation: a moment of role ALLOCATE or DEALLOCATE with the
 * View's label, size and address, then the space's new total. */
static void kokkos_alloc(struct pstate *ps, struct cv_loc *l, uint64_t ns, const struct lt_rec *r,
			 const uint64_t *pl)
{
	struct cv *cv = ps->cv;
	if (r->words < 5) {
		cv->stats.anomalies++;
		return;
	}
	const char *space = pstring(ps, (uint32_t)pl[2]);
	const char *label = pstring(ps, r->arg);
	uint64_t addr = pl[0], bytes = pl[1];
	char name[128];
	snprintf(name, sizeof(name), "Kokkos %s %s", r->sub ? "deallocate" : "allocate", space);
	struct cv_region reg = {cv_string(cv, name),
				cv_string(cv, name),
				CV_NO_STRING,
				0,
				r->sub ? CV_ROLE_DEALLOCATE : CV_ROLE_ALLOCATE,
				CV_PARADIGM_KOKKOS,
				0};
	uint32_t rid = region(cv, 'K', name, &reg);
	struct cv_attr a[] = {{CV_ATTR_KOKKOS_LABEL, cv_string(cv, label)},
			      {CV_ATTR_KOKKOS_BYTES, bytes},
			      {CV_ATTR_KOKKOS_ADDRESS, addr}};
	cv->ops->enter_attrs(cv, l, ns, rid, a, 3);
	cv->ops->leave(cv, l, ns, rid, 0);
	struct kspace *sp = kokkos_space(ps, space);
	uint64_t *slot = idmap_get(&ps->kmem.map, addr, r->sub == 0);
	if (sp) {
		uint64_t total = (uint64_t)sp->bytes, stale = 0;
		if (r->sub == 0 && slot && *slot) /* the same address again, never freed */
			stale = ps->kmem.a[*slot - 1].bytes;
		total = total > stale ? total - stale : 0;
		if (r->sub) /* an allocation made before Kokkos loaded us: nothing below 0 */
			total = total > bytes ? total - bytes : 0;
		else
			total = total + bytes < total || total + bytes > INT64_MAX ? INT64_MAX
										   : total + bytes;
		sp->bytes = (int64_t)total;
		cv->ops->metric(cv, l, ns, sp->metric, total);
	}
	if (!slot || (r->sub && !*slot))
		return; /* freed, but allocated before Kokkos loaded us */
	if (r->sub) {
		alloc_remove(&ps->kmem, (uint32_t)*slot - 1);
		return;
	}
	struct kalloc k = {
	    addr, bytes, ns, cv_string(cv, label), cv_string(cv, space), (uint32_t)(l - cv->locs),
	    0};
	alloc_set(&ps->kmem, slot, &k);
}

/* An allocation never freed: into cv->leaks, and a marker of `kind` saying `text` where
 * and when it was made. */
static void leak_add(struct pstate *ps, const struct kalloc *k, int kind, const char *text)
{
	struct cv *cv = ps->cv;
	if (cv->nleaks == cv->leaks_cap) {
		uint32_t cap = (uint32_t)cv->leaks_cap;
		struct cv_leak *a = grow(cv->leaks, &cap, sizeof(*a));
		if (!a)
			return;
		cv->leaks = a;
		cv->leaks_cap = cap;
	}
	cv->leaks[cv->nleaks++] =
	    (struct cv_leak){ps->pidx, k->label, k->space, k->bytes, k->addr, kind, k->scl};
	cv->ops->marker(cv, &cv->locs[k->loc], k->ns, kind, text);
}

/* At the process's end: what Kokkos allocated and never freed. */
static void kokkos_leaks(struct pstate *ps)
{
	struct cv *cv = ps->cv;
	for (uint32_t i = 0; i < ps->kmem.n; i++) {
		const struct kalloc *k = &ps->kmem.a[i];
		const char *label = cv->strings[k->label];
		int kind = ps->p->kokkos_end_ticks == 0	    ? CV_MARK_KOKKOS_UNFINALIZED
			   : !strncmp(label, "Kokkos::", 8) ? CV_MARK_KOKKOS_KEPT
							    : CV_MARK_KOKKOS_LEAK;
		char text[1400];
		snprintf(text, sizeof(text), "%s: \"%s\", %" PRIu64 " bytes in %s at 0x%" PRIx64,
			 kind == CV_MARK_KOKKOS_UNFINALIZED
			     ? "still allocated when the process ended (Kokkos was not finalized)"
			 : kind == CV_MARK_KOKKOS_KEPT
			     ? "kept by Kokkos itself past finalize (not a leak)"
			     : "never freed (leak)",
			 label, k->bytes, cv->strings[k->space], k->addr);
		leak_add(ps, k, kind, text);
	}
}

/* An archive property, unless one of that name is there (the first process's wins). */
static void add_prop(struct cv *cv, const char *name, const char *value)
{
	for (size_t j = 0; j < cv->nprops; j++)
		if (!strcmp(cv->props[2 * j], name))
			return;
	char **a = realloc(cv->props, (cv->nprops + 1) * 2 * sizeof(*a));
	if (!a)
		return;
	cv->props = a;
	a[2 * cv->nprops] = strdup(name);
	a[2 * cv->nprops + 1] = strdup(value);
	if (!a[2 * cv->nprops] || !a[2 * cv->nprops + 1]) {
		free(a[2 * cv->nprops]);
		free(a[2 * cv->nprops + 1]);
		return;
	}
	cv->nprops++;
}

/* Kokkos metadata: archive properties KOKKOS::<KEY>. */
static void kokkos_metadata(struct cv *cv, const struct rd_process *p)
{
	for (size_t i = 0; i < p->nkokkos_meta; i++) {
		char name[160] = "KOKKOS::";
		size_t n = strlen(name);
		for (const char *k = p->kokkos_meta[2 * i]; *k && n < sizeof(name) - 1; k++)
			name[n++] =
			    isalnum((unsigned char)*k) ? (char)toupper((unsigned char)*k) : '_';
		name[n] = '\0';
		if (n > 8) /* an empty key: OTF2 refuses the name */
			add_prop(cv, name, p->kokkos_meta[2 * i + 1]);
	}
}

/* Pops the innermost Kokkos frame of kind k (with id `id`, where it has one).  Sections may
 * overlap (start A, start B, stop A): what was entered after the frame and is Kokkos's or
 * the user's is left and entered again around its Leave, so that regions stay nested and
 * nothing is lost; anything else above it was left open by the trace and is closed. */
static void kokkos_leave(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
			 unsigned k, uint32_t id)
{
	struct cv *cv = ps->cv;
	int byid = k != LT_KOKKOS_region && k != LT_KOKKOS_deep_copy;
	for (uint32_t i = t->depth; i-- > 0;) {
		struct frame *f = &t->stack[i];
		if (f->fn != FN_KOKKOS(k) || (byid && (uint32_t)f->obj != id))
			continue;
		uint32_t above = t->depth - i - 1, j;
		for (j = i + 1; j < t->depth; j++)
			if (t->stack[j].fn != FN_USER &&
			    (t->stack[j].fn < FN_KOKKOS(0) ||
			     t->stack[j].fn >= FN_KOKKOS(LT_KOKKOS_MAX)))
				break;
		if (above && j == t->depth && above <= 64) {
			struct frame keep[64];
			memcpy(keep, &t->stack[i + 1], above * sizeof(*keep));
			for (j = t->depth; j-- > i + 1;)
				cv->ops->leave(cv, l, ns, t->stack[j].region, 0);
			cv->ops->leave(cv, l, ns, f->region, 0);
			memmove(&t->stack[i], keep, above * sizeof(*keep));
			t->depth--;
			for (j = i; j < t->depth; j++)
				cv->ops->enter(cv, l, ns, t->stack[j].region);
			return;
		}
		unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
		t->depth = i;
		cv->ops->leave(cv, l, ns, f->region, 0);
		return;
	}
	cv->stats.anomalies++;
}

static void handle_kokkos(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
			  const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	uint64_t version = ps->p->kokkos_version;
	switch (r->type) {
	case LT_REC_KOKKOS_BEGIN: {
		unsigned k = r->sub;
		if (k >= LT_KOKKOS_MAX || k == LT_KOKKOS_deep_copy) {
			cv->stats.anomalies++;
			break;
		}
		uint32_t id = np >= 1 ? (uint32_t)pl[0] : 0,
			 dev = np >= 1 ? (uint32_t)(pl[0] >> 32) : 0;
		uint32_t reg;
		if (k == LT_KOKKOS_section) {
			uint64_t *name = idmap_get(&ps->ksections, id, 0);
			char unknown[64];
			snprintf(unknown, sizeof(unknown), "Kokkos profile section %u", id);
			reg = kokkos_region(cv, k, name && *name ? cv->strings[*name - 1] : unknown,
					    NULL);
		} else {
			/* One region per kind and name: looked up once per string of the process.
			 */
			uint64_t *cached =
			    idmap_get(&ps->kregions, (uint64_t)(k + 1) << 32 | r->arg, 1);
			if (cached && *cached) {
				reg = (uint32_t)*cached - 1;
			} else if (k <= LT_KOKKOS_parallel_scan) {
				const char *raw = pstring(ps, r->arg);
				char name[2048];
				kokkos_kernel_name(cv, version, raw, name, sizeof(name));
				reg = kokkos_region(cv, k, name, raw);
			} else {
				reg = kokkos_region(cv, k, pstring(ps, r->arg), NULL);
			}
			if (cached && rd_string(ps->p, r->arg))
				*cached = reg + 1;
		}
		if (push(cv, t, reg, FN_KOKKOS(k), id, 0))
			break;
		if (k <= LT_KOKKOS_fence) {
			struct cv_attr a = {CV_ATTR_KOKKOS_DEVICE,
					    kokkos_device(cv, version, dev, k == LT_KOKKOS_fence)};
			cv->ops->enter_attrs(cv, l, ns, reg, &a, 1);
		} else {
			cv->ops->enter(cv, l, ns, reg);
		}
		break;
	}
	case LT_REC_KOKKOS_END:
		if (r->sub >= LT_KOKKOS_MAX) {
			cv->stats.anomalies++;
			break;
		}
		kokkos_leave(ps, t, l, ns, r->sub, r->arg);
		break;
	case LT_REC_KOKKOS_COPY: {
		if (np < 5) {
			cv->stats.anomalies++;
			break;
		}
		const char *dst = pstring(ps, (uint32_t)(pl[1] >> 32));
		const char *src = pstring(ps, (uint32_t)pl[1]);
		char name[300];
		snprintf(name, sizeof(name), "Kokkos::deep_copy %s->%s", src, dst);
		uint32_t reg = kokkos_region(cv, LT_KOKKOS_deep_copy, name, NULL);
		if (push(cv, t, reg, FN_KOKKOS(LT_KOKKOS_deep_copy), 0, 0))
			break;
		struct cv_attr a[] = {
		    {CV_ATTR_KOKKOS_BYTES, pl[0]},
		    {CV_ATTR_KOKKOS_SRC, cv_string(cv, pstring(ps, (uint32_t)pl[2]))},
		    {CV_ATTR_KOKKOS_DST, cv_string(cv, pstring(ps, (uint32_t)(pl[2] >> 32)))}};
		cv->ops->enter_attrs(cv, l, ns, reg, a, 3);
		break;
	}
	case LT_REC_KOKKOS_ALLOC:
		kokkos_alloc(ps, l, ns, r, pl);
		break;
	case LT_REC_KOKKOS_INFO: {
		char text[1200];
		switch (r->sub) {
		case LT_KOKKOS_SECTION_CREATE:
			if (np >= 1) {
				uint64_t *name = idmap_get(&ps->ksections, (uint32_t)pl[0], 1);
				if (name)
					*name = cv_string(cv, pstring(ps, r->arg)) + 1;
			}
			break;
		case LT_KOKKOS_SECTION_DESTROY:
			break; /* its id is never reused: its name stays for late stops */
		case LT_KOKKOS_DV_SYNC:
		case LT_KOKKOS_DV_MODIFY: {
			int dev = np >= 2 && pl[1];
			snprintf(text, sizeof(text), "DualView \"%s\" %s", pstring(ps, r->arg),
				 r->sub == LT_KOKKOS_DV_SYNC
				     ? (dev ? "synced to the device" : "synced to the host")
				     : (dev ? "modified on the device" : "modified on the host"));
			cv->ops->marker(cv, l, ns, CV_MARK_KOKKOS_DUALVIEW, text);
			break;
		}
		case LT_KOKKOS_EVENT:
			cv->ops->marker(cv, l, ns, CV_MARK_KOKKOS_EVENT, pstring(ps, r->arg));
			break;
		default:
			cv->stats.anomalies++;
		}
		break;
	}
	}
}

/* ---- samplers ---- */

/* Grows cv->locs by one; NULL when memory ran out. */
static struct cv_loc *new_loc(struct cv *cv)
{
	if (cv->nlocs == cv->locs_cap) {
		uint32_t cap = (uint32_t)cv->locs_cap;
		struct cv_loc *a = grow(cv->locs, &cap, sizeof(*a));
		if (!a)
			return NULL;
		cv->locs = a;
		cv->locs_cap = cap;
	}
	return &cv->locs[cv->nlocs];
}

/* Process ps's METRIC location for its node's metrics (node) or its own, begun on first use:
 * ids (0xfffffffe or 0xfffffffd << 32) | process, which no thread has. */
static struct cv_loc *metric_loc(struct pstate *ps, int node)
{
	struct cv *cv = ps->cv;
	size_t *at = node ? &ps->node_loc : &ps->proc_loc;
	if (*at != SIZE_MAX)
		return &cv->locs[*at];
	struct cv_loc *l = new_loc(cv);
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
	if (cv->ops->location_begin(cv, l)) {
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
	return region(cv, 'K', name, &r);
}

/* Thread t stops running on its CPU at ns: one span for --core-view. */
static void core_span_end(struct pstate *ps, struct tstate *t, uint64_t ns)
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
static void cpu_change(struct pstate *ps, struct tstate *t, uint64_t ns, uint32_t cpu,
		       unsigned node)
{
	struct cv *cv = ps->cv;
	if (t->loc == SIZE_MAX || (int)cpu == t->cpu || cpu > 0x7fffffffu)
		return;
	if (!ps->m_cpu) {
		ps->m_cpu = metric(cv, "CPU", 0, "") + 1;
		ps->m_node = metric(cv, "NUMA node", 0, "") + 1;
	}
	struct cv_loc *l = &cv->locs[t->loc];
	cv->ops->metric(cv, l, ns, ps->m_cpu - 1, cpu);
	if (node != 0xffff)
		cv->ops->metric(cv, l, ns, ps->m_node - 1, node);
	core_span_end(ps, t, ns);
	t->cpu = (int)cpu;
	t->cpu_since = ns;
}

/* A record of the sampler thread: metrics on the METRIC locations, other threads' CPUs. */
static void handle_sampler(struct pstate *ps, struct tstate *t, const struct lt_rec *r)
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
			uint32_t id = metric(cv, m->name, r->sub == LT_VALUE_DOUBLE, m->unit);
			cv->metrics[id].accumulated = m->accumulated;
			ps->smetric[i] = id + 1;
		}
		struct cv_loc *l = metric_loc(ps, m->node);
		if (l)
			cv->ops->metric(cv, l, to_ns(ps, t, r->ts), ps->smetric[i] - 1, pl[0]);
	} else if (r->type == LT_REC_CPU && np >= 1) {
		struct tstate *o = thread_by_index(ps, (uint32_t)pl[0]);
		if (o && o != t && o->loc != SIZE_MAX && !o->done && !o->ended)
			cpu_change(ps, o, to_ns(ps, o, r->ts), r->arg, r->sub);
	}
}

static void handle_rec(struct pstate *ps, struct tstate *t, const struct lt_rec *r);

/* ---- MPI ---- */

struct cv_idmap {
	struct idmap m;
};

/* The communicator of `id` (an index into cv->comms), registered on first sight;
 * UINT32_MAX when out of memory. */
static uint32_t comm_of(struct cv *cv, uint64_t id)
{
	if (!cv->comm_map && !(cv->comm_map = calloc(1, sizeof(*cv->comm_map))))
		return UINT32_MAX;
	uint64_t *v = idmap_get(&cv->comm_map->m, id + 1, 1); /* keys are never 0 */
	if (!v)
		return UINT32_MAX;
	if (*v)
		return (uint32_t)(*v - 1);
	if (cv->ncomms == cv->comms_cap) {
		struct cv_comm *a = grow(cv->comms, &cv->comms_cap, sizeof(*a));
		if (!a) {
			idmap_del(&cv->comm_map->m, id + 1);
			return UINT32_MAX;
		}
		cv->comms = a;
	}
	cv->comms[cv->ncomms] =
	    (struct cv_comm){id, id == LT_MPI_COMM_SELF, NULL, cv->ncomm_refs++};
	*v = ++cv->ncomms;
	return cv->ncomms - 1;
}

uint32_t cv_world_rank(const struct cv *cv, uint32_t comm, uint32_t rank, uint32_t self)
{
	if (comm >= cv->ncomms || rank == LT_MPI_NO_RANK)
		return LT_MPI_NO_RANK;
	const struct cv_comm *c = &cv->comms[comm];
	if (c->id == LT_MPI_COMM_WORLD)
		return rank < cv->mpi_world ? rank : LT_MPI_NO_RANK;
	if (c->id == LT_MPI_COMM_SELF)
		return rank == 0 ? self : LT_MPI_NO_RANK;
	return c->ranks && rank < c->size ? c->ranks[rank] : LT_MPI_NO_RANK;
}

/* A communicator's members, recorded by each of them: as many records as it takes. */
static void mpi_comm(struct cv *cv, const struct lt_rec *r, const uint64_t *pl, unsigned np)
{
	uint32_t c = np >= 1 ? comm_of(cv, pl[0]) : UINT32_MAX;
	if (c == UINT32_MAX || pl[0] == LT_MPI_COMM_WORLD || pl[0] == LT_MPI_COMM_SELF)
		return;
	struct cv_comm *cm = &cv->comms[c];
	if (!cm->ranks) {
		if (r->arg == 0 || r->arg > (1u << 24) ||
		    !(cm->ranks = malloc(r->arg * sizeof(*cm->ranks)))) {
			cv->stats.anomalies++;
			return;
		}
		for (uint32_t i = 0; i < r->arg; i++)
			cm->ranks[i] = LT_MPI_NO_RANK;
		cm->size = r->arg;
	} else if (cm->size != r->arg) {
		cv->stats.anomalies++; /* one id, two sizes: damage */
		return;
	}
	for (uint32_t i = 0; i < 2 * (np - 1) && r->sub + i < cm->size; i++)
		cm->ranks[r->sub + i] = (uint32_t)(pl[1 + i / 2] >> (i & 1 ? 32 : 0));
}

static void handle_mpi(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		       const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const struct cv_ops *o = cv->ops;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	switch (r->type) {
	case LT_REC_MPI_COMM:
		mpi_comm(cv, r, pl, np);
		break;
	case LT_REC_MPI_P2P: {
		uint32_t c = np >= 4 ? comm_of(cv, pl[0]) : UINT32_MAX;
		if (c == UINT32_MAX || r->sub > LT_MPI_CANCELLED) {
			cv->stats.anomalies++;
			break;
		}
		if (o->mpi_p2p)
			o->mpi_p2p(cv, l, ns, r->sub, c, r->arg, (uint32_t)pl[1], pl[2], pl[3]);
		break;
	}
	case LT_REC_MPI_COLL: {
		uint32_t c = np >= 3 ? comm_of(cv, pl[0]) : UINT32_MAX;
		/* Right after its call's Enter: the call is the innermost open frame. */
		if (c == UINT32_MAX || r->sub > LT_MPI_DESTROY_HANDLE || t->coll.open ||
		    !t->depth || t->stack[t->depth - 1].fn != FN_MPI) {
			cv->stats.anomalies++;
			break;
		}
		t->coll.open = 1;
		t->coll.op = r->sub;
		t->coll.comm = c;
		t->coll.root = r->arg;
		t->coll.sent = pl[1];
		t->coll.received = pl[2];
		if (o->mpi_coll_begin)
			o->mpi_coll_begin(cv, l, ns);
		break;
	}
	}
}

/* ---- GPU (CUDA, HIP) ---- */

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
	uint64_t *cached = idmap_get(&ps->gknames, sid, 1);
	if (cached && *cached)
		return (uint32_t)*cached - 1;
	const char *raw = pstring(ps, sid);
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
	uint64_t *cached = idmap_get(&ps->gregions, (uint64_t)(api + 1) << 32 | sid, 1);
	if (cached && *cached)
		return (uint32_t)*cached - 1;
	static const char *const layers[] = {"CUDA runtime API", "CUDA driver API",
					     "HIP runtime API"};
	unsigned layer = api == LT_GPU_HIP ? 2 : api == LT_GPU_CUPTI_DRIVER;
	const char *name = pstring(ps, sid);
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
	uint32_t reg = region(cv, 'G', key, &r);
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
	return region(cv, 'D', cv->strings[name], &r);
}

/* A GPU call begins: its region, with what its arguments say. */
static void gpu_enter(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
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
	if (w[0])
		a[na++] = (struct cv_attr){CV_ATTR_GPU_CORRELATION, w[0]};
	switch (op) {
	case LT_GPU_OP_ALLOC:
		a[na++] = (struct cv_attr){CV_ATTR_ALLOCATION_SIZE, w[1]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_MEMORY,
					   cv_string(cv, rd_gpu_mem_name((unsigned)w[2]))};
		break;
	case LT_GPU_OP_FREE: {
		a[na++] = (struct cv_attr){CV_ATTR_ARGUMENT_ADDRESS, w[1]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_MEMORY,
					   cv_string(cv, rd_gpu_mem_name((unsigned)w[2]))};
		uint64_t *slot = idmap_get(&ps->gmem.map, w[1], 0);
		if (slot && *slot)
			a[na++] = (struct cv_attr){CV_ATTR_DEALLOCATION_SIZE,
						   ps->gmem.a[*slot - 1].bytes};
		break;
	}
	case LT_GPU_OP_COPY:
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BYTES, w[1]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_COPY_KIND,
					   cv_string(cv, rd_gpu_copy_name((unsigned)w[4]))};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_DST, w[2]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_SRC, w[3]};
		if (w[5])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[5]};
		break;
	case LT_GPU_OP_SET:
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BYTES, w[1]};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_DST, w[2]};
		if (w[4])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[4]};
		break;
	case LT_GPU_OP_LAUNCH:
		if (w[6])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_KERNEL,
						   gpu_kernel_name(ps, (uint32_t)w[6])};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_GRID, gpu_dims(cv, &w[1], 0, &n)};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_BLOCK, gpu_dims(cv, &w[1], 1, &n)};
		a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[5]};
		break;
	default: /* CALL and SYNC: the stream (or event) they name */
		if (w[1])
			a[na++] = (struct cv_attr){CV_ATTR_GPU_STREAM, w[1]};
	}
	if (push(cv, t, reg, FN_GPU, w[1], w[2] | (uint64_t)op << 56))
		return;
	t->stack[t->depth - 1].aux = scl;
	if (w[0]) { /* the device's records of this call name it by its correlation id */
		uint64_t *slot = idmap_get(&ps->gcorr, w[0], 1);
		if (slot && !*slot) {
			struct gcall *g = ps->gcalls;
			if (ps->ngcalls == ps->gcalls_cap &&
			    !(g = grow(ps->gcalls, &ps->gcalls_cap, sizeof(*g)))) {
				idmap_del(&ps->gcorr, w[0]);
				slot = NULL;
			} else {
				ps->gcalls = g;
				*slot = ++ps->ngcalls;
			}
		}
		if (slot)
			ps->gcalls[*slot - 1] = (struct gcall){(uint32_t)(l - cv->locs), ns};
	}
	cv->ops->enter_attrs(cv, l, ns, reg, a, na);
}

/* It returned: its Leave, with its error or what it made; allocations are followed. */
static void gpu_leave(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	struct frame *f = pop_match(cv, l, t, ns, FN_GPU, 0);
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
		uint64_t *slot = idmap_get(&ps->gmem.map, made, 1);
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
			alloc_set(&ps->gmem, slot, &k);
	} else if (op == LT_GPU_OP_FREE && f->obj && !rc) {
		uint64_t *slot = idmap_get(&ps->gmem.map, f->obj, 0);
		if (slot && *slot)
			alloc_remove(&ps->gmem, (uint32_t)*slot - 1);
	}
	if (na && cv->ops->leave_attrs)
		cv->ops->leave_attrs(cv, l, ns, f->region, a, na);
	else
		cv->ops->leave(cv, l, ns, f->region, 0);
}

/* A device operation: kept until the process's merge ends (SYNC: the host call shows it). */
static void gpu_collect(struct pstate *ps, const struct lt_rec *r)
{
	unsigned np = r->words - 2u;
	if (r->sub == LT_GPU_ACT_SYNC)
		return;
	if (r->sub > LT_GPU_ACT_SYNC || np < 5) {
		ps->cv->stats.anomalies++;
		return;
	}
	if (ps->ngacts == ps->gacts_cap) {
		struct gact *a = grow(ps->gacts, &ps->gacts_cap, sizeof(*a));
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
		struct cv_gpu_win *a = grow(cv->gpu_wins, &cv->gpu_wins_cap, sizeof(*a));
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
			uint32_t *m = grow(w->members, &w->cap, sizeof(*m));
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
	unsigned dev = (unsigned)(g->w[2] >> 32), ctx = (unsigned)g->w[2];
	char name[96];
	if (*group == UINT32_MAX) {
		if (cv->ngpu_groups == cv->gpu_groups_cap) {
			struct cv_gpu_group *a =
			    grow(cv->gpu_groups, &cv->gpu_groups_cap, sizeof(*a));
			if (!a)
				return NULL;
			cv->gpu_groups = a;
		}
		snprintf(name, sizeof(name), "CUDA[%u] context %u", dev, ctx);
		cv->gpu_groups[cv->ngpu_groups] =
		    (struct cv_gpu_group){ps->pidx, cv_string(cv, name)};
		*group = cv->ngpu_groups++;
	}
	struct cv_loc *l = new_loc(cv);
	if (!l)
		return NULL;
	snprintf(name, sizeof(name), "CUDA[%u:%u] stream %llu", dev, ctx,
		 (unsigned long long)g->w[3]);
	uint32_t index = 0x80000000u + nth; /* above every thread's index */
	*l = (struct cv_loc){.id = (uint64_t)index << 32 | ps->pidx,
			     .process = ps->pidx,
			     .index = index,
			     .name = cv_string(cv, name),
			     .kind = CV_LOC_GPU_STREAM,
			     .gpu = *group};
	cv->nlocs++;
	cv->procs[ps->pidx].nlocs++;
	if (cv->ops->location_begin(cv, l))
		return NULL;
	return l;
}

/* The operation that device record g is: its region, attributes and RMA side. */
static void gpu_op(struct pstate *ps, const struct gact *g, const struct cv_gpu_win *win,
		   uint32_t master, struct cv_gpu_op *op)
{
	struct cv *cv = ps->cv;
	uint64_t corr = g->w[4];
	*op = (struct cv_gpu_op){.kind = g->kind, .corr = corr, .host_loc = UINT32_MAX};
	if (corr)
		op->attrs[op->nattrs++] = (struct cv_attr){CV_ATTR_GPU_CORRELATION, corr};
	if (g->kind == LT_GPU_ACT_KERNEL) {
		uint32_t name = gpu_kernel_name(ps, g->arg);
		const char *raw = rd_string(ps->p, g->arg);
		op->region =
		    gpu_device_region(cv, name, raw ? cv_string(cv, raw) : name, CV_ROLE_KERNEL);
		op->attrs[op->nattrs++] =
		    (struct cv_attr){CV_ATTR_GPU_GRID, gpu_dims(cv, &g->w[5], 0, &op->blocks)};
		op->attrs[op->nattrs++] =
		    (struct cv_attr){CV_ATTR_GPU_BLOCK, gpu_dims(cv, &g->w[5], 1, &op->threads)};
	} else {
		char name[64];
		op->copy = g->kind == LT_GPU_ACT_COPY ? g->arg : LT_GPU_COPY_UNKNOWN;
		if (g->kind == LT_GPU_ACT_COPY)
			snprintf(name, sizeof(name), "cudaMemcpy %s", rd_gpu_copy_name(g->arg));
		else
			snprintf(name, sizeof(name), "cudaMemset");
		uint32_t s = cv_string(cv, name);
		op->region = gpu_device_region(cv, s, s, CV_ROLE_GPU_MEMORY);
		op->bytes = g->w[5];
		op->attrs[op->nattrs++] = (struct cv_attr){CV_ATTR_GPU_BYTES, op->bytes};
		if (g->kind == LT_GPU_ACT_COPY)
			op->attrs[op->nattrs++] = (struct cv_attr){
			    CV_ATTR_GPU_COPY_KIND, cv_string(cv, rd_gpu_copy_name(g->arg))};
	}
	uint64_t *slot = corr ? idmap_get(&ps->gcorr, corr, 0) : NULL;
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
static void gpu_flush(struct pstate *ps)
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
		int new_ctx = i == 0 || g->w[2] != g[-1].w[2];
		if (new_ctx || g->w[3] != g[-1].w[3]) {
			if (at != SIZE_MAX && cv->ops->location_end(cv, &cv->locs[at]))
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
				uint32_t *m = grow(win->members, &win->cap, sizeof(*m));
				if (m)
					win->members = m;
			}
			if (win && win->nmembers < win->cap)
				win->members[win->nmembers++] = (uint32_t)at;
			last = 0;
		}
		struct cv_gpu_op op;
		gpu_op(ps, g, win, master, &op);
		op.start = mono_to_ns(ps, g->w[0]);
		op.end = mono_to_ns(ps, g->w[1]);
		if (op.start < last || op.end < op.start) {
			cv->stats.gpu_clamped++;
			if (op.start < last)
				op.start = last;
			if (op.end < op.start)
				op.end = op.start;
		}
		last = op.end;
		note_time(ps, op.start);
		note_time(ps, op.end);
		cv->stats.gpu_ops++;
		cv->ops->gpu_activity(cv, &cv->locs[at], &op);
	}
	if (at != SIZE_MAX && cv->ops->location_end(cv, &cv->locs[at]))
		ps->failed = 1;
}

/* At the process's end: device memory GPU calls allocated and nothing freed. */
static void gpu_leaks(struct pstate *ps)
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
		leak_add(ps, k, CV_MARK_GPU_LEAK, text);
	}
}

void cv_scl_text(const struct cv *cv, uint32_t scl, char *buf, size_t len)
{
	if (!scl || scl > cv->nscls) {
		snprintf(buf, len, "an unknown call site");
		return;
	}
	const struct cv_scl *c = &cv->scls[scl - 1];
	const char *file = cv->strings[c->file], *base = strrchr(file, '/');
	if (*file && c->line)
		snprintf(buf, len, "%s (%s:%u)", cv->strings[c->function], base ? base + 1 : file,
			 c->line);
	else
		snprintf(buf, len, "%s", cv->strings[c->function]);
}

/* The call site of the record being converted: frame 1 from the record, the outer ones from
 * the CALLSITE record before it. */
static void callsite(struct pstate *ps, struct tstate *t, uint64_t ra)
{
	struct cv *cv = ps->cv;
	uint32_t func, scl = scl_of(cv, ps->p, ra, &func);
	cv->cur_scl = scl;
	if (!t->ndeep || !scl)
		return;
	uint32_t parent = 0;
	for (unsigned i = t->ndeep; i-- > 0;) {
		uint32_t f, s = scl_of(cv, ps->p, t->deep[i], &f);
		if (s)
			parent = ctx_of(cv, f, s, parent);
	}
	cv->cur_ctx = ctx_of(cv, func, scl, parent);
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
		callsite(ps, t, t->cur.callsite);
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

static void handle_rec(struct pstate *ps, struct tstate *t, const struct lt_rec *r)
{
	if (r->type == LT_REC_GPU_ACTIVITY) { /* the device's, whichever thread wrote it */
		ps->cv->stats.records++;
		ps->cv->done_bytes += r->words * 8u;
		gpu_collect(ps, r);
		return;
	}
	if (t->index == ps->p->sampler_thread) {
		handle_sampler(ps, t, r);
		return;
	}
	struct cv *cv = ps->cv;
	const struct cv_ops *o = cv->ops;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	struct cv_loc *l = loc_of(ps, t);
	if (!l)
		return;
	uint64_t ns = to_ns(ps, t, r->ts);
	cv->stats.records++;
	cv->done_bytes += r->words * 8u;
	if (t->ended && r->type != LT_REC_LOST) {
		cv->stats.anomalies++; /* nothing follows a thread's end */
		return;
	}
	switch (r->type) {
	case LT_REC_THREAD_BEGIN: {
		uint64_t start = np >= 1 ? pl[0] : 0;
		uint32_t parent = np >= 2 ? (uint32_t)(pl[1] >> 32) : LT_NO_THREAD;
		uint32_t tid = np >= 2 ? (uint32_t)pl[1] : 0;
		if (parent != LT_NO_THREAD && t->created && !t->began) {
			o->thread_begin(cv, l, ns, t->index, tid);
			t->began = 1;
		}
		if (t->index == 0 && parent == LT_NO_THREAD && !t->program) {
			o->program_begin(cv, l, ns, ps->p);
			t->program = 1;
		}
		int pushed = -1;
		if (start)
			pushed = push(cv, t, code_region(cv, ps->p, start), FN_START, 0, 0);
		else if (t->index == 0 && parent == LT_NO_THREAD)
			pushed = push(cv, t, main_region(cv, ps->p), FN_MAIN, 0, 0);
		if (pushed == 0)
			o->enter(cv, l, ns, t->stack[t->depth - 1].region);
		break;
	}
	case LT_REC_THREAD_END:
		release_held(ps, l, t, ns);
		unwind(cv, l, t, ns, 0, CLOSE_THREAD_END);
		if (t->began)
			o->thread_end(cv, l, ns, t->index);
		if (t->program)
			o->program_end(cv, l, ns);
		t->ended = 1;
		break;
	case LT_REC_THREAD_CREATE: {
		struct tstate *child = thread_by_index(ps, r->arg);
		o->thread_create(cv, l, ns, r->arg);
		if (child)
			child->created = 1;
		break;
	}
	case LT_REC_THREAD_WAIT: {
		struct tstate *joined = thread_by_index(ps, r->arg);
		if (joined && joined->began && joined->ended)
			o->thread_wait(cv, l, ns, r->arg);
		break;
	}
	case LT_REC_THREAD_NAME: {
		const char *name = rd_string(ps->p, r->arg);
		struct tstate *named = np >= 1 ? thread_by_index(ps, (uint32_t)pl[0]) : NULL;
		if (name && named) {
			char buf[400];
			snprintf(buf, sizeof(buf), "%s (thread %u)", name, named->index);
			named->name = cv_string(cv, buf) + 1;
			if (named->loc != SIZE_MAX) /* else: its location takes it when it begins */
				cv->locs[named->loc].name = named->name - 1;
		}
		break;
	}
	case LT_REC_CALL_ENTER: {
		if (r->sub >= LT_FN_MAX) {
			cv->stats.anomalies++;
			break;
		}
		uint32_t reg = fn_region(cv, r->sub);
		uint64_t obj = np >= 1 ? pl[0] : 0, obj2 = np >= 2 ? pl[1] : 0;
		if (push(cv, t, reg, r->sub, obj, obj2))
			break;
		o->enter(cv, l, ns, reg);
		if (is_cond_wait(r->sub))
			lock_event(ps, l, t, ns, 0, obj2,
				   CV_PARADIGM_PTHREAD); /* the wait releases the mutex */
		break;
	}
	case LT_REC_CALL_LEAVE: {
		struct frame *f = pop_match(cv, l, t, ns, r->sub, 0);
		if (!f)
			break;
		int result = (int)r->arg;
		if (is_lock_fn(r->sub) && result == 0)
			lock_event(ps, l, t, ns, 1, f->obj, CV_PARADIGM_PTHREAD);
		else if (is_cond_wait(r->sub) && (result == 0 || result == ETIMEDOUT))
			lock_event(ps, l, t, ns, 1, f->obj2,
				   CV_PARADIGM_PTHREAD); /* the mutex is held again */
		o->leave(cv, l, ns, f->region, 0);
		break;
	}
	case LT_REC_CALL: {
		if (r->sub >= LT_FN_MAX) {
			cv->stats.anomalies++;
			break;
		}
		uint32_t reg = fn_region(cv, r->sub);
		uint64_t obj = np >= 1 ? pl[0] : 0;
		o->enter(cv, l, ns, reg);
		if (r->arg == 0 && is_lock_fn(r->sub))
			lock_event(ps, l, t, ns, 1, obj, CV_PARADIGM_PTHREAD);
		else if (r->arg == 0 && (r->sub == LT_FN_pthread_mutex_unlock ||
					 r->sub == LT_FN_pthread_rwlock_unlock))
			lock_event(ps, l, t, ns, 0, obj, CV_PARADIGM_PTHREAD);
		o->leave(cv, l, ns, reg, 0);
		break;
	}
	case LT_REC_REGION_ENTER:
	case LT_REC_REGION_LEAVE: {
		uint32_t reg;
		if (r->arg < ps->p->nstrings && ps->user_regions[r->arg]) {
			reg = ps->user_regions[r->arg] - 1;
		} else {
			const char *name = rd_string(ps->p, r->arg);
			char unknown[64];
			if (!name) {
				snprintf(unknown, sizeof(unknown), "string %u (undefined)", r->arg);
				name = unknown;
				cv->stats.anomalies++;
			}
			reg = user_region(cv, name);
			if (r->arg < ps->p->nstrings)
				ps->user_regions[r->arg] = reg + 1;
		}
		if (r->type == LT_REC_REGION_ENTER) {
			if (push(cv, t, reg, FN_USER, 0, 0) == 0)
				o->enter(cv, l, ns, reg);
		} else if (pop_match(cv, l, t, ns, FN_USER, reg)) {
			o->leave(cv, l, ns, reg, 0);
		}
		break;
	}
	case LT_REC_MPI_ENTER: {
		const char *name = rd_string(ps->p, r->arg);
		if (!name) {
			cv->stats.anomalies++;
			name = "MPI (undefined string)";
		}
		uint32_t reg = mpi_region(cv, name);
		if (push(cv, t, reg, FN_MPI, 0, 0) == 0)
			o->enter(cv, l, ns, reg);
		break;
	}
	case LT_REC_MPI_LEAVE: {
		struct frame *f = pop_match(cv, l, t, ns, FN_MPI, 0);
		if (f) {
			coll_end(cv, l, t, ns);
			o->leave(cv, l, ns, f->region, 0);
		}
		break;
	}
	case LT_REC_MPI_P2P:
	case LT_REC_MPI_COLL:
	case LT_REC_MPI_COMM:
		handle_mpi(ps, t, l, ns, r);
		break;
	case LT_REC_GPU_ENTER:
		gpu_enter(ps, t, l, ns, r);
		break;
	case LT_REC_GPU_LEAVE:
		gpu_leave(ps, t, l, ns, r);
		break;
	case LT_REC_MARKER: {
		const char *text = rd_string(ps->p, r->arg);
		o->marker(cv, l, ns, CV_MARK_USER, text ? text : "(undefined string)");
		break;
	}
	case LT_REC_COUNTER: {
		const char *name = rd_string(ps->p, r->arg);
		if (!name || np < 1) {
			cv->stats.anomalies++;
			break;
		}
		o->metric(cv, l, ns, metric(cv, name, r->sub == LT_VALUE_DOUBLE, "#"), pl[0]);
		break;
	}
	case LT_REC_CPU:
		cpu_change(ps, t, ns, r->arg, r->sub);
		break;
	case LT_REC_LOST: {
		uint64_t n = np >= 1 ? pl[0] : 0;
		char text[160];
		snprintf(text, sizeof(text), "%" PRIu64 " events lost: %s", n, lost_cause(r->sub));
		cv->stats.lost += n;
		o->marker(cv, l, ns, CV_MARK_LOST, text);
		break;
	}
	default:
		if (r->type >= LT_REC_OMP_FORK && r->type <= LT_REC_OMP_CHUNK)
			handle_omp(ps, t, l, ns, r);
		else if (r->type >= LT_REC_KOKKOS_BEGIN && r->type <= LT_REC_KOKKOS_INFO)
			handle_kokkos(ps, t, l, ns, r);
		else
			cv->stats.anomalies++;
	}
}

/* After a thread's last record: close what the trace left open. */
static void thread_done(struct pstate *ps, struct tstate *t)
{
	struct cv *cv = ps->cv;
	if (t->loc != SIZE_MAX) {
		struct cv_loc *l = &cv->locs[t->loc];
		uint64_t ns = t->last_ns;
		/* The main thread ends with the process, and so does a thread still alive when
		 * the process ended normally (a pool thread waiting until exit): what it left
		 * open lasted until then, not until its last record. */
		if (ps->p->ended && (t->program || (!t->ended && !t->cur.truncated)))
			ns = to_ns(ps, t, ps->p->end_ticks);
		if (t->cur.truncated) {
			cv->stats.truncated++;
			cv->ops->marker(cv, l, ns, CV_MARK_TRUNCATED,
					"the thread's records end where the trace file was cut "
					"short: what followed is missing");
		}
		if (!t->ended) {
			uint32_t open = 0;
			for (uint32_t i = 0; i < t->depth; i++)
				open += closed_by_converter(t->stack[i].fn, CLOSE_CUT);
			if (open) {
				char text[128];
				snprintf(
				    text, sizeof(text),
				    "%u regions left open by the trace, closed by the converter",
				    open);
				cv->ops->marker(cv, l, ns, CV_MARK_CLOSED, text);
			}
			release_held(ps, l, t, ns);
			unwind(cv, l, t, ns, 0, CLOSE_CUT);
			if (t->began)
				cv->ops->thread_end(cv, l, ns, t->index);
			if (t->program)
				cv->ops->program_end(cv, l, ns);
			t->ended = 1;
		}
		core_span_end(ps, t, ns);
		if (cv->ops->location_end(cv, l))
			ps->failed = 1;
		t->done = 1;
	}
	rd_cursor_fini(&t->cur);
	free(t->stack);
	t->stack = NULL;
	free(t->held);
	t->held = NULL;
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

/* What the converter needs of MPI rank 0 before converting any process. */
struct rank0 {
	int found;
	char host[256];
	int64_t real_minus_mono;
};

static uint32_t host_index(struct cv *cv, const char *host);

/* The offset from a process's CLOCK_MONOTONIC to the trace's timeline (the first
 * process's): none on the same host, else the difference of their CLOCK_REALTIME
 * offsets. */
static int64_t host_offset(struct cv *cv, uint32_t host, int64_t real_minus_mono)
{
	if (!cv->nprocs || host == cv->procs[0].host)
		return 0; /* one host, one CLOCK_MONOTONIC */
	return real_minus_mono - (int64_t)cv->procs[0].real_minus_mono;
}

/*
 * An MPI rank's clock, put on rank 0's with the offsets measured at MPI_Init and
 * MPI_Finalize (those whose round trip was within 4 times, or 20 us, of the best).  Where the rank
 * shares rank 0's host and every offset is within its measurement's error (half the round trip),
 * the clocks are one (CLOCK_MONOTONIC): the offsets are left out, as they can only add that error.
 */
static void mpi_clock(struct cv *cv, struct pstate *ps, const struct rank0 *r0)
{
	const struct rd_process *p = ps->p;
	if (cv->no_clock_align || !r0->found || p->mpi_size <= 0 || p->mpi_rank <= 1 ||
	    !p->nmpi_clock)
		return;
	/* A measurement whose best round trip was much slower than the other's (its rank was
	 * not running when rank 0 answered) is left out. */
	int64_t best = INT64_MAX;
	for (size_t i = 0; i < p->nmpi_clock; i++)
		if (p->mpi_clock[i].rtt_ns < best)
			best = p->mpi_clock[i].rtt_ns;
	size_t n = 0;
	for (size_t i = 0; i < p->nmpi_clock; i++)
		if (p->mpi_clock[i].rtt_ns <= 4 * best || p->mpi_clock[i].rtt_ns <= best + 20000)
			ps->mpi_clock[n++] = p->mpi_clock[i];
	uint32_t host0 = host_index(cv, r0->host);
	int within = host0 == cv->procs[ps->pidx].host;
	for (size_t i = 0; i < n && within; i++) {
		int64_t o = ps->mpi_clock[i].offset_ns;
		within = (o < 0 ? -o : o) <= ps->mpi_clock[i].rtt_ns / 2;
	}
	if (within)
		return;
	ps->nmpi_clock = n;
	ps->offset_ns = host_offset(cv, host0, r0->real_minus_mono);
	cv->mpi_aligned++;
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
	for (size_t i = 0; i < p->nmetrics && cv->node_owner; i++)
		if (p->metrics[i].node) { /* the first process of a host to sample shows it */
			if (cv->node_owner[cp->host] < 0)
				cv->node_owner[cp->host] = (int)pidx;
			ps.node_metrics = cv->node_owner[cp->host] == (int)pidx;
			break;
		}
	ps.offset_ns = host_offset(cv, cp->host, cp->real_minus_mono);
	mpi_clock(cv, &ps, r0);
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
	ps.papi = papi_set(cv, p);
	for (size_t i = 0; i < ps.nts; i++) {
		struct tstate *t = &ps.ts[i];
		const struct rd_thread *th = i < p->nthreads ? &p->threads[i] : &p->sampler;
		t->index = th->index;
		t->loc = SIZE_MAX;
		t->cpu = -1;
		rd_cursor_init(&t->cur, p, th, warn, wctx);
	}
	/* Prime every cursor (a small first read each), then merge. */
	for (size_t i = 0; i < ps.nts; i++) {
		struct tstate *t = &ps.ts[i];
		t->rec = rd_cursor_next(&t->cur);
		if (!t->rec) {
			thread_done(&ps, t);
			continue;
		}
		t->key = t->rec->ts;
		ps.heap[ps.nheap++] = t;
	}
	for (size_t i = ps.nheap / 2; i-- > 0;)
		heap_down(&ps, i);
	uint64_t n = 0;
	while (ps.nheap && !ps.failed) {
		struct tstate *t = ps.heap[0];
		handle(&ps, t, t->rec);
		t->rec = rd_cursor_next(&t->cur);
		if (t->rec) {
			t->key = t->rec->ts;
		} else {
			thread_done(&ps, t);
			ps.heap[0] = ps.heap[--ps.nheap];
		}
		heap_down(&ps, 0);
		if ((++n & 0xfffff) == 0)
			progress(cv, 0);
	}
	/* After an output error: release what is still open. */
	for (size_t i = 0; i < ps.nheap; i++) {
		rd_cursor_fini(&ps.heap[i]->cur);
		free(ps.heap[i]->stack);
		free(ps.heap[i]->held);
	}
	for (int node = 0; node < 2 && !ps.failed; node++) {
		size_t at = node ? ps.node_loc : ps.proc_loc;
		if (at != SIZE_MAX && cv->ops->location_end(cv, &cv->locs[at]))
			ps.failed = 1;
	}
	if (!ps.failed)
		gpu_flush(&ps);
	if (ps.failed)
		*failed = 1;
	/* A process without records still gets its main thread, without events: a readable
	 * archive says the process was there. */
	if (cp->nlocs == 0 && !*failed) {
		struct tstate t0 = {.index = 0, .loc = SIZE_MAX};
		struct cv_loc *l = loc_of(&ps, &t0);
		if (!l || cv->ops->location_end(cv, l))
			*failed = 1;
	}
	/* Files cut short where no thread's records showed it (whole chunks missing). */
	if (p->truncated && cv->stats.truncated == truncated_before && cp->nlocs && !*failed)
		cv->ops->marker(
		    cv, &cv->locs[cp->first_loc], ps.last_ns, CV_MARK_TRUNCATED,
		    "the process's trace files were cut short: what followed is missing");
	if (!*failed) {
		kokkos_leaks(&ps);
		gpu_leaks(&ps);
	}
	/* A process without an end line died (killed, crashed): say so on its first thread. */
	if (!p->ended && cp->nlocs && !*failed)
		cv->ops->marker(cv, &cv->locs[cp->first_loc], ps.last_ns, CV_MARK_TRUNCATED,
				"the process ended without its end record (killed or crashed): "
				"the trace holds everything up to its death");
out:
	free(ps.user_regions);
	free(ps.smetric);
	idmap_free(&ps.pars);
	idmap_free(&ps.levels);
	idmap_free(&ps.tasks);
	idmap_free(&ps.writers);
	idmap_free(&ps.depends);
	idmap_free(&ps.ksections);
	idmap_free(&ps.kregions);
	alloc_free(&ps.kmem);
	free(ps.kspaces);
	idmap_free(&ps.gregions);
	idmap_free(&ps.gknames);
	idmap_free(&ps.gcorr);
	free(ps.gcalls);
	alloc_free(&ps.gmem);
	free(ps.gacts);
	free(ps.ts);
	free(ps.heap);
	free(ps.locks);
}

static uint32_t host_index(struct cv *cv, const char *host)
{
	uint32_t sid = cv_string(cv, host);
	for (uint32_t i = 0; i < cv->nhosts; i++)
		if (cv->hosts[i] == sid)
			return i;
	uint32_t *a = realloc(cv->hosts, (cv->nhosts + 1) * sizeof(*a));
	if (!a)
		return 0;
	cv->hosts = a;
	cv->hosts[cv->nhosts] = sid;
	return cv->nhosts++;
}

static uint64_t file_size(const char *dir, const char *name)
{
	char path[PATH_MAX + 32];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/*
 * Which process created which (processes are converted in order of their start, so a
 * creator always comes first): an image whose pid and host an earlier process had is what
 * that process exec'ed; otherwise a fork's "parent" line names the pid, whose image then
 * was the latest one started before the child.
 */
static void link_creators(struct cv *cv, const int *parent_pid)
{
	for (size_t i = 0; i < cv->nprocs; i++) {
		struct cv_process *c = &cv->procs[i];
		c->creator = -1;
		for (size_t j = 0; j < i; j++) /* the latest earlier image of the same pid */
			if (cv->procs[j].pid == c->pid && cv->procs[j].host == c->host)
				c->creator = (int)j;
		if (c->creator >= 0 || parent_pid[i] <= 0)
			continue;
		for (size_t j = 0; j < i; j++)
			if (cv->procs[j].pid == parent_pid[i] && cv->procs[j].host == c->host)
				c->creator = (int)j;
	}
}

/* Why a sampler or a GPU layer (what) was off, kept once per name and reason for the
 * summary. */
static void add_note(struct cv *cv, const char *what, const char *name, const char *why)
{
	char buf[1200];
	snprintf(buf, sizeof(buf), "%s %s: %s", what, name, why);
	for (size_t i = 0; i < cv->nnotes; i++)
		if (!strcmp(cv->notes[i], buf))
			return;
	char **a = realloc(cv->notes, (cv->nnotes + 1) * sizeof(*a));
	if (!a)
		return;
	cv->notes = a;
	if ((a[cv->nnotes] = strdup(buf)))
		cv->nnotes++;
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
static int write_core_view(struct cv *cv)
{
	if (!cv->core_view || !cv->nspans)
		return 0;
	qsort(cv->spans, cv->nspans, sizeof(*cv->spans), span_cmp);
	cv->first_core_loc = cv->nlocs;
	cv->ncore_hosts = cv->nhosts;
	for (size_t i = 0; i < cv->nspans;) {
		uint32_t host = cv->spans[i].host, cpu = cv->spans[i].cpu;
		struct cv_loc *l = new_loc(cv);
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
		if (cv->ops->location_begin(cv, l))
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
			cv->ops->enter(cv, l, from, sp->region);
			cv->ops->leave(cv, l, to, sp->region, 0);
			last = to;
		}
		if (cv->ops->location_end(cv, l))
			return -1;
	}
	return 0;
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

int cv_convert(struct cv *cv, char **dirs, int ndirs, rd_warn_fn warn, void *wctx)
{
	int failed = 0;
	uint32_t next_lock_id = 0;
	if (ndirs < 0)
		ndirs = 0;
	cv->stats.first_ns = UINT64_MAX;
	for (int i = 0; i < ndirs; i++)
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
	for (int i = 0; i < ndirs && !r0.found; i++) {
		struct rd_process p;
		char err[PATH_MAX + 256];
		if (rd_process_meta(&p, dirs[i], quiet, NULL, err, sizeof(err)))
			continue;
		if (p.mpi_rank == 1 && p.mpi_size > 0 && p.nsyncs) {
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
		struct cv_process *cp = &cv->procs[pidx];
		cp->dir_name = strdup(p.name);
		cp->pid = p.pid;
		cp->ppid = p.ppid;
		cp->host = host_index(cv, p.host[0] ? p.host : "localhost");
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
		kokkos_metadata(cv, &p);
		for (size_t k = 0; k < p.nsampler_off; k++)
			add_note(cv, "sampler", p.sampler_off[2 * k], p.sampler_off[2 * k + 1]);
		for (size_t k = 0; k < p.ngpu_off; k++)
			add_note(cv, "gpu", p.gpu_off[2 * k], p.gpu_off[2 * k + 1]);
		if (p.gpu[0])
			add_prop(cv, "LIBTRACE::GPU", p.gpu);
		if (p.gpu_clock[0])
			add_prop(cv, "LIBTRACE::GPU_CLOCK", p.gpu_clock);
		cp->mpi_rank = p.mpi_size > 0 && p.mpi_rank > 0 ? p.mpi_rank - 1 : -1;
		if (p.mpi_size > 0 && (uint32_t)p.mpi_size > cv->mpi_world)
			cv->mpi_world = (uint32_t)p.mpi_size;
		uint64_t too_deep = cv->stats.too_deep;
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
	link_creators(cv, parent_pid);
	free(parent_pid);
	if (!failed && write_core_view(cv))
		failed = 1;
	progress(cv, 1);
	if (cv->stats.first_ns == UINT64_MAX)
		cv->stats.first_ns = cv->stats.last_ns = 0;
	int rc = cv->ops->finish(cv); /* closes the archive even after a failure */
	return failed ? -1 : rc;
}

void cv_free(struct cv *cv)
{
	for (uint32_t i = 0; i < cv->nstrings; i++)
		free(cv->strings[i]);
	free(cv->strings);
	strmap_free(cv->string_map);
	strmap_free(cv->region_map);
	strmap_free(cv->metric_map);
	strmap_free(cv->scl_map);
	strmap_free(cv->ctx_map);
	free(cv->scls);
	free(cv->ctxs);
	free(cv->papis);
	free(cv->regions);
	free(cv->metrics);
	free(cv->hosts);
	for (size_t i = 0; i < cv->nprocs; i++)
		free(cv->procs[i].dir_name);
	free(cv->procs);
	free(cv->locs);
	for (uint32_t i = 0; i < cv->nteams; i++)
		free(cv->teams[i].members);
	free(cv->teams);
	strmap_free(cv->team_map);
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
		idmap_free(&cv->comm_map->m);
	free(cv->comm_map);
}
