// SPDX-License-Identifier: BSD-3-Clause
/*
 * count_events - records a known number of events and returns from main.
 *
 *   count_events THREADS EVENTS [private]
 *
 * Each of THREADS threads (plus the main thread, as thread "main") records EVENTS counter
 * values 0..EVENTS-1 through the annotation API, with a region around each tenth, and locks
 * and unlocks a shared mutex EVENTS/10 times.  The threads are created, then joined.
 * With "private", each thread locks a mutex of its own: never contended, each lock is one
 * record (the tracer tries the lock first), so the number of records is exact: the tests
 * that account for every event use it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtrace/annotate.h"

static long events;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared;

static void *work(void *arg)
{
	pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_t *m = arg ? &own : &lock;
	for (long i = 0; i < events; i++) {
		if (i % 10 == 0) {
			ltr_region_begin("tenth");
			pthread_mutex_lock(m);
			__atomic_add_fetch(&shared, 1, __ATOMIC_RELAXED);
			pthread_mutex_unlock(m);
		}
		ltr_counter("i", i);
		if (i % 10 == 9 || i == events - 1)
			ltr_region_end("tenth");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "private"))) {
		fprintf(stderr, "usage: %s THREADS EVENTS [private]\n", argv[0]);
		return 2;
	}
	void *mode = argc == 4 ? argv[3] : NULL;
	int n = atoi(argv[1]);
	events = atol(argv[2]);
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, work, mode)) {
			perror("pthread_create");
			return 1;
		}
	work(mode);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("shared=%ld\n", shared);
	free(th);
	return 0;
}
