// SPDX-License-Identifier: BSD-3-Clause
/*
 * mutex_kinds - what pthread_mutex_lock returns for each kind of mutex, in the cases where
 * kinds differ: relocking an error-checking mutex (EDEADLK), a recursive one (0), a robust
 * mutex whose owner died (EOWNERDEAD, then ENOTRECOVERABLE when not made consistent), and
 * a contended normal mutex.  Prints one line per case; the tracer must not change any.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t robust, contended = PTHREAD_MUTEX_INITIALIZER;

static void *die_holding(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&robust);
	return NULL; /* ends owning it */
}

static void *hold_a_while(void *arg)
{
	pthread_mutex_lock(&contended);
	*(volatile int *)arg = 1;
	usleep(20000);
	pthread_mutex_unlock(&contended);
	return NULL;
}

static void report(const char *what, int rc)
{
	printf("%s: %s\n", what, rc ? strerror(rc) : "0");
}

int main(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&m, &a);
	report("errorcheck lock", pthread_mutex_lock(&m));
	report("errorcheck relock", pthread_mutex_lock(&m));
	report("errorcheck unlock", pthread_mutex_unlock(&m));
	report("errorcheck unlock again", pthread_mutex_unlock(&m));
	pthread_mutex_destroy(&m);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&m, &a);
	report("recursive lock", pthread_mutex_lock(&m));
	report("recursive relock", pthread_mutex_lock(&m));
	report("recursive unlock", pthread_mutex_unlock(&m));
	report("recursive unlock", pthread_mutex_unlock(&m));
	pthread_mutex_destroy(&m);

	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&robust, &a);
	pthread_t th;
	pthread_create(&th, NULL, die_holding, NULL);
	pthread_join(th, NULL);
	report("robust, owner died", pthread_mutex_lock(&robust));
	report("robust unlock without consistent", pthread_mutex_unlock(&robust));
	report("robust, not recoverable", pthread_mutex_lock(&robust));
	pthread_mutexattr_destroy(&a);

	volatile int held = 0;
	pthread_create(&th, NULL, hold_a_while, (void *)&held);
	while (!held)
		sched_yield();
	report("contended lock", pthread_mutex_lock(&contended));
	report("contended unlock", pthread_mutex_unlock(&contended));
	pthread_join(th, NULL);
	return 0;
}
