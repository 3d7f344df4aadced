// SPDX-License-Identifier: BSD-3-Clause
/*
 * throw - a C++ exception thrown through 10 frames and caught, in a loop: what tracing with
 * call sites must not slow down (a preloaded library that depends on libunwind makes every
 * throw 25x slower).  Two loops: the bare throw/catch, and the same with a pthread mutex
 * lock and unlock at the bottom of each throw, so that a traced run records call sites
 * (bench/throw.sh compares call-site depths on it).
 *
 *   throw [ITERS [REPS [CPU]]]
 */
#include <pthread.h>
#include <stdexcept>

#include "bench.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static int dive(int depth, bool lock)
{
	if (depth == 0) {
		if (lock) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
		throw std::runtime_error("bottom");
	}
	return dive(depth - 1, lock) + 1;
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
			dive(10, false);
		} catch (const std::exception &) {
			caught = caught + 1;
		}
	});
	BENCH("throw/catch + mutex pair", iters, reps, {
		try {
			dive(10, true);
		} catch (const std::exception &) {
			caught = caught + 1;
		}
	});
	return caught > 0 ? 0 : 1;
}
