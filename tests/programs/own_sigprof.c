// SPDX-License-Identifier: BSD-3-Clause
/*
 * own_sigprof - a program with its own profiling timer (ITIMER_PROF and a SIGPROF handler),
 * which the stack sampler must leave to it: it spins for 300 ms of CPU time and prints how
 * many SIGPROF it got; exit 0 when it got at least 20 (a 1 ms timer, ticks of 4 ms or less).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static volatile sig_atomic_t ticks;
static volatile unsigned long sink;

static void on_prof(int sig)
{
	(void)sig;
	ticks++;
}

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL))
		return perror("sigaction"), 2;
	struct itimerval it = {{0, 1000}, {0, 1000}};
	if (setitimer(ITIMER_PROF, &it, NULL))
		return perror("setitimer"), 2;
	double end = cpu_ms() + 300;
	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
	printf("sigprof %d\n", (int)ticks);
	return ticks >= 20 ? 0 : 1;
}
