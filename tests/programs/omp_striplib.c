// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_striplib - a shared library whose one exported function runs two OpenMP parallel
 * regions.  tests/e2e/omp-stripped.sh strips it (strip --strip-unneeded): the outlined
 * functions (striplib_sums._omp_fn.N, local symbols) are gone, striplib_sums (dynamic) stays.
 */
double striplib_sums(int n);

double striplib_sums(int n)
{
	double s = 0, q = 0;
#pragma omp parallel for reduction(+ : s)
	for (int i = 0; i < n; i++)
		s += i * 0.5;
#pragma omp parallel for reduction(+ : q)
	for (int i = 0; i < n; i++)
		q += i * 0.25;
	return s + q;
}
