/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench.h - the benchmarks' timing harness: a loop of N operations timed as a whole with
 * CLOCK_MONOTONIC (the timer's cost vanishes), repeated R times; prints the median, min and
 * max nanoseconds per operation.  Pin the process (bench/run.sh does) for stable numbers.
 */
#ifndef LIBTRACE_BENCH_H
#define LIBTRACE_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_MAX_REPS 64

#include <pthread.h>
#include <sched.h>

/* Pins the calling thread (only: a tracer's helper threads stay free) to CPU `cpu`. */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
		fprintf(stderr, "bench: cannot pin to CPU %d\n", cpu);
}

/* ITERS and REPS from argv[1] and argv[2] (`iters`, `reps` hold the defaults); 0, after a
 * usage line, when they are out of range. */
static inline int bench_args(int argc, char **argv, long *iters, int *reps)
{
	if (argc > 1)
		*iters = atol(argv[1]);
	if (argc > 2)
		*reps = atoi(argv[2]);
	if (*iters < 10 || *reps < 1 || *reps > BENCH_MAX_REPS) {
		fprintf(stderr, "usage: %s [ITERS >= 10 [REPS <= %d]]\n", argv[0], BENCH_MAX_REPS);
		return 0;
	}
	return 1;
}

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static inline void bench_report(const char *name, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp);
	printf("%-40s median %8.2f ns  min %8.2f  max %8.2f\n", name, v[n / 2], v[0], v[n - 1]);
	fflush(stdout);
}

/* Time the body spent on purpose outside the measurement (pauses); BENCH subtracts it. */
static double pause_ns;

/* Sleeps `ms` milliseconds outside the measurement. */
static inline void bench_pause(long ms)
{
	struct timespec ts;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	double t0 = bench_now();
	nanosleep(&ts, NULL);
	pause_ns += bench_now() - t0;
}

/* BENCH(name, iters, reps, body): runs body iters times per repetition (index: _i). */
#define BENCH(name, iters, reps, body) BENCH_OPS(name, iters, reps, 1, body)

/* BENCH_OPS: the same, for a body that does `ops` operations; reports ns per operation. */
#define BENCH_OPS(name, iters, reps, ops, body)                                       \
	do {                                                                          \
		double v_[BENCH_MAX_REPS];                                            \
		long n_ = (iters);                                                    \
		for (long _i = 0; _i < n_ / 10; _i++) {                               \
			body;                                                         \
		}                                                                     \
		for (int r_ = 0; r_ < (reps); r_++) {                                 \
			pause_ns = 0;                                                 \
			double t0_ = bench_now();                                     \
			for (long _i = 0; _i < n_; _i++) {                            \
				body;                                                 \
			}                                                             \
			v_[r_] = (bench_now() - t0_ - pause_ns) / (double)n_ / (ops); \
		}                                                                     \
		bench_report(name, v_, (reps));                                       \
	} while (0)

#endif
