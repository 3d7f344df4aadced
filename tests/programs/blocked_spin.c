// SPDX-License-Identifier: BSD-3-Clause
/*
 * blocked_spin - two threads spin for 200 ms of CPU time each: the main thread, and one that
 * blocks every signal first (the stack sampler must simply not sample it).  Then it forks a
 * child that spins 100 ms and execs /bin/true: sampling goes on in the child and ends cleanly
 * at exec.  Prints "ok" and exits 0 when the child did.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static void spin_ms(double ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	double end = ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 + ms;
	for (;;) {
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		if (ts.tv_sec * 1e3 + ts.tv_nsec / 1e6 >= end)
			break;
	}
}

static void *blocked(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	spin_ms(200);
	return NULL;
}

int main(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, blocked, NULL))
		return 2;
	spin_ms(200);
	pthread_join(th, NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		spin_ms(100);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 1;
	puts("ok");
	return 0;
}
