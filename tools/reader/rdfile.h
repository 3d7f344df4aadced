/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdfile.h - the one way the tools open a file they read (trace files, saved profiles,
 * archive anchors): a regular file only, opened without waiting, and read no further than
 * the size it had when it was opened.  A trace directory is not trusted: its files may be
 * FIFOs (an open or a read would wait for ever), devices (/dev/zero, /dev/urandom never
 * end) or files that grow while they are read.
 */
#ifndef LIBTRACE_RDFILE_H
#define LIBTRACE_RDFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Opens path read-only (O_NONBLOCK, O_CLOEXEC, O_NOCTTY), if it is a regular file.  Returns
 * the descriptor, with *size the file's size at that moment (read no further); or -1, with
 * errno set (EINVAL for a file that is not a regular one) and `err` saying why and naming
 * the file: "PATH: No such file or directory", "PATH is a FIFO, not a regular file".
 */
int rd_file_open(const char *path, uint64_t *size, char *err, size_t errlen);

/*
 * Reads the whole of the regular file path, as far as its size at open: returns a malloc'd
 * buffer of *len bytes with a NUL after them, or NULL with `err` naming the file (not a
 * regular file, larger than max bytes, a read error, out of memory).
 */
char *rd_file_read(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* What a file of this mode is, for messages: "a FIFO", "a character device"... */
const char *rd_file_kind(mode_t mode);

#endif /* LIBTRACE_RDFILE_H */
