// SPDX-License-Identifier: BSD-3-Clause
/*
 * file.c - the tracer's own files.  Programs close descriptors they did not open (daemons,
 * shells, closefrom) and reuse the numbers: every use of a tracer file first checks that
 * its descriptor still names the file the tracer created, and reopens the file by path
 * otherwise.  The tracer never writes through a descriptor it cannot vouch for.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt.h"

/* Opens dir/name for the tracer alone: created here (O_EXCL), never through a symlink. */
int lt_file_create(struct lt_file *f, const char *dir, const char *name, int flags)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->flags = flags;
	f->fd = open(f->path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (f->fd < 0)
		return -errno;
	/* Keep clear of the low descriptors programs reuse (dup2 onto 0..2 and friends). */
	int high = fcntl(f->fd, F_DUPFD_CLOEXEC, 100);
	if (high >= 0) {
		close(f->fd);
		f->fd = high;
	}
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		return -errno;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	return 0;
}

/*
 * Returns f's descriptor, reopening the file when the program closed ours (or reused its
 * number for a file of its own, which we must never touch).  -1 when the file is gone.
 */
int lt_file_fd(struct lt_file *f)
{
	struct stat st;
	if (f->fd >= 0 && fstat(f->fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
		return f->fd;
	int fd = open(f->path, f->flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino) {
		close(fd);
		return -1;
	}
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 100);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	lt_info("reopened %s (the program closed the tracer's descriptor)", f->path);
	f->fd = fd;
	return fd;
}
