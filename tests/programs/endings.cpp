// SPDX-License-Identifier: BSD-3-Clause
/*
 * endings - records a known number of events on two threads, then ends in the way asked:
 *
 *   endings MODE N
 *
 * MODE: return, exit, _exit, abort, throw (uncaught C++ exception), segv, bus, term, int,
 * term-handler / int-handler (the program's own handler records a marker and exits 42),
 * exec (into /bin/true).  The main thread and a second thread (still alive at the end) each
 * record counter values 0..N-1 ("main" and "worker") before the ending.
 */
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdexcept>
#include <sys/mman.h>
#include <unistd.h>

#include "libtrace/annotate.h"

static long n;
static sem_t recorded;

static void *worker(void *)
{
	for (long i = 0; i < n; i++)
		ltr_counter("worker", i);
	sem_post(&recorded);
	for (;;)
		pause(); /* alive until the process ends */
	return nullptr;
}

static void handler(int sig)
{
	ltr_marker(sig == SIGTERM ? "got SIGTERM" : "got SIGINT");
	_exit(42);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s MODE N\n", argv[0]);
		return 2;
	}
	const char *mode = argv[1];
	n = atol(argv[2]);
	sem_init(&recorded, 0, 0);
	pthread_t th;
	pthread_create(&th, nullptr, worker, nullptr);
	if (!strcmp(mode, "term-handler"))
		signal(SIGTERM, handler);
	if (!strcmp(mode, "int-handler"))
		signal(SIGINT, handler);
	for (long i = 0; i < n; i++)
		ltr_counter("main", i);
	sem_wait(&recorded);
	fflush(stdout);
	if (!strcmp(mode, "return"))
		return 7;
	if (!strcmp(mode, "exit"))
		exit(7);
	if (!strcmp(mode, "_exit"))
		_exit(7);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "throw"))
		throw std::runtime_error("nobody catches this");
	if (!strcmp(mode, "segv"))
		*(volatile int *)nullptr = 1;
	if (!strcmp(mode, "bus")) {
		/* A mapping beyond the end of its file. */
		char path[] = "/tmp/libtrace-endings-XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		volatile char *p = (volatile char *)mmap(nullptr, 8192, PROT_READ | PROT_WRITE,
							 MAP_SHARED, fd, 0);
		p[4096] = 1;
	}
	if (!strcmp(mode, "term") || !strcmp(mode, "term-handler"))
		raise(SIGTERM);
	if (!strcmp(mode, "int") || !strcmp(mode, "int-handler"))
		raise(SIGINT);
	if (!strcmp(mode, "exec"))
		execl("/bin/true", "true", (char *)nullptr);
	fprintf(stderr, "unknown mode %s\n", mode);
	return 2;
}
