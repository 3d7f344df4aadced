// SPDX-License-Identifier: BSD-3-Clause
/*
 * fd.c - the program's descriptors are the program's.  The tracer holds a few files open
 * (core/file.c) on high numbers; to the program they must look as they would untraced,
 * that is closed:
 *   close, fcntl, fcntl64, dup  on one of them: -1/EBADF, the tracer's file stays open;
 *   fcntl F_DUPFD from below one of them: the copy lands where it would untraced;
 *   dup2, dup3 onto one of them: the tracer's file moves to another number first, then the
 *                                program's call runs (bash: `exec 100>file`);
 *   dup2, dup3 from one of them: -1/EBADF;
 *   close_range, closefrom:      close the program's numbers around the tracer's;
 *   open, socket, accept, pipe... (the calls that make a descriptor) failing with EMFILE
 *                                while the tracer's files sit under the soft limit: they
 *                                move above it, and the call is made again.
 * Calls on any other descriptor go straight through, after a look at a handful of numbers.
 * In the child of vfork, which shares our memory but has a descriptor table of its own,
 * everything goes straight through: the tracer's state there is the parent's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "../core/module.h"
#include "../common/modules.h"

/* Is fd a tracer file that the program must not see? */
static int hidden(int fd)
{
	return lt_fd_hidden(fd) && lt_is_traced_process();
}

static int ebadf(void)
{
	errno = EBADF;
	return -1;
}

static __typeof__(&close) real_close;

LT_EXPORT int close(int fd)
{
	LT_RESOLVE(close, NULL);
	if (hidden(fd))
		return ebadf();
	return real_close(fd);
}

static __typeof__(&dup) real_dup;

static int out_of_numbers(int ret);

LT_EXPORT int dup(int fd)
{
	LT_RESOLVE(dup, NULL);
	if (hidden(fd))
		return ebadf();
	int ret = real_dup(fd);
	if (out_of_numbers(ret)) /* see MAKES_FD below */
		ret = real_dup(fd);
	return ret;
}

static int (*real_fcntl)(int, int, ...);
static int (*real_fcntl64)(int, int, ...);

/* The argument is read as glibc reads it: one word, whatever the command. */
#define FCNTL_ARG(cmd, arg)             \
	va_list ap;                     \
	va_start(ap, cmd);              \
	void *arg = va_arg(ap, void *); \
	va_end(ap)

static __typeof__(&dup2) real_dup2;
static __typeof__(&dup3) real_dup3;

static int call_dup2(int from, int to, int flags)
{
	(void)flags;
	return real_dup2(from, to);
}

static int sys_dup3(int from, int to, int flags)
{
	return (int)syscall(SYS_dup3, from, to, flags);
}

/* dup2 or dup3 (through `call`) from `from` onto `to`, the tracer's file moved off `to`. */
static int dup_onto(int (*call)(int, int, int), int from, int to, int flags)
{
	if (hidden(from))
		return ebadf();
	if (from == to || !hidden(to))
		return call(from, to, flags);
	lt_file_vacate(to);
	int ret = call(from, to, flags);
	if (ret < 0) {
		int saved = errno;
		lt_file_vacated_unused(to);
		errno = saved;
	}
	return ret;
}

/*
 * F_DUPFD and F_DUPFD_CLOEXEC give the lowest free number from `min` on.  The kernel skips
 * the tracer's numbers, which the program would have got untraced (a soft descriptor limit
 * above 4096 puts them from 100 on: `fcntl(1, F_DUPFD, 100)` gave 103): the lowest of ours
 * in [min, got) is vacated and the copy made there instead.
 */
static int dupfd_as_untraced(int fd, int cmd, int min, int got)
{
	if (got <= min || min < 0 || !lt_is_traced_process())
		return got;
	for (int h = min; h < got; h++) {
		if (!lt_fd_hidden(h))
			continue;
		int ret = dup_onto(sys_dup3, fd, h, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0);
		if (ret < 0)
			return got; /* the copy the kernel made stands */
		syscall(SYS_close, got);
		return h;
	}
	return got;
}

LT_EXPORT int fcntl(int fd, int cmd, ...)
{
	FCNTL_ARG(cmd, arg);
	LT_RESOLVE(fcntl, NULL);
	if (hidden(fd))
		return ebadf();
	int ret = real_fcntl(fd, cmd, arg);
	if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		ret = dupfd_as_untraced(fd, cmd, (int)(intptr_t)arg, ret);
	return ret;
}

LT_EXPORT int fcntl64(int fd, int cmd, ...)
{
	FCNTL_ARG(cmd, arg);
	LT_RESOLVE(fcntl64, NULL);
	if (hidden(fd))
		return ebadf();
	int ret = real_fcntl64(fd, cmd, arg);
	if (ret >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))
		ret = dupfd_as_untraced(fd, cmd, (int)(intptr_t)arg, ret);
	return ret;
}

LT_EXPORT int dup2(int from, int to)
{
	LT_RESOLVE(dup2, NULL);
	return dup_onto(call_dup2, from, to, 0);
}

LT_EXPORT int dup3(int from, int to, int flags)
{
	LT_RESOLVE(dup3, NULL);
	return dup_onto(real_dup3, from, to, flags);
}

/* close_range(2) over [first, last] minus the tracer's numbers.  0 or -1/errno. */
static int close_around(unsigned first, unsigned last, int flags)
{
	int ours[64];
	size_t n = lt_is_traced_process() ? lt_fd_list(ours, 64) : 0;
	unsigned lo = first;
	for (size_t i = 0; i < n && lo <= last; i++) {
		unsigned fd = (unsigned)ours[i];
		if (fd < lo || fd > last)
			continue;
		if (fd > lo && syscall(SYS_close_range, lo, fd - 1, flags) != 0)
			return -1;
		lo = fd + 1;
	}
	if (lo > last || lo < first) /* done, or wrapped past UINT_MAX */
		return 0;
	return (int)syscall(SYS_close_range, lo, last, flags);
}

LT_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	return close_around(first, last, flags);
}

LT_EXPORT void closefrom(int lowfd)
{
	int saved = errno;
	if (lowfd < 0)
		lowfd = 0;
	if (close_around((unsigned)lowfd, ~0u, 0) != 0) {
		/* No close_range (Linux < 5.9): every number up to the table's size. */
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = lowfd; fd < max; fd++)
			if (!hidden((int)fd))
				syscall(SYS_close, (int)fd);
	}
	errno = saved;
}

/* Always on: the tracer's descriptors stay hidden whatever LIBTRACE_MODULES says. */
LT_MODULE(fd) = {.name = "fd", .order = 25};

/*
 * The calls that make a descriptor.  Where the soft descriptor limit is over 4096 the
 * tracer's files sit from LT_FD_BASE on, under it (numbers above a limit of a million would
 * cost every process a descriptor table of megabytes): a program that opens until EMFILE
 * would get 3 fewer.  So when one of these fails with EMFILE, the files move above the
 * limit (the program's table spans it by then anyway) and the call is made again.  The C
 * library's streams and directories (fopen, opendir, tmpfile) open through calls of its
 * own, so they are wrapped too; what else opens inside the C library (popen, a resolver's
 * socket) gets the numbers once any of these has run out.
 */
static int out_of_numbers(int ret)
{
	return ret < 0 && errno == EMFILE && lt_is_traced_process() && lt_file_lift();
}

#define MAKES_FD(name, params, args)            \
	static __typeof__(&name) real_##name;   \
	LT_EXPORT int name params               \
	{                                       \
		LT_RESOLVE(name, NULL);         \
		int ret = real_##name args;     \
		if (out_of_numbers(ret))        \
			ret = real_##name args; \
		return ret;                     \
	}

MAKES_FD(socket, (int domain, int type, int protocol), (domain, type, protocol))
MAKES_FD(socketpair, (int domain, int type, int protocol, int sv[2]), (domain, type, protocol, sv))
MAKES_FD(accept, (int fd, struct sockaddr *restrict addr, socklen_t *restrict len), (fd, addr, len))
MAKES_FD(accept4, (int fd, struct sockaddr *restrict addr, socklen_t *restrict len, int flags),
	 (fd, addr, len, flags))
MAKES_FD(pipe, (int fds[2]), (fds))
MAKES_FD(pipe2, (int fds[2], int flags), (fds, flags))
MAKES_FD(eventfd, (unsigned int count, int flags), (count, flags))
MAKES_FD(epoll_create, (int size), (size))
MAKES_FD(epoll_create1, (int flags), (flags))
MAKES_FD(timerfd_create, (int clock, int flags), (clock, flags))
MAKES_FD(signalfd, (int fd, const sigset_t *mask, int flags), (fd, mask, flags))
MAKES_FD(inotify_init, (void), ())
MAKES_FD(inotify_init1, (int flags), (flags))
MAKES_FD(memfd_create, (const char *name, unsigned int flags), (name, flags))
MAKES_FD(creat, (const char *path, mode_t mode), (path, mode))
MAKES_FD(creat64, (const char *path, mode_t mode), (path, mode))

/* open and openat take a mode only with O_CREAT or O_TMPFILE, as glibc reads it. */
#define OPEN_MODE(flags, mode)                                     \
	mode_t mode = 0;                                           \
	if ((flags)&O_CREAT || ((flags)&O_TMPFILE) == O_TMPFILE) { \
		va_list ap;                                        \
		va_start(ap, flags);                               \
		mode = va_arg(ap, mode_t);                         \
		va_end(ap);                                        \
	}

#define MAKES_FD_OPEN(name)                                   \
	static int (*real_##name)(const char *, int, ...);    \
	LT_EXPORT int name(const char *path, int flags, ...)  \
	{                                                     \
		OPEN_MODE(flags, mode);                       \
		LT_RESOLVE(name, NULL);                       \
		int ret = real_##name(path, flags, mode);     \
		if (out_of_numbers(ret))                      \
			ret = real_##name(path, flags, mode); \
		return ret;                                   \
	}
#define MAKES_FD_OPENAT(name)                                         \
	static int (*real_##name)(int, const char *, int, ...);       \
	LT_EXPORT int name(int dir, const char *path, int flags, ...) \
	{                                                             \
		OPEN_MODE(flags, mode);                               \
		LT_RESOLVE(name, NULL);                               \
		int ret = real_##name(dir, path, flags, mode);        \
		if (out_of_numbers(ret))                              \
			ret = real_##name(dir, path, flags, mode);    \
		return ret;                                           \
	}
MAKES_FD_OPEN(open)
MAKES_FD_OPEN(open64)
MAKES_FD_OPENAT(openat)
MAKES_FD_OPENAT(openat64)
/* _FORTIFY_SOURCE's checked opens (no mode: they refuse O_CREAT without one), which its
 * headers alone declare. */
extern int __open_2(const char *path, int flags);
extern int __open64_2(const char *path, int flags);
extern int __openat_2(int dir, const char *path, int flags);
extern int __openat64_2(int dir, const char *path, int flags);
MAKES_FD(__open_2, (const char *path, int flags), (path, flags))
MAKES_FD(__open64_2, (const char *path, int flags), (path, flags))
MAKES_FD(__openat_2, (int dir, const char *path, int flags), (dir, path, flags))
MAKES_FD(__openat64_2, (int dir, const char *path, int flags), (dir, path, flags))

/* The same for the calls that return a stream or a directory (NULL and EMFILE: out). */
#define MAKES_FD_PTR(type, name, params, args)  \
	static __typeof__(&name) real_##name;   \
	LT_EXPORT type *name params             \
	{                                       \
		LT_RESOLVE(name, NULL);         \
		type *ret = real_##name args;   \
		if (!ret && out_of_numbers(-1)) \
			ret = real_##name args; \
		return ret;                     \
	}
MAKES_FD_PTR(FILE, fopen, (const char *restrict path, const char *restrict mode), (path, mode))
MAKES_FD_PTR(FILE, fopen64, (const char *restrict path, const char *restrict mode), (path, mode))
MAKES_FD_PTR(FILE, tmpfile, (void), ())
MAKES_FD_PTR(FILE, tmpfile64, (void), ())
MAKES_FD_PTR(DIR, opendir, (const char *path), (path))
