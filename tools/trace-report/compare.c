// SPDX-License-Identifier: BSD-3-Clause
/*
 * compare.c - the regression check (docs/profiles-and-ci.md, "Comparing runs").
 *
 * Per region (kind + name), one value per run (the metric: inclusive time, exclusive time
 * or calls; 0 in a run that never entered it), the median over each side's runs.  A region
 * regressed when the candidate's median exceeds the baseline's by more than the relative
 * threshold AND by more than the absolute minimum, and, when each side has 3 runs or more,
 * when a one-sided Mann-Whitney rank test says the candidate's runs are slower than the
 * baseline's at level alpha (for 3 against 3 runs: every candidate run slower than every
 * baseline run).  Improvements are the mirror image.  Regions found on one side only are
 * listed as appeared or vanished, never a reason to refuse; a thread start routine whose
 * line moved in its file ("work @a.c:12" against "work @a.c:14") is matched by its
 * function and file names (not "work @b.c:12").
 * Runs of different programs (executable base names) are not comparable.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "json.h"

enum status { ST_UNCHANGED, ST_REGRESSED, ST_IMPROVED, ST_APPEARED, ST_VANISHED, ST_MERGED };

static const char *status_name[] = {"unchanged", "regressed", "improved",
				    "appeared",	 "vanished",  "merged"};

struct entry {
	const char *kind, *name;
	const char *cand_name; /* matched by function name: the candidate's region name */
	double *bv, *cv;       /* per run */
	size_t bpresent, cpresent;
	double bmed, cmed, diff, ratio, p;
	enum status st;
};

struct table {
	struct entry *e;
	size_t n, cap;
	size_t *slot; /* open addressing: index + 1 into e */
	size_t nslots;
	size_t nb, nc;
	int oom;
};

static uint64_t hash2(const char *a, const char *b)
{
	uint64_t h = 1469598103934665603ull;
	while (*a)
		h = (h ^ (unsigned char)*a++) * 1099511628211ull;
	h = (h ^ 0x1f) * 1099511628211ull;
	while (*b)
		h = (h ^ (unsigned char)*b++) * 1099511628211ull;
	return h;
}

static struct entry *lookup(struct table *t, const char *kind, const char *name)
{
	if ((t->n + 1) * 2 > t->nslots) {
		size_t ns = t->nslots ? t->nslots * 2 : 256;
		size_t *s = calloc(ns, sizeof(*s));
		if (!s) {
			t->oom = 1;
			return NULL;
		}
		for (size_t i = 0; i < t->n; i++) {
			size_t j = hash2(t->e[i].kind, t->e[i].name) & (ns - 1);
			while (s[j])
				j = (j + 1) & (ns - 1);
			s[j] = i + 1;
		}
		free(t->slot);
		t->slot = s;
		t->nslots = ns;
	}
	size_t j = hash2(kind, name) & (t->nslots - 1);
	while (t->slot[j]) {
		struct entry *e = &t->e[t->slot[j] - 1];
		if (!strcmp(e->kind, kind) && !strcmp(e->name, name))
			return e;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct entry *a = realloc(t->e, cap * sizeof(*a));
		if (!a) {
			t->oom = 1;
			return NULL;
		}
		t->e = a;
		t->cap = cap;
	}
	struct entry *e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->name = name;
	e->bv = calloc(t->nb + 1, sizeof(double));
	e->cv = calloc(t->nc + 1, sizeof(double));
	if (!e->bv || !e->cv) {
		free(e->bv);
		free(e->cv);
		t->oom = 1;
		return NULL;
	}
	t->slot[j] = ++t->n;
	return e;
}

static double value(const struct rp_region *g, enum rp_metric m)
{
	switch (m) {
	case RP_METRIC_EXCLUSIVE:
		return (double)g->excl_ns;
	case RP_METRIC_CALLS:
		return (double)g->calls;
	default:
		return (double)g->incl_ns;
	}
}

static int dcmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static double median(const double *v, size_t n)
{
	if (!n)
		return 0;
	double *s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), dcmp);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double rp_mann_whitney_p(size_t n, size_t m, double u)
{
	if (!n || !m)
		return 1;
	double nm = (double)n * (double)m;
	if (u <= 0)
		return 1;
	if (u > nm)
		return 0;
	if (nm > 2500) { /* normal approximation with continuity correction */
		double mean = nm / 2, sd = sqrt(nm * (double)(n + m + 1) / 12);
		double z = (u - 0.5 - mean) / sd;
		return 0.5 * erfc(z / sqrt(2.0));
	}
	/*
	 * The number of arrangements with U = k is the coefficient of q^k in the Gaussian
	 * binomial [n+m choose n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i); each partial
	 * product is itself a polynomial ([m+i choose i]_q), of degree m*i.
	 */
	size_t deg = (size_t)nm, size = deg + n + m + 1;
	double *c = calloc(size, sizeof(*c));
	if (!c)
		return 1;
	c[0] = 1;
	for (size_t i = 1; i <= n; i++) {
		size_t k = m + i, top = m * (i - 1) + k; /* degree after the multiplication */
		for (size_t x = top; x >= k; x--)	 /* times (1 - q^k) */
			c[x] -= c[x - k];
		for (size_t x = i; x <= top; x++) /* divided by (1 - q^i) */
			c[x] += c[x - i];
	}
	double total = 0, tail = 0;
	size_t from = (size_t)floor(u); /* with ties (half-integer u): the larger p-value */
	for (size_t x = 0; x <= deg; x++) {
		total += c[x];
		if (x >= from)
			tail += c[x];
	}
	free(c);
	return total > 0 ? tail / total : 1;
}

/* U: pairs (x in a, y in b) with x > y, ties counting one half. */
static double mw_u(const double *a, size_t n, const double *b, size_t m)
{
	double u = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < m; j++)
			u += a[i] > b[j] ? 1 : a[i] == b[j] ? 0.5 : 0;
	return u;
}

/* "work @file.c:12" -> length of "work": the name without " @file:line"; 0 if none. */
static size_t stem(const char *name)
{
	const char *at = strstr(name, " @");
	const char *colon = at ? strrchr(at, ':') : NULL;
	if (!colon || !colon[1])
		return 0;
	for (const char *d = colon + 1; *d; d++)
		if (*d < '0' || *d > '9')
			return 0;
	return (size_t)(at - name);
}

/* One function in one file whose line moved: "work @a.c:12" and "work @a.c:14", not
 * "work @b.c:12" (another file's function of the same name: main, a static helper). */
static int same_stem(const struct entry *a, const struct entry *b)
{
	if (!stem(a->name) || !stem(b->name) || strcmp(a->kind, b->kind))
		return 0;
	size_t la = (size_t)(strrchr(a->name, ':') - a->name);
	size_t lb = (size_t)(strrchr(b->name, ':') - b->name);
	return la == lb && !strncmp(a->name, b->name, la);
}

/* Appeared and vanished regions that are one function whose line moved: one entry. */
static void match_moved(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		struct entry *v = &t->e[i];
		if (v->cpresent || !v->bpresent || !stem(v->name))
			continue;
		struct entry *match = NULL;
		int count = 0;
		for (size_t j = 0; j < t->n; j++) {
			struct entry *a = &t->e[j];
			if (a->bpresent || !a->cpresent || a->st == ST_MERGED || !same_stem(v, a))
				continue;
			match = a;
			count++;
		}
		if (count != 1)
			continue;
		int vanished_like = 0; /* another vanished one with the same stem: ambiguous */
		for (size_t j = 0; j < t->n; j++)
			if (j != i && !t->e[j].cpresent && t->e[j].bpresent &&
			    same_stem(v, &t->e[j]))
				vanished_like = 1;
		if (vanished_like)
			continue;
		memcpy(v->cv, match->cv, t->nc * sizeof(double));
		v->cpresent = match->cpresent;
		v->cand_name = match->name;
		match->st = ST_MERGED;
	}
}

static void judge(struct table *t, const struct rp_cmp_opts *o)
{
	int noise = t->nb >= 3 && t->nc >= 3;
	for (size_t i = 0; i < t->n; i++) {
		struct entry *e = &t->e[i];
		if (e->st == ST_MERGED)
			continue;
		e->bmed = median(e->bv, t->nb);
		e->cmed = median(e->cv, t->nc);
		e->diff = e->cmed - e->bmed;
		e->ratio = e->bmed > 0 ? e->cmed / e->bmed : NAN;
		e->p = NAN;
		if (!e->bpresent) {
			e->st = ST_APPEARED;
			continue;
		}
		if (!e->cpresent) {
			e->st = ST_VANISHED;
			continue;
		}
		e->st = ST_UNCHANGED;
		if (e->cmed > e->bmed * (1 + o->threshold) && e->diff > o->min_diff) {
			if (noise)
				e->p = rp_mann_whitney_p(t->nc, t->nb,
							 mw_u(e->cv, t->nc, e->bv, t->nb));
			if (!noise || e->p <= o->alpha)
				e->st = ST_REGRESSED;
		} else if (e->bmed > e->cmed * (1 + o->threshold) && -e->diff > o->min_diff) {
			if (noise)
				e->p = rp_mann_whitney_p(t->nb, t->nc,
							 mw_u(e->bv, t->nb, e->cv, t->nc));
			if (!noise || e->p <= o->alpha)
				e->st = ST_IMPROVED;
		}
	}
}

static enum status sort_status;

static int by_diff(const void *x, const void *y)
{
	const struct entry *a = *(const struct entry *const *)x,
			   *b = *(const struct entry *const *)y;
	double ka, kb;
	switch (sort_status) {
	case ST_REGRESSED:
		ka = -a->diff, kb = -b->diff;
		break;
	case ST_IMPROVED:
		ka = a->diff, kb = b->diff;
		break;
	case ST_APPEARED:
		ka = -a->cmed, kb = -b->cmed;
		break;
	default:
		ka = -a->bmed, kb = -b->bmed;
	}
	if (ka != kb)
		return ka < kb ? -1 : 1;
	int c = strcmp(a->kind, b->kind);
	return c ? c : strcmp(a->name, b->name);
}

/* The entries of status st, sorted for printing; *n their number. */
static struct entry **select_status(struct table *t, enum status st, size_t *n)
{
	struct entry **v = malloc((t->n + 1) * sizeof(*v));
	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		if (t->e[i].st == st)
			v[(*n)++] = &t->e[i];
	sort_status = st;
	qsort(v, *n, sizeof(*v), by_diff);
	return v;
}

static const char *metric_name(enum rp_metric m)
{
	return m == RP_METRIC_EXCLUSIVE ? "exclusive"
	       : m == RP_METRIC_CALLS	? "calls"
					: "inclusive";
}

static char *fmt_val(char *buf, size_t len, double v, enum rp_metric m, int sign)
{
	if (m == RP_METRIC_CALLS)
		snprintf(buf, len, sign ? "%+.1f" : "%.1f", v);
	else
		rp_fmt_ns(buf, len, v, sign);
	if (m == RP_METRIC_CALLS && len > 2 && strlen(buf) > 2 &&
	    !strcmp(buf + strlen(buf) - 2, ".0"))
		buf[strlen(buf) - 2] = '\0';
	return buf;
}

static void print_side(FILE *f, const char *label, const struct rp_run *runs, size_t n)
{
	fprintf(f, "%s: %zu run%s\n", label, n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++) {
		const struct rp_run *r = &runs[i];
		char cmd[256], trace[1024], host[512];
		fprintf(f,
			"  %s\n    %s | %" PRIu64 " process%s, %" PRIu64 " thread%s, %" PRIu64
			" rank%s | host %s | %s | git %s\n",
			rp_fmt_name(trace, sizeof(trace), r->trace, 0),
			rp_fmt_command(cmd, sizeof(cmd), &r->meta), r->meta.processes,
			r->meta.processes == 1 ? "" : "es", r->meta.threads,
			r->meta.threads == 1 ? "" : "s", r->meta.ranks,
			r->meta.ranks == 1 ? "" : "s",
			rp_fmt_name(host, sizeof(host), r->meta.host, 0), r->meta.start,
			r->meta.git_revision ? r->meta.git_revision : "-");
	}
}

static void print_list(FILE *f, struct table *t, enum status st, const char *title,
		       const struct rp_cmp_opts *o)
{
	size_t n;
	struct entry **v = select_status(t, st, &n);
	if (!n) {
		fprintf(f, "\n%s: none\n", title);
		free(v);
		return;
	}
	fprintf(f, "\n%s (%zu):\n", title, n);
	fprintf(f, "  %12s %12s %12s %9s %7s  %-8s %s\n", "baseline", "candidate", "diff", "change",
		"p", "kind", "region");
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = v[i];
		char b[32], c[32], d[32], ch[32], p[16], name[4096];
		if (isfinite(e->ratio))
			snprintf(ch, sizeof(ch), "%+.1f%%", (e->ratio - 1) * 100);
		else
			snprintf(ch, sizeof(ch), "%s", st == ST_APPEARED ? "new" : "-");
		if (isfinite(e->p))
			snprintf(p, sizeof(p), "%.3f", e->p);
		else
			snprintf(p, sizeof(p), "-");
		fprintf(f, "  %12s %12s %12s %9s %7s  %-8s %s",
			fmt_val(b, sizeof(b), e->bmed, o->metric, 0),
			fmt_val(c, sizeof(c), e->cmed, o->metric, 0),
			fmt_val(d, sizeof(d), e->diff, o->metric, 1), ch, p, e->kind,
			rp_fmt_name(name, sizeof(name), e->name, 0));
		if (e->cand_name)
			fprintf(f, "  (candidate: %s)",
				rp_fmt_name(name, sizeof(name), e->cand_name, 0));
		fputc('\n', f);
	}
	free(v);
}

struct notes {
	char **v;
	size_t n;
};

static void note(struct notes *ns, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct notes *ns, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	char **v = realloc(ns->v, (ns->n + 1) * sizeof(*v));
	if (!v)
		return;
	ns->v = v;
	if ((v[ns->n] = strdup(buf)))
		ns->n++;
}

/* What may make the comparison say less than it seems to. */
static void collect_notes(struct notes *ns, const struct rp_run *base, size_t nb,
			  const struct rp_run *cand, size_t nc, double alpha)
{
	const struct rp_run *all[2] = {base, cand};
	size_t counts[2] = {nb, nc};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < counts[s]; i++) {
			const struct rp_run *r = &all[s][i];
			if (r->totals.lost)
				note(ns,
				     "%s lost %" PRIu64
				     " events while tracing: its times are short",
				     r->trace, r->totals.lost);
			if (r->totals.damaged || r->totals.cut_processes)
				note(ns, "%s is damaged or was cut short: its profile is partial",
				     r->trace);
		}
	if (base[0].meta.threads != cand[0].meta.threads)
		note(ns,
		     "thread counts differ: %" PRIu64 " in the baseline, %" PRIu64
		     " in the candidate",
		     base[0].meta.threads, cand[0].meta.threads);
	if (base[0].meta.ranks != cand[0].meta.ranks)
		note(ns,
		     "rank counts differ: %" PRIu64 " in the baseline, %" PRIu64
		     " in the candidate",
		     base[0].meta.ranks, cand[0].meta.ranks);
	int args_differ = base[0].meta.nargs != cand[0].meta.nargs;
	for (size_t i = 0; !args_differ && i < base[0].meta.nargs; i++)
		args_differ = strcmp(base[0].meta.args[i], cand[0].meta.args[i]) != 0;
	if (args_differ)
		note(ns, "the arguments differ");
	if (strcmp(base[0].meta.host, cand[0].meta.host))
		note(ns, "the hosts differ: %s and %s", base[0].meta.host, cand[0].meta.host);
	if (nb < 3 || nc < 3) {
		note(ns, "fewer than 3 runs on a side: no noise test, the thresholds alone decide");
	} else {
		/* Every candidate run slower than every baseline run is the rank test's
		 * strongest evidence: when even that is above alpha, nothing can regress. */
		double best = rp_mann_whitney_p(nc, nb, (double)nc * (double)nb);
		if (best > alpha)
			note(ns,
			     "with %zu runs against %zu the rank test cannot reach p <= %g (its "
			     "smallest p is %.3g): no region can regress or improve; add runs or "
			     "raise --alpha",
			     nb, nc, alpha, best);
	}
}

static void json_side(struct jw *w, const char *key, const struct rp_run *runs, size_t n)
{
	jw_object(w, key);
	jw_array(w, "runs");
	for (size_t i = 0; i < n; i++) {
		const struct rp_meta *m = &runs[i].meta;
		jw_object(w, NULL);
		jw_str(w, "trace", runs[i].trace);
		jw_str(w, "program", m->program);
		jw_array(w, "arguments");
		for (size_t j = 0; j < m->nargs; j++)
			jw_str(w, NULL, m->args[j]);
		jw_end(w);
		jw_str(w, "host", m->host);
		jw_u64(w, "processes", m->processes);
		jw_u64(w, "threads", m->threads);
		jw_u64(w, "ranks", m->ranks);
		jw_str(w, "start", m->start);
		jw_str(w, "git_revision", m->git_revision);
		jw_u64(w, "lost_events", runs[i].totals.lost);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
}

/* A value of the metric, exactly: an integer as one, a median's half with its ".5". */
static void json_num(struct jw *w, const char *key, double v)
{
	if (!isfinite(v))
		jw_null(w, key);
	else if (v == floor(v) && fabs(v) < 9e15)
		jw_i64(w, key, (int64_t)v);
	else
		jw_double_exact(w, key, v);
}

/* A ratio or a p-value: 6 significant digits say enough. */
static void json_short(struct jw *w, const char *key, double v)
{
	if (!isfinite(v))
		jw_null(w, key);
	else
		jw_double(w, key, v);
}

static void write_json(FILE *f, struct table *t, const struct rp_cmp_opts *o,
		       const struct rp_run *base, size_t nb, const struct rp_run *cand, size_t nc,
		       const struct notes *ns, const char *verdict, int status, size_t *count)
{
	struct jw w;
	jw_init(&w, f);
	jw_object(&w, NULL);
	jw_str(&w, "schema", RP_COMPARE_SCHEMA);
	jw_str(&w, "metric", metric_name(o->metric));
	jw_double(&w, "threshold", o->threshold);
	json_num(&w, "min_diff", o->min_diff);
	jw_double(&w, "alpha", o->alpha);
	jw_bool(&w, "noise_test", nb >= 3 && nc >= 3);
	json_side(&w, "baseline", base, nb);
	json_side(&w, "candidate", cand, nc);
	jw_array(&w, "notes");
	for (size_t i = 0; i < ns->n; i++)
		jw_str(&w, NULL, ns->v[i]);
	jw_end(&w);
	jw_array(&w, "regions");
	static const enum status order[] = {ST_REGRESSED, ST_IMPROVED, ST_APPEARED, ST_VANISHED,
					    ST_UNCHANGED};
	for (size_t k = 0; t && k < sizeof(order) / sizeof(order[0]); k++) {
		size_t n;
		struct entry **v = select_status(t, order[k], &n);
		for (size_t i = 0; v && i < n; i++) {
			const struct entry *e = v[i];
			jw_object(&w, NULL);
			jw_str(&w, "name", e->name);
			jw_str(&w, "kind", e->kind);
			if (e->cand_name)
				jw_str(&w, "candidate_name", e->cand_name);
			jw_str(&w, "status", status_name[e->st]);
			json_num(&w, "baseline_median", e->bmed);
			json_num(&w, "candidate_median", e->cmed);
			json_num(&w, "diff", e->diff);
			json_short(&w, "ratio", e->ratio);
			json_short(&w, "p_value", e->p);
			jw_array(&w, "baseline_values");
			for (size_t j = 0; j < t->nb; j++)
				json_num(&w, NULL, e->bv[j]);
			jw_end(&w);
			jw_array(&w, "candidate_values");
			for (size_t j = 0; j < t->nc; j++)
				json_num(&w, NULL, e->cv[j]);
			jw_end(&w);
			jw_end(&w);
		}
		free(v);
	}
	jw_end(&w);
	jw_object(&w, "summary");
	jw_u64(&w, "regressed", count[ST_REGRESSED]);
	jw_u64(&w, "improved", count[ST_IMPROVED]);
	jw_u64(&w, "appeared", count[ST_APPEARED]);
	jw_u64(&w, "vanished", count[ST_VANISHED]);
	jw_u64(&w, "unchanged", count[ST_UNCHANGED]);
	jw_end(&w);
	jw_str(&w, "verdict", verdict);
	jw_i64(&w, "exit_status", status);
	jw_end(&w);
	jw_finish(&w);
}

static void free_table(struct table *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->e[i].bv);
		free(t->e[i].cv);
	}
	free(t->e);
	free(t->slot);
}

int rp_compare(FILE *out, const struct rp_run *base, size_t nb, const struct rp_run *cand,
	       size_t nc, const struct rp_cmp_opts *o)
{
	struct notes ns = {0};
	size_t count[ST_MERGED + 1] = {0};
	int status = RP_EXIT_OK;

	/* Comparable: every run is of the baseline's first run's program. */
	const char *prog = base[0].meta.program;
	const struct rp_run *odd = NULL;
	for (size_t i = 0; i < nb && !odd; i++)
		if (strcmp(base[i].meta.program, prog))
			odd = &base[i];
	for (size_t i = 0; i < nc && !odd; i++)
		if (strcmp(cand[i].meta.program, prog))
			odd = &cand[i];
	if (odd && !o->force) {
		char why[1024];
		snprintf(why, sizeof(why),
			 "NOT COMPARABLE - %s ran %s, %s ran %s (--force compares them anyway)",
			 base[0].trace, prog, odd->trace, odd->meta.program);
		if (o->json) {
			write_json(out, NULL, o, base, nb, cand, nc, &ns, "not comparable",
				   RP_EXIT_NOT_COMPARABLE, count);
		} else {
			print_side(out, "Baseline", base, nb);
			print_side(out, "Candidate", cand, nc);
			char esc[4096];
			fprintf(out, "\nVerdict: %s\n", rp_fmt_name(esc, sizeof(esc), why, 0));
		}
		return RP_EXIT_NOT_COMPARABLE;
	}
	if (odd)
		note(&ns, "different programs (%s and %s), compared because of --force", prog,
		     odd->meta.program);

	struct table t = {.nb = nb, .nc = nc};
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < base[i].nregions; j++) {
			const struct rp_region *g = &base[i].regions[j];
			struct entry *e = lookup(&t, g->kind, g->name);
			if (!e)
				break;
			e->bv[i] = value(g, o->metric);
			e->bpresent++;
		}
	for (size_t i = 0; i < nc && !t.oom; i++)
		for (size_t j = 0; j < cand[i].nregions; j++) {
			const struct rp_region *g = &cand[i].regions[j];
			struct entry *e = lookup(&t, g->kind, g->name);
			if (!e)
				break;
			e->cv[i] = value(g, o->metric);
			e->cpresent++;
		}
	if (t.oom) {
		free_table(&t);
		fprintf(stderr, "trace-report: out of memory\n");
		return RP_EXIT_ERROR;
	}
	match_moved(&t);
	judge(&t, o);
	collect_notes(&ns, base, nb, cand, nc, o->alpha);
	for (size_t i = 0; i < t.n; i++)
		count[t.e[i].st]++;
	if (count[ST_REGRESSED])
		status = RP_EXIT_REGRESSION;

	char verdict[1024];
	size_t n;
	struct entry **worst = select_status(&t, ST_REGRESSED, &n);
	if (n) {
		size_t len = (size_t)snprintf(
		    verdict, sizeof(verdict),
		    "REGRESSION - %zu region%s slower than the baseline:", n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n && i < 3 && len < sizeof(verdict); i++) {
			char ch[32];
			if (isfinite(worst[i]->ratio))
				snprintf(ch, sizeof(ch), "%+.1f%%", (worst[i]->ratio - 1) * 100);
			else
				snprintf(ch, sizeof(ch), "from 0");
			len += (size_t)snprintf(verdict + len, sizeof(verdict) - len, "%s %s %s",
						i ? "," : "", worst[i]->name, ch);
		}
		if (n > 3 && len < sizeof(verdict))
			snprintf(verdict + len, sizeof(verdict) - len, ", ...");
	} else {
		snprintf(verdict, sizeof(verdict),
			 "OK - no region slower than the baseline (%zu improved, %zu appeared, %zu "
			 "vanished, %zu unchanged)",
			 count[ST_IMPROVED], count[ST_APPEARED], count[ST_VANISHED],
			 count[ST_UNCHANGED]);
	}
	free(worst);

	if (o->json) {
		write_json(out, &t, o, base, nb, cand, nc, &ns, n ? "regression" : "ok", status,
			   count);
	} else {
		char md[32];
		fprintf(out,
			"Comparing %s%s per run, median over runs: a region regressed when the "
			"candidate's\nmedian is more than %g%% and more than %s above the "
			"baseline's",
			metric_name(o->metric), o->metric == RP_METRIC_CALLS ? "" : " time",
			o->threshold * 100, fmt_val(md, sizeof(md), o->min_diff, o->metric, 0));
		if (nb >= 3 && nc >= 3)
			fprintf(out,
				",\nand its runs are slower than the baseline's (one-sided "
				"Mann-Whitney, p <= %g)",
				o->alpha);
		fputs(".\n\n", out);
		print_side(out, "Baseline", base, nb);
		print_side(out, "Candidate", cand, nc);
		if (ns.n) {
			fputs("\nNotes:\n", out);
			for (size_t i = 0; i < ns.n; i++) {
				char esc[4096];
				fprintf(out, "  %s\n", rp_fmt_name(esc, sizeof(esc), ns.v[i], 0));
			}
		}
		print_list(out, &t, ST_REGRESSED, "Regressions", o);
		print_list(out, &t, ST_IMPROVED, "Improvements", o);
		print_list(out, &t, ST_APPEARED, "Appeared in the candidate", o);
		print_list(out, &t, ST_VANISHED, "Vanished from the candidate", o);
		if (o->all)
			print_list(out, &t, ST_UNCHANGED, "Unchanged", o);
		else
			fprintf(out, "\nUnchanged: %zu region%s (--all lists them)\n",
				count[ST_UNCHANGED], count[ST_UNCHANGED] == 1 ? "" : "s");
		char esc[4096];
		fprintf(out, "\nVerdict: %s\n", rp_fmt_name(esc, sizeof(esc), verdict, 0));
	}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	free_table(&t);
	return status;
}
