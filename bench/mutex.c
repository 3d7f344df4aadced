// SPDX-License-Identifier: BSD-3-Clause
/*
 * mutex - an uncontended pthread_mutex_lock + unlock pair.  Run it plain, preloaded with the
 * pthread module off (LIBTRACE_MODULES=user) and preloaded with it on: bench/run.sh does,
 * side by side, and prints the differences.
 *
 *   mutex [ITERS [REPS [CPU]]]
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "bench.h"

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 10000000;
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	bench_pin(argc > 3 ? atoi(argv[3]) : 1);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	BENCH("mutex lock+unlock pair", iters, reps, {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	});
	/* Bursts that fit in the thread's ring (50k pairs, 4 MB of records when traced), with
	 * a pause for the writer: the cost in the program's thread, without the disk's pace. */
	long burst = 50000;
	BENCH("mutex pair, 50k bursts", burst, reps, {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		if (_i == burst - 1)
			bench_pause(50);
	});
	return 0;
}
