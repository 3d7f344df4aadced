// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp - what OpenMP constructs cost, to run plain and with libtrace.so preloaded, built by
 * gcc (libgomp: the tracer wraps GOMP_*) and by clang (libomp: the tracer is an OMPT tool).
 * bench/omp.sh builds both and runs the four side by side.
 *
 *   parallel   an empty `#pragma omp parallel num_threads(2)`: fork, two team members'
 *              begin and end, the join barrier (ns per region)
 *   chunk      one chunk of `#pragma omp for schedule(dynamic,1)` over CHUNKS iterations
 *              inside one parallel region of 2 threads, the region's own fork and join
 *              spread over its chunks (ns per chunk, wall time: the two threads take
 *              chunks at the same time)
 *
 *   omp [REGIONS [REPS [CPU [CHUNKS]]]]
 *
 * The team's threads pin themselves, member i to CPU (CPU + i) mod the CPUs online, in a
 * first region before any measurement (libgomp and libomp keep their pool threads, and a
 * thread created later would inherit its creator's mask); CPU -1 pins nothing.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <unistd.h>

#include "bench.h"

static void pin_team(int cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu < 1)
		ncpu = 1;
#pragma omp parallel num_threads(2)
	{
		if (cpu >= 0)
			bench_pin((int)((cpu + omp_get_thread_num()) % ncpu));
	}
}

static __attribute__((noinline)) void empty_region(void)
{
#pragma omp parallel num_threads(2)
	{
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void dynamic_loop(long chunks)
{
#pragma omp parallel num_threads(2)
	{
#pragma omp for schedule(dynamic, 1)
		for (long i = 0; i < chunks; i++)
			__asm__ volatile("" : : "r"(i) : "memory");
	}
}

int main(int argc, char **argv)
{
	long regions = argc > 1 ? atol(argv[1]) : 20000;
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	int cpu = argc > 3 ? atoi(argv[3]) : 0;
	long chunks = argc > 4 ? atol(argv[4]) : 20000;
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	if (reps < 1 || regions < 1 || chunks < 1) {
		fprintf(stderr, "usage: omp [REGIONS [REPS [CPU [CHUNKS]]]]\n");
		return 2;
	}
	pin_team(cpu);
	BENCH("omp parallel num_threads(2), empty", regions, reps, empty_region());
	/* As many chunks in all as regions above, at least 10 regions a repetition. */
	long loops = regions / chunks > 10 ? regions / chunks : 10;
	BENCH_OPS("omp for schedule(dynamic,1), one chunk", loops, reps, (double)chunks,
		  dynamic_loop(chunks));
	return 0;
}
