// SPDX-License-Identifier: BSD-3-Clause
/*
 * sampler.c - the sampler thread: every LIBTRACE_SAMPLE_PERIOD it runs the samplers chosen
 * by LIBTRACE_SAMPLERS (energy, temperature, memory, cpu), which write METRIC and CPU
 * records into the thread's own ring.  The meta file names the thread ("sampler INDEX"), so
 * the converter shows its records as metrics and never as a program thread.
 *
 * The thread is created with the real pthread_create (the program's thread list does not
 * change), blocks every signal, never takes a lock the program could hold, and stops at
 * process end.  It starts when the process gets its second thread (the threaded hook: the
 * program's first pthread_create, or the writer's start once the trace fills a chunk), so a
 * single-threaded process that records little stays single-threaded (ARMED until then;
 * LIBTRACE_SAMPLER_START=now starts it with the process, and so does the default, auto, when
 * LIBTRACE_SAMPLE_PERIOD or LIBTRACE_SAMPLERS asks for samples).  Its state word says whether it is
 * at work (BUSY: starting, sampling) or idle between two samples, or not begun yet (RUNNING); the
 * end_stop hook takes an idle sampler over (TAKEN: the thread will touch nothing more, its end is
 * written by the exiting thread, nobody waits for it to be scheduled) and waits for a busy one a
 * bounded time (100 ms), so that exit is never blocked.  After fork the child starts a sampler of
 * its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../core/lock.h"
#include "sampler.h"

static const struct smp_ops *const all_ops[] = {&smp_rapl, &smp_thermal, &smp_memory, &smp_cpu};
#define NOPS (sizeof(all_ops) / sizeof(all_ops[0]))

/*
 * IDLE -> ARMED (waiting for a second thread) -> RUNNING, or ARMED -> IDLE at the end;
 * RUNNING <-> BUSY (only the thread moves between these two), then STOPPING -> DONE
 * (asked while busy, or from a signal handler: the thread ends itself), RUNNING -> TAKEN
 * (taken over while idle: the stopping thread ends it), and RUNNING or BUSY -> PAUSING ->
 * PAUSED -> RUNNING.
 */
enum { S_IDLE = 0, S_RUNNING, S_STOPPING, S_DONE, S_PAUSING, S_PAUSED, S_BUSY, S_TAKEN, S_ARMED };

enum { START_AUTO = 0, START_THREADED, START_NOW }; /* LIBTRACE_SAMPLER_START */

#define SAMPLER_INDEX 0xfffffff0u /* the sampler thread's index (meta "sampler") */

static struct {
	uint32_t state;	     /* S_*: the futex word the thread sleeps on */
	uint32_t index;	     /* the sampler thread's index */
	int on[NOPS];	     /* the sampler started and samples */
	int any;	     /* some sampler is on */
	struct lt_thread *t; /* its state in the trace, kept across a pause */
	pthread_t th;	     /* the thread now (joinable, for sampler_pause) */
	int th_ok;	     /* th is this process's thread, not joined yet */
	uint64_t armed_ns;   /* when it was armed (CLOCK_MONOTONIC) */
} S;

int lt_cpu_records;

static unsigned samplers(void)
{
	return (unsigned)lt_setting("LIBTRACE_SAMPLERS");
}

static void sampler_after_fork_child(void);

uint32_t smp_self_index(void)
{
	return S.index;
}

static lt_create_fn *real_pthread_create_fn;

/* ---- sources ---- */

int smp_path(char *buf, size_t len, const char *fmt, ...)
{
	int n = snprintf(buf, len, "%s", lt_setting_str("LIBTRACE_SYSFS_ROOT"));
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	/* "/x/" + "/sys/..." is fine for open(2); a trailing slash of the root is dropped. */
	if (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, len - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0 || (size_t)m >= len - (size_t)n)
		return -ENAMETOOLONG;
	return 0;
}

/* Closes a descriptor of a source (ours: the close wrapper would refuse it). */
static void src_close_fd(int fd)
{
	lt_fd_unhide(fd);
	syscall(SYS_close, fd);
}

int smp_open(struct smp_src *s, const char *path, int rooted)
{
	s->fd = -1;
	if (rooted) {
		if (strlen(path) >= sizeof(s->path))
			return -ENAMETOOLONG;
		if (path != s->path)
			strcpy(s->path, path);
	} else if (smp_path(s->path, sizeof(s->path), "%s", path)) {
		return -ENAMETOOLONG;
	}
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Keep clear of the low descriptors programs reuse, and out of the program's sight
	 * (core/file.c). */
	fd = lt_fd_place(fd); /* hidden from the program, too */
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = -errno;
		src_close_fd(fd);
		return err;
	}
	s->fd = fd;
	s->dev = st.st_dev;
	s->ino = st.st_ino;
	return 0;
}

/* s's descriptor if it still names the file s opened; else the file reopened, or -1. */
static int src_fd(struct smp_src *s)
{
	struct stat st;
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino &&
	    st.st_nlink > 0)
		return s->fd;
	/* Closed or reused by the program (the number is not ours any more), or the file was
	 * removed (a sensor that went away): open the path again. */
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		src_close_fd(s->fd);
	/* Otherwise the number is not ours any more, nor is its hidden mark: a dup2 onto it
	 * took both (lt_file_vacate), or another tracer file holds it now. */
	s->fd = -1;
	struct smp_src n;
	if (smp_open(&n, s->path, 1))
		return -1;
	s->fd = n.fd;
	s->dev = n.dev;
	s->ino = n.ino;
	return s->fd;
}

ssize_t smp_pread(struct smp_src *s, char *buf, size_t len, uint64_t off)
{
	int fd = src_fd(s);
	if (fd < 0)
		return -ENOENT;
	for (;;) {
		ssize_t r = pread(fd, buf, len, (off_t)off);
		if (r >= 0)
			return r;
		if (errno != EINTR)
			return -errno;
	}
}

ssize_t smp_read(struct smp_src *s, char *buf, size_t len)
{
	int fd = src_fd(s);
	if (fd < 0)
		return -ENOENT;
	size_t have = 0;
	while (have < len - 1) {
		ssize_t r = pread(fd, buf + have, len - 1 - have, (off_t)have);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		have += (size_t)r;
	}
	buf[have] = '\0';
	return (ssize_t)have;
}

void smp_close(struct smp_src *s)
{
	struct stat st;
	if (s->fd >= 0 && fstat(s->fd, &st) == 0 && st.st_dev == s->dev && st.st_ino == s->ino)
		src_close_fd(s->fd);
	s->fd = -1;
}

int smp_dir_open(struct smp_dir *d, const char *path)
{
	d->len = d->pos = 0;
	d->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0)
		return -errno;
	lt_fd_hide(d->fd);
	return 0;
}

const char *smp_dir_next(struct smp_dir *d)
{
	/* struct linux_dirent64: inode (8), offset (8), record length (2), type (1), name */
	if (d->pos >= d->len) {
		long n = syscall(SYS_getdents64, d->fd, d->buf, sizeof(d->buf));
		if (n <= 0)
			return NULL;
		d->len = (int)n;
		d->pos = 0;
	}
	const char *e = d->buf + d->pos;
	unsigned short reclen;
	memcpy(&reclen, e + 16, sizeof(reclen));
	d->pos += reclen;
	return e + 19;
}

void smp_dir_close(struct smp_dir *d)
{
	if (d->fd >= 0)
		src_close_fd(d->fd);
	d->fd = -1;
}

/* One read, on the number open() gives: moving it high would hold two descriptors for a
 * moment instead of one (the per-thread stat files are read this way every period). */
ssize_t smp_read_file(const char *path, char *buf, size_t len)
{
	struct smp_src s;
	if (strlen(path) >= sizeof(s.path))
		return -ENAMETOOLONG;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	lt_fd_hide(fd);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = -errno;
		src_close_fd(fd);
		return err;
	}
	strcpy(s.path, path);
	s.fd = fd;
	s.dev = st.st_dev;
	s.ino = st.st_ino;
	ssize_t n = smp_read(&s, buf, len);
	smp_close(&s);
	return n;
}

/* ---- records ---- */

static uint32_t next_metric;

uint32_t smp_metric(const char *scope, const char *mode, const char *unit, const char *name)
{
	uint32_t id = next_metric++;
	char key[128];
	snprintf(key, sizeof(key), LT_META_METRIC " %u %s %s %s", id, scope, mode, unit);
	lt_meta_escaped(key, name);
	return id;
}

void smp_emit_int(uint32_t metric, int64_t v)
{
	struct lt_thread *t = lt_self;
	if (t)
		lt_emit1(t, LT_REC_METRIC, LT_VALUE_INT64, metric, (uint64_t)v);
}

void smp_emit_double(uint32_t metric, double v)
{
	struct lt_thread *t = lt_self;
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	if (t)
		lt_emit1(t, LT_REC_METRIC, LT_VALUE_DOUBLE, metric, bits);
}

void smp_emit_cpu(uint64_t ts, uint32_t index, int cpu)
{
	struct lt_thread *t = lt_self;
	if (!t)
		return;
	uint64_t *p = lt_reserve(t, 3);
	lt_rec_put(p, ts, LT_REC_CPU, 3, lt_cpu_node(cpu), (uint32_t)cpu);
	p[2] = index;
	lt_commit(t);
}

void smp_off(const char *name, const char *fmt, ...)
{
	char why[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	lt_meta_escaped2(LT_META_SAMPLER_OFF, name, why);
	lt_info("sampler %s: %s", name, why);
}

/* ---- the thread ---- */

static void sampler_end(void);
static void sampler_spawn(void);
static void sampler_threaded(void);

/* The thread's move from `from` to `to`; false when another thread changed the state. */
static int sampler_move(uint32_t from, uint32_t to)
{
	return __atomic_compare_exchange_n(&S.state, &from, to, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* The thread was asked to stop, to pause, or was taken over: it does what is asked. */
static void *sampler_leave(void)
{
	uint32_t st = __atomic_load_n(&S.state, __ATOMIC_ACQUIRE);
	if (st == S_STOPPING) {
		sampler_end();
		return NULL;
	}
	/* Taken over (then DONE once its end is written): its state is the stopping
	 * thread's, which frees it. */
	lt_self = NULL;
	if (st == S_PAUSING) { /* the state stays in S.t for the next thread */
		__atomic_store_n(&S.state, S_PAUSED, __ATOMIC_RELEASE);
		lt_futex(&S.state, FUTEX_WAKE, 1, NULL);
	}
	return NULL;
}

/*
 * A new sampler's first tick is one period after it was started, and it sleeps idle until
 * then: a process shorter than a period has no samples, and its exit takes the sleeping
 * sampler over instead of waiting for a busy one (its sources opened, a first sample) to be
 * scheduled, which takes milliseconds on a loaded machine.  Returns early when the state
 * changes (asked to stop or pause).
 */
static void sampler_first_wait(uint64_t period)
{
	uint64_t end = lt_clock_mono_ns() + period;
	while (__atomic_load_n(&S.state, __ATOMIC_ACQUIRE) == S_RUNNING) {
		uint64_t now = lt_clock_mono_ns();
		if (now >= end)
			return;
		struct timespec ts = {(time_t)((end - now) / 1000000000u),
				      (long)((end - now) % 1000000000u)};
		lt_futex(&S.state, FUTEX_WAIT, S_RUNNING, &ts);
	}
}

static void *sampler_main(void *arg)
{
	(void)arg;
	lt_tls_guard = 1; /* nothing this thread does is traced */
	lt_helper_thread = 1;
	uint64_t period = lt_setting("LIBTRACE_SAMPLE_PERIOD");
	if (!S.t)
		sampler_first_wait(period);
	if (!sampler_move(S_RUNNING, S_BUSY))
		return sampler_leave(); /* stopped or paused before it began */
	struct lt_thread *t = S.t;
	if (t) {
		/* After a pause: the same thread of the trace, on a new thread of the OS. */
		t->tid = (uint32_t)syscall(SYS_gettid);
		lt_self = t;
	} else {
		t = lt_thread_register(S.index, LT_NO_THREAD, 0);
		if (!t) {
			sampler_end();
			return NULL;
		}
		t->guard = 1;
		S.t = t;
		S.any = 0;
		for (size_t i = 0; i < NOPS; i++) {
			S.on[i] = (samplers() & all_ops[i]->bit) && all_ops[i]->start() == 0;
			S.any |= S.on[i];
		}
	}
	int any = S.any;
	struct timespec next;
	lt_clock_gettime(CLOCK_MONOTONIC, &next);
	while (any) {
		for (size_t i = 0; i < NOPS; i++)
			if (S.on[i])
				all_ops[i]->sample();
		/* The next tick of a fixed grid: a slow sample does not shift the others. */
		next.tv_nsec += (long)(period % 1000000000u);
		next.tv_sec += (time_t)(period / 1000000000u);
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		struct timespec now;
		lt_clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t wait =
		    (int64_t)(next.tv_sec - now.tv_sec) * 1000000000 + (next.tv_nsec - now.tv_nsec);
		if (wait <= 0) { /* late by a period or more: start the grid anew */
			next = now;
			if (__atomic_load_n(&S.state, __ATOMIC_ACQUIRE) != S_BUSY)
				return sampler_leave(); /* asked to stop or pause meanwhile */
			continue;
		}
		/* Idle from here: everything it recorded is published by this release. */
		if (!sampler_move(S_BUSY, S_RUNNING))
			return sampler_leave();
		struct timespec ts = {(time_t)(wait / 1000000000), (long)(wait % 1000000000)};
		lt_futex(&S.state, FUTEX_WAIT, S_RUNNING, &ts);
		if (!sampler_move(S_RUNNING, S_BUSY))
			return sampler_leave();
	}
	sampler_end(); /* nothing to sample */
	return NULL;
}

/* The sampler's end in the trace: its sources closed, THREAD_END, its state freed.  On the
 * sampler thread, or on the thread that stops a paused sampler. */
static void sampler_end(void)
{
	for (size_t i = 0; i < NOPS; i++)
		if (S.on[i] && all_ops[i]->stop)
			all_ops[i]->stop();
	if (S.t)
		lt_thread_end(S.t);
	S.t = NULL;
	__atomic_store_n(&S.state, S_DONE, __ATOMIC_RELEASE);
	lt_futex(&S.state, FUTEX_WAKE, 1, NULL);
}

/* Before the process's first thread registers: lt_cpu_records. */
static void sampler_prepare(int forked)
{
	if (forked)
		sampler_after_fork_child();
	lt_cpu_records = lt_setting("LIBTRACE_SAMPLE_PERIOD") && (samplers() & LT_SAMPLE_CPU);
	lt_track_moves = lt_cpu_records;
}

/* Then the thread: after init, and in the child of fork. */
static void sampler_start(int forked)
{
	(void)forked;
	if (!lt_setting("LIBTRACE_SAMPLE_PERIOD") || !samplers())
		return;
	/* An index of its own, far above the program's: theirs stay 0, 1, 2... in order of
	 * creation, with or without samplers. */
	S.index = SAMPLER_INDEX;
	if (!real_pthread_create_fn) /* now: later it could be inside the program's call */
		real_pthread_create_fn = lt_dlsym_next("pthread_create", NULL);
	S.armed_ns = lt_clock_mono_ns();
	__atomic_store_n(&S.state, S_ARMED, __ATOMIC_RELEASE);
	/* auto: samples asked for (a period or samplers set) are taken from the start, even in
	 * a process that stays single-threaded. */
	uint64_t when = lt_setting("LIBTRACE_SAMPLER_START");
	if (when == START_NOW ||
	    (when == START_AUTO &&
	     (lt_setting_given("LIBTRACE_SAMPLE_PERIOD") || lt_setting_given("LIBTRACE_SAMPLERS"))))
		sampler_threaded();
}

/* The process has a second thread (or LIBTRACE_SAMPLER_START=now): an armed sampler starts. */
static void sampler_threaded(void)
{
	uint32_t expected = S_ARMED;
	if (!__atomic_compare_exchange_n(&S.state, &expected, S_RUNNING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	lt_meta_line(LT_META_SAMPLER " %u", S.index);
	sampler_spawn();
}

/* Starts the thread (S.state is RUNNING). */
static void sampler_spawn(void)
{
	pthread_t th;
	/* No signal of the program's; the CPUs of the process's start, not those of the thread
	 * that happens to start it. */
	int err = real_pthread_create_fn ? lt_helper_create(real_pthread_create_fn, &th, 256 * 1024,
							    sampler_main, NULL)
					 : -1;
	if (!err) {
		S.th = th;
		__atomic_store_n(&S.th_ok, 1, __ATOMIC_RELEASE);
		return;
	}
	if (S.t) {
		sampler_end(); /* after a pause: end what it recorded */
	} else {
		/* Unless the end or a pause came meanwhile: they found no thread to wait for. */
		uint32_t st = S_RUNNING;
		if (__atomic_compare_exchange_n(&S.state, &st, S_IDLE, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			lt_warn("cannot start the sampler thread: %s; no samples",
				strerror(err > 0 ? err : EAGAIN));
			lt_meta_escaped2(LT_META_SAMPLER_OFF, "all",
					 "the sampler thread could not be started");
		} else if (st == S_PAUSING) {
			__atomic_store_n(&S.state, S_PAUSED, __ATOMIC_RELEASE);
		}
	}
}

static void sampler_pause(void)
{
	for (;;) {
		uint32_t st = __atomic_load_n(&S.state, __ATOMIC_ACQUIRE);
		if (st != S_RUNNING && st != S_BUSY)
			return;
		if (__atomic_compare_exchange_n(&S.state, &st, S_PAUSING, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	lt_futex(&S.state, FUTEX_WAKE, 1, NULL);
	/* Not yet there when the thread is still being made: it ends alone when it sees the
	 * pause.  A thread that did not end in time is left to end alone too. */
	if (__atomic_exchange_n(&S.th_ok, 0, __ATOMIC_ACQ_REL))
		lt_join_helper(S.th);
}

static void sampler_resume(void)
{
	uint32_t expected = S_PAUSED;
	if (__atomic_compare_exchange_n(&S.state, &expected, S_RUNNING, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		sampler_spawn();
}

static void sampler_stop(int wait)
{
	uint32_t armed = S_ARMED;
	if (__atomic_compare_exchange_n(&S.state, &armed, S_IDLE, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		/* Never started.  Said where it would have sampled: a process shorter than a
		 * period has no samples anyway. */
		uint64_t period = lt_setting("LIBTRACE_SAMPLE_PERIOD");
		if (lt_clock_mono_ns() - S.armed_ns >= period)
			lt_meta_escaped2(LT_META_SAMPLER_OFF, "all",
					 "not started: the process stayed single-threaded "
					 "(LIBTRACE_SAMPLER_START=now samples such a process)");
		return;
	}
	for (;;) {
		uint32_t st = __atomic_load_n(&S.state, __ATOMIC_ACQUIRE);
		/* Paused, or idle (not begun, or between samples) and we may write here: no
		 * thread to ask, its end is written here.  From a signal handler (!wait) an
		 * idle sampler is asked like a busy one, and ends itself if it gets the time. */
		uint32_t to = st == S_PAUSED			? S_STOPPING
			      : st == S_RUNNING && wait		? S_TAKEN
			      : st == S_RUNNING || st == S_BUSY ? S_STOPPING
								: S_IDLE;
		if (to == S_IDLE)
			return;
		if (!__atomic_compare_exchange_n(&S.state, &st, to, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		if (st == S_PAUSED || to == S_TAKEN) {
			if (to == S_TAKEN) /* let a sleeping thread go */
				lt_futex(&S.state, FUTEX_WAKE, 1, NULL);
			sampler_end(); /* one that never began has no sources to close */
			return;
		}
		break;
	}
	lt_futex(&S.state, FUTEX_WAKE, 1, NULL);
	if (!wait)
		return;
	/* At most 100 ms: a sampler stuck in a read must not hold the exit up. */
	struct timespec end, now;
	lt_clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_nsec += 100000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_nsec -= 1000000000;
		end.tv_sec++;
	}
	for (;;) {
		uint32_t st = __atomic_load_n(&S.state, __ATOMIC_ACQUIRE);
		if (st == S_DONE)
			return;
		lt_clock_gettime(CLOCK_MONOTONIC, &now);
		int64_t left =
		    (int64_t)(end.tv_sec - now.tv_sec) * 1000000000 + (end.tv_nsec - now.tv_nsec);
		if (left <= 0)
			return;
		struct timespec ts = {0, (long)left};
		lt_futex(&S.state, FUTEX_WAIT, st, &ts);
	}
}

/* In the child of fork: the sampler thread did not come along; forget its sources. */
static void sampler_after_fork_child(void)
{
	smp_numa_after_fork_child();
	for (size_t i = 0; i < NOPS; i++) {
		if (all_ops[i]->after_fork)
			all_ops[i]->after_fork();
		S.on[i] = 0;
	}
	next_metric = 0;
	S.t = NULL; /* the parent's sampler, which did not come along */
	S.th_ok = 0;
	S.state = S_IDLE;
}

/* Where a thread starts; the sampler thread follows it from there. */
static void sampler_thread_start(struct lt_thread *t)
{
	if (lt_cpu_records)
		lt_cpu_record(t);
}

/* A thread changed its own affinity: its CPU now, not at the next period. */
static void sampler_thread_moved(struct lt_thread *t)
{
	if (lt_cpu_records)
		lt_cpu_record(t);
}

LT_MODULE(samplers) = {
    .name = "samplers",
    .order = 90,
    .start = sampler_prepare,
    .started = sampler_start,
    .pause = sampler_pause,
    .resume = sampler_resume,
    .end_stop = sampler_stop,
    .threaded = sampler_threaded,
    .thread_start = sampler_thread_start,
    .thread_moved = sampler_thread_moved,
};
