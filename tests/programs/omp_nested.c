// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_nested - one nested parallel region: an outer team of OMP_NUM_THREADS (T), whose
 * every member forks an inner team of T (run with OMP_MAX_ACTIVE_LEVELS=2).  All T * T
 * inner threads meet before any leaves, so that T * T distinct threads take part whatever
 * the runtime's thread reuse: 1 + T forks, T + T * T team members.  tests/e2e/omp.sh
 * counts them: keep the two in step.
 *
 * The work is split over the T * T (outer, inner) pairs by hand: the printed line is the
 * same for any team size, so that the traced and untraced outputs can be compared.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#define N 1000

static long work(long i)
{
	return (i * 7919) % 1013;
}

int main(void)
{
	long total = 0, want = 0;
	int met = 0, short_team = 0;
	for (long i = 0; i < N; i++)
		want += work(i);

#pragma omp parallel
	{
		int outer = omp_get_thread_num(), nouter = omp_get_num_threads();
#pragma omp parallel
		{
			int inner = omp_get_thread_num(), ninner = omp_get_num_threads();
			if (ninner != nouter) { /* nesting inactive: OMP_MAX_ACTIVE_LEVELS? */
#pragma omp atomic write
				short_team = 1;
			}
			int pairs = nouter * ninner, me = outer * ninner + inner;
			long s = 0;
			for (long i = me; i < N; i += pairs)
				s += work(i);
#pragma omp atomic
			total += s;

			/* The rendezvous: everybody arrived, or 10 s gone (short teams). */
			int here;
#pragma omp atomic capture
			here = ++met;
			struct timespec t0, t;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (here < pairs) {
				sched_yield();
#pragma omp atomic read
				here = met;
				clock_gettime(CLOCK_MONOTONIC, &t);
				if (t.tv_sec - t0.tv_sec > 10)
					break;
			}
		}
	}
	int bad = total != want || short_team;
	printf("nested: %ld%s\n", total, total == want ? "" : " (WRONG)");
	if (short_team)
		fprintf(stderr, "omp_nested: the inner teams are not as large as the outer one\n");
	return bad;
}
