// SPDX-License-Identifier: BSD-3-Clause
/*
 * slow_region - annotated regions of known length, for trace-report's tests.
 *
 *   slow_region [FACTOR [THREADS [sleep|spin [extra]]]]
 *
 * THREADS threads (default 2; 0: the main thread itself) each run ROUNDS rounds of region "compute"
 * (COMPUTE_MS x FACTOR, FACTOR default 1) followed by region "io" (IO_MS, whatever FACTOR is); the
 * main thread creates and joins them.  With "extra", the main thread first runs a region "extra"
 * that other runs do not have: three calls, each inside the one before (recursion), the
 * innermost waiting EXTRA_US.
 *
 * SLOW_REGION_FACTOR in the environment multiplies FACTOR: a knob that leaves the command line
 * as it is (a suite comparison pairs runs by program and arguments).
 *
 * "compute" waits in nanosleep by default: on a shared 2-core machine a test that compares
 * runs must not depend on how much CPU the other tests leave us, and a sleep takes its time
 * (plus a wake-up latency of tens of microseconds) whatever the load, where busy work can
 * take twice as long when another process shares the core.  "spin" makes it real CPU work
 * instead (FACTOR x SPIN_ITERS increments of a volatile), to look at by hand.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libtrace/annotate.h"

#define ROUNDS	   4
#define COMPUTE_MS 6
#define IO_MS	   3
#define EXTRA_US   200
#define SPIN_ITERS 3000000L

static double factor = 1;
static int spin;

static void wait_ns(long long ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static void compute(void)
{
	if (spin) {
		static volatile long sink;
		long n = (long)(SPIN_ITERS * factor);
		for (long i = 0; i < n; i++)
			sink = sink + 1;
	} else {
		wait_ns((long long)(COMPUTE_MS * 1e6 * factor));
	}
}

static void extra(int depth)
{
	ltr_region_begin("extra");
	if (depth > 1)
		extra(depth - 1);
	else
		wait_ns(EXTRA_US * 1000LL);
	ltr_region_end("extra");
}

static void *work(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		ltr_region_begin("compute");
		compute();
		ltr_region_end("compute");
		ltr_region_begin("io");
		wait_ns(IO_MS * 1000000LL);
		ltr_region_end("io");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2;
	if (argc > 1)
		factor = atof(argv[1]);
	if (argc > 2)
		threads = atoi(argv[2]);
	if (argc > 3)
		spin = !strcmp(argv[3], "spin");
	const char *knob = getenv("SLOW_REGION_FACTOR");
	if (knob)
		factor *= atof(knob);
	if (argc > 5 || factor <= 0 || threads < 0 || threads > 1000 ||
	    (argc > 3 && !spin && strcmp(argv[3], "sleep")) ||
	    (argc > 4 && strcmp(argv[4], "extra"))) {
		fprintf(stderr, "usage: %s [FACTOR [THREADS [sleep|spin [extra]]]]\n", argv[0]);
		return 2;
	}
	if (argc > 4)
		extra(3);
	if (!threads) { /* the main thread does the work itself */
		work(NULL);
		return 0;
	}
	pthread_t *th = calloc((size_t)threads, sizeof(*th));
	if (!th)
		return 1;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, work, NULL)) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	free(th);
	return 0;
}
