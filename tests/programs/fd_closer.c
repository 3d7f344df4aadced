// SPDX-License-Identifier: BSD-3-Clause
/*
 * fd_closer - a program that closes every descriptor above 2 in the middle of its run (as
 * daemons and shells do), then reuses the numbers for files of its own, and goes on
 * recording: the tracer must reopen its files, never write into the program's.
 *
 *   fd_closer EVENTS SCRATCH_DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtrace/annotate.h"

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	long n = atol(argv[1]);
	for (long i = 0; i < n / 2; i++)
		ltr_counter("i", i);
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	/* Take the numbers back with files of our own, then write known contents. */
	int fds[200];
	for (int i = 0; i < 200; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/f%d", argv[2], i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	}
	for (long i = n / 2; i < n; i++)
		ltr_counter("i", i);
	for (int i = 0; i < 200; i++) {
		if (fds[i] < 0 || write(fds[i], "mine\n", 5) != 5)
			return 3;
		close(fds[i]);
	}
	printf("done\n");
	return 0;
}
