// SPDX-License-Identifier: BSD-3-Clause
/*
 * rdfile.c - regular files only, read within the size they had at open (see rdfile.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdfile.h"

const char *rd_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	default:
		return "a special file";
	}
}

int rd_file_open(const char *path, uint64_t *size, char *err, size_t errlen)
{
	/* O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer.  A
	 * symbolic link is followed: fstat below sees what it leads to. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		errno = e;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is %s, not a regular file", path,
			 rd_file_kind(st.st_mode));
		close(fd);
		errno = EINVAL;
		return -1;
	}
	*size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
	return fd;
}

char *rd_file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	uint64_t size;
	int fd = rd_file_open(path, &size, err, errlen);
	if (fd < 0)
		return NULL;
	if (size > max) {
		snprintf(err, errlen, "%s: %llu bytes, more than the %zu this tool reads", path,
			 (unsigned long long)size, max);
		close(fd);
		return NULL;
	}
	char *buf = malloc((size_t)size + 1);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory", path);
		close(fd);
		return NULL;
	}
	size_t n = 0;
	while (n < size) { /* a file that shrinks ends early; one that grows is read to size */
		ssize_t k = read(fd, buf + n, (size_t)size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
			free(buf);
			close(fd);
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
}
