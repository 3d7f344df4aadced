// SPDX-License-Identifier: BSD-3-Clause
/*
 * testmod_prog.c - calls testmod_work() N times on the main thread and N times on a second
 * thread, and prints the sum (tests/e2e/module-plugin.sh).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int testmod_work(int x);

static int n;

static void *worker(void *arg)
{
	long sum = 0;
	for (int i = 0; i < n; i++)
		sum += testmod_work(i);
	*(long *)arg = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	n = argc > 1 ? atoi(argv[1]) : 10;
	long a = 0, b = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &b) != 0)
		return 1;
	worker(&a);
	pthread_join(th, NULL);
	printf("sum=%ld\n", a + b);
	return 0;
}
