// SPDX-License-Identifier: BSD-3-Clause
/*
 * as_limit - how far a program gets under an address-space limit (`ulimit -v`).
 *
 *   as_limit MAX_THREADS
 *
 * Starts threads (default attributes: an 8 MiB stack each, as the main thread's limit
 * says) that wait until released, until pthread_create fails or MAX_THREADS run; then
 * allocates 1 MiB blocks until malloc fails; prints "threads N" and "malloc M MiB", frees
 * and joins everything.  Run untraced and traced under the same limit, the two must agree.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static sem_t go;

static void *wait_for_go(void *arg)
{
	(void)arg;
	sem_wait(&go);
	return NULL;
}

int main(int argc, char **argv)
{
	int max = argc > 1 ? atoi(argv[1]) : 0;
	if (max < 1) {
		fprintf(stderr, "usage: as_limit MAX_THREADS\n");
		return 2;
	}
	sem_init(&go, 0, 0);
	pthread_t *th = calloc((size_t)max, sizeof(*th));
	if (!th)
		return 1;
	int n = 0;
	while (n < max && pthread_create(&th[n], NULL, wait_for_go, NULL) == 0)
		n++;
	printf("threads %d\n", n);
	for (int i = 0; i < n; i++)
		sem_post(&go);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	void **blocks = calloc(65536, sizeof(*blocks));
	if (!blocks)
		return 1;
	size_t m = 0;
	while (m < 65536 && (blocks[m] = malloc(1 << 20)))
		m++;
	printf("malloc %zu MiB\n", m);
	for (size_t i = 0; i < m; i++)
		free(blocks[i]);
	free(blocks);
	free(th);
	return 0;
}
