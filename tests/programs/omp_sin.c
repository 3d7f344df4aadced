// SPDX-License-Identifier: BSD-3-Clause
/* omp_sin.c - an OpenMP loop whose time is spent in libm's sin: stack samples taken inside
 * libm must still reach the loop and main (e2e.stack-threads).  Argument: iterations
 * (default 20000000). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double sum_sines(long n)
{
	double s = 0;
#pragma omp parallel for reduction(+ : s)
	for (long i = 0; i < n; i++)
		s += sin((double)i * 1e-3);
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	printf("sum %.3f\n", sum_sines(n));
	return 0;
}
