// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_bots - task patterns of the Barcelona OpenMP Task Suite, each a known number of tasks
 * whatever the team size:
 *   - fib(N) with taskwait, tied: 2 * (F(N + 1) - 1) tasks (F: Fibonacci numbers), each
 *     waiting for its two children in a taskwait;
 *   - the same with untied tasks (libomp may move an untied task to another thread);
 *   - a taskgroup around GROUP tasks created by one thread;
 *   - LEFT tasks created in a single nowait, which the team runs in the barrier that ends
 *     the parallel region (libgomp runs them there, after the outlined function returned).
 * With N = 12: 464 + 464 + 8 + 16 = 952 tasks, 232 + 232 taskwaits, 1 taskgroup.  The results
 * are printed, the same for any team size.  tests/e2e/omp.sh counts them: keep the two in step.
 */
#include <stdio.h>
#include <stdlib.h>

#define GROUP 8
#define LEFT  16

static long fib(int n)
{
	if (n < 2)
		return n;
	long a, b;
#pragma omp task shared(a)
	a = fib(n - 1);
#pragma omp task shared(b)
	b = fib(n - 2);
#pragma omp taskwait
	return a + b;
}

static long fib_untied(int n)
{
	if (n < 2)
		return n;
	long a, b;
#pragma omp task shared(a) untied
	a = fib_untied(n - 1);
#pragma omp task shared(b) untied
	b = fib_untied(n - 2);
#pragma omp taskwait
	return a + b;
}

static long work(long n)
{
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s += i;
	return s;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 12;
	long tied = 0, untied = 0, group = 0, left = 0;
#pragma omp parallel
#pragma omp single
	tied = fib(n);
#pragma omp parallel
#pragma omp single
	untied = fib_untied(n);
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
	for (int i = 0; i < GROUP; i++) {
#pragma omp task
		{
			long s = work(20000);
#pragma omp atomic
			group += s > 0;
		}
	}
#pragma omp parallel
#pragma omp single nowait
	for (int i = 0; i < LEFT; i++) {
#pragma omp task
		{
			long s = work(50000);
#pragma omp atomic
			left += s > 0;
		}
	}
	printf("fib %ld, untied %ld, group %ld of %d, left %ld of %d\n", tied, untied, group, GROUP,
	       left, LEFT);
	return 0;
}
