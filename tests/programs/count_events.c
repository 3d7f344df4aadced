// SPDX-License-Identifier: BSD-3-Clause
/*
 * count_events - records a known number of events and returns from main.
 *
 *   count_events THREADS EVENTS
 *
 * Each of THREADS threads (plus the main thread, as thread "main") records EVENTS counter
 * values 0..EVENTS-1 through the annotation API, with a region around each tenth, and locks
 * and unlocks a shared mutex EVENTS/10 times.  The threads are created, then joined.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "libtrace/annotate.h"

static long events;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared;

static void *work(void *arg)
{
	(void)arg;
	for (long i = 0; i < events; i++) {
		if (i % 10 == 0) {
			ltr_region_begin("tenth");
			pthread_mutex_lock(&lock);
			shared++;
			pthread_mutex_unlock(&lock);
		}
		ltr_counter("i", i);
		if (i % 10 == 9 || i == events - 1)
			ltr_region_end("tenth");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS EVENTS\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]);
	events = atol(argv[2]);
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, work, NULL)) {
			perror("pthread_create");
			return 1;
		}
	work(NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	printf("shared=%ld\n", shared);
	free(th);
	return 0;
}
