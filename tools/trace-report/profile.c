// SPDX-License-Identifier: BSD-3-Clause
/*
 * profile.c - a run's profile from a trace directory: a backend of the converter's core
 * (struct cv_ops).  cv_convert walks the trace and hands us each thread's events in time
 * order, which we pass to the accumulator (accum.c: region stacks, inclusive and exclusive
 * time); the run's metadata comes from the processes' meta files.  Memory: per region,
 * plus per live thread; never per event.
 *
 * Also the run's life cycle (rp_run_free, sorting), shared by every kind of input.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "accum.h"
#include "convert.h"
#include "json.h"
#include "profile.h"

/*
 * Per location: its accumulator thread (cv_loc.out).  A location without one (NULL) is not
 * a thread of the profile: its events are passed over.
 */
static struct acc *A(struct cv *cv)
{
	return cv->out;
}

/* An event that only counts. */
static void count(struct cv_loc *l, uint64_t t)
{
	if (l->out)
		acc_event(l->out, t);
}

/* Only the program's threads are profiled: the samplers' metric locations and
 * --core-view's CPUs (cv_loc.kind) are not threads, and their events count nowhere. */
static int location_begin(struct cv *cv, struct cv_loc *l)
{
	if (l->kind != CV_LOC_THREAD) {
		l->out = NULL;
		return 0;
	}
	l->out = acc_thread_new(A(cv), l->process, l->index);
	return l->out ? 0 : -1;
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	int function = region < cv->nregions && cv->regions[region].role == CV_ROLE_FUNCTION;
	if (l->out)
		acc_enter(A(cv), l->out, t, region, function);
}

static uint64_t attr(const struct cv_attr *attrs, unsigned n, enum cv_attr_id id, int *found)
{
	for (unsigned i = 0; i < n; i++)
		if (attrs[i].id == id) {
			*found = 1;
			return attrs[i].value;
		}
	*found = 0;
	return 0;
}

/* What the profile takes of attributes (acc_call_enter): bytes copied, memory allocated and
 * freed. */
static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned nattrs)
{
	struct acc_thread *s = l->out;
	enter(cv, l, t, region);
	if (!s || region >= cv->nregions)
		return;
	const struct cv_region *r = &cv->regions[region];
	char site[600];
	cv_scl_text(cv, cv->cur_scl, site, sizeof(site));
	struct acc_call c = {.region = cv->strings[r->name],
			     .paradigm = r->paradigm,
			     .role = r->role,
			     .site = cv->cur_scl ? site : NULL};
	int found;
	uint64_t v;
	c.bytes = attr(attrs, nattrs, CV_ATTR_KOKKOS_BYTES, &found);
	c.has |= found ? ACC_HAS_BYTES : 0;
	c.address = attr(attrs, nattrs, CV_ATTR_KOKKOS_ADDRESS, &found);
	c.has |= found ? ACC_HAS_ADDRESS : 0;
	c.gpu_bytes = attr(attrs, nattrs, CV_ATTR_GPU_BYTES, &found);
	c.has |= found ? ACC_HAS_GPU_BYTES : 0;
	c.size = attr(attrs, nattrs, CV_ATTR_ALLOCATION_SIZE, &found);
	c.has |= found ? ACC_HAS_SIZE : 0;
	c.freed = attr(attrs, nattrs, CV_ATTR_ARGUMENT_ADDRESS, &found);
	c.has |= found ? ACC_HAS_FREED : 0;
	if ((v = attr(attrs, nattrs, CV_ATTR_KOKKOS_LABEL, &found)) < cv->nstrings && found)
		c.label = cv->strings[v];
	if ((v = attr(attrs, nattrs, CV_ATTR_GPU_MEMORY, &found)) < cv->nstrings && found)
		c.memory = cv->strings[v];
	acc_call_enter(A(cv), s, t, region, &c);
}

static void leave_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned nattrs)
{
	int found;
	uint64_t addr = attr(attrs, nattrs, CV_ATTR_RESULT_ADDRESS, &found);
	if (l->out) {
		acc_call_leave(A(cv), l->out, t, found, addr);
		acc_leave(A(cv), l->out, t, region);
	}
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	(void)closed; /* the run's totals count those (unclosed_regions) */
	if (l->out)
		acc_leave(A(cv), l->out, t, region);
}

/* Folds a thread's regions into the run's, records the thread. */
static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct acc_thread *s = l->out;
	if (!s)
		return 0;
	l->nevents = s->events;
	cv->stats.events += s->events;
	l->out = NULL;
	return acc_thread_end(A(cv), s, cv->strings[l->name]);
}

/* Events that only count. */
static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)cv;
	(void)seq;
	count(l, t);
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	(void)cv;
	(void)seq;
	struct acc_thread *s = l->out;
	count(l, t);
	if (s)
		s->tid = tid;
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)cv;
	(void)seq;
	count(l, t);
}

static void lock(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm paradigm,
		 int acquire, uint32_t lk, uint32_t order)
{
	(void)cv;
	(void)paradigm;
	(void)acquire;
	(void)lk;
	(void)order;
	count(l, t);
}

static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	(void)cv;
	(void)requested;
	count(l, t);
}

static void thread_join(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	(void)cv;
	count(l, t);
}

static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)cv;
	(void)team;
	count(l, t);
}

static void task_event(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_task_event what,
		       uint32_t team, uint32_t creator, uint32_t gen)
{
	struct acc_thread *s = l->out;
	if (!s)
		return;
	if (what == CV_TASK_SWITCH)
		acc_task_switch(A(cv), s, t, team, creator, gen);
	else if (what == CV_TASK_COMPLETE)
		acc_task_complete(A(cv), s, t, team, creator, gen);
	else
		acc_event(s, t);
}

/* A stack sample: its frames above the thread's open calls (as the archive places them). */
static void sample(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t ctx, uint64_t cpu_ns)
{
	struct acc_thread *s = l->out;
	if (!s)
		return;
	uint32_t f[LT_STACK_MAX];
	unsigned n = cv_sample_frames(cv, ctx, acc_bottom(s), f);
	for (unsigned i = 0; i < n; i++)
		f[i] = cv->ctxs[f[i] - 1].region;
	acc_sample(A(cv), s, t, cpu_ns, f, n);
}

/* Metrics count on threads; the CPU a thread runs on goes to its timeline, the samplers'
 * metrics (energy, temperature, memory) to the run's series. */
static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	struct acc_thread *s = l->out;
	const struct cv_metric *d = &cv->metrics[m];
	const char *name = cv->strings[d->name];
	count(l, t);
	if (s && !strcmp(name, "CPU")) {
		if (!s->tl)
			s->tl = acc_timeline_new(t);
		if (s->tl)
			acc_timeline_cpu(s->tl, t, (int)raw);
		return;
	}
	if (l->kind != CV_LOC_METRIC)
		return;
	double v;
	if (d->is_double)
		memcpy(&v, &raw, sizeof(v));
	else
		v = (double)(int64_t)raw;
	char full[600];
	snprintf(full, sizeof(full), "%s: %s", cv->strings[cv->procs[l->process].name], name);
	struct rp_series *sr = acc_series(A(cv), full, cv->strings[d->unit], t);
	if (sr)
		acc_series_add(sr, t, v);
}

/* Messages between MPI ranks, for the report's matrix: counted where they are sent. */
static void mpi_p2p(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
		    uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request)
{
	(void)t, (void)tag, (void)request; /* not an event of the profile's count */
	int self = cv->procs[l->process].mpi_rank;
	if (self < 0 || (kind != LT_MPI_SEND && kind != LT_MPI_ISEND))
		return;
	uint32_t dst = cv_world_rank(cv, comm, peer, (uint32_t)self);
	if (dst != LT_MPI_NO_RANK)
		acc_message(A(cv), cv->mpi_world, (uint32_t)self, dst, bytes);
}

/*
 * Markers are not events (an OTF2 archive keeps them apart, and its locations do not count
 * them): only a loss counts, on its thread.  Some markers come after their location ended
 * (a process's death, Kokkos memory never freed): l->out is NULL then.
 */
static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	(void)cv;
	(void)t;
	struct acc_thread *s = l->out;
	if (s && kind == CV_MARK_LOST) /* "<count> events lost: <cause>" */
		s->lost += strtoull(text, NULL, 10);
	if (s && kind == CV_MARK_DROPPED) { /* "<count> calls and regions not recorded: <why>" */
		unsigned c = strstr(text, "MIN_DURATION") ? LT_DROP_SHORT : LT_DROP_FILTER;
		uint64_t n = strtoull(text, NULL, 10);
		s->dropped[c] += n;
		A(cv)->dropped[c] += n;
	}
}

static void program_begin(struct cv *cv, struct cv_loc *l, uint64_t t, const struct rd_process *p)
{
	(void)cv;
	(void)p;
	count(l, t);
}

static void program_end(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	(void)cv;
	count(l, t);
}

static int finish(struct cv *cv)
{
	return A(cv)->oom ? -1 : 0;
}

static const struct cv_ops profile_ops = {
    .name = "profile",
    .location_begin = location_begin,
    .location_end = location_end,
    .enter = enter,
    .leave = leave,
    .thread_create = thread_create,
    .thread_begin = thread_begin,
    .thread_end = thread_end,
    .thread_wait = thread_end,
    .lock = lock,
    .thread_fork = thread_fork,
    .thread_join = thread_join,
    .team_begin = team_begin,
    .team_end = team_begin,
    .task_event = task_event,
    .sample = sample,
    .enter_attrs = enter_attrs,
    .leave_attrs = leave_attrs,
    .metric = metric,
    .mpi_p2p = mpi_p2p,
    .marker = marker,
    .program_begin = program_begin,
    .program_end = program_end,
    .finish = finish,
};

/* The MPI ranks the trace holds (a rank that exec'ed is one); a run without MPI is one. */
static uint64_t mpi_ranks(const struct cv *cv)
{
	uint64_t n = 0;
	for (size_t i = 0; i < cv->nprocs; i++) {
		int r = cv->procs[i].mpi_rank, seen = 0;
		for (size_t j = 0; j < i && !seen && r >= 0; j++)
			seen = cv->procs[j].mpi_rank == r;
		n += r >= 0 && !seen;
	}
	return n ? n : 1;
}

/* ---- the run ---- */

int rp_region_cmp_key(const struct rp_region *a, const struct rp_region *b)
{
	int c = strcmp(a->kind, b->kind);
	return c ? c : strcmp(a->name, b->name);
}

static int by_exclusive(const void *x, const void *y)
{
	const struct rp_region *a = x, *b = y;
	if (a->excl_ns != b->excl_ns)
		return a->excl_ns > b->excl_ns ? -1 : 1;
	if (a->incl_ns != b->incl_ns)
		return a->incl_ns > b->incl_ns ? -1 : 1;
	return rp_region_cmp_key(a, b);
}

void rp_sort_regions(struct rp_run *run)
{
	if (run->nregions)
		qsort(run->regions, run->nregions, sizeof(*run->regions), by_exclusive);
}

static void free_rows(struct rp_sample_row *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(r[i].name);
	free(r);
}

void rp_run_free(struct rp_run *run)
{
	free(run->trace);
	free_rows(run->samples.functions, run->samples.nfunctions);
	free_rows(run->samples.regions, run->samples.nregions);
	free_rows(run->samples.paths, run->samples.npaths);
	for (size_t i = 0; i < run->samples.nblocked; i++)
		free(run->samples.blocked[i].thread);
	free(run->samples.blocked);
	struct rp_meta *m = &run->meta;
	free(m->program);
	free(m->executable);
	for (size_t i = 0; i < m->nargs; i++)
		free(m->args[i]);
	free(m->args);
	free(m->host);
	for (size_t i = 0; i < m->nhosts; i++)
		free(m->hosts[i]);
	free(m->hosts);
	free(m->start);
	free(m->git_revision);
	free(m->clock);
	for (size_t i = 0; i < run->nregions; i++) {
		free(run->regions[i].name);
		free(run->regions[i].kind);
		free(run->regions[i].role);
		free(run->regions[i].max_thread);
		free(run->regions[i].type);
	}
	free(run->regions);
	for (size_t i = 0; i < run->ntree; i++) {
		free(run->tree[i].name);
		free(run->tree[i].kind);
	}
	free(run->tree);
	for (size_t i = 0; i < run->nmemory; i++) {
		struct rp_memory *ms = &run->memory[i];
		free(ms->process);
		free(ms->space);
		for (size_t j = 0; j < ms->ntop; j++)
			free(ms->top[j].label);
		free(ms->top);
	}
	free(run->memory);
	for (size_t i = 0; i < run->nseries; i++)
		acc_series_free(run->series[i]);
	free(run->series);
	free(run->mpi_msgs);
	free(run->mpi_bytes);
	for (size_t i = 0; i < run->nprocs; i++) {
		struct rp_process *p = &run->procs[i];
		free(p->name);
		free(p->host);
		free(p->program);
		for (size_t j = 0; j < p->nthreads; j++) {
			free(p->threads[j].name);
			free(p->threads[j].timeline);
		}
		free(p->threads);
	}
	free(run->procs);
	memset(run, 0, sizeof(*run));
}

/* What the meta file of one process says, read before the conversion. */
struct pinfo {
	int64_t writer_cpu_ns; /* -1: not said */
	uint64_t tracer_end_ns;
	char *dir;
	char *name; /* <host>.<pid>[.<n>] */
	uint64_t real_ns;
	char *exe, *host;
	char **args;
	size_t nargs;
	int clock_tsc;
	struct rd_lost *blocked; /* "stack_blocked": thread, tid (cause), samples not taken */
	size_t nblocked;
};

static void pinfo_free(struct pinfo *pi)
{
	free(pi->dir);
	free(pi->name);
	free(pi->exe);
	free(pi->host);
	for (size_t i = 0; i < pi->nargs; i++)
		free(pi->args[i]);
	free(pi->args);
	free(pi->blocked);
}

static int by_start(const void *x, const void *y)
{
	const struct pinfo *a = x, *b = y;
	if (a->real_ns != b->real_ns)
		return a->real_ns < b->real_ns ? -1 : 1;
	return strcmp(a->dir, b->dir);
}

static int is_process_dir(const char *dir)
{
	char path[PATH_MAX + 16];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, LT_META_FILE);
	/* Any file, even one that is not regular: the reader then says what it is. */
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

int rp_is_otf2(const char *path, char *anchor, size_t len)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	if (S_ISREG(st.st_mode)) {
		if (!has_suffix(path, ".otf2"))
			return 0;
		snprintf(anchor, len, "%s", path);
		return 1;
	}
	char file[PATH_MAX + 16];
	snprintf(file, sizeof(file), "%s/traces.otf2", path);
	if (!S_ISDIR(st.st_mode) || stat(file, &st) != 0 || !S_ISREG(st.st_mode) ||
	    is_process_dir(path))
		return 0;
	/* trace2otf2 writes beside its input; an archive written into a trace directory
	 * leaves the trace the run. */
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int trace = 0;
	for (struct dirent *e; !trace && (e = readdir(d));) {
		char sub[PATH_MAX];
		if (e->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
			continue;
		trace = is_process_dir(sub);
	}
	closedir(d);
	if (trace)
		return 0;
	snprintf(anchor, len, "%s", file);
	return 1;
}

static void no_warn(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* The readable processes of path, sorted by start (a creator comes before its children). */
static int list_processes(const char *path, const struct rp_options *opt, struct pinfo **out,
			  char *err, size_t errlen)
{
	char **dirs = NULL;
	int ndirs;
	if (is_process_dir(path)) {
		dirs = malloc(sizeof(*dirs));
		if (!dirs || !(dirs[0] = strdup(path))) {
			free(dirs);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		ndirs = 1;
	} else if ((ndirs = rd_trace_list(path, &dirs, err, errlen)) < 0) {
		return -1;
	}
	struct pinfo *pi = calloc((size_t)ndirs + 1, sizeof(*pi));
	int n = 0;
	for (int i = 0; i < ndirs; i++) {
		struct rd_process p;
		char perr[PATH_MAX + 256];
		if (!pi || rd_process_open(&p, dirs[i], NULL, NULL, perr, sizeof(perr)) != 0) {
			if (pi)
				opt->warn(opt->wctx, perr);
			free(dirs[i]);
			continue;
		}
		struct pinfo *q = &pi[n++];
		q->dir = dirs[i];
		q->name = strdup(p.name);
		q->real_ns = p.syncs[0].real_ns;
		q->exe = strdup(p.exe[0] ? p.exe : p.nargs ? p.args[0] : "?");
		q->host = strdup(p.host[0] ? p.host : "localhost");
		q->clock_tsc = p.clock_tsc;
		q->writer_cpu_ns = p.writer_cpu_ns;
		q->blocked = p.stack_blocked; /* taken over */
		q->nblocked = p.nstack_blocked;
		p.stack_blocked = NULL;
		p.nstack_blocked = 0;
		if (p.ended && p.ending_ticks && p.end_ticks > p.ending_ticks)
			q->tracer_end_ns =
			    (uint64_t)((double)(p.end_ticks - p.ending_ticks) * p.ns_per_tick);
		q->args = calloc(p.nargs + 1, sizeof(*q->args));
		for (size_t j = 0; q->args && j < p.nargs; j++)
			q->args[q->nargs++] = json_utf8_dup(p.args[j]);
		rd_process_close(&p);
	}
	free(dirs);
	if (!pi) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (n == 0) {
		snprintf(err, errlen, "%s: no process of the trace can be read", path);
		free(pi);
		return -1;
	}
	qsort(pi, (size_t)n, sizeof(*pi), by_start);
	*out = pi;
	return n;
}

/* The threads that blocked the sampling signal, from each process's meta file. */
static int blocked_threads(const struct pinfo *pi, int npi, struct rp_samples *s)
{
	size_t n = 0;
	for (int j = 0; j < npi; j++)
		n += pi[j].nblocked;
	if (!n)
		return 0;
	if (!(s->blocked = calloc(n, sizeof(*s->blocked))))
		return -1;
	for (int j = 0; j < npi; j++)
		for (size_t k = 0; k < pi[j].nblocked; k++) {
			const struct rd_lost *b = &pi[j].blocked[k];
			char name[PATH_MAX + 16];
			snprintf(name, sizeof(name), "%s/%u", pi[j].name, b->thread);
			struct rp_blocked *w = &s->blocked[s->nblocked];
			if (!(w->thread = json_utf8_dup(name)))
				return -1;
			w->tid = b->cause;
			w->not_taken = b->count;
			s->nblocked++;
		}
	return 0;
}

static int build_run(struct cv *cv, struct acc *acc, const struct pinfo *pi, int npi,
		     const char *path, const struct rp_options *opt, struct rp_run *run)
{
	char resolved[PATH_MAX];
	run->trace = strdup(realpath(path, resolved) ? resolved : path);
	struct acc_region_info *ri = calloc((size_t)cv->nregions + 1, sizeof(*ri));
	struct acc_process_info *pinf = calloc(cv->nprocs + 1, sizeof(*pinf));
	int rc = -1;
	if (!run->trace || !ri || !pinf)
		goto out;
	for (uint32_t r = 0; r < cv->nregions; r++) {
		const struct cv_region *cr = &cv->regions[r];
		const char *desc = cr->desc ? cv->strings[cr->desc - 1] : "";
		const char *pattern = "Kokkos::parallel_";
		ri[r] = (struct acc_region_info){
		    cv->strings[cr->name], cv_paradigm_name(cr->paradigm, cr->role),
		    cv_role_name(cr->role),
		    cr->paradigm == CV_PARADIGM_KOKKOS && !strncmp(desc, pattern, strlen(pattern))
			? desc + strlen(pattern)
			: NULL};
	}
	for (size_t i = 0; i < cv->nprocs; i++) {
		const struct cv_process *cp = &cv->procs[i];
		const struct pinfo *info = NULL;
		for (int j = 0; j < npi; j++)
			if (!strcmp(pi[j].name, cp->dir_name))
				info = &pi[j];
		pinf[i] = (struct acc_process_info){cp->dir_name,
						    cv->strings[cv->hosts[cp->host]],
						    info ? acc_base_name(info->exe) : "?",
						    cp->pid,
						    cp->ppid,
						    cp->ended};
	}
	if (acc_build(acc, ri, cv->nregions, pinf, cv->nprocs, run) ||
	    acc_build_memory(acc, pinf, cv->nprocs, cv->stats.first_ns, run))
		goto out;

	struct rp_meta *m = &run->meta;
	m->hosts = calloc(cv->nhosts + 1, sizeof(*m->hosts));
	if (!m->hosts)
		goto out;
	for (uint32_t h = 0; h < cv->nhosts; h++)
		if (!(m->hosts[m->nhosts++] = json_utf8_dup(cv->strings[cv->hosts[h]])))
			goto out;

	/* The run: what its first process was. */
	const struct pinfo *first = &pi[0];
	for (int j = 0; cv->nprocs && j < npi; j++)
		if (!strcmp(pi[j].name, cv->procs[0].dir_name))
			first = &pi[j];
	m->program = json_utf8_dup(acc_base_name(first->exe));
	m->executable = json_utf8_dup(first->exe);
	m->host = json_utf8_dup(first->host);
	m->args = calloc(first->nargs + 1, sizeof(*m->args));
	if (!m->program || !m->executable || !m->host || !m->args)
		goto out;
	for (size_t j = 1; j < first->nargs; j++)
		if (!(m->args[m->nargs++] = strdup(first->args[j])))
			goto out;
	m->processes = cv->stats.processes;
	m->threads = cv->stats.threads;
	m->ranks = mpi_ranks(cv);
	m->start_unix_ns = first->real_ns;
	m->start = acc_iso_date(first->real_ns);
	m->duration_ns = cv->stats.last_ns - cv->stats.first_ns;
	m->git_revision = opt->no_git ? NULL : acc_git_revision(first->exe);
	m->clock = strdup(first->clock_tsc ? "tsc" : "monotonic");
	for (int j = 0; j < npi; j++)
		m->tracer_end_ns += pi[j].tracer_end_ns;
	for (int j = 0; j < npi; j++)
		if (pi[j].writer_cpu_ns >= 0) {
			m->writer_cpu_ns += (uint64_t)pi[j].writer_cpu_ns;
			m->has_writer_cpu = 1;
		}
	if (!m->start || !m->clock)
		goto out;
	if (blocked_threads(pi, npi, &run->samples))
		goto out;

	struct rp_totals *t = &run->totals;
	t->events = cv->stats.events;
	t->lost = cv->stats.lost;
	t->truncated = cv->stats.truncated;
	t->unclosed = cv->stats.unclosed;
	t->cut_processes = cv->stats.cut_processes;
	t->flight = cv->stats.flight;
	t->anomalies = cv->stats.anomalies + acc->anomalies;
	t->dropped_short = acc->dropped[LT_DROP_SHORT];
	t->dropped_filter = acc->dropped[LT_DROP_FILTER];
	t->damaged = cv->stats.damaged || cv->stats.unreadable;
	rc = 0;
out:
	free(ri);
	free(pinf);
	return rc;
}

int rp_profile_trace(const char *path, const struct rp_options *opt, struct rp_run *run, char *err,
		     size_t errlen)
{
	struct rp_options o = *opt;
	if (!o.warn)
		o.warn = no_warn;
	memset(run, 0, sizeof(*run));
	struct stat st;
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a trace directory", path);
		return -1;
	}
	struct pinfo *pi = NULL;
	int npi = list_processes(path, &o, &pi, err, errlen);
	if (npi < 0)
		return -1;
	char **dirs = calloc((size_t)npi, sizeof(*dirs));
	struct acc acc;
	int acc_ok = acc_init(&acc, (size_t)npi) == 0;
	struct cv cv = {0};
	cv.ops = &profile_ops;
	cv.out = &acc;
#ifdef LIBTRACE_HAVE_BFD
	cv.syms = sym_table_new(&sym_bfd_ops, o.debug_dir ? o.debug_dir : "/usr/lib/debug");
#else
	cv.syms = sym_table_new(NULL, o.debug_dir ? o.debug_dir : "/usr/lib/debug");
#endif
	int rc = -1;
	if (!dirs || !acc_ok || !cv.syms) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < npi; i++)
		dirs[i] = pi[i].dir;
	if (cv_convert(&cv, dirs, npi, o.warn, o.wctx) != 0 || acc.oom) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (cv.stats.processes == 0) {
		snprintf(err, errlen, "%s: no process of the trace could be read", path);
		goto out;
	}
	if (build_run(&cv, &acc, pi, npi, path, &o, run)) {
		snprintf(err, errlen, "%s: out of memory", path);
		rp_run_free(run);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < cv.nlocs; i++) /* locations left open by a failure */
		acc_thread_free(cv.locs[i].out);
	if (acc_ok)
		acc_free(&acc);
	cv_free(&cv);
	sym_table_free(cv.syms);
	for (int i = 0; i < npi; i++)
		pinfo_free(&pi[i]);
	free(pi);
	free(dirs);
	return rc;
}

#ifndef LIBTRACE_HAVE_OTF2
int rp_profile_otf2(const char *anchor, const struct rp_options *opt, struct rp_run *run, char *err,
		    size_t errlen)
{
	(void)opt;
	memset(run, 0, sizeof(*run));
	snprintf(err, errlen,
		 "%s: an OTF2 archive, but this trace-report was built without OTF2 (libotf2); "
		 "profile the trace directory it was converted from",
		 anchor);
	return -1;
}
#endif
