// SPDX-License-Identifier: BSD-3-Clause
/*
 * storm - a thread storm: TOTAL short-lived threads created and joined in waves of WAVE,
 * next to POOL threads that are never joined (as an OpenMP runtime's pool).  Every thread
 * records its own number as counter "t" EVENTS times.  Prints the most descriptors it ever
 * had open, checked after each wave.
 *
 *   storm TOTAL WAVE POOL EVENTS
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libtrace/annotate.h"

static long events;
static pthread_barrier_t pool_ready;

static void *short_lived(void *arg)
{
	for (long i = 0; i < events; i++)
		ltr_counter("t", (long)arg);
	return NULL;
}

static void *pool_member(void *arg)
{
	short_lived(arg);
	pthread_barrier_wait(&pool_ready);
	for (;;)
		pause();
	return NULL;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the directory's own descriptor */
}

int main(int argc, char **argv)
{
	if (argc != 5)
		return 2;
	long total = atol(argv[1]), wave = atol(argv[2]), pool = atol(argv[3]);
	events = atol(argv[4]);
	pthread_t *th = calloc((size_t)(wave > pool ? wave : pool), sizeof(*th));
	pthread_barrier_init(&pool_ready, NULL, (unsigned)pool + 1);
	for (long i = 0; i < pool; i++)
		pthread_create(&th[i], NULL, pool_member, (void *)(total + i));
	pthread_barrier_wait(&pool_ready);
	int most = open_fds();
	for (long done = 0; done < total; done += wave) {
		long n = total - done < wave ? total - done : wave;
		for (long i = 0; i < n; i++)
			if (pthread_create(&th[i], NULL, short_lived, (void *)(done + i))) {
				perror("pthread_create");
				return 1;
			}
		for (long i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		int fds = open_fds();
		if (fds > most)
			most = fds;
	}
	printf("max_open_fds=%d\n", most);
	return 0;
}
