// SPDX-License-Identifier: BSD-3-Clause
/*
 * big_tls - a program with a megabyte of static thread-local storage (as NPB EP's
 * `threadprivate` arrays), which glibc places at the top of every thread's stack.
 *
 *   big_tls THREADS PAIRS
 *
 * THREADS threads each fill their TLS array and lock and unlock a mutex PAIRS times.
 * Prints "ok" when every thread saw its own array.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread unsigned char big[1 << 20];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long pairs;

static void *work(void *arg)
{
	memset(big, (int)(size_t)arg, sizeof(big));
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	return (void *)(size_t)(big[0] == (unsigned char)(size_t)arg &&
				big[sizeof(big) - 1] == (unsigned char)(size_t)arg);
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[1]) : 0;
	pairs = argc > 2 ? atol(argv[2]) : 0;
	if (threads < 1 || threads > 64 || pairs < 1) {
		fprintf(stderr, "usage: big_tls THREADS PAIRS\n");
		return 2;
	}
	pthread_t th[64];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, work, (void *)(size_t)(i + 1)) != 0)
			return 1;
	int good = 0;
	for (int i = 0; i < threads; i++) {
		void *r;
		pthread_join(th[i], &r);
		good += r != NULL;
	}
	if (good != threads || big[0] != 0) {
		printf("%d of %d threads saw their own TLS\n", good, threads);
		return 1;
	}
	puts("ok");
	return 0;
}
