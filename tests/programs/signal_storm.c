// SPDX-License-Identifier: BSD-3-Clause
/*
 * signal_storm - signal handlers that call traced functions at every moment of a thread's
 * life.  Threads are started BATCH at a time; each is sent SIGUSR1 the moment
 * pthread_create returns (while the tracer may still be setting it up) and again as it
 * ends, and a SIGALRM timer fires every 100 us at whichever thread runs.  The handlers
 * call sem_post, pthread_mutex_trylock/unlock and ltr_marker, all of which are traced and
 * async-signal-safe (the annotation API promises it).  A hang here is the bug.
 *
 *   signal_storm ROUNDS BATCH
 * prints "handled N" (N > 0) and "done".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include <libtrace/annotate.h>

static sem_t sem;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	(void)sig;
	sem_post(&sem);
	if (pthread_mutex_trylock(&mutex) == 0)
		pthread_mutex_unlock(&mutex);
	ltr_marker("signal");
	handled = handled + 1;
}

static void *worker(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005ul + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	int batch = argc > 2 ? atoi(argv[2]) : 64;
	if (rounds <= 0 || batch <= 0 || batch > 4096) {
		fprintf(stderr, "usage: signal_storm ROUNDS BATCH (1..4096)\n");
		return 2;
	}
	sem_init(&sem, 0, 0);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = {{0, 100}, {0, 100}};
	setitimer(ITIMER_REAL, &it, NULL);
	pthread_t *th = calloc((size_t)batch, sizeof(*th));
	if (!th)
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < batch; i++) {
			while (pthread_create(&th[i], NULL, worker, (void *)(unsigned long)i) != 0)
				;
			pthread_kill(th[i], SIGUSR1); /* while it is being set up */
		}
		for (int i = 0; i < batch; i++) {
			pthread_kill(th[i], SIGUSR1); /* running, ending or gone: ESRCH is fine */
			pthread_join(th[i], NULL);
		}
	}
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	printf("handled %s\n", handled > 0 ? "some" : "none");
	printf("done\n");
	free(th);
	return 0;
}
