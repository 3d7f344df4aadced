// SPDX-License-Identifier: BSD-3-Clause
/*
 * pthread_pipeline - a small but real pthreads program to trace: a reader thread feeds
 * blocks of numbers through a bounded queue (mutex + two condition variables) to a pool of
 * workers that count the primes in each block; the workers merge their counts under a
 * rwlock-protected table, meet at a barrier, and the main thread prints the total.
 *
 *   usage: pthread_pipeline [WORKERS [BLOCKS [BLOCK_SIZE]]]    (default 4 64 20000)
 *
 * It is annotated with the libtrace API (libtrace/annotate.h): run it as is and the calls
 * do nothing; run it under libtrace.so and they show up as regions and counters.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#include "libtrace/annotate.h"

#define QUEUE_LEN 8

struct queue {
	long items[QUEUE_LEN];
	int head, count, closed;
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
};

static struct queue q = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .not_empty = PTHREAD_COND_INITIALIZER,
    .not_full = PTHREAD_COND_INITIALIZER,
};
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static long primes_total, blocks_done;
static pthread_barrier_t done_barrier;
static sem_t ready;
static long nblocks, block_size;

static void queue_put(long v)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == QUEUE_LEN)
		pthread_cond_wait(&q.not_full, &q.lock);
	q.items[(q.head + q.count++) % QUEUE_LEN] = v;
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
}

/* Returns 0 and the next item, or -1 when the queue is closed and empty. */
static int queue_get(long *v)
{
	pthread_mutex_lock(&q.lock);
	while (q.count == 0 && !q.closed)
		pthread_cond_wait(&q.not_empty, &q.lock);
	int ret = -1;
	if (q.count > 0) {
		*v = q.items[q.head];
		q.head = (q.head + 1) % QUEUE_LEN;
		q.count--;
		pthread_cond_signal(&q.not_full);
		ret = 0;
	}
	pthread_mutex_unlock(&q.lock);
	return ret;
}

static int is_prime(long n)
{
	if (n < 2)
		return 0;
	for (long d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

static void *reader(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "reader");
	sem_wait(&ready); /* the workers are up */
	for (long b = 0; b < nblocks; b++)
		queue_put(b);
	pthread_mutex_lock(&q.lock);
	q.closed = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	return NULL;
}

static void *worker(void *arg)
{
	long id = (long)arg, block, mine = 0;
	sem_post(&ready);
	while (queue_get(&block) == 0) {
		ltr_region_begin("count_primes");
		long n = 0;
		for (long x = block * block_size; x < (block + 1) * block_size; x++)
			n += is_prime(x);
		ltr_region_end("count_primes");
		pthread_rwlock_wrlock(&table_lock);
		primes_total += n;
		blocks_done++;
		pthread_rwlock_unlock(&table_lock);
		mine++;
	}
	ltr_counter("blocks_per_worker", mine);
	pthread_barrier_wait(&done_barrier);
	(void)id;
	return NULL;
}

int main(int argc, char **argv)
{
	long workers = argc > 1 ? atol(argv[1]) : 4;
	nblocks = argc > 2 ? atol(argv[2]) : 64;
	block_size = argc > 3 ? atol(argv[3]) : 20000;
	if (workers < 1 || workers > 1024 || nblocks < 0 || block_size < 1) {
		fprintf(stderr, "usage: %s [WORKERS [BLOCKS [BLOCK_SIZE]]]\n", argv[0]);
		return 2;
	}
	ltr_region_begin("main");
	pthread_barrier_init(&done_barrier, NULL, (unsigned)workers);
	sem_init(&ready, 0, 0);
	pthread_t rd, *w = calloc((size_t)workers, sizeof(*w));
	if (!w)
		return 1;
	for (long i = 0; i < workers; i++)
		pthread_create(&w[i], NULL, worker, (void *)i);
	for (long i = 0; i < workers; i++)
		sem_wait(&ready); /* every worker is up */
	sem_post(&ready);	  /* let the reader start */
	pthread_create(&rd, NULL, reader, NULL);
	pthread_join(rd, NULL);
	for (long i = 0; i < workers; i++)
		pthread_join(w[i], NULL);
	pthread_rwlock_rdlock(&table_lock);
	printf("%ld primes below %ld in %ld blocks\n", primes_total, nblocks * block_size,
	       blocks_done);
	pthread_rwlock_unlock(&table_lock);
	ltr_region_end("main");
	free(w);
	return 0;
}
