// SPDX-License-Identifier: BSD-3-Clause
/*
 * stack_split - CPU time split 70/30 between two functions reached through two levels of
 * calls from main, for the stack sampler's tests (built with -O2 -fomit-frame-pointer: the
 * stacks must be unwound through DWARF).
 *
 *   stack_split [MILLISECONDS]    (default 600: about 420 ms in hot_a, 180 ms in hot_b)
 *
 * Each round calls outer() -> inner() -> hot_a() 7 times and hot_b() 3 times, each a fixed
 * amount of work; the rounds go on until the time is spent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void hot_a(void)
{
	spin(200000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void hot_b(void)
{
	spin(200000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void inner(int k)
{
	if (k < 7)
		hot_a();
	else
		hot_b();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void outer(int k)
{
	inner(k);
	__asm__ volatile("" ::: "memory");
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 600;
	double end = now_ms() + ms;
	unsigned long rounds = 0, x = 88172645463325252ul;
	int order[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
	while (now_ms() < end) {
		/* Each round in a new order (xorshift): a sample period that is a multiple of a
		 * round would otherwise see the same call every time (a tick-grained CPU timer
		 * under load), not 70 % of hot_a. */
		for (int k = 9; k > 0; k--) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			int j = (int)(x % (unsigned long)(k + 1)), t = order[k];
			order[k] = order[j];
			order[j] = t;
		}
		for (int k = 0; k < 10; k++)
			outer(order[k]);
		rounds++;
	}
	printf("%lu rounds\n", rounds);
	return 0;
}
