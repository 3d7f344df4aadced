// SPDX-License-Identifier: BSD-3-Clause
/*
 * profile.c - the profile backend of the converter core (struct cv_ops): cv_convert walks
 * the trace and hands us each thread's Enter/Leave in time order; we keep, per live thread,
 * a stack of open calls and a small table of that thread's regions, and fold the table into
 * the run's per-region totals when the thread ends.  Memory: per region, plus per live
 * thread (its stack and table); never per event.
 *
 * Inclusive time counts the outermost call of a region on a thread only: a region entered
 * while it is already open on the same thread (recursion) adds its calls, its exclusive time
 * and its per-call statistics, not its inclusive time again (what Score-P's profile does).
 * Exclusive time is a call's duration minus the durations of the calls made from it.
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

#include "convert.h"
#include "json.h"
#include "profile.h"

extern char **environ;

/* One open call on a thread. */
struct frame {
	uint32_t region;
	uint8_t outer; /* the outermost open call of its region on this thread */
	uint8_t root;  /* the thread's start routine or main, at the bottom of the stack */
	uint64_t start, child;
};

/* A region as seen by one thread (open addressing on region + 1; 0: empty slot). */
struct tent {
	uint32_t key, open;
	uint64_t calls, incl, excl, sum, min, max;
};

struct lstate {
	struct frame *stack;
	uint32_t depth, cap;
	struct tent *tab;
	uint32_t ntab, tabcap;
	uint64_t first, last, events, lost, in_regions;
	uint32_t tid;
	int seen;
};

/* A region over the run. */
struct racc {
	uint64_t calls, incl, excl, sum, min, max;
	uint32_t threads;
	uint64_t tmin, tmax, tsum;
	uint32_t tmax_proc, tmax_thread;
};

/* A process over the run: its threads as they end. */
struct pacc {
	struct rp_thread *threads;
	size_t n, cap;
	uint64_t first, last;
	int seen;
};

struct prof {
	struct racc *acc;
	uint32_t nacc;
	struct pacc *pacc;
	size_t npacc;
	uint64_t anomalies;
	int oom;
};

static struct prof *P(struct cv *cv)
{
	return cv->out;
}

static void touch(struct lstate *s, uint64_t t)
{
	s->events++;
	if (!s->seen) {
		s->first = t;
		s->seen = 1;
	}
	if (t > s->last)
		s->last = t;
}

static struct tent *tent_find(struct lstate *s, uint32_t key)
{
	if (!s->tabcap)
		return NULL;
	uint32_t j = key * 0x9e3779b1u & (s->tabcap - 1);
	while (s->tab[j].key && s->tab[j].key != key)
		j = (j + 1) & (s->tabcap - 1);
	return &s->tab[j];
}

/* The thread's entry of region, created on first use; NULL when out of memory. */
static struct tent *tent_get(struct prof *pr, struct lstate *s, uint32_t region)
{
	uint32_t key = region + 1;
	struct tent *e = tent_find(s, key);
	if (e && e->key)
		return e;
	if ((s->ntab + 1) * 2 > s->tabcap) {
		uint32_t cap = s->tabcap ? s->tabcap * 2 : 16;
		struct tent *a = calloc(cap, sizeof(*a));
		if (!a) {
			pr->oom = 1;
			return NULL;
		}
		for (uint32_t i = 0; i < s->tabcap; i++) {
			if (!s->tab[i].key)
				continue;
			uint32_t j = s->tab[i].key * 0x9e3779b1u & (cap - 1);
			while (a[j].key)
				j = (j + 1) & (cap - 1);
			a[j] = s->tab[i];
		}
		free(s->tab);
		s->tab = a;
		s->tabcap = cap;
		e = tent_find(s, key);
	}
	*e = (struct tent){.key = key, .min = UINT64_MAX};
	s->ntab++;
	return e;
}

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	if (!(l->out = calloc(1, sizeof(struct lstate)))) {
		P(cv)->oom = 1;
		return -1;
	}
	return 0;
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	struct prof *pr = P(cv);
	struct lstate *s = l->out;
	touch(s, t);
	if (s->depth == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		struct frame *a = realloc(s->stack, cap * sizeof(*a));
		if (!a) {
			pr->oom = 1;
			return;
		}
		s->stack = a;
		s->cap = cap;
	}
	struct tent *e = tent_get(pr, s, region);
	if (!e)
		return;
	e->calls++;
	e->open++;
	int root =
	    s->depth == 0 && region < cv->nregions && cv->regions[region].role == CV_ROLE_FUNCTION;
	s->stack[s->depth++] = (struct frame){region, e->open == 1, (uint8_t)root, t, 0};
}

static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned nattrs)
{
	(void)attrs;
	(void)nattrs;
	enter(cv, l, t, region);
}

/* Closes the innermost open call at time t. */
static void pop(struct lstate *s, uint64_t t)
{
	struct frame f = s->stack[--s->depth];
	uint64_t dur = t > f.start ? t - f.start : 0;
	uint64_t excl = dur > f.child ? dur - f.child : 0;
	struct tent *e = tent_find(s, f.region + 1); /* entered: it exists */
	e->excl += excl;
	e->sum += dur;
	if (dur < e->min)
		e->min = dur;
	if (dur > e->max)
		e->max = dur;
	if (f.outer)
		e->incl += dur;
	e->open--;
	if (s->depth > 0)
		s->stack[s->depth - 1].child += dur;
	if (!f.root && (s->depth == 0 || (s->depth == 1 && s->stack[0].root)))
		s->in_regions += dur;
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	(void)closed; /* the run's totals count those (unclosed_regions) */
	struct prof *pr = P(cv);
	struct lstate *s = l->out;
	touch(s, t);
	uint32_t i = s->depth;
	while (i > 0 && s->stack[i - 1].region != region)
		i--;
	if (i == 0) { /* the core pairs every Leave with its Enter: not expected */
		pr->anomalies++;
		return;
	}
	while (s->depth >= i)
		pop(s, t);
}

/* Folds a thread's regions into the run's, records the thread. */
static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct prof *pr = P(cv);
	struct lstate *s = l->out;
	if (!s)
		return -1;
	while (s->depth)
		pop(s, s->last);
	if (cv->nregions > pr->nacc) {
		struct racc *a = realloc(pr->acc, cv->nregions * sizeof(*a));
		if (!a)
			goto oom;
		memset(a + pr->nacc, 0, (cv->nregions - pr->nacc) * sizeof(*a));
		pr->acc = a;
		pr->nacc = cv->nregions;
	}
	for (uint32_t i = 0; i < s->tabcap; i++) {
		const struct tent *e = &s->tab[i];
		if (!e->key || e->key > pr->nacc)
			continue;
		struct racc *a = &pr->acc[e->key - 1];
		if (!a->calls || e->min < a->min)
			a->min = e->min;
		if (e->max > a->max)
			a->max = e->max;
		if (!a->threads || e->incl < a->tmin)
			a->tmin = e->incl;
		if (!a->threads || e->incl > a->tmax) {
			a->tmax = e->incl;
			a->tmax_proc = l->process;
			a->tmax_thread = l->index;
		}
		a->calls += e->calls;
		a->incl += e->incl;
		a->excl += e->excl;
		a->sum += e->sum;
		a->threads++;
		a->tsum += e->incl;
	}
	if (l->process < pr->npacc) {
		struct pacc *p = &pr->pacc[l->process];
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 8;
			struct rp_thread *a = realloc(p->threads, cap * sizeof(*a));
			if (!a)
				goto oom;
			p->threads = a;
			p->cap = cap;
		}
		char *name = json_utf8_dup(cv->strings[l->name]);
		if (!name)
			goto oom;
		p->threads[p->n++] = (struct rp_thread){
		    l->index,	   s->tid,    name,   s->seen ? s->last - s->first : 0,
		    s->in_regions, s->events, s->lost};
		if (s->seen) {
			if (!p->seen || s->first < p->first)
				p->first = s->first;
			if (s->last > p->last)
				p->last = s->last;
			p->seen = 1;
		}
	}
	l->nevents = s->events;
	cv->stats.events += s->events;
	free(s->stack);
	free(s->tab);
	free(s);
	l->out = NULL;
	return 0;
oom:
	pr->oom = 1;
	return -1;
}

/* Events that only count. */
static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)cv;
	(void)seq;
	touch(l->out, t);
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	(void)cv;
	(void)seq;
	struct lstate *s = l->out;
	touch(s, t);
	s->tid = tid;
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)cv;
	(void)seq;
	touch(l->out, t);
}

static void lock(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm paradigm,
		 int acquire, uint32_t lk, uint32_t order)
{
	(void)cv;
	(void)paradigm;
	(void)acquire;
	(void)lk;
	(void)order;
	touch(l->out, t);
}

static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	(void)cv;
	(void)requested;
	touch(l->out, t);
}

static void thread_join(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	(void)cv;
	touch(l->out, t);
}

static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)cv;
	(void)team;
	touch(l->out, t);
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	(void)cv;
	(void)m;
	(void)raw;
	touch(l->out, t);
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	(void)cv;
	struct lstate *s = l->out;
	touch(s, t);
	if (kind == CV_MARK_LOST) /* "<count> events lost: <cause>" */
		s->lost += strtoull(text, NULL, 10);
}

static void program_begin(struct cv *cv, struct cv_loc *l, uint64_t t, const struct rd_process *p)
{
	(void)cv;
	(void)p;
	touch(l->out, t);
}

static void program_end(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	(void)cv;
	touch(l->out, t);
}

static int finish(struct cv *cv)
{
	return P(cv)->oom ? -1 : 0;
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
    .enter_attrs = enter_attrs,
    .metric = metric,
    .marker = marker,
    .program_begin = program_begin,
    .program_end = program_end,
    .finish = finish,
};

/* ---- the run ---- */

static const char *kind_name(const struct cv_region *r)
{
	switch (r->paradigm) {
	case CV_PARADIGM_USER:
		return r->role == CV_ROLE_USER ? "user" : "function";
	case CV_PARADIGM_PTHREAD:
		return "pthread";
	case CV_PARADIGM_PROCESS:
		return "process";
	case CV_PARADIGM_OPENMP:
		return "openmp";
	case CV_PARADIGM_KOKKOS:
		return "kokkos";
	}
	return "other";
}

static const char *role_name(enum cv_role r)
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
	return (unsigned)r < sizeof(names) / sizeof(names[0]) && names[r] ? names[r] : "other";
}

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

static int by_thread_index(const void *x, const void *y)
{
	const struct rp_thread *a = x, *b = y;
	return a->index < b->index ? -1 : a->index > b->index;
}

void rp_run_free(struct rp_run *run)
{
	free(run->trace);
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
	}
	free(run->regions);
	for (size_t i = 0; i < run->nprocs; i++) {
		struct rp_process *p = &run->procs[i];
		free(p->name);
		free(p->host);
		free(p->program);
		for (size_t j = 0; j < p->nthreads; j++)
			free(p->threads[j].name);
		free(p->threads);
	}
	free(run->procs);
	memset(run, 0, sizeof(*run));
}

/* What the meta file of one process says, read before the conversion. */
struct pinfo {
	char *dir;
	char *name; /* <host>.<pid>[.<n>] */
	uint64_t real_ns;
	char *exe, *host;
	char **args;
	size_t nargs;
	int clock_tsc;
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
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

/*
 * The git revision of the work tree holding the executable's directory (HEAD, now: the
 * report may be made after the checkout moved on), or NULL: no git, not in a work tree.
 */
static char *git_revision(const char *exe)
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

static char *iso_date(uint64_t unix_ns)
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

static int build_run(struct cv *cv, struct prof *pr, const struct pinfo *pi, int npi,
		     const char *path, const struct rp_options *opt, struct rp_run *run)
{
	char resolved[PATH_MAX];
	run->trace = strdup(realpath(path, resolved) ? resolved : path);
	/* Regions. */
	run->regions = calloc(pr->nacc + 1, sizeof(*run->regions));
	if (!run->trace || !run->regions)
		return -1;
	for (uint32_t r = 0; r < pr->nacc; r++) {
		const struct racc *a = &pr->acc[r];
		if (!a->calls)
			continue;
		const struct cv_region *cr = &cv->regions[r];
		struct rp_region *g = &run->regions[run->nregions++];
		char who[PATH_MAX + 32];
		snprintf(who, sizeof(who), "%s/%u", cv->procs[a->tmax_proc].dir_name,
			 a->tmax_thread);
		g->name = json_utf8_dup(cv->strings[cr->name]);
		g->kind = strdup(kind_name(cr));
		g->role = strdup(role_name(cr->role));
		g->max_thread = strdup(who);
		if (!g->name || !g->kind || !g->role || !g->max_thread)
			return -1;
		g->calls = a->calls;
		g->incl_ns = a->incl;
		g->excl_ns = a->excl;
		g->min_ns = a->min;
		g->max_ns = a->max;
		g->mean_ns = a->sum / a->calls;
		g->threads = a->threads;
		g->thread_min_ns = a->tmin;
		g->thread_max_ns = a->tmax;
		g->thread_mean_ns = a->tsum / a->threads;
		double mean = (double)a->tsum / a->threads;
		g->imbalance = mean > 0 ? (double)a->tmax / mean : 1.0;
	}
	rp_sort_regions(run);

	/* Processes and threads. */
	run->procs = calloc(cv->nprocs + 1, sizeof(*run->procs));
	if (!run->procs)
		return -1;
	struct rp_meta *m = &run->meta;
	m->hosts = calloc(cv->nhosts + 1, sizeof(*m->hosts));
	if (!m->hosts)
		return -1;
	for (uint32_t h = 0; h < cv->nhosts; h++)
		if (!(m->hosts[m->nhosts++] = json_utf8_dup(cv->strings[cv->hosts[h]])))
			return -1;
	for (size_t i = 0; i < cv->nprocs; i++) {
		const struct cv_process *cp = &cv->procs[i];
		struct pacc *pa = &pr->pacc[i];
		struct rp_process *p = &run->procs[run->nprocs++];
		const struct pinfo *info = NULL;
		for (int j = 0; j < npi; j++)
			if (!strcmp(pi[j].name, cp->dir_name))
				info = &pi[j];
		p->name = json_utf8_dup(cp->dir_name);
		p->host = json_utf8_dup(cv->strings[cv->hosts[cp->host]]);
		p->program = json_utf8_dup(info ? base_name(info->exe) : "?");
		if (!p->name || !p->host || !p->program)
			return -1;
		p->pid = cp->pid;
		p->ppid = cp->ppid;
		p->ended = cp->ended;
		p->lifetime_ns = pa->seen ? pa->last - pa->first : 0;
		if (pa->n)
			qsort(pa->threads, pa->n, sizeof(*pa->threads), by_thread_index);
		for (size_t j = 0; j < pa->n; j++) {
			struct rp_thread *t = &pa->threads[j];
			if (t->index == 0 && !t->tid)
				t->tid = (uint32_t)cp->pid;
			p->in_regions_ns += t->in_regions_ns;
			p->events += t->events;
			p->lost += t->lost;
		}
		p->threads = pa->threads;
		p->nthreads = pa->n;
		pa->threads = NULL;
		pa->n = 0;
	}

	/* The run: what its first process was. */
	const struct pinfo *first = &pi[0];
	for (int j = 0; cv->nprocs && j < npi; j++)
		if (!strcmp(pi[j].name, cv->procs[0].dir_name))
			first = &pi[j];
	m->program = json_utf8_dup(base_name(first->exe));
	m->executable = json_utf8_dup(first->exe);
	m->host = json_utf8_dup(first->host);
	m->args = calloc(first->nargs + 1, sizeof(*m->args));
	if (!m->program || !m->executable || !m->host || !m->args)
		return -1;
	for (size_t j = 1; j < first->nargs; j++)
		if (!(m->args[m->nargs++] = strdup(first->args[j])))
			return -1;
	m->processes = cv->stats.processes;
	m->threads = cv->stats.threads;
	m->ranks = 1;
	m->start_unix_ns = first->real_ns;
	m->start = iso_date(first->real_ns);
	m->duration_ns = cv->stats.last_ns - cv->stats.first_ns;
	m->git_revision = opt->no_git ? NULL : git_revision(first->exe);
	m->clock = strdup(first->clock_tsc ? "tsc" : "monotonic");
	if (!m->start || !m->clock)
		return -1;

	struct rp_totals *t = &run->totals;
	t->events = cv->stats.events;
	t->lost = cv->stats.lost;
	t->truncated = cv->stats.truncated;
	t->unclosed = cv->stats.unclosed;
	t->cut_processes = cv->stats.cut_processes;
	t->anomalies = cv->stats.anomalies + pr->anomalies;
	t->damaged = cv->stats.damaged || cv->stats.unreadable;
	return 0;
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
	struct prof pr = {0};
	pr.pacc = calloc((size_t)npi, sizeof(*pr.pacc));
	pr.npacc = (size_t)npi;
	struct cv cv = {0};
	cv.ops = &profile_ops;
	cv.out = &pr;
#ifdef LIBTRACE_HAVE_BFD
	cv.syms = sym_table_new(&sym_bfd_ops, o.debug_dir ? o.debug_dir : "/usr/lib/debug");
#else
	cv.syms = sym_table_new(NULL, o.debug_dir ? o.debug_dir : "/usr/lib/debug");
#endif
	int rc = -1;
	if (!dirs || !pr.pacc || !cv.syms) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < npi; i++)
		dirs[i] = pi[i].dir;
	if (cv_convert(&cv, dirs, npi, o.warn, o.wctx) != 0 || pr.oom) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	if (cv.stats.processes == 0) {
		snprintf(err, errlen, "%s: no process of the trace could be read", path);
		goto out;
	}
	if (build_run(&cv, &pr, pi, npi, path, &o, run)) {
		snprintf(err, errlen, "%s: out of memory", path);
		rp_run_free(run);
		goto out;
	}
	rc = 0;
out:
	for (size_t i = 0; i < cv.nlocs; i++) { /* locations left open by a failure */
		struct lstate *s = cv.locs[i].out;
		if (s) {
			free(s->stack);
			free(s->tab);
			free(s);
		}
	}
	for (size_t i = 0; pr.pacc && i < pr.npacc; i++) {
		for (size_t j = 0; j < pr.pacc[i].n; j++)
			free(pr.pacc[i].threads[j].name);
		free(pr.pacc[i].threads);
	}
	free(pr.pacc);
	free(pr.acc);
	cv_free(&cv);
	sym_table_free(cv.syms);
	for (int i = 0; i < npi; i++)
		pinfo_free(&pi[i]);
	free(pi);
	free(dirs);
	return rc;
}
