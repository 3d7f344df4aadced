// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_stripmain - calls the stripped library omp_striplib (tests/e2e/omp-stripped.sh), and
 * runs one parallel region of its own, built with -g: a call site with file and line.
 */
#include <stdio.h>

double striplib_sums(int n);

int main(void)
{
	long t = 0;
#pragma omp parallel reduction(+ : t)
	t += 1;
	printf("%g %d\n", striplib_sums(100000), t > 0);
	return 0;
}
