// SPDX-License-Identifier: BSD-3-Clause
/*
 * registry.c - the definitions registry: strings, regions, metrics, call sites,
 * calling contexts, PAPI sets, properties and notes, each with a dense id in first-use
 * order, which a backend writes after the events.
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

uint32_t cv_string(struct cv *cv, const char *text)
{
	if (!cv->string_map && !(cv->string_map = calloc(1, sizeof(*cv->string_map))))
		return 0;
	uint32_t id = cv->nstrings;
	uint32_t *v = cv_strmap_get(cv->string_map, text, &id);
	if (!v)
		return 0;
	if (*v != id || id < cv->nstrings)
		return *v;
	if (cv->nstrings == cv->strings_cap) {
		char **a = cv_grow(cv->strings, &cv->strings_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->strings = a;
	}
	cv->strings[cv->nstrings++] = strdup(text);
	return id;
}

/* The region of kind (a one-letter namespace) and name; created with r on first use. */
uint32_t cv_region_id(struct cv *cv, char kind, const char *name, const struct cv_region *r)
{
	char key[2048];
	snprintf(key, sizeof(key), "%c:%s", kind, name);
	if (!cv->region_map && !(cv->region_map = calloc(1, sizeof(*cv->region_map))))
		return 0;
	uint32_t id = cv->nregions;
	uint32_t *v = cv_strmap_get(cv->region_map, key, &id);
	if (!v || *v != id || id < cv->nregions)
		return v ? *v : 0;
	if (cv->nregions == cv->regions_cap) {
		struct cv_region *a = cv_grow(cv->regions, &cv->regions_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->regions = a;
	}
	if (cv->par) { /* the key, for cv_unify */
		char **k = realloc(cv->region_keys, (cv->nregions + 1) * sizeof(*k));
		if (!k || !(k[cv->nregions] = strdup(key))) {
			if (k)
				cv->region_keys = k;
			return 0;
		}
		cv->region_keys = k;
	}
	cv->regions[cv->nregions++] = *r;
	return id;
}

uint32_t cv_fn_region(struct cv *cv, unsigned fn)
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
	uint32_t id = cv_region_id(cv, 'C', name, &r);
	cv->fn_regions[fn] = id + 1;
	return id;
}

/* An MPI function's region: point to point, collective or other, by its name. */
uint32_t cv_mpi_region(struct cv *cv, const char *name)
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
	return cv_region_id(cv, 'M', name, &r);
}

uint32_t cv_user_region(struct cv *cv, const char *name)
{
	uint32_t sid = cv_string(cv, name);
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_USER, CV_PARADIGM_USER, 0};
	return cv_region_id(cv, 'U', name, &r);
}

/* What code address addr of process p is. */
void cv_resolve_code(struct cv *cv, const struct rd_process *p, uint64_t addr,
		     struct sym_result *out)
{
	struct sym_result s;
	const struct rd_map *map = rd_map_at(p, addr);
	if (map)
		sym_resolve(cv->syms, map->path, addr - map->start + map->offset, &s);
	else
		sym_unmapped(cv->syms, addr, &s);
	/* A PLT stub (a non-PIE executable's address of a library function): the function
	 * itself, in whichever module of the process defines it. */
	for (size_t i = 0; map && s.plt && i < p->nmap_paths; i++) {
		const char *path = p->maps[p->map_paths[i]].path;
		uint64_t off;
		if (strcmp(path, map->path) && sym_find(cv->syms, path, s.plt, &off) == 0) {
			sym_resolve(cv->syms, path, off, &s);
			break;
		}
	}
	*out = s;
}

/* The region of a code address of process p (a start routine). */
uint32_t cv_code_region(struct cv *cv, const struct rd_process *p, uint64_t addr)
{
	struct sym_result s;
	cv_resolve_code(cv, p, addr, &s);
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
			      s.file && s.line ? cv_string(cv, s.file) : CV_NO_STRING,
			      s.file ? s.line : 0,
			      CV_ROLE_FUNCTION,
			      CV_PARADIGM_USER,
			      0};
	return cv_region_id(cv, 'F', name, &r);
}

/* The main thread's outermost region: the executable's main, with file and line where the
 * executable has them; plain "main" where it is stripped. */
uint32_t cv_main_region(struct cv *cv, const struct rd_process *p)
{
	uint64_t off;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct rd_map *m = &p->maps[i];
		if (!strcmp(m->path, p->exe) && sym_find(cv->syms, m->path, "main", &off) == 0 &&
		    off >= m->offset && off - m->offset < m->end - m->start)
			return cv_code_region(cv, p, m->start + (off - m->offset));
	}
	uint32_t sid = cv_string(cv, "main");
	struct cv_region r = {sid, sid, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_USER, 0};
	return cv_region_id(cv, 'F', "main", &r);
}

uint32_t cv_metric_id(struct cv *cv, const char *name, int is_double, const char *unit)
{
	char key[1100];
	snprintf(key, sizeof(key), "%d:%s", is_double, name);
	if (!cv->metric_map && !(cv->metric_map = calloc(1, sizeof(*cv->metric_map))))
		return 0;
	uint32_t id = cv->nmetrics;
	uint32_t *v = cv_strmap_get(cv->metric_map, key, &id);
	if (!v || *v != id || id < cv->nmetrics)
		return v ? *v : 0;
	if (cv->nmetrics == cv->metrics_cap) {
		struct cv_metric *a = cv_grow(cv->metrics, &cv->metrics_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->metrics = a;
	}
	cv->metrics[cv->nmetrics++] = (struct cv_metric){
	    .name = cv_string(cv, name), .unit = cv_string(cv, unit), .is_double = is_double};
	return id;
}

/* The call site of return address ra (the line of the call: the address before it). */
static uint32_t scl_of(struct cv *cv, const struct rd_process *p, uint64_t ra, uint32_t *func)
{
	struct sym_result s;
	cv_resolve_code(cv, p, ra - 1, &s);
	int known = s.file && *s.file && s.line; /* a file without its line is no location */
	struct cv_scl c = {cv_string(cv, known ? s.file : ""), known ? s.line : 0,
			   cv_string(cv, s.function), CV_NO_SITE};
	*func = c.function;
	return cv_scl_id(cv, &c);
}

uint32_t cv_scl_id(struct cv *cv, const struct cv_scl *cp)
{
	struct cv_scl c = *cp;
	char key[64];
	snprintf(key, sizeof(key), "%u:%u:%u", c.file, c.line, c.function);
	if (!cv->scl_map && !(cv->scl_map = calloc(1, sizeof(*cv->scl_map))))
		return 0;
	uint32_t id = cv->nscls;
	uint32_t *v = cv_strmap_get(cv->scl_map, key, &id);
	if (!v || *v != id || id < cv->nscls)
		return v ? *v + 1 : 0;
	if (cv->nscls == cv->scls_cap) {
		struct cv_scl *a = cv_grow(cv->scls, &cv->scls_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->scls = a;
	}
	c.site = c.line ? cv->nsites++ : CV_NO_SITE;
	cv->scls[cv->nscls++] = c;
	return id + 1;
}

/* The calling context of a frame: the function `func` (a string id: its region), its line
 * scl + 1, the context of its caller (id + 1, 0: none).  Returns id + 1, 0 on failure.
 * A frame's region has a namespace of its own: a frame named as a call the tracer records
 * (pthread_create in its wrapper) is a function, whichever of the two a process met first. */
static uint32_t ctx_of(struct cv *cv, uint32_t func, uint32_t scl, uint32_t parent)
{
	struct cv_region r = {func, func, CV_NO_STRING, 0, CV_ROLE_FUNCTION, CV_PARADIGM_USER, 0};
	return cv_context(cv, cv_region_id(cv, 'S', cv->strings[func], &r), scl, parent);
}

uint32_t cv_context(struct cv *cv, uint32_t reg, uint32_t scl, uint32_t parent)
{
	char key[64];
	snprintf(key, sizeof(key), "%u:%u:%u", reg, scl, parent);
	if (!cv->ctx_map && !(cv->ctx_map = calloc(1, sizeof(*cv->ctx_map))))
		return 0;
	uint32_t id = cv->nctxs;
	uint32_t *v = cv_strmap_get(cv->ctx_map, key, &id);
	if (!v || *v != id || id < cv->nctxs)
		return v ? *v + 1 : 0;
	if (cv->nctxs == cv->ctxs_cap) {
		struct cv_ctx *a = cv_grow(cv->ctxs, &cv->ctxs_cap, sizeof(*a));
		if (!a)
			return 0;
		cv->ctxs = a;
	}
	cv->ctxs[cv->nctxs++] = (struct cv_ctx){reg, scl - 1, parent};
	return id + 1;
}

/* The PAPI set of process p's "papi" lines (id + 1; 0: none or unusable). */
uint32_t cv_papi_set(struct cv *cv, const struct rd_process *p)
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
	return cv_papi_id(cv, &s);
}

uint32_t cv_papi_id(struct cv *cv, const struct cv_papi *sp)
{
	struct cv_papi s = *sp;
	for (uint32_t k = 0; k < cv->npapis; k++)
		if (cv->papis[k].n == s.n && !memcmp(cv->papis[k].names, s.names, sizeof(s.names)))
			return k + 1;
	if (cv->npapis == cv->papis_cap) {
		struct cv_papi *a = cv_grow(cv->papis, &cv->papis_cap, sizeof(*a));
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

const char *cv_pstring(struct pstate *ps, uint32_t id)
{
	const char *s = rd_string(ps->p, id);
	if (!s)
		ps->cv->stats.anomalies++;
	return s ? s : "(undefined string)";
}

/* An allocation never freed: into cv->leaks, and a marker of `kind` saying `text` where
 * and when it was made. */
void cv_leak_add(struct pstate *ps, const struct kalloc *k, int kind, const char *text)
{
	struct cv *cv = ps->cv;
	if (cv->nleaks == cv->leaks_cap) {
		uint32_t cap = (uint32_t)cv->leaks_cap;
		struct cv_leak *a = cv_grow(cv->leaks, &cap, sizeof(*a));
		if (!a)
			return;
		cv->leaks = a;
		cv->leaks_cap = cap;
	}
	cv->leaks[cv->nleaks++] =
	    (struct cv_leak){ps->pidx, k->label, k->space, k->bytes, k->addr, kind, k->scl};
	CV_EMIT(cv, marker, &cv->locs[k->loc], k->ns, kind, text);
}

/* An archive property, unless one of that name is there (the first process's wins). */
void cv_add_prop(struct cv *cv, const char *name, const char *value)
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

/* Grows cv->locs by one; NULL when memory ran out. */
struct cv_loc *cv_new_loc(struct cv *cv)
{
	if (cv->nlocs == cv->locs_cap) {
		uint32_t cap = (uint32_t)cv->locs_cap;
		struct cv_loc *a = cv_grow(cv->locs, &cap, sizeof(*a));
		if (!a)
			return NULL;
		cv->locs = a;
		cv->locs_cap = cap;
	}
	return &cv->locs[cv->nlocs];
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
void cv_callsite(struct pstate *ps, struct tstate *t, uint64_t ra)
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

unsigned cv_sample_frames(const struct cv *cv, uint32_t ctx, uint32_t bottom, uint32_t *out)
{
	unsigned n = 0;
	for (uint32_t c = ctx + 1; c && n < LT_STACK_MAX; c = cv->ctxs[c - 1].parent)
		out[n++] = c;
	for (unsigned i = 0; i < n / 2; i++) { /* outermost first */
		uint32_t x = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = x;
	}
	if (bottom == UINT32_MAX || bottom >= cv->nregions)
		return n;
	uint32_t name = cv->regions[bottom].canonical;
	/* An OpenMP worker's outermost region is the parallel region, named after its outlined
	 * function: that function stays, the runtime's frames below it go. */
	unsigned keep = cv->regions[bottom].paradigm == CV_PARADIGM_OPENMP;
	for (unsigned i = 0; i < n; i++)
		if (cv->regions[cv->ctxs[out[i] - 1].region].canonical == name) {
			i -= keep;
			memmove(out, out + i + 1, (n - i - 1) * sizeof(*out));
			return n - i - 1;
		}
	return n;
}

uint32_t cv_stack_context(struct pstate *ps, const uint64_t *ips, unsigned n)
{
	struct cv *cv = ps->cv;
	uint32_t parent = 0;
	for (unsigned i = n; i-- > 0;) {
		/* scl_of resolves the address before a return address: the interrupted
		 * instruction itself is ips[0] + 1 then. */
		uint32_t f, s = scl_of(cv, ps->p, i ? ips[i] : ips[i] + 1, &f);
		if (s)
			parent = ctx_of(cv, f, s, parent);
	}
	return parent;
}

/* Why a sampler or a GPU layer (what) was off, kept once per name and reason for the
 * summary. */
void cv_add_note(struct cv *cv, const char *what, const char *name, const char *why)
{
	char buf[1200];
	snprintf(buf, sizeof(buf), "%s %s: %s", what, name, why);
	cv_note(cv, buf);
}

void cv_note(struct cv *cv, const char *text)
{
	for (size_t i = 0; i < cv->nnotes; i++)
		if (!strcmp(cv->notes[i], text))
			return;
	char **a = realloc(cv->notes, (cv->nnotes + 1) * sizeof(*a));
	if (!a)
		return;
	cv->notes = a;
	if ((a[cv->nnotes] = strdup(text)))
		cv->nnotes++;
}

/* ---- names ---- */

const char *cv_paradigm_name(enum cv_paradigm paradigm, enum cv_role role)
{
	switch (paradigm) {
	case CV_PARADIGM_USER:
		return role == CV_ROLE_USER ? "user" : "function";
	case CV_PARADIGM_PTHREAD:
		return "pthread";
	case CV_PARADIGM_PROCESS:
		return "process";
	case CV_PARADIGM_MPI:
		return "mpi";
	case CV_PARADIGM_OPENMP:
		return "openmp";
	case CV_PARADIGM_KOKKOS:
		return "kokkos";
	case CV_PARADIGM_CUDA:
		return "cuda";
	case CV_PARADIGM_HIP:
		return "hip";
	}
	return "other";
}

const char *cv_role_name(enum cv_role role)
{
	static const char *names[] = {
	    [CV_ROLE_FUNCTION] = "function",
	    [CV_ROLE_WRAPPER] = "wrapper",
	    [CV_ROLE_THREAD_CREATE] = "thread_create",
	    [CV_ROLE_THREAD_WAIT] = "thread_wait",
	    [CV_ROLE_USER] = "user",
	    [CV_ROLE_PARALLEL] = "parallel",
	    [CV_ROLE_LOOP] = "loop",
	    [CV_ROLE_SECTIONS] = "sections",
	    [CV_ROLE_SINGLE] = "single",
	    [CV_ROLE_BARRIER] = "barrier",
	    [CV_ROLE_IMPLICIT_BARRIER] = "implicit_barrier",
	    [CV_ROLE_CRITICAL] = "critical",
	    [CV_ROLE_ATOMIC] = "atomic",
	    [CV_ROLE_ORDERED] = "ordered",
	    [CV_ROLE_MASTER] = "master",
	    [CV_ROLE_TASK] = "task",
	    [CV_ROLE_TASK_CREATE] = "task_create",
	    [CV_ROLE_TASK_WAIT] = "task_wait",
	    [CV_ROLE_WORKSHARE] = "workshare",
	    [CV_ROLE_PHASE] = "phase",
	    [CV_ROLE_DATA_TRANSFER] = "data_transfer",
	    [CV_ROLE_ALLOCATE] = "allocate",
	    [CV_ROLE_DEALLOCATE] = "deallocate",
	};
	return (unsigned)role < sizeof(names) / sizeof(names[0]) && names[role] ? names[role]
										: "other";
}

const char *cv_mark_category(int kind)
{
	static const char *const names[CV_MARK_KINDS] = {
	    [CV_MARK_USER] = "Annotation",
	    [CV_MARK_LOST] = "Lost events",
	    [CV_MARK_TRUNCATED] = "Truncated trace",
	    [CV_MARK_CLOSED] = "Regions closed by the converter",
	    [CV_MARK_KOKKOS_EVENT] = "Kokkos profile event",
	    [CV_MARK_KOKKOS_DUALVIEW] = "Kokkos DualView",
	    [CV_MARK_KOKKOS_LEAK] = "Kokkos memory never freed",
	    [CV_MARK_KOKKOS_KEPT] = "Kokkos runtime memory kept past finalize",
	    [CV_MARK_KOKKOS_UNFINALIZED] = "Kokkos memory live at an exit without finalize",
	    [CV_MARK_GPU_LEAK] = "GPU memory never freed",
	    [CV_MARK_DROPPED] = "Not recorded on purpose",
	    [CV_MARK_FLIGHT] = "Flight-recorder window",
	};
	return kind >= 0 && kind < CV_MARK_KINDS && names[kind] ? names[kind] : "Marker";
}
