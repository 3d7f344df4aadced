// SPDX-License-Identifier: BSD-3-Clause
/*
 * raw_clone - a child process made by the clone system call itself, not by fork.
 *
 *   raw_clone PAIRS CHILD_PAIRS
 *
 * The main thread makes a child with syscall(SYS_clone, SIGCHLD, ...): a new process on a
 * copy of the parent's memory, made without fork, so no atfork handler runs in it.  The
 * child locks and unlocks a mutex CHILD_PAIRS times and leaves with _exit; the parent
 * meanwhile locks and unlocks its own PAIRS times, then waits for the child.  Prints the
 * child's exit status and the pairs each made.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void pairs(pthread_mutex_t *m, long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(m);
		pthread_mutex_unlock(m);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: raw_clone PAIRS CHILD_PAIRS\n");
		return 2;
	}
	long n = atol(argv[1]), child_n = atol(argv[2]);
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pairs(&m, 1); /* the main thread has recorded before the clone */
	fflush(stdout);
	long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0, 0, 0, 0);
	if (pid < 0) {
		perror("raw_clone: clone");
		return 1;
	}
	if (pid == 0) {
		pairs(&m, child_n);
		_exit(0);
	}
	pairs(&m, n - 1);
	int status = 0;
	if (waitpid((pid_t)pid, &status, 0) != (pid_t)pid) {
		perror("raw_clone: waitpid");
		return 1;
	}
	printf("child status %d, parent pairs %ld, child pairs %ld\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), n, child_n);
	return 0;
}
