// SPDX-License-Identifier: BSD-3-Clause
/*
 * callsites - traced calls on known lines, for tests/e2e/callsites.sh: a pthread mutex lock
 * (reached through two functions of its own, for the deeper frames), an OpenMP parallel
 * region and an explicit barrier, a fork and a dlopen/dlclose.  The test finds the lines by
 * their CS_* markers.
 */
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static volatile int counter;

__attribute__((noinline)) static void lock_it(void)
{
	pthread_mutex_lock(&m); /* CS_LOCK */
	counter++;
	pthread_mutex_unlock(&m); /* CS_UNLOCK */
}

__attribute__((noinline)) static void outer(void)
{
	lock_it(); /* CS_OUTER */
	__asm__ volatile("" ::: "memory");
}

int main(void)
{
	outer();		    /* CS_MAIN */
#pragma omp parallel num_threads(2) /* CS_PARALLEL */
	{
		counter++;
#pragma omp barrier /* CS_BARRIER */
	}
	pid_t child = fork(); /* CS_FORK */
	if (child == 0)
		_exit(0);
	if (child > 0)
		waitpid(child, NULL, 0);
	void *h = dlopen("libm.so.6", RTLD_NOW); /* CS_DLOPEN */
	if (h)
		dlclose(h); /* CS_DLCLOSE */
	printf("%d\n", counter);
	return 0;
}
