/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * compare.h - trace-report --compare: a baseline's runs against a candidate's, region by
 * region, with a verdict and an exit status a CI job can act on.
 */
#ifndef LIBTRACE_REPORT_COMPARE_H
#define LIBTRACE_REPORT_COMPARE_H

#include <stdio.h>

#include "profile.h"

enum rp_metric { RP_METRIC_INCLUSIVE, RP_METRIC_EXCLUSIVE, RP_METRIC_CALLS };

struct rp_cmp_opts {
	enum rp_metric metric;
	double threshold;     /* relative: 0.05 is 5 % */
	double min_diff;      /* absolute, in the metric's unit (ns, or calls) */
	double alpha;	      /* the noise test's significance level */
	int force;	      /* compare different programs anyway */
	int json;	      /* the result as JSON (libtrace-compare/1) */
	int all;	      /* list the unchanged regions too */
	const char *junit;    /* also write JUnit XML there (NULL: no) */
	const char *markdown; /* also write a Markdown summary there (NULL: no) */
};

/*
 * Compares and writes the result to out.  When either side holds runs of more than one
 * program (and arguments), it compares a suite: the runs are paired by program and
 * arguments, each pair compared, with one family of tests over all of them and one verdict.
 * Returns RP_EXIT_OK (no region regressed),
 * RP_EXIT_REGRESSION, or RP_EXIT_NOT_COMPARABLE (the sides ran different programs and
 * force is off); RP_EXIT_ERROR when out of memory.
 */
int rp_compare(FILE *out, const struct rp_run *base, size_t nbase, const struct rp_run *cand,
	       size_t ncand, const struct rp_cmp_opts *o);

/* One-sided exact Mann-Whitney p-value: the chance that U, the number of pairs (x from the
 * first sample of n, y from the second of m) with x > y, reaches u when both samples come
 * from one distribution.  Exact for n * m <= 2500, normal approximation above. */
double rp_mann_whitney_p(size_t n, size_t m, double u);

#endif /* LIBTRACE_REPORT_COMPARE_H */
