// SPDX-License-Identifier: BSD-3-Clause
/*
 * steady - a long run at a steady event rate: THREADS threads each record RATE counter
 * values per second for SECONDS seconds (exactly RATE * SECONDS each), then the program
 * prints its peak resident set size.
 *
 *   steady THREADS RATE SECONDS
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libtrace/annotate.h"

static long rate, seconds;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *run(void *arg)
{
	long total = rate * seconds, batch = 1000;
	double start = now();
	for (long i = 0; i < total;) {
		for (long end = i + batch < total ? i + batch : total; i < end; i++)
			ltr_counter("steady", i);
		double due = start + (double)i / (double)rate;
		double wait = due - now();
		if (wait > 0) {
			struct timespec ts = {(time_t)wait,
					      (long)((wait - (double)(time_t)wait) * 1e9)};
			nanosleep(&ts, NULL);
		}
	}
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 4)
		return 2;
	int n = atoi(argv[1]);
	rate = atol(argv[2]);
	seconds = atol(argv[3]);
	pthread_t th[64];
	if (n < 1 || n > 64)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, run, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			printf("hwm_kb=%ld\n", atol(line + 6));
	if (f)
		fclose(f);
	return 0;
}
