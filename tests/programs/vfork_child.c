// SPDX-License-Identifier: BSD-3-Clause
/*
 * vfork_child - vfork from the main thread and from a second thread; each child locks and
 * unlocks a mutex before it execs or exits (on its parent's memory, its thread state
 * included), its parent locks and unlocks before and after.
 *
 *   vfork_child PAIRS CHILD_PAIRS PROGRAM
 *
 * The main thread: PAIRS pairs, a vfork whose child does CHILD_PAIRS pairs and execs
 * PROGRAM (no arguments), a wait; a vfork whose child does CHILD_PAIRS pairs and _exits with
 * 3, a wait; PAIRS pairs.  Then a thread that does PAIRS pairs, vforks a child that does
 * CHILD_PAIRS pairs and _exits, waits for it and returns at once (no traced call after the
 * vfork).  Prints "ok" when the exits and exec went as asked.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long pairs, child_pairs;
static const char *program;

static void do_pairs(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
}

/* A vforked child that does its pairs, then execs `prog` or (NULL) _exits with 3. */
static int vfork_and_wait(const char *prog)
{
	pid_t pid = vfork();
	if (pid == 0) {
		do_pairs(child_pairs);
		if (prog)
			execl(prog, prog, (char *)NULL);
		_exit(prog ? 127 : 3);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void *worker(void *arg)
{
	do_pairs(pairs);
	*(int *)arg = vfork_and_wait(NULL);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: vfork_child PAIRS CHILD_PAIRS PROGRAM\n");
		return 2;
	}
	pairs = atol(argv[1]);
	child_pairs = atol(argv[2]);
	program = argv[3];
	do_pairs(pairs);
	int exec_status = vfork_and_wait(program);
	int exit_status = vfork_and_wait(NULL);
	do_pairs(pairs);
	int thread_status = -1;
	pthread_t th;
	if (pthread_create(&th, NULL, worker, &thread_status) != 0)
		return 1;
	pthread_join(th, NULL);
	if (exec_status != 0 || exit_status != 3 || thread_status != 3) {
		printf("exec %d exit %d thread %d\n", exec_status, exit_status, thread_status);
		return 1;
	}
	puts("ok");
	return 0;
}
