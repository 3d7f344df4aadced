// SPDX-License-Identifier: BSD-3-Clause
/*
 * mlock_all - a program that locks its memory, as real-time and security-minded programs do.
 *
 *   mlock_all PAIRS
 *
 * mlockall(MCL_CURRENT | MCL_FUTURE), then PAIRS lock/unlock pairs on the main thread and
 * as many on a thread it starts (with a 256 KiB stack, locked too) and joins.  Prints "locked" and
 * "ok"; exits 1 with the error when mlockall fails.  Without CAP_IPC_LOCK the kernel refuses
 * MCL_CURRENT when the process's mappings exceed RLIMIT_MEMLOCK (8 MiB by default).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static long pairs;

static void *work(void *arg)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	pairs = argc > 1 ? atol(argv[1]) : 1000;
	if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) {
		printf("mlockall: %s\n", strerror(errno));
		return 1;
	}
	printf("locked\n");
	work(NULL);
	/* A small stack: under MCL_FUTURE the new thread's stack is locked too. */
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_t th;
	int e = pthread_create(&th, &attr, work, NULL);
	if (e) {
		printf("pthread_create: %s\n", strerror(e));
		return 1;
	}
	pthread_join(th, NULL);
	printf("ok\n");
	return 0;
}
