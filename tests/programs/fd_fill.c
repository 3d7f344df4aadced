// SPDX-License-Identifier: BSD-3-Clause
/*
 * fd_fill - opens descriptors until the process has no number left (EMFILE), one way.
 *
 *   fd_fill open|openat|socket|accept|pipe|fopen|opendir
 *
 * Prints "WAY N": how many descriptors it got.  Run untraced and traced under the same
 * `ulimit -n`, the two must agree.  accept: one listening socket, each new descriptor an
 * accepted connection of a socket connected to it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static long accepted(void)
{
	int lst = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	/* An abstract address: nothing on the file system. */
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "fd_fill.%d", (int)getpid());
	socklen_t len =
	    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	if (lst < 0 || bind(lst, (struct sockaddr *)&a, len) != 0 || listen(lst, 4) != 0)
		return -1;
	long n = 0;
	for (;;) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (c < 0)
			return n;
		n++;
		if (connect(c, (struct sockaddr *)&a, len) != 0)
			return -1;
		if (accept(lst, NULL, NULL) < 0)
			return n;
		n++;
	}
}

int main(int argc, char **argv)
{
	const char *way = argc > 1 ? argv[1] : "";
	long n = 0;
	if (!strcmp(way, "open")) {
		while (open("/dev/null", O_RDONLY) >= 0)
			n++;
	} else if (!strcmp(way, "openat")) {
		while (openat(AT_FDCWD, "/dev/null", O_RDONLY) >= 0)
			n++;
	} else if (!strcmp(way, "socket")) {
		while (socket(AF_UNIX, SOCK_STREAM, 0) >= 0)
			n++;
	} else if (!strcmp(way, "accept")) {
		n = accepted();
	} else if (!strcmp(way, "pipe")) {
		int p[2];
		while (pipe(p) == 0)
			n += 2;
		if (errno == EMFILE && open("/dev/null", O_RDONLY) >= 0)
			n++; /* the one number left, which a pipe needs two of */
	} else if (!strcmp(way, "fopen")) {
		while (fopen("/dev/null", "r"))
			n++;
	} else if (!strcmp(way, "opendir")) {
		while (opendir("/"))
			n++;
	} else {
		fprintf(stderr, "usage: fd_fill open|openat|socket|accept|pipe|fopen|opendir\n");
		return 2;
	}
	printf("%s %ld\n", way, n);
	return 0;
}
