// SPDX-License-Identifier: BSD-3-Clause
/*
 * file.c - the tracer's own files.  Programs close descriptors they did not open (daemons,
 * shells, closefrom), test whether a number is free (bash: fcntl(100, F_GETFD) before
 * `exec 100>file`) and dup2 onto numbers they chose.  The tracer's descriptors therefore
 * sit high, out of the numbers a program is given, and the descriptor wrappers
 * (interpose/fd.c) make them look closed to the program and move them out of the way of a
 * dup2.  Every use still checks that the descriptor names the file the tracer created, and
 * reopens the file by path otherwise (a raw close syscall, a library's close_range): the
 * tracer never writes through a descriptor it cannot vouch for.
 *
 * The calls on the tracer's own descriptors are raw syscalls: the wrappers would refuse
 * them, as they refuse the program.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lt.h"

/* The tracer's files (the ring, the events and the meta file): static structures. */
#define MAX_FILES 8
static LT_PAGE_ALIGNED struct lt_file *files[MAX_FILES];
/* Every descriptor of the tracer's that the program must not see (the files above and the
 * modules' sources): one bit per number below HIDE_BITS, a short list above. */
#define HIDE_BITS 4096
#define HIDE_HIGH 32
static uint64_t hide_bits[HIDE_BITS / 64];
static int hide_high[HIDE_HIGH]; /* fd + 1; 0: free */
/* Nonzero while this thread uses a tracer descriptor: a signal handler on it that moves
 * the descriptor must not wait for its own thread. */
static __thread int using_file LT_TLS;

/*
 * The file size limit (RLIMIT_FSIZE, `ulimit -f`): a write or ftruncate past it fails with
 * EFBIG and raises SIGXFSZ, whose default action ends the process.  While the limit is
 * finite, every use of a tracer file (lt_file_fd .. lt_file_done, outermost) blocks SIGXFSZ
 * on its thread and takes back a SIGXFSZ that the use raised before unblocking it: the
 * trace stops growing, what cannot be written is counted as lost, and the program lives.
 * A SIGXFSZ that was pending before is left to the program.  Raw system calls, kernel sigset
 * layout (64 signals).
 */
#define XFSZ_BIT (1ull << (SIGXFSZ - 1))
static __thread struct {
	int blocked;	 /* this use blocked SIGXFSZ */
	int was_pending; /* SIGXFSZ was pending already */
	uint64_t old;	 /* the mask before */
} xfsz LT_TLS;

static void xfsz_block(void)
{
	struct rlimit rl;
	uint64_t set = XFSZ_BIT, pend;
	xfsz.blocked = 0;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &xfsz.old, sizeof(set)) != 0)
		return;
	xfsz.blocked = 1;
	xfsz.was_pending = syscall(SYS_rt_sigpending, &pend, sizeof(pend)) == 0 && (pend & set);
}

static void xfsz_unblock(void)
{
	if (!xfsz.blocked)
		return;
	xfsz.blocked = 0;
	uint64_t set = XFSZ_BIT, pend;
	if (!xfsz.was_pending && syscall(SYS_rt_sigpending, &pend, sizeof(pend)) == 0 &&
	    (pend & set)) {
		struct timespec zero = {0, 0};
		syscall(SYS_rt_sigtimedwait, &set, NULL, &zero, sizeof(set));
	}
	if (!(xfsz.old & set))
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &set, NULL, sizeof(set));
}

static void sys_close(int fd)
{
	syscall(SYS_close, fd);
}

static int sys_dupfd(int fd, int from)
{
	return (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, from);
}

/*
 * A copy of fd on a descriptor the program will not be given: at or above the soft
 * RLIMIT_NOFILE, so that what the program may open is untouched (the soft limit is raised
 * for the one call, which the hard limit allows), or from LT_FD_BASE where the soft limit
 * is so high that numbers above it would cost the process a huge descriptor table.  Under
 * a hard limit that cannot be raised, the top numbers under it with a warning, unless that
 * would take a real share of what the program may open.  Closes fd; -errno on failure.
 */
int lt_fd_place(int fd)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	rlim_t soft = rl.rlim_cur;
	int high = -1;
	if (syscall(SYS_fcntl, fd, F_GETFD) < 0)
		return -EBADF; /* closed under us (a closefrom on another thread) */
	if (soft > 4096) {
		high = sys_dupfd(fd, LT_FD_BASE);
	} else if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max > soft) {
		rlim_t want = soft + 2 * MAX_FILES;
		struct rlimit raised = {want, rl.rlim_max};
		if (rl.rlim_max != RLIM_INFINITY && want > rl.rlim_max)
			raised.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
			high = sys_dupfd(fd, (int)soft);
			setrlimit(RLIMIT_NOFILE, &rl);
		}
	}
	if (high < 0 && soft >= 64 && soft <= 4096) {
		/* The top numbers under a hard limit we may not raise: most are left. */
		for (rlim_t b = soft - 1; high < 0 && b >= soft - 2 * MAX_FILES; b--)
			high = sys_dupfd(fd, (int)b);
		static int said;
		if (high >= 0 && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			lt_warn(
			    "the descriptor limit (ulimit -n %llu) cannot be raised: the tracer's "
			    "files take the top numbers under it",
			    (unsigned long long)soft);
	} else if (high < 0 && errno == EBADF) {
		/* closed meanwhile (a closefrom on another thread): no word about limits */
	} else if (high < 0) {
		static int warned;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			lt_warn(
			    "the descriptor limit (ulimit -n %llu) leaves no room for the tracer's "
			    "files beside the program's; not tracing",
			    (unsigned long long)soft);
		errno = EMFILE;
	}
	int err = errno;
	/* Hidden before the program could see it open (the close wrappers, fcntl). */
	lt_fd_hide(high);
	sys_close(fd);
	return high >= 0 ? high : -err;
}

void lt_fd_hide(int fd)
{
	if (fd < 0)
		return;
	if (fd < HIDE_BITS) {
		__atomic_fetch_or(&hide_bits[fd / 64], 1ull << (fd % 64), __ATOMIC_SEQ_CST);
		return;
	}
	for (int i = 0; i < HIDE_HIGH; i++) {
		int none = 0;
		if (__atomic_compare_exchange_n(&hide_high[i], &none, fd + 1, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return;
	}
}

/* Clears fd's mark: 1 when this call cleared it, 0 when it was not set (another thread's
 * call took it first). */
static int unhide(int fd)
{
	if (fd < 0)
		return 0;
	if (fd < HIDE_BITS) {
		uint64_t bit = 1ull << (fd % 64);
		return (__atomic_fetch_and(&hide_bits[fd / 64], ~bit, __ATOMIC_SEQ_CST) & bit) != 0;
	}
	for (int i = 0; i < HIDE_HIGH; i++) {
		int mine = fd + 1;
		if (__atomic_compare_exchange_n(&hide_high[i], &mine, 0, 0, __ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

void lt_fd_unhide(int fd)
{
	unhide(fd);
}

int lt_fd_hidden(int fd)
{
	if (fd < 0)
		return 0;
	if (fd < HIDE_BITS)
		return (__atomic_load_n(&hide_bits[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64)) & 1;
	for (int i = 0; i < HIDE_HIGH; i++)
		if (__atomic_load_n(&hide_high[i], __ATOMIC_ACQUIRE) == fd + 1)
			return 1;
	return 0;
}

static void remember(struct lt_file *f)
{
	for (int i = 0; i < MAX_FILES; i++)
		if (__atomic_load_n(&files[i], __ATOMIC_ACQUIRE) == f)
			return;
	for (int i = 0; i < MAX_FILES; i++) {
		struct lt_file *none = NULL;
		if (__atomic_compare_exchange_n(&files[i], &none, f, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return;
	}
}

/* Opens dir/name for the tracer alone: created here (O_EXCL), never through a symlink. */
int lt_file_create(struct lt_file *f, const char *dir, const char *name, int flags)
{
	lt_snprintf(f->path, sizeof(f->path), "%s/%s", dir, name);
	f->flags = flags;
	f->users = 0;
	int fd = open(f->path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	fd = lt_fd_place(fd);
	if (fd < 0) {
		unlink(f->path);
		return fd;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		lt_fd_unhide(fd);
		sys_close(fd);
		return -err;
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	remember(f);
	__atomic_store_n(&f->fd, fd, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Returns f's descriptor, reopening the file when the program closed ours (or reused its
 * number for a file of its own, which we must never touch).  -1 when the file is gone.
 */
int lt_file_fd(struct lt_file *f)
{
	/* Sequentially consistent with lt_file_vacate's store and load: either the move
	 * sees this use, or this use sees the new number. */
	__atomic_fetch_add(&f->users, 1, __ATOMIC_SEQ_CST);
	if (using_file++ == 0)
		xfsz_block();
	struct stat st;
	int fd = __atomic_load_n(&f->fd, __ATOMIC_SEQ_CST);
	if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f->dev && st.st_ino == f->ino)
		return fd;
	/* Closed behind our back (a raw syscall): the number's hidden mark stays, since
	 * another tracer file may hold it now. */
	fd = open(f->path, f->flags | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != f->dev || st.st_ino != f->ino)) {
		sys_close(fd);
		fd = -1;
	}
	if (fd >= 0)
		fd = lt_fd_place(fd);
	if (fd < 0) {
		lt_file_done(f);
		return -1;
	}
	lt_info("reopened %s (the program closed the tracer's descriptor)", f->path);
	__atomic_store_n(&f->fd, fd, __ATOMIC_RELEASE);
	return fd;
}

void lt_file_done(struct lt_file *f)
{
	if (--using_file == 0)
		xfsz_unblock();
	__atomic_fetch_sub(&f->users, 1, __ATOMIC_RELEASE);
}

void lt_file_close(struct lt_file *f)
{
	int fd = __atomic_exchange_n(&f->fd, -1, __ATOMIC_ACQ_REL);
	if (fd >= 0) {
		lt_fd_unhide(fd);
		sys_close(fd);
	}
}

size_t lt_fd_list(int *fds, size_t max)
{
	size_t n = 0;
	for (int w = 0; w < HIDE_BITS / 64 && n < max; w++)
		for (uint64_t b = __atomic_load_n(&hide_bits[w], __ATOMIC_ACQUIRE); b && n < max;
		     b &= b - 1)
			fds[n++] = w * 64 + __builtin_ctzll(b);
	for (int i = 0; i < HIDE_HIGH && n < max; i++) {
		int v = __atomic_load_n(&hide_high[i], __ATOMIC_ACQUIRE);
		if (!v)
			continue;
		size_t j = n++;
		for (; j > 0 && fds[j - 1] > v - 1; j--) /* in order after the bits */
			fds[j] = fds[j - 1];
		fds[j] = v - 1;
	}
	return n;
}

/* Waits, 2 s at most, for the uses of f that may have read its old number to end: not when
 * one of them is this thread's own, interrupted by the signal handler we are in. */
static void wait_for_users(struct lt_file *f)
{
	if (using_file)
		return;
	struct timespec start, now;
	lt_clock_gettime(CLOCK_MONOTONIC, &start);
	while (__atomic_load_n(&f->users, __ATOMIC_SEQ_CST) > 0) {
		sched_yield();
		lt_clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec - start.tv_sec > 2)
			break; /* a use stuck in I/O for seconds: the program goes first */
	}
}

void lt_file_vacate(int fd)
{
	/* A module's hidden source is simply given up: the module finds its number taken (it
	 * checks before every pread, which moves no offset of the program's) and opens it
	 * again. */
	lt_fd_unhide(fd);
	for (int i = 0; i < MAX_FILES; i++) {
		struct lt_file *f = __atomic_load_n(&files[i], __ATOMIC_ACQUIRE);
		if (!f || __atomic_load_n(&f->fd, __ATOMIC_ACQUIRE) != fd)
			continue;
		int moved = sys_dupfd(fd, LT_FD_BASE);
		/* No number free: the next use reopens the file by its path. */
		lt_fd_hide(moved);
		int expected = fd;
		if (!__atomic_compare_exchange_n(&f->fd, &expected, moved >= 0 ? moved : -1, 0,
						 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			/* lt_file_lift moved it meanwhile: our copy is not needed */
			lt_fd_unhide(moved);
			if (moved >= 0)
				sys_close(moved);
			continue;
		}
		/* A use that read the old number may still be in its write: let it finish before
		 * the program's file takes the number. */
		wait_for_users(f);
	}
}

int lt_file_lift(void)
{
	/* One at a time: two would raise the limit over each other and restore the raised
	 * one.  Another thread's lift in progress is waited for (yields, bounded: a signal
	 * handler may have interrupted it on this thread), then the caller tries again. */
	static int lifting;
	int saved = errno, moved = 0;
	if (__atomic_exchange_n(&lifting, 1, __ATOMIC_ACQUIRE)) {
		for (int i = 0; i < 10000 && __atomic_load_n(&lifting, __ATOMIC_ACQUIRE); i++)
			sched_yield();
		errno = saved;
		return 1;
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    (rl.rlim_max != RLIM_INFINITY && rl.rlim_max <= rl.rlim_cur))
		goto out;
	struct rlimit raised = {rl.rlim_cur + 2 * MAX_FILES, rl.rlim_max};
	if (rl.rlim_max != RLIM_INFINITY && raised.rlim_cur > rl.rlim_max)
		raised.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &raised) != 0)
		goto out;
	for (int i = 0; i < MAX_FILES; i++) {
		struct lt_file *f = __atomic_load_n(&files[i], __ATOMIC_ACQUIRE);
		int fd = f ? __atomic_load_n(&f->fd, __ATOMIC_ACQUIRE) : -1;
		if (fd < 0 || (rlim_t)fd >= rl.rlim_cur)
			continue;
		int high = sys_dupfd(fd, (int)rl.rlim_cur);
		if (high < 0)
			continue;
		lt_fd_hide(high);
		int expected = fd;
		if (!__atomic_compare_exchange_n(&f->fd, &expected, high, 0, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST)) {
			lt_fd_unhide(high); /* moved meanwhile (a dup2 onto it) */
			sys_close(high);
			continue;
		}
		wait_for_users(f);
		/* Closed by whoever clears its mark: a dup2 of the program onto it meanwhile
		 * (lt_file_vacate) cleared it first, and that dup2 replaces our copy. */
		if (unhide(fd))
			sys_close(fd);
		moved++;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	if (moved) {
		static int said;
		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			lt_info(
			    "the program used up its descriptors: the tracer's files moved above "
			    "the soft limit (ulimit -n %llu)",
			    (unsigned long long)rl.rlim_cur);
	}
out:
	__atomic_store_n(&lifting, 0, __ATOMIC_RELEASE);
	errno = saved;
	return moved > 0;
}

void lt_file_vacated_unused(int fd)
{
	if (!lt_fd_hidden(fd))
		sys_close(fd);
}
