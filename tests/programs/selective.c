// SPDX-License-Identifier: BSD-3-Clause
/*
 * selective.c - traffic with a known shape for the selective-recording tests: regions and
 * calls that are long (milliseconds) or short (nanoseconds), nested, filtered by name,
 * and some made while recording is paused.  Every count is a constant below; the test
 * (tests/e2e/selective.sh) checks what a trace keeps under each setting.
 *
 *   selective [api|signal]   api: pause with ltr_trace_pause/resume; signal: raise the
 *                            toggle signal (SIGUSR2) instead; no argument: neither
 *   selective exit-storm     threads nesting short regions without end while the main
 *                            thread exits: the exit copies chunks that their producers
 *                            keep taking records back from (LIBTRACE_MIN_DURATION)
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "libtrace/annotate.h"

#define N_LONG	    3	 /* "long" regions of 3 ms */
#define N_SHORT	    1000 /* empty "short" regions */
#define N_NESTED    100	 /* "outer_short" holding one "inner_short" */
#define N_HOLDING   4	 /* "outer_long" (3 ms) holding N_INNER "inner_short" each */
#define N_INNER	    10
#define N_MARKED    5	 /* short "marked" regions holding a marker: kept */
#define N_SKIPPED   50	 /* "skip_me" regions (a filter's target) */
#define N_LOCKS	    2000 /* uncontended lock/unlock pairs */
#define N_CONTENDED 3	 /* locks that wait about 3 ms for the other thread */
#define N_HIDDEN    20	 /* "hidden" regions while paused */

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ready, held;

static void sleep_ms(int ms)
{
	struct timespec ts = {0, ms * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Holds the mutex for 3 ms each time the main thread is about to wait for it. */
static void *holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < N_CONTENDED; i++) {
		pthread_barrier_wait(&ready);
		pthread_mutex_lock(&m);
		pthread_barrier_wait(&held);
		sleep_ms(3);
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

static void *storm(void *arg)
{
	(void)arg;
	for (;;) {
		ltr_region_begin("storm_outer");
		for (int i = 0; i < 3; i++) {
			ltr_region_begin("storm_inner");
			ltr_region_end("storm_inner");
		}
		ltr_region_end("storm_outer");
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *pause_how = argc > 1 ? argv[1] : "";
	if (!strcmp(pause_how, "exit-storm")) {
		pthread_t st[2];
		for (int i = 0; i < 2; i++)
			pthread_create(&st[i], NULL, storm, NULL);
		sleep_ms(20);
		return 0; /* exit with both threads still at work */
	}
	pthread_barrier_init(&ready, NULL, 2);
	pthread_barrier_init(&held, NULL, 2);
	pthread_t th;
	pthread_create(&th, NULL, holder, NULL);

	for (int i = 0; i < N_LONG; i++) {
		ltr_region_begin("long");
		sleep_ms(3);
		ltr_region_end("long");
	}
	for (int i = 0; i < N_SHORT; i++) {
		ltr_region_begin("short");
		ltr_region_end("short");
	}
	for (int i = 0; i < N_NESTED; i++) {
		ltr_region_begin("outer_short");
		ltr_region_begin("inner_short");
		ltr_region_end("inner_short");
		ltr_region_end("outer_short");
	}
	for (int i = 0; i < N_HOLDING; i++) {
		ltr_region_begin("outer_long");
		for (int j = 0; j < N_INNER; j++) {
			ltr_region_begin("inner_short");
			ltr_region_end("inner_short");
		}
		sleep_ms(3);
		ltr_region_end("outer_long");
	}
	for (int i = 0; i < N_MARKED; i++) {
		ltr_region_begin("marked");
		ltr_marker("inside");
		ltr_region_end("marked");
	}
	for (int i = 0; i < N_SKIPPED; i++) {
		ltr_region_begin("skip_me");
		ltr_region_end("skip_me");
	}
	for (int i = 0; i < N_LOCKS; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
	for (int i = 0; i < N_CONTENDED; i++) {
		pthread_barrier_wait(&ready);
		pthread_barrier_wait(&held);
		pthread_mutex_lock(&m); /* waits while the holder sleeps */
		pthread_mutex_unlock(&m);
	}
	pthread_join(th, NULL);

	if (!strcmp(pause_how, "api"))
		ltr_trace_pause();
	else if (!strcmp(pause_how, "signal"))
		raise(SIGUSR2);
	for (int i = 0; i < N_HIDDEN; i++) {
		ltr_region_begin("hidden");
		sleep_ms(1);
		ltr_region_end("hidden");
	}
	if (!strcmp(pause_how, "api"))
		ltr_trace_resume();
	else if (!strcmp(pause_how, "signal"))
		raise(SIGUSR2);
	ltr_region_begin("after");
	ltr_region_end("after");
	printf("selective done\n");
	return 0;
}
