// SPDX-License-Identifier: BSD-3-Clause
/*
 * migrate - a thread that moves itself: it pins itself to CPU 0 (sched_setaffinity), works
 * a while, then moves to CPU 1 inside an annotated region "move" (so the move lies between
 * that region's Enter and Leave), and works a while there.  A second thread does the same
 * with pthread_setaffinity_np inside "move-pthread".  Prints "skip" and exits 77 on a
 * machine with one CPU.
 *
 *   migrate [MILLISECONDS of work on each CPU, default 50]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "libtrace/annotate.h"

static long work_ms = 50;

static void work(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < work_ms);
}

static int pin(int cpu, int with_pthread)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (with_pthread)
		return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *mover(void *arg)
{
	int with_pthread = arg != NULL;
	if (pin(0, with_pthread))
		return (void *)1;
	work();
	ltr_region_begin(with_pthread ? "move-pthread" : "move");
	int err = pin(1, with_pthread);
	ltr_region_end(with_pthread ? "move-pthread" : "move");
	if (err || sched_getcpu() != 1)
		return (void *)1;
	work();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		work_ms = atol(argv[1]);
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) || !CPU_ISSET(0, &set) || !CPU_ISSET(1, &set)) {
		puts("skip: CPUs 0 and 1 are not both available");
		return 77;
	}
	void *r1 = mover(NULL);
	pthread_t t;
	void *r2 = (void *)1;
	if (pthread_create(&t, NULL, mover, (void *)1) == 0)
		pthread_join(t, &r2);
	printf("moved: %s\n", r1 || r2 ? "failed" : "ok");
	return r1 || r2;
}
