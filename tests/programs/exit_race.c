// SPDX-License-Identifier: BSD-3-Clause
/*
 * exit_race - the process ends while its threads still record.
 *
 *   exit_race COUNTS_FILE MS exit|_exit [THREADS]
 *
 * THREADS (default 3) threads lock and unlock a mutex of their own in a loop, a little work
 * between pairs, while the main thread sleeps MS milliseconds and then calls exit(0) or
 * _exit(0) without joining them.  Each thread counts the pairs it completed (the unlock
 * returned) in COUNTS_FILE, a shared file mapping that outlives the process: line i of the
 * file is "TID COUNT" for the i-th thread created (the count updated in place).  A test
 * compares them with the pairs the trace holds for each thread: every completed pair must
 * be there.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define LINE	    32 /* "%10u %20llu\n" */

static char *counts;
static volatile int started;

static void put(int i, unsigned tid, unsigned long long n)
{
	char buf[LINE + 1];
	snprintf(buf, sizeof(buf), "%10u %20llu\n", tid, n);
	memcpy(counts + i * LINE, buf, LINE);
}

static void *work(void *arg)
{
	int i = (int)(intptr_t)arg;
	unsigned tid = (unsigned)syscall(SYS_gettid);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	unsigned long long n = 0;
	put(i, tid, 0);
	__atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
	for (;;) {
		pthread_mutex_lock(&m);
		pthread_mutex_unlock(&m);
		n++;
		/* Only the low digits change, most of the time: a cheap update in place. */
		put(i, tid, n);
		for (volatile int k = 0; k < 20; k++)
			;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5 || (strcmp(argv[3], "exit") && strcmp(argv[3], "_exit"))) {
		fprintf(stderr, "usage: %s COUNTS_FILE MS exit|_exit [THREADS]\n", argv[0]);
		return 2;
	}
	int nthreads = argc == 5 ? atoi(argv[4]) : 3;
	if (nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "exit_race: THREADS must be 1..%d\n", MAX_THREADS);
		return 2;
	}
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)nthreads * LINE) != 0) {
		perror(argv[1]);
		return 1;
	}
	counts = mmap(NULL, (size_t)nthreads * LINE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counts == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (int i = 0; i < nthreads; i++)
		put(i, 0, 0);
	for (int i = 0; i < nthreads; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, work, (void *)(intptr_t)i) != 0) {
			fprintf(stderr, "exit_race: pthread_create failed\n");
			return 1;
		}
	}
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < nthreads)
		usleep(1000);
	long ms = atol(argv[2]);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	if (!strcmp(argv[3], "exit"))
		exit(0);
	_exit(0);
}
