// SPDX-License-Identifier: BSD-3-Clause
/*
 * flight - numbered records in more threads than a small ring keeps (tests/e2e/flight.sh).
 *
 *   flight THREADS EVENTS [GO_FILE]
 *
 * The main thread and THREADS more each open a region "run", then record EVENTS steps: a
 * region "step" around a counter "i" with the values 0, 1, 2...  With GO_FILE, the main
 * thread then prints "ready" and waits until GO_FILE exists (the test looks at the trace
 * files meanwhile, signals or kills the process), and every thread records EVENTS more
 * steps (values EVENTS .. 2 EVENTS - 1).  Then each closes "run" and main returns.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "libtrace/annotate.h"

static long events;
static pthread_barrier_t phase;
static const char *go;

static void steps(long from)
{
	for (long i = from; i < from + events; i++) {
		ltr_region_begin("step");
		ltr_counter("i", i);
		ltr_region_end("step");
	}
}

static void *work(void *arg)
{
	(void)arg;
	ltr_region_begin("run");
	steps(0);
	if (go) {
		pthread_barrier_wait(&phase); /* every thread's first half recorded */
		pthread_barrier_wait(&phase); /* the go file is there */
		steps(events);
	}
	ltr_region_end("run");
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s THREADS EVENTS [GO_FILE]\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]);
	events = atol(argv[2]);
	go = argc == 4 ? argv[3] : NULL;
	pthread_barrier_init(&phase, NULL, (unsigned)n + 1);
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, work, NULL)) {
			perror("pthread_create");
			return 1;
		}
	if (go) {
		ltr_region_begin("run");
		steps(0);
		pthread_barrier_wait(&phase);
		printf("ready\n");
		fflush(stdout);
		struct timespec ts = {0, 10 * 1000 * 1000};
		while (access(go, F_OK) != 0)
			nanosleep(&ts, NULL);
		pthread_barrier_wait(&phase);
		steps(events);
		ltr_region_end("run");
	} else {
		work(NULL);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);
	printf("done\n");
	return 0;
}
