// SPDX-License-Identifier: BSD-3-Clause
/*
 * tsc_off - a program that turns the TSC off, or enters seccomp's strict mode, then goes on
 * calling traced functions.
 *
 *   tsc_off tsc PAIRS       the main thread turns the TSC off for itself (prctl PR_SET_TSC,
 *                           PR_TSC_SIGSEGV: rdtsc and the vDSO's clock_gettime raise
 *                           SIGSEGV), then locks and unlocks a mutex PAIRS times, starts a
 *                           thread (which inherits the setting) that does PAIRS more, joins it
 *   tsc_off seccomp PAIRS   a thread locks and unlocks PAIRS times, enters strict mode
 *                           (only read, write, exit and sigreturn allowed), does PAIRS more,
 *                           says so with write and leaves with the exit system call; the main
 *                           thread joins it and does PAIRS pairs of its own
 *
 * Prints "ok" at the end (the strict thread prints "strict ok" itself).
 */
#define _GNU_SOURCE
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static long pairs;

static void do_pairs(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
	}
}

static void *inherit(void *arg)
{
	(void)arg;
	do_pairs();
	return NULL;
}

static void *strict(void *arg)
{
	(void)arg;
	do_pairs();
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
		perror("tsc_off: PR_SET_SECCOMP");
		return (void *)1;
	}
	do_pairs(); /* uncontended: no system call */
	static const char msg[] = "strict ok\n";
	ssize_t w = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)w;
	syscall(SYS_exit, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "tsc") && strcmp(argv[1], "seccomp"))) {
		fprintf(stderr, "usage: tsc_off tsc|seccomp PAIRS\n");
		return 2;
	}
	pairs = atol(argv[2]);
	setvbuf(stdout, NULL, _IONBF, 0);
	pthread_t th;
	if (!strcmp(argv[1], "tsc")) {
		if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0) {
			perror("tsc_off: PR_SET_TSC");
			return 1;
		}
		do_pairs();
		if (pthread_create(&th, NULL, inherit, NULL) != 0)
			return 1;
		pthread_join(th, NULL);
	} else {
		if (pthread_create(&th, NULL, strict, NULL) != 0)
			return 1;
		pthread_join(th, NULL);
		do_pairs();
	}
	printf("ok\n");
	return 0;
}
