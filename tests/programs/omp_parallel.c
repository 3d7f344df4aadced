// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_parallel - parallel regions and worksharing, each construct a known number of times:
 * P plain regions, combined parallel loops (dynamic with constant and with run-time bounds,
 * guided, runtime, a static reduction), one region with orphaned constructs (a dynamic loop,
 * a static loop, sections, single with and without nowait, 2 * PHASES explicit barriers) and a
 * parallel sections.  The tests/e2e/omp.sh expectations count them: keep the two in step.
 *
 * Every printed line is the same for any team size and schedule, so that the traced and
 * untraced outputs can be compared.
 */
#include <omp.h>
#include <stdio.h>

#define P      5    /* plain parallel regions */
#define PHASES 3    /* two explicit barriers each, in the orphan region */
#define N      1000 /* iterations of each loop */
#define NSEC   3    /* sections in each sections construct */

static long a[N];

static long work(long i)
{
	return (i * 7919) % 1013;
}

/* The loops' expected sum, computed serially. */
static long expected(void)
{
	long s = 0;
	for (long i = 0; i < N; i++)
		s += work(i);
	return s;
}

static long sum_a(void)
{
	long s = 0;
	for (long i = 0; i < N; i++)
		s += a[i];
	return s;
}

static int check(const char *what, long got, long want)
{
	printf("%s: %ld%s\n", what, got, got == want ? "" : " (WRONG)");
	return got != want;
}

/* Orphaned constructs: called by every member of the team. */
static void orphan_dynamic(void)
{
#pragma omp for schedule(dynamic, 3)
	for (long i = 0; i < N; i++)
		a[i] = work(i);
	/* implicit barrier */
}

static void orphan_static(long *b)
{
#pragma omp for schedule(static)
	for (long i = 0; i < N; i++)
		b[i] = a[i] * 2;
	/* implicit barrier (gcc: GOMP_barrier) */
}

static void orphan_sections(long *r)
{
#pragma omp sections
	{
#pragma omp section
		r[0] = 11;
#pragma omp section
		r[1] = 22;
#pragma omp section
		r[2] = 33;
	}
}

int main(int argc, char **argv)
{
	(void)argv;
	const long want = expected();
	int bad = 0;

	/* P plain regions, the work split by hand (no worksharing construct). */
	long total = 0;
	for (int p = 0; p < P; p++) {
#pragma omp parallel
		{
			long s = 0;
			int nth = omp_get_num_threads();
			for (long i = omp_get_thread_num(); i < N; i += nth)
				s += work(i);
#pragma omp atomic
			total += s;
		}
	}
	bad |= check("plain regions", total, P * want);

	/* Combined parallel loops. */
#pragma omp parallel for schedule(dynamic, 7)
	for (long i = 0; i < N; i++)
		a[i] = work(i);
	bad |= check("dynamic, constant bounds", sum_a(), want);

	long n = N + (argc > 1000); /* not known at compile time: not a combined call in gcc */
#pragma omp parallel for schedule(dynamic, 5)
	for (long i = 0; i < n; i++)
		a[i] = work(i) + 1;
	bad |= check("dynamic, run-time bounds", sum_a(), want + N);

#pragma omp parallel for schedule(guided, 4)
	for (long i = 0; i < N; i++)
		a[i] = work(i) + 2;
	bad |= check("guided", sum_a(), want + 2 * N);

#pragma omp parallel for schedule(runtime)
	for (long i = 0; i < N; i++)
		a[i] = work(i) + 3;
	bad |= check("runtime", sum_a(), want + 3 * N);

	long red = 0;
#pragma omp parallel for reduction(+ : red)
	for (long i = 0; i < N; i++)
		red += work(i);
	bad |= check("reduction", red, want);

	/* One region with orphaned worksharing, single and explicit barriers. */
	static long b[N];
	long r[NSEC] = {0}, singles = 0, singles_nowait = 0, phases = 0;
#pragma omp parallel
	{
		orphan_dynamic();
		orphan_static(b);
		orphan_sections(r);
#pragma omp single
		singles++;
#pragma omp single nowait
		singles_nowait++;
		for (int k = 0; k < PHASES; k++) {
#pragma omp barrier
			if (omp_get_thread_num() == 0)
				phases++; /* thread 0 only, between two barriers */
#pragma omp barrier
			;
		}
	}
	bad |= check("orphan dynamic", sum_a(), want);
	long sb = 0;
	for (long i = 0; i < N; i++)
		sb += b[i];
	bad |= check("orphan static", sb, 2 * want);
	bad |= check("orphan sections", r[0] + r[1] + r[2], 66);
	bad |= check("single", singles, 1);
	bad |= check("single nowait", singles_nowait, 1);
	bad |= check("barrier phases", phases, PHASES);

	long s[NSEC] = {0};
#pragma omp parallel sections
	{
#pragma omp section
		s[0] = work(1);
#pragma omp section
		s[1] = work(2);
#pragma omp section
		s[2] = work(3);
	}
	bad |= check("parallel sections", s[0] + s[1] + s[2], work(1) + work(2) + work(3));
	return bad;
}
