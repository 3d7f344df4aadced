// SPDX-License-Identifier: BSD-3-Clause
/*
 * sampler.c - a CPU-bound program for bench/sampler.sh: THREADS threads each do a fixed
 * amount of integer work; prints the wall time and the CPU time the process's other
 * threads (the tracer's sampler and writer threads, when traced) used meanwhile.
 *
 *   bench_sampler THREADS ITERATIONS
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long iterations;
static pid_t workers[64];
static volatile unsigned long sink;

static void *work(void *arg)
{
	workers[(long)arg] = (pid_t)syscall(SYS_gettid);
	unsigned long x = (unsigned long)arg + 1;
	for (long i = 0; i < iterations; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink += x;
	return NULL;
}

/* Nanoseconds thread tid has run (schedstat: finer than stat's clock ticks). */
static unsigned long long cpu_ns(const char *tid)
{
	char path[300];
	snprintf(path, sizeof(path), "/proc/self/task/%s/schedstat", tid);
	FILE *f = fopen(path, "r");
	unsigned long long ns = 0;
	if (f) {
		if (fscanf(f, "%llu", &ns) != 1)
			ns = 0;
		fclose(f);
	}
	return ns;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long threads = atol(argv[1]);
	iterations = atol(argv[2]);
	if (threads < 1 || threads > 64)
		return 2;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pthread_t t[64];
	for (long i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, work, (void *)i);
	work((void *)0);
	for (long i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	/* The threads that are not the program's: whatever else lives in the process. */
	unsigned long long other = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)atoi(e->d_name);
		int mine = tid == getpid();
		for (long i = 0; i < threads; i++)
			mine |= workers[i] == tid;
		if (!mine)
			other += cpu_ns(e->d_name);
	}
	if (d)
		closedir(d);
	printf("%.6f %.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       (double)other / 1e6);
	return 0;
}
