// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_spawn - what starting a thread and forking a child cost: N create+join pairs of a
 * thread that returns at once, then M fork+waitpid of a child that _exits at once.  Prints
 * "thread_ns NS fork_us US": the mean cost of one pair, one fork.  The tracer adds to both
 * (a thread is registered before its signals are unblocked; the helper threads step aside
 * before a fork), which bench/spawn.sh shows side by side with the untraced program.
 *
 *   bench_spawn THREADS FORKS
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *nothing(void *arg)
{
	return arg;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 20000;
	long forks = argc > 2 ? atol(argv[2]) : 200;
	if (threads <= 0 || forks < 0) {
		fprintf(stderr, "usage: bench_spawn THREADS FORKS\n");
		return 2;
	}
	double t0 = now_ns();
	for (long i = 0; i < threads; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, nothing, NULL) || pthread_join(th, NULL))
			return 1;
	}
	double t1 = now_ns();
	for (long i = 0; i < forks; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	double t2 = now_ns();
	printf("thread_ns %.0f fork_us %.1f\n", (t1 - t0) / threads,
	       forks ? (t2 - t1) / forks / 1e3 : 0.0);
	return 0;
}
