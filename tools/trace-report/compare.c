// SPDX-License-Identifier: BSD-3-Clause
/*
 * compare.c - the regression check (docs/profiles-and-ci.md, "Comparing runs").
 *
 * Per region (kind + name), one value per run (the metric: inclusive time, exclusive time
 * or calls; 0 in a run that never entered it), the median over each side's runs.  A region
 * regressed when the candidate's median exceeds the baseline's by more than the relative
 * threshold AND by more than the absolute minimum, and, when each side has 3 runs or more,
 * when a one-sided Mann-Whitney rank test says the candidate's runs are slower, at level
 * alpha after Holm's correction over every region tested (decide()): identical programs are
 * flagged anywhere with a chance of alpha at most.  Improvements are the mirror image.
 * Regions too short (median below the minimum) or too rare (in fewer than half a side's
 * runs) are unmeasured, not tested; each change has a distribution-free confidence interval
 * (change_ci).  Regions found on one side only are listed as appeared or vanished, never a
 * reason to refuse; a thread start routine whose line moved in its file ("work @a.c:12"
 * against "work @a.c:14") is matched by its function and file names (not "work @b.c:12").
 * Runs of several programs (or arguments) make a suite: paired by program and arguments,
 * each pair compared, one family of tests and one verdict; JUnit XML and Markdown besides.
 * Runs of different programs (executable base names) are not comparable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "json.h"

enum status {
	ST_UNCHANGED,
	ST_REGRESSED,
	ST_IMPROVED,
	ST_APPEARED,
	ST_VANISHED,
	ST_UNMEASURED,
	ST_MERGED
};

static const char *status_name[] = {"unchanged", "regressed",  "improved", "appeared",
				    "vanished",	 "unmeasured", "merged"};

struct entry {
	const char *kind, *name;
	const char *cand_name; /* matched by function name: the candidate's region name */
	double *bv, *cv;       /* per run */
	size_t bpresent, cpresent;
	double bmed, cmed, diff, ratio;
	double p_slower, p_faster; /* one-sided rank test p-values (NAN: not tested) */
	double p_adj;		   /* Holm's adjusted p of the direction it moved in */
	double ci_lo, ci_hi;	   /* confidence interval of the change, as ratio - 1 */
	int tested;		   /* one of the hypotheses of the family (measurable) */
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

/*
 * The distribution of U for samples of n and m (n * m <= 2500): c[k] / total is the chance
 * that U = k.  The number of arrangements with U = k is the coefficient of q^k in the
 * Gaussian binomial [n+m choose n]_q = prod_{i=1..n} (1 - q^(m+i)) / (1 - q^i); each partial
 * product is itself a polynomial ([m+i choose i]_q), of degree m*i.  NULL when out of memory.
 */
static double *mw_counts(size_t n, size_t m, double *total)
{
	size_t deg = n * m, size = deg + n + m + 1;
	double *c = calloc(size, sizeof(*c));
	if (!c)
		return NULL;
	c[0] = 1;
	for (size_t i = 1; i <= n; i++) {
		size_t k = m + i, top = m * (i - 1) + k; /* degree after the multiplication */
		for (size_t x = top; x >= k; x--)	 /* times (1 - q^k) */
			c[x] -= c[x - k];
		for (size_t x = i; x <= top; x++) /* divided by (1 - q^i) */
			c[x] += c[x - i];
	}
	*total = 0;
	for (size_t x = 0; x <= deg; x++)
		*total += c[x];
	return c;
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
	double total, tail = 0;
	double *c = mw_counts(n, m, &total);
	if (!c)
		return 1;
	size_t from = (size_t)floor(u); /* with ties (half-integer u): the larger p-value */
	for (size_t x = from; x <= n * m; x++)
		tail += c[x];
	free(c);
	return total > 0 ? tail / total : 1;
}

/* The standard normal's quantile (bisection on erfc: precise enough for a guide). */
static double z_quantile(double p)
{
	double lo = -10, hi = 10;
	for (int i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2.0)) < p)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/*
 * The confidence interval (level 1 - alpha, two-sided) of the candidate's change as a ratio,
 * distribution-free: the k-th smallest and largest of the n * m pairwise differences of
 * log(value + 1), where k is the rank test's critical value (Hodges-Lehmann).  NAN when the
 * runs are too few for that level.
 */
static void change_ci(const double *b, size_t nb, const double *c, size_t nc, double alpha,
		      double *lo, double *hi)
{
	*lo = *hi = NAN;
	size_t N = nb * nc, k = 0;
	if (!N)
		return;
	if (N > 2500) {
		double sd = sqrt((double)N * (double)(nb + nc + 1) / 12);
		double kk = floor((double)N / 2 - z_quantile(1 - alpha / 2) * sd);
		k = kk >= 1 ? (size_t)kk : 0;
	} else {
		double total;
		double *cnt = mw_counts(nb, nc, &total);
		if (!cnt)
			return;
		double cdf = 0; /* P(U <= k - 1) for k = 1, 2, ... */
		for (size_t x = 0; x < N / 2; x++) {
			cdf += cnt[x] / total;
			if (cdf > alpha / 2)
				break;
			k = x + 1;
		}
		free(cnt);
	}
	if (!k)
		return;
	double *d = malloc(N * sizeof(*d));
	if (!d)
		return;
	for (size_t i = 0; i < nc; i++)
		for (size_t j = 0; j < nb; j++)
			d[i * nb + j] = log(c[i] + 1) - log(b[j] + 1);
	qsort(d, N, sizeof(*d), dcmp);
	*lo = exp(d[k - 1]) - 1;
	*hi = exp(d[N - k]) - 1;
	free(d);
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

/*
 * Medians, and the regions one side lacks.  A region on both sides is measurable when the
 * larger median reaches the minimum difference (a shorter one cannot change by that much)
 * and each side has it in half its runs or more; with 3 runs or more a side, each measurable
 * region gets the rank test's p-value both ways and the change's confidence interval.
 */
static void measure(struct table *t, const struct rp_cmp_opts *o)
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
		e->p_slower = e->p_faster = e->p_adj = e->ci_lo = e->ci_hi = NAN;
		e->tested = 0;
		if (!e->bpresent) {
			e->st = ST_APPEARED;
			continue;
		}
		if (!e->cpresent) {
			e->st = ST_VANISHED;
			continue;
		}
		e->st = ST_UNCHANGED;
		double big = e->bmed > e->cmed ? e->bmed : e->cmed;
		if ((big < o->min_diff && o->min_diff > 0) || e->bpresent * 2 < t->nb ||
		    e->cpresent * 2 < t->nc) {
			e->st = ST_UNMEASURED;
			continue;
		}
		e->tested = 1;
		if (!noise)
			continue;
		e->p_slower = rp_mann_whitney_p(t->nc, t->nb, mw_u(e->cv, t->nc, e->bv, t->nb));
		e->p_faster = rp_mann_whitney_p(t->nb, t->nc, mw_u(e->bv, t->nb, e->cv, t->nc));
		change_ci(e->bv, t->nb, e->cv, t->nc, o->alpha, &e->ci_lo, &e->ci_hi);
	}
}

static int holm_faster; /* which p-value by_p sorts by */

static double p_of(const struct entry *e)
{
	double p = holm_faster ? e->p_faster : e->p_slower;
	return isnan(p) ? 1 : p;
}

static int by_p(const void *x, const void *y)
{
	double a = p_of(*(const struct entry *const *)x), b = p_of(*(const struct entry *const *)y);
	return a < b ? -1 : a > b;
}

/*
 * The verdicts of every measurable region of every comparison at once.  Regressions and
 * improvements are two families; in each, Holm's step-down method keeps the chance of
 * flagging any region when nothing changed at alpha or below: the i-th smallest of the m
 * p-values is compared with alpha / (m - i), until one fails.  A region regresses when its
 * adjusted p is at most alpha and its median moved by more than both thresholds (without a
 * noise test, fewer than 3 runs a side: the thresholds alone decide).
 */
static void decide(struct table **ts, size_t nt, const struct rp_cmp_opts *o)
{
	size_t m = 0;
	for (size_t k = 0; k < nt; k++)
		for (size_t i = 0; i < ts[k]->n; i++)
			m += ts[k]->e[i].tested;
	struct entry **v = malloc((m + 1) * sizeof(*v));
	if (!v)
		return;
	for (int dir = 0; dir < 2; dir++) {
		size_t n = 0;
		for (size_t k = 0; k < nt; k++)
			for (size_t i = 0; i < ts[k]->n; i++)
				if (ts[k]->e[i].tested)
					v[n++] = &ts[k]->e[i];
		holm_faster = dir;
		qsort(v, n, sizeof(*v), by_p);
		double adj = 0;
		for (size_t i = 0; i < n; i++) {
			struct entry *e = v[i];
			struct table *t = NULL;
			for (size_t k = 0; k < nt && !t; k++)
				if (e >= ts[k]->e && e < ts[k]->e + ts[k]->n)
					t = ts[k];
			int noise = t->nb >= 3 && t->nc >= 3;
			double p = dir ? e->p_faster : e->p_slower;
			double a = noise ? fmin(1, (double)(n - i) * p) : NAN;
			adj = noise ? fmax(adj, a) : NAN;
			int moved =
			    dir ? e->bmed > e->cmed * (1 + o->threshold) && -e->diff > o->min_diff
				: e->cmed > e->bmed * (1 + o->threshold) && e->diff > o->min_diff;
			if (!moved)
				continue;
			e->p_adj = adj;
			if (!noise || adj <= o->alpha)
				e->st = dir ? ST_IMPROVED : ST_REGRESSED;
		}
	}
	free(v);
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

static void fmt_change(char *buf, size_t len, const struct entry *e, enum status st)
{
	if (isfinite(e->ratio))
		snprintf(buf, len, "%+.1f%%", (e->ratio - 1) * 100);
	else
		snprintf(buf, len, "%s", st == ST_APPEARED ? "new" : "-");
}

static void fmt_ci(char *buf, size_t len, const struct entry *e)
{
	if (isfinite(e->ci_lo) && isfinite(e->ci_hi))
		snprintf(buf, len, "[%+.1f%%, %+.1f%%]", e->ci_lo * 100, e->ci_hi * 100);
	else
		snprintf(buf, len, "-");
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
	fprintf(f, "  %12s %12s %12s %9s %20s %7s  %-8s %s\n", "baseline", "candidate", "diff",
		"change", "confidence", "p", "kind", "region");
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = v[i];
		char b[32], c[32], d[32], ch[32], ci[48], p[16], name[4096];
		fmt_change(ch, sizeof(ch), e, st);
		fmt_ci(ci, sizeof(ci), e);
		if (isfinite(e->p_adj))
			snprintf(p, sizeof(p), "%.3g", e->p_adj);
		else
			snprintf(p, sizeof(p), "-");
		fprintf(f, "  %12s %12s %12s %9s %20s %7s  %-8s %s",
			fmt_val(b, sizeof(b), e->bmed, o->metric, 0),
			fmt_val(c, sizeof(c), e->cmed, o->metric, 0),
			fmt_val(d, sizeof(d), e->diff, o->metric, 1), ch, ci, p, e->kind,
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

/* One program's comparison (with its arguments): a pair of groups of runs. */
struct cmp {
	char label[512];	    /* "program arguments..." */
	struct rp_run *base, *cand; /* shallow copies of the inputs' runs */
	size_t nb, nc;
	struct table t;
	struct notes ns;
	size_t count[ST_MERGED + 1];
	char verdict[1024];
	int status;
};

/* How much the runs vary: the median over measurable regions of the baseline's robust
 * standard deviation of log(value) (1.4826 x the median absolute deviation); NAN if none. */
static double noise_level(const struct table *t)
{
	if (t->nb < 3)
		return NAN;
	double *sd = malloc((t->n + 1) * sizeof(*sd)), *lv = malloc(t->nb * sizeof(*lv));
	size_t k = 0;
	for (size_t i = 0; sd && lv && i < t->n; i++) {
		const struct entry *e = &t->e[i];
		if (!e->tested)
			continue;
		for (size_t j = 0; j < t->nb; j++)
			lv[j] = log(e->bv[j] + 1);
		double m = median(lv, t->nb);
		for (size_t j = 0; j < t->nb; j++)
			lv[j] = fabs(lv[j] - m);
		sd[k++] = 1.4826 * median(lv, t->nb);
	}
	double r = k ? median(sd, k) : NAN;
	free(sd);
	free(lv);
	return r;
}

/* The smallest slowdown (ratio - 1) that n runs a side find with 80 % power among m tests at
 * level alpha, for log-normal noise sd (the rank test's efficiency is 95 % of the t test's);
 * NAN when n runs cannot reach the level at all. */
static double detectable(double sd, size_t n, size_t m, double alpha)
{
	double best = rp_mann_whitney_p(n, n, (double)n * (double)n);
	if (!m || best > alpha / (double)m)
		return NAN;
	double z = z_quantile(1 - alpha / (double)m) + z_quantile(0.8);
	return exp(z * sd * sqrt(2.0 / (double)n) / sqrt(0.955)) - 1;
}

/* The smallest number of runs a side (up to 50) for which the rank test can reach the level. */
static size_t runs_needed(size_t m, double alpha)
{
	for (size_t n = 3; n <= 50; n++)
		if (rp_mann_whitney_p(n, n, (double)n * (double)n) <= alpha / (double)(m ? m : 1))
			return n;
	return 0;
}

/* What may make the comparison say less than it seems to; m: hypotheses of the family. */
static void collect_notes(struct cmp *c, size_t m, const struct rp_cmp_opts *o)
{
	struct notes *ns = &c->ns;
	const struct rp_run *base = c->base, *cand = c->cand;
	size_t nb = c->nb, nc = c->nc;
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
	if (c->count[ST_UNMEASURED])
		note(ns,
		     "%zu region%s too short (median below --min-diff) or too rare (in fewer than "
		     "half the runs of a side) to measure: not tested",
		     c->count[ST_UNMEASURED], c->count[ST_UNMEASURED] == 1 ? "" : "s");
	if (nb < 3 || nc < 3) {
		note(ns, "fewer than 3 runs on a side: no noise test, the thresholds alone decide");
		return;
	}
	/* Every candidate run slower than every baseline run is the rank test's strongest
	 * evidence: when even that misses Holm's first step, nothing can regress. */
	double best = rp_mann_whitney_p(nc, nb, (double)nc * (double)nb);
	if (m && best > o->alpha / (double)m) {
		size_t need = runs_needed(m, o->alpha);
		note(ns,
		     "with %zu runs against %zu the rank test cannot reach p <= %g (%zu region%s "
		     "tested: %g / %zu; its smallest p is %.3g): no region can regress or improve; "
		     "%s",
		     nb, nc, o->alpha / (double)m, m, m == 1 ? "" : "s", o->alpha, m, best,
		     need ? "" : "raise --alpha");
		if (need) {
			char *last = ns->n ? ns->v[ns->n - 1] : NULL;
			size_t len = last ? strlen(last) : 0;
			char *grown = last ? realloc(last, len + 64) : NULL;
			if (grown) {
				snprintf(grown + len, 64, "%zu runs a side can, or raise --alpha",
					 need);
				ns->v[ns->n - 1] = grown;
			}
		}
	}
	double sd = noise_level(&c->t);
	if (isfinite(sd) && m) {
		size_t n = nb < nc ? nb : nc;
		double here = detectable(sd, n, m, o->alpha), d5 = detectable(sd, 5, m, o->alpha),
		       d10 = detectable(sd, 10, m, o->alpha), d20 = detectable(sd, 20, m, o->alpha);
		char a[48], b5[32], b10[32], b20[32];
		snprintf(a, sizeof(a), isfinite(here) ? ">= %.0f%%" : "nothing", here * 100);
		snprintf(b5, sizeof(b5), isfinite(d5) ? "%.0f%%" : "nothing", d5 * 100);
		snprintf(b10, sizeof(b10), isfinite(d10) ? "%.0f%%" : "nothing", d10 * 100);
		snprintf(b20, sizeof(b20), isfinite(d20) ? "%.0f%%" : "nothing", d20 * 100);
		note(ns,
		     "noise: runs vary by about %.1f%% (median over the measured regions); with "
		     "this noise, %zu runs a side detect %s with 80%% power among %zu region%s "
		     "tested (5 runs: %s, 10: %s, 20: %s)",
		     (exp(sd) - 1) * 100, n, a, m, m == 1 ? "" : "s", b5, b10, b20);
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

static const enum status out_order[] = {ST_REGRESSED, ST_IMPROVED,   ST_APPEARED,
					ST_VANISHED,  ST_UNMEASURED, ST_UNCHANGED};

/* One comparison as a libtrace-compare/1 object (t NULL: not comparable, no regions). */
static void json_cmp(struct jw *w, const char *key, const struct cmp *c, struct table *t,
		     const struct rp_cmp_opts *o, const char *verdict, int status)
{
	jw_object(w, key);
	jw_str(w, "schema", RP_COMPARE_SCHEMA);
	jw_str(w, "metric", metric_name(o->metric));
	jw_double(w, "threshold", o->threshold);
	json_num(w, "min_diff", o->min_diff);
	jw_double(w, "alpha", o->alpha);
	jw_bool(w, "noise_test", c->nb >= 3 && c->nc >= 3);
	json_side(w, "baseline", c->base, c->nb);
	json_side(w, "candidate", c->cand, c->nc);
	jw_array(w, "notes");
	for (size_t i = 0; i < c->ns.n; i++)
		jw_str(w, NULL, c->ns.v[i]);
	jw_end(w);
	jw_array(w, "regions");
	for (size_t k = 0; t && k < sizeof(out_order) / sizeof(out_order[0]); k++) {
		size_t n;
		struct entry **v = select_status(t, out_order[k], &n);
		for (size_t i = 0; v && i < n; i++) {
			const struct entry *e = v[i];
			jw_object(w, NULL);
			jw_str(w, "name", e->name);
			jw_str(w, "kind", e->kind);
			if (e->cand_name)
				jw_str(w, "candidate_name", e->cand_name);
			jw_str(w, "status", status_name[e->st]);
			json_num(w, "baseline_median", e->bmed);
			json_num(w, "candidate_median", e->cmed);
			json_num(w, "diff", e->diff);
			json_short(w, "ratio", e->ratio);
			json_short(w, "ci_low", e->ci_lo);
			json_short(w, "ci_high", e->ci_hi);
			json_short(w, "p_value", e->diff < 0 ? e->p_faster : e->p_slower);
			json_short(w, "p_adjusted", e->p_adj);
			jw_array(w, "baseline_values");
			for (size_t j = 0; j < t->nb; j++)
				json_num(w, NULL, e->bv[j]);
			jw_end(w);
			jw_array(w, "candidate_values");
			for (size_t j = 0; j < t->nc; j++)
				json_num(w, NULL, e->cv[j]);
			jw_end(w);
			jw_end(w);
		}
		free(v);
	}
	jw_end(w);
	jw_object(w, "summary");
	jw_u64(w, "regressed", c->count[ST_REGRESSED]);
	jw_u64(w, "improved", c->count[ST_IMPROVED]);
	jw_u64(w, "appeared", c->count[ST_APPEARED]);
	jw_u64(w, "vanished", c->count[ST_VANISHED]);
	jw_u64(w, "unmeasured", c->count[ST_UNMEASURED]);
	jw_u64(w, "unchanged", c->count[ST_UNCHANGED]);
	jw_end(w);
	jw_str(w, "verdict", verdict);
	jw_i64(w, "exit_status", status);
	jw_end(w);
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

static void header(FILE *out, const struct rp_cmp_opts *o, size_t m, int noise)
{
	char md[32];
	fprintf(out,
		"Comparing %s%s per run, median over runs: a region regressed when the "
		"candidate's\nmedian is more than %g%% and more than %s above the baseline's",
		metric_name(o->metric), o->metric == RP_METRIC_CALLS ? "" : " time",
		o->threshold * 100, fmt_val(md, sizeof(md), o->min_diff, o->metric, 0));
	if (noise)
		fprintf(
		    out,
		    ",\nand its runs are slower than the baseline's (one-sided Mann-Whitney, "
		    "Holm over the %zu region%s tested: at most a %g chance of any false alarm)",
		    m, m == 1 ? "" : "s", o->alpha);
	fputs(".\n", out);
}

static void text_cmp(FILE *out, struct cmp *c, const struct rp_cmp_opts *o)
{
	print_side(out, "Baseline", c->base, c->nb);
	print_side(out, "Candidate", c->cand, c->nc);
	if (c->ns.n) {
		fputs("\nNotes:\n", out);
		for (size_t i = 0; i < c->ns.n; i++) {
			char esc[4096];
			fprintf(out, "  %s\n", rp_fmt_name(esc, sizeof(esc), c->ns.v[i], 0));
		}
	}
	print_list(out, &c->t, ST_REGRESSED, "Regressions", o);
	print_list(out, &c->t, ST_IMPROVED, "Improvements", o);
	print_list(out, &c->t, ST_APPEARED, "Appeared in the candidate", o);
	print_list(out, &c->t, ST_VANISHED, "Vanished from the candidate", o);
	if (o->all) {
		print_list(out, &c->t, ST_UNMEASURED, "Too short or too rare to measure", o);
		print_list(out, &c->t, ST_UNCHANGED, "Unchanged", o);
	} else {
		fprintf(out,
			"\nUnchanged: %zu region%s, %zu too short or too rare to measure (--all "
			"lists them)\n",
			c->count[ST_UNCHANGED], c->count[ST_UNCHANGED] == 1 ? "" : "s",
			c->count[ST_UNMEASURED]);
	}
}

/* The runs of group `key` (program and arguments) of one side, copied. */
static size_t group_runs(const struct rp_run *runs, size_t n, const char *key, struct rp_run **out);

static void run_key(char *buf, size_t len, const struct rp_run *r)
{
	size_t k = (size_t)snprintf(buf, len, "%s", r->meta.program);
	for (size_t i = 0; i < r->meta.nargs && k < len; i++)
		k += (size_t)snprintf(buf + k, len - k, " %s", r->meta.args[i]);
}

static size_t group_runs(const struct rp_run *runs, size_t n, const char *key, struct rp_run **out)
{
	size_t k = 0;
	*out = malloc((n + 1) * sizeof(**out));
	for (size_t i = 0; *out && i < n; i++) {
		char rk[512];
		run_key(rk, sizeof(rk), &runs[i]);
		if (!strcmp(rk, key))
			(*out)[k++] = runs[i];
	}
	return *out ? k : 0;
}

/* The distinct keys of runs, in their order; returns their number (keys: 512 bytes each). */
static size_t distinct_keys(const struct rp_run *runs, size_t n, char (**keys)[512])
{
	size_t k = 0;
	*keys = malloc((n + 1) * sizeof(**keys));
	for (size_t i = 0; *keys && i < n; i++) {
		char rk[512];
		run_key(rk, sizeof(rk), &runs[i]);
		size_t j = 0;
		while (j < k && strcmp((*keys)[j], rk))
			j++;
		if (j == k)
			memcpy((*keys)[k++], rk, sizeof(rk));
	}
	return *keys ? k : 0;
}

static int fill(struct cmp *c, const struct rp_cmp_opts *o)
{
	struct table *t = &c->t;
	t->nb = c->nb;
	t->nc = c->nc;
	for (size_t i = 0; i < c->nb && !t->oom; i++)
		for (size_t j = 0; j < c->base[i].nregions; j++) {
			const struct rp_region *g = &c->base[i].regions[j];
			struct entry *e = lookup(t, g->kind, g->name);
			if (!e)
				break;
			e->bv[i] = value(g, o->metric);
			e->bpresent++;
		}
	for (size_t i = 0; i < c->nc && !t->oom; i++)
		for (size_t j = 0; j < c->cand[i].nregions; j++) {
			const struct rp_region *g = &c->cand[i].regions[j];
			struct entry *e = lookup(t, g->kind, g->name);
			if (!e)
				break;
			e->cv[i] = value(g, o->metric);
			e->cpresent++;
		}
	if (t->oom)
		return -1;
	match_moved(t);
	measure(t, o);
	return 0;
}

/* Counts and the verdict of one comparison, after decide(). */
static void conclude(struct cmp *c)
{
	for (size_t i = 0; i < c->t.n; i++)
		c->count[c->t.e[i].st]++;
	c->status = c->count[ST_REGRESSED] ? RP_EXIT_REGRESSION : RP_EXIT_OK;
	size_t n;
	struct entry **worst = select_status(&c->t, ST_REGRESSED, &n);
	if (n) {
		size_t len = (size_t)snprintf(
		    c->verdict, sizeof(c->verdict),
		    "REGRESSION - %zu region%s slower than the baseline:", n, n == 1 ? "" : "s");
		for (size_t i = 0; i < n && i < 3 && len < sizeof(c->verdict); i++) {
			char ch[32];
			if (isfinite(worst[i]->ratio))
				snprintf(ch, sizeof(ch), "%+.1f%%", (worst[i]->ratio - 1) * 100);
			else
				snprintf(ch, sizeof(ch), "from 0");
			len += (size_t)snprintf(c->verdict + len, sizeof(c->verdict) - len,
						"%s %s %s", i ? "," : "", worst[i]->name, ch);
		}
		if (n > 3 && len < sizeof(c->verdict))
			snprintf(c->verdict + len, sizeof(c->verdict) - len, ", ...");
	} else {
		snprintf(c->verdict, sizeof(c->verdict),
			 "OK - no region slower than the baseline (%zu improved, %zu appeared, %zu "
			 "vanished, %zu unchanged)",
			 c->count[ST_IMPROVED], c->count[ST_APPEARED], c->count[ST_VANISHED],
			 c->count[ST_UNCHANGED]);
	}
	free(worst);
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else if (ch < 0x20 && ch != '\t' && ch != '\n')
			fputc('?', f);
		else
			fputc(ch, f);
	}
}

/* JUnit XML: a test suite per program, a failing test case per region that regressed, and
 * one test case "no regression" that passes when none did. */
static int write_junit(const char *path, struct cmp *cs, size_t n, const struct rp_cmp_opts *o)
{
	struct rp_out out;
	FILE *f = rp_out_open(&out, path);
	if (!f)
		return -1;
	size_t tests = 0, failures = 0;
	for (size_t k = 0; k < n; k++) {
		tests += cs[k].count[ST_REGRESSED] ? cs[k].count[ST_REGRESSED] : 1;
		failures += cs[k].count[ST_REGRESSED];
	}
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"trace-report --compare\" tests=\"%zu\" failures=\"%zu\">\n",
		tests, failures);
	for (size_t k = 0; k < n; k++) {
		struct cmp *c = &cs[k];
		size_t nr = c->count[ST_REGRESSED];
		fputs("  <testsuite name=\"", f);
		xml_text(f, c->label);
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\">\n",
			nr ? nr : 1, nr);
		size_t m;
		struct entry **v = select_status(&c->t, ST_REGRESSED, &m);
		for (size_t i = 0; v && i < m; i++) {
			const struct entry *e = v[i];
			char ch[32], ci[48], b[32], cv[32], line[1024];
			fmt_change(ch, sizeof(ch), e, ST_REGRESSED);
			fmt_ci(ci, sizeof(ci), e);
			snprintf(line, sizeof(line), "%s %s slower (%s, confidence %s): %s -> %s",
				 e->name, ch, metric_name(o->metric), ci,
				 fmt_val(b, sizeof(b), e->bmed, o->metric, 0),
				 fmt_val(cv, sizeof(cv), e->cmed, o->metric, 0));
			fputs("    <testcase classname=\"", f);
			xml_text(f, c->label);
			fputs("\" name=\"", f);
			xml_text(f, e->kind);
			fputc(' ', f);
			xml_text(f, e->name);
			fputs("\">\n      <failure type=\"regression\" message=\"", f);
			xml_text(f, line);
			fputs("\">", f);
			xml_text(f, line);
			fputs("</failure>\n    </testcase>\n", f);
		}
		free(v);
		if (!nr) {
			fputs("    <testcase classname=\"", f);
			xml_text(f, c->label);
			fputs("\" name=\"no regression\"/>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	return rp_out_close(&out, 1);
}

static void md_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|' || *s == '*' || *s == '_' || *s == '`' || *s == '\\')
			fputc('\\', f);
		fputc(*s == '\n' ? ' ' : *s, f);
	}
}

/* A Markdown summary for a pull request's comment. */
static int write_markdown(const char *path, struct cmp *cs, size_t n, const char *verdict,
			  const struct rp_cmp_opts *o)
{
	struct rp_out out;
	FILE *f = rp_out_open(&out, path);
	if (!f)
		return -1;
	fprintf(f, "## Performance: %s\n\n", strncmp(verdict, "OK", 2) ? "regression" : "ok");
	md_text(f, verdict);
	fprintf(f, "\n\n| program | runs | regressed | improved | unchanged | verdict |\n");
	fprintf(f, "|---|---|---|---|---|---|\n");
	for (size_t k = 0; k < n; k++) {
		struct cmp *c = &cs[k];
		fputs("| ", f);
		md_text(f, c->label);
		fprintf(f, " | %zu vs %zu | %zu | %zu | %zu | %s |\n", c->nb, c->nc,
			c->count[ST_REGRESSED], c->count[ST_IMPROVED], c->count[ST_UNCHANGED],
			c->count[ST_REGRESSED] ? "**regression**" : "ok");
	}
	int any = 0;
	for (size_t k = 0; k < n; k++) {
		size_t m;
		struct entry **v = select_status(&cs[k].t, ST_REGRESSED, &m);
		for (size_t i = 0; v && i < m; i++) {
			const struct entry *e = v[i];
			char ch[32], ci[48], b[32], c2[32];
			if (!any++)
				fprintf(f,
					"\n### Regressions (%s)\n\n| program | region | "
					"baseline | candidate | change | confidence | p |\n"
					"|---|---|---|---|---|---|---|\n",
					metric_name(o->metric));
			fmt_change(ch, sizeof(ch), e, ST_REGRESSED);
			fmt_ci(ci, sizeof(ci), e);
			fputs("| ", f);
			md_text(f, cs[k].label);
			fputs(" | ", f);
			md_text(f, e->name);
			fprintf(f, " | %s | %s | %s | %s | ",
				fmt_val(b, sizeof(b), e->bmed, o->metric, 0),
				fmt_val(c2, sizeof(c2), e->cmed, o->metric, 0), ch, ci);
			if (isfinite(e->p_adj))
				fprintf(f, "%.3g |\n", e->p_adj);
			else
				fputs("- |\n", f);
		}
		free(v);
	}
	fprintf(f,
		"\n<sub>trace-report --compare: %s, threshold %g%%, Holm-corrected at %g.</sub>\n",
		metric_name(o->metric), o->threshold * 100, o->alpha);
	return rp_out_close(&out, 1);
}

static void free_cmp(struct cmp *c)
{
	for (size_t i = 0; i < c->ns.n; i++)
		free(c->ns.v[i]);
	free(c->ns.v);
	free_table(&c->t);
	free(c->base);
	free(c->cand);
}

int rp_compare(FILE *out, const struct rp_run *base, size_t nb, const struct rp_run *cand,
	       size_t nc, const struct rp_cmp_opts *o)
{
	char(*bk)[512] = NULL, (*ck)[512] = NULL;
	size_t nbk = distinct_keys(base, nb, &bk), nck = distinct_keys(cand, nc, &ck);
	int suite = nbk > 1 || nck > 1;
	struct cmp *cs = calloc(nbk + 1, sizeof(*cs));
	struct notes sn = {0}; /* the suite's notes */
	size_t ncs = 0;
	int status = RP_EXIT_OK;
	if (!bk || !ck || !cs) {
		fprintf(stderr, "trace-report: out of memory\n");
		status = RP_EXIT_ERROR;
		goto done;
	}
	if (!suite) {
		/* Comparable: every run is of the baseline's first run's program. */
		const char *prog = base[0].meta.program;
		int odd = strcmp(cand[0].meta.program, prog) != 0;
		struct cmp *c = &cs[ncs++];
		snprintf(c->label, sizeof(c->label), "%s", bk[0]);
		c->base = malloc(nb * sizeof(*c->base));
		c->cand = malloc(nc * sizeof(*c->cand));
		if (!c->base || !c->cand) {
			status = RP_EXIT_ERROR;
			goto done;
		}
		memcpy(c->base, base, nb * sizeof(*base));
		memcpy(c->cand, cand, nc * sizeof(*cand));
		c->nb = nb;
		c->nc = nc;
		if (odd && !o->force) {
			char why[1024];
			snprintf(why, sizeof(why),
				 "NOT COMPARABLE - %s ran %s, %s ran %s (--force compares them "
				 "anyway)",
				 base[0].trace, prog, cand[0].trace, cand[0].meta.program);
			if (o->json) {
				struct jw w;
				jw_init(&w, out);
				json_cmp(&w, NULL, c, NULL, o, "not comparable",
					 RP_EXIT_NOT_COMPARABLE);
				jw_finish(&w);
			} else {
				print_side(out, "Baseline", base, nb);
				print_side(out, "Candidate", cand, nc);
				char esc[4096];
				fprintf(out, "\nVerdict: %s\n",
					rp_fmt_name(esc, sizeof(esc), why, 0));
			}
			status = RP_EXIT_NOT_COMPARABLE;
			goto done;
		}
		if (odd)
			note(&c->ns, "different programs (%s and %s), compared because of --force",
			     prog, cand[0].meta.program);
	} else {
		/* A suite: runs paired by program and arguments. */
		for (size_t i = 0; i < nbk; i++) {
			struct cmp *c = &cs[ncs];
			snprintf(c->label, sizeof(c->label), "%s", bk[i]);
			c->nb = group_runs(base, nb, bk[i], &c->base);
			c->nc = group_runs(cand, nc, bk[i], &c->cand);
			if (!c->base || !c->cand) {
				free_cmp(c);
				status = RP_EXIT_ERROR;
				goto done;
			}
			if (!c->nc) {
				note(&sn, "only in the baseline: %s (%zu run%s)", bk[i], c->nb,
				     c->nb == 1 ? "" : "s");
				free_cmp(c);
				memset(c, 0, sizeof(*c));
				continue;
			}
			ncs++;
		}
		for (size_t i = 0; i < nck; i++) {
			size_t j = 0;
			while (j < nbk && strcmp(bk[j], ck[i]))
				j++;
			if (j == nbk)
				note(&sn, "only in the candidate: %s", ck[i]);
		}
	}
	struct table **ts = malloc((ncs + 1) * sizeof(*ts));
	if (!ts) {
		status = RP_EXIT_ERROR;
		goto done;
	}
	size_t m = 0;
	for (size_t k = 0; k < ncs; k++) {
		if (fill(&cs[k], o)) {
			free(ts);
			fprintf(stderr, "trace-report: out of memory\n");
			status = RP_EXIT_ERROR;
			goto done;
		}
		ts[k] = &cs[k].t;
		for (size_t i = 0; i < cs[k].t.n; i++)
			m += cs[k].t.e[i].tested;
	}
	decide(ts, ncs, o);
	free(ts);
	size_t regressed = 0;
	for (size_t k = 0; k < ncs; k++) {
		conclude(&cs[k]);
		collect_notes(&cs[k], m, o);
		regressed += cs[k].status == RP_EXIT_REGRESSION;
	}
	char verdict[1024];
	if (!suite) {
		snprintf(verdict, sizeof(verdict), "%s", cs[0].verdict);
		status = cs[0].status;
	} else if (!ncs) {
		snprintf(verdict, sizeof(verdict),
			 "NOT COMPARABLE - no program and arguments ran on both sides");
		status = RP_EXIT_NOT_COMPARABLE;
	} else if (regressed) {
		size_t len =
		    (size_t)snprintf(verdict, sizeof(verdict),
				     "REGRESSION - %zu of %zu program%s slower:", regressed, ncs,
				     ncs == 1 ? "" : "s");
		for (size_t k = 0, shown = 0; k < ncs && len < sizeof(verdict); k++)
			if (cs[k].status == RP_EXIT_REGRESSION && shown++ < 3)
				len +=
				    (size_t)snprintf(verdict + len, sizeof(verdict) - len,
						     "%s %s (%s)", shown > 1 ? ";" : "",
						     cs[k].label, strchr(cs[k].verdict, ':') + 2);
		status = RP_EXIT_REGRESSION;
	} else {
		snprintf(verdict, sizeof(verdict),
			 "OK - no program slower than the baseline (%zu compared)", ncs);
	}
	if (o->json) {
		struct jw w;
		jw_init(&w, out);
		if (!suite) {
			json_cmp(&w, NULL, &cs[0], &cs[0].t, o,
				 status == RP_EXIT_REGRESSION ? "regression" : "ok", status);
		} else {
			jw_object(&w, NULL);
			jw_str(&w, "schema", RP_COMPARE_SUITE_SCHEMA);
			jw_array(&w, "notes");
			for (size_t i = 0; i < sn.n; i++)
				jw_str(&w, NULL, sn.v[i]);
			jw_end(&w);
			jw_array(&w, "programs");
			for (size_t k = 0; k < ncs; k++)
				json_cmp(&w, NULL, &cs[k], &cs[k].t, o,
					 cs[k].status == RP_EXIT_REGRESSION ? "regression" : "ok",
					 cs[k].status);
			jw_end(&w);
			jw_u64(&w, "regions_tested", m);
			jw_str(&w, "verdict",
			       status == RP_EXIT_REGRESSION ? "regression"
			       : status == RP_EXIT_OK	    ? "ok"
							    : "not comparable");
			jw_i64(&w, "exit_status", status);
			jw_end(&w);
		}
		jw_finish(&w);
	} else {
		header(out, o, m, ncs && cs[0].nb >= 3 && cs[0].nc >= 3);
		for (size_t k = 0; k < ncs; k++) {
			if (suite) {
				char esc[1024];
				fprintf(out, "\n=== %s ===\n",
					rp_fmt_name(esc, sizeof(esc), cs[k].label, 0));
			} else {
				fputc('\n', out);
			}
			text_cmp(out, &cs[k], o);
			if (suite) {
				char esc[4096];
				fprintf(out, "\nProgram verdict: %s\n",
					rp_fmt_name(esc, sizeof(esc), cs[k].verdict, 0));
			}
		}
		if (sn.n) {
			fputs("\nSuite notes:\n", out);
			for (size_t i = 0; i < sn.n; i++) {
				char esc[4096];
				fprintf(out, "  %s\n", rp_fmt_name(esc, sizeof(esc), sn.v[i], 0));
			}
		}
		char esc[4096];
		fprintf(out, "\nVerdict: %s\n", rp_fmt_name(esc, sizeof(esc), verdict, 0));
	}
	/* (each says why it failed) */
	if (o->junit && write_junit(o->junit, cs, ncs, o))
		status = RP_EXIT_ERROR;
	if (o->markdown && write_markdown(o->markdown, cs, ncs, verdict, o))
		status = RP_EXIT_ERROR;
done:
	for (size_t k = 0; cs && k < ncs; k++)
		free_cmp(&cs[k]);
	for (size_t i = 0; i < sn.n; i++)
		free(sn.v[i]);
	free(sn.v);
	free(cs);
	free(bk);
	free(ck);
	return status;
}
