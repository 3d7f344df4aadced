// SPDX-License-Identifier: BSD-3-Clause
/*
 * stderr_closer - closes stderr, opens a file of its own (which gets descriptor 2), writes
 * to it and exits: the tracer must not write its exit line into the program's file.
 *
 *   stderr_closer FILE
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	close(2);
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd != 2)
		return 3;
	const char msg[] = "program data\n";
	if (write(fd, msg, strlen(msg)) != (ssize_t)strlen(msg))
		return 4;
	return 0;
}
