// SPDX-License-Identifier: BSD-3-Clause
/*
 * throw - a C++ exception thrown through 10 frames and caught, in a loop: what tracing with
 * call sites must not slow down (a preloaded library that depends on libunwind makes every
 * throw 25x slower).  Each throw goes through a pthread mutex lock and unlock, so that the
 * traced run records call sites.
 *
 *   throw [ITERS [REPS [CPU]]]
 */
#include <pthread.h>
#include <stdexcept>

#include "bench.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static int dive(int depth)
{
	if (depth == 0) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		throw std::runtime_error("bottom");
	}
	return dive(depth - 1) + 1;
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 200000;
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	bench_pin(argc > 3 ? atoi(argv[3]) : 1);
	volatile long caught = 0;
	BENCH("throw/catch through 10 frames", iters, reps, {
		try {
			dive(10);
		} catch (const std::exception &) {
			caught = caught + 1;
		}
	});
	return caught > 0 ? 0 : 1;
}
