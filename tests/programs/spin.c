// SPDX-License-Identifier: BSD-3-Clause
/*
 * spin - records counter values 0, 1, 2, ... forever on THREADS threads, and after each one
 * mirrors the count into a MAP_SHARED file (one 64-bit slot per thread), so that whoever
 * kills it knows how far each thread had got.
 *
 *   spin THREADS MIRROR_FILE [hog]
 *
 * With "hog", the main thread records nothing: after 200 ms it allocates and touches memory
 * until the kernel's OOM killer (under a memory limit) ends the process.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "libtrace/annotate.h"

static volatile uint64_t *mirror;

static void *run(void *arg)
{
	long slot = (long)arg;
	for (uint64_t i = 0;; i++) {
		ltr_counter("spin", (int64_t)i);
		mirror[slot] = i + 1;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4)
		return 2;
	int n = atoi(argv[1]);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || n < 1 || n > 64 || ftruncate(fd, 64 * 8) != 0)
		return 2;
	mirror = mmap(NULL, 64 * 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (mirror == MAP_FAILED)
		return 2;
	pthread_t th;
	for (long i = 1; i < n; i++)
		pthread_create(&th, NULL, run, (void *)i);
	if (argc == 4 && !strcmp(argv[3], "hog")) {
		struct timespec pause = {0, 200 * 1000 * 1000};
		nanosleep(&pause, NULL);
		for (;;) {
			char *p = malloc(16 << 20);
			if (p)
				memset(p, 1, 16 << 20);
		}
	}
	run(0);
	return 0;
}
