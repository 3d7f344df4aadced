// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_threads - threads started and ended: `alive` creates N threads, each waiting until
 * all N are up, then joins them all; `seq` makes N create+join pairs one after the other.
 * bench/fixed.sh times the whole process (the tracer's start and exit included), untraced
 * and traced, side by side; the mean cost of one thread in the program is printed too
 * ("us_per_thread US").
 *
 *   bench_threads alive|seq N
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_barrier_t all_up;

static void *wait_all(void *arg)
{
	pthread_barrier_wait(&all_up);
	return arg;
}

static void *nothing(void *arg)
{
	return arg;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	int alive = argc > 1 && !strcmp(argv[1], "alive");
	pthread_t *th = malloc((size_t)(n > 0 ? n : 1) * sizeof(*th));
	if (argc != 3 || (!alive && strcmp(argv[1], "seq")) || n <= 0 || !th ||
	    pthread_barrier_init(&all_up, NULL, (unsigned)n + 1)) {
		fprintf(stderr, "usage: bench_threads alive|seq N\n");
		return 2;
	}
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* 1,000 default stacks would be 8 GiB */
	double t0 = now_us();
	if (alive) {
		for (long i = 0; i < n; i++)
			if (pthread_create(&th[i], &attr, wait_all, NULL))
				return 1;
		pthread_barrier_wait(&all_up);
		for (long i = 0; i < n; i++)
			if (pthread_join(th[i], NULL))
				return 1;
	} else {
		for (long i = 0; i < n; i++)
			if (pthread_create(&th[0], &attr, nothing, NULL) ||
			    pthread_join(th[0], NULL))
				return 1;
	}
	printf("us_per_thread %.1f\n", (now_us() - t0) / n);
	free(th);
	return 0;
}
