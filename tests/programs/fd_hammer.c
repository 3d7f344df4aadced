// SPDX-License-Identifier: BSD-3-Clause
/*
 * fd_hammer - a program that treats high descriptors as its own while threads start:
 * it checks that 100..119 are free (fcntl F_GETFD), closes them one by one, with
 * close_range and with closefrom(3), and dup2s its stdout onto 100..103 to write through
 * them, between every batch of threads.  Untraced and traced it must print the same.
 *
 *   fd_hammer ROUNDS BATCH
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *worker(void *arg)
{
	volatile unsigned long x = (unsigned long)arg;
	for (int i = 0; i < 1000; i++)
		x = x * 6364136223846793005ul + 1;
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 50;
	int batch = argc > 2 ? atoi(argv[2]) : 8;
	if (rounds <= 0 || batch <= 0 || batch > 1024) {
		fprintf(stderr, "usage: fd_hammer ROUNDS BATCH\n");
		return 2;
	}
	pthread_t *th = calloc((size_t)batch, sizeof(*th));
	long open_seen = 0, close_ok = 0, written = 0;
	fflush(stdout);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < batch; i++)
			if (pthread_create(&th[i], NULL, worker, (void *)(unsigned long)i))
				return 1;
		for (int fd = 100; fd < 120; fd++)
			if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
				open_seen++;
		for (int fd = 100; fd < 110; fd++)
			if (close(fd) == 0)
				close_ok++;
		if (close_range(100, 130, 0) != 0 && errno != ENOSYS)
			return 3;
		closefrom(3);
		for (int fd = 100; fd < 104; fd++) {
			if (dup2(STDOUT_FILENO, fd) != fd)
				return 4;
			char line[32];
			int n = snprintf(line, sizeof(line), "round %d fd %d\n", r, fd);
			if (write(fd, line, (size_t)n) == n)
				written++;
			if (close(fd) != 0)
				return 5;
		}
		for (int i = 0; i < batch; i++)
			pthread_join(th[i], NULL);
	}
	printf("open before the program opened them: %ld\n", open_seen);
	printf("closed without having been opened: %ld\n", close_ok);
	printf("written through dup2'd numbers: %ld\n", written);
	free(th);
	return 0;
}
