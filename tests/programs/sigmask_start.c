// SPDX-License-Identifier: BSD-3-Clause
/*
 * sigmask_start - threads that start with a signal mask of their own, signalled at once.
 *
 *   sigmask_start ROUNDS THREADS
 *
 * Each round creates THREADS threads whose attributes carry an empty signal mask
 * (pthread_attr_setsigmask_np): glibc gives a new thread that mask itself, before any of
 * the thread's own code runs, so a signal can land anywhere in its first instructions,
 * inside malloc or free included.  Each is sent SIGUSR1 KILLS times (default 3), 0 to 40 us
 * after pthread_create returned; the handler calls sem_post.  The program counts the
 * allocations made inside its handler (its own malloc, calloc and realloc stand before the C
 * library's): with any, it prints how many and exits 1.  The threads of a round wait for each
 * other, allocate and free a little and end; then the round joins them.  Prints the handler's calls
 * (sem_getvalue) and "ok".
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static sem_t sem;

/*
 * The program's own malloc, calloc and realloc (found before the C library's, by the tracer
 * too) count the calls made while a handler of this program runs: the tracer registering a
 * thread there must not allocate, whether or not this run happens to interrupt malloc.
 */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static __thread int in_handler;
static int in_handler_allocs;

void *malloc(size_t n)
{
	if (in_handler)
		__atomic_fetch_add(&in_handler_allocs, 1, __ATOMIC_RELAXED);
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (in_handler)
		__atomic_fetch_add(&in_handler_allocs, 1, __ATOMIC_RELAXED);
	return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	if (in_handler)
		__atomic_fetch_add(&in_handler_allocs, 1, __ATOMIC_RELAXED);
	return __libc_realloc(p, n);
}
static pthread_barrier_t all_made;

static void on_usr1(int sig)
{
	(void)sig;
	in_handler = 1;
	sem_post(&sem);
	in_handler = 0;
}

static void *work(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_made);
	for (int i = 0; i < 8; i++) {
		void *p = malloc(64 + (size_t)i * 512);
		if (p)
			memset(p, i, 64);
		free(p);
	}
	return NULL;
}

static void spin_ns(unsigned ns)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < (long)ns);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: sigmask_start ROUNDS THREADS [KILLS]\n");
		return 2;
	}
	int rounds = atoi(argv[1]), n = atoi(argv[2]), kills = argc > 3 ? atoi(argv[3]) : 3;
	if (rounds < 1 || n < 1 || n > 1024) {
		fprintf(stderr, "sigmask_start: ROUNDS >= 1, THREADS 1..1024\n");
		return 2;
	}
	/* An arena per thread: a thread's first free then makes one, holding the allocator's
	 * locks through a few system calls, which is where a signal is most likely to land. */
	mallopt(M_ARENA_MAX, 4096);
	sem_init(&sem, 0, 0);
	pthread_barrier_init(&all_made, NULL, (unsigned)n + 1);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	sigset_t none;
	sigemptyset(&none);
	if (pthread_attr_setsigmask_np(&attr, &none) != 0) {
		fprintf(stderr, "sigmask_start: pthread_attr_setsigmask_np failed\n");
		return 1;
	}
	unsigned seed = (unsigned)getpid();
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	if (!th)
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++) {
			int e = pthread_create(&th[i], &attr, work, NULL);
			if (e) {
				fprintf(stderr, "sigmask_start: pthread_create: %s\n", strerror(e));
				return 1;
			}
			/* The first signal a moment later each time (0 to 40 us): one sent at once
			 * waits for the thread's mask to be set and lands before its first
			 * instruction of its own; later ones land anywhere after that. */
			spin_ns((unsigned)(rand_r(&seed) % 40000));
			for (int k = 0; k < kills; k++)
				pthread_kill(th[i], SIGUSR1);
		}
		pthread_barrier_wait(&all_made);
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
	}
	int v = 0;
	sem_getvalue(&sem, &v);
	printf("handler calls %d\nallocations in handlers %d\n", v, in_handler_allocs);
	if (in_handler_allocs)
		return 1;
	printf("ok\n");
	free(th);
	pthread_attr_destroy(&attr);
	return 0;
}
