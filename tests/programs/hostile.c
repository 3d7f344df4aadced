// SPDX-License-Identifier: BSD-3-Clause
/*
 * hostile - programs that make life hard for a tracer:
 *
 *   hostile segv N     installs its own SIGSEGV handler and recovers from N faults with
 *                      siglongjmp, recording a counter between faults
 *   hostile blocked N  threads that block every signal, take a mutex N times and record
 *
 * Prints what it saw; exit status 0 when it went as planned.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtrace/annotate.h"

static sigjmp_buf recover;
static volatile sig_atomic_t faults;
static long n;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void on_segv(int sig)
{
	(void)sig;
	faults++;
	siglongjmp(recover, 1);
}

static void *blocked(void *arg)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		ltr_counter("blocked", i);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	if (!strcmp(argv[1], "segv")) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_segv;
		sigaction(SIGSEGV, &sa, NULL);
		for (long i = 0; i < n; i++) {
			ltr_counter("between_faults", i);
			if (!sigsetjmp(recover, 1))
				*(volatile int *)(long)(16 + i % 7) = 1;
		}
		printf("recovered from %d faults\n", (int)faults);
		return faults == n ? 0 : 1;
	}
	if (!strcmp(argv[1], "blocked")) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, blocked, NULL);
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
		printf("done\n");
		return 0;
	}
	return 2;
}
