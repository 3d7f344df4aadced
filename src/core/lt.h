/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lt.h - the core's private interface: the resolved configuration, the ring buffer, the
 * tracer's files, the thread registry's internals, and the calls into the modules.  What
 * modules may use is module.h (included here); modules never include this file.
 */
#ifndef LIBTRACE_LT_H
#define LIBTRACE_LT_H

#include <signal.h>
#include <stdarg.h>

#include "module.h"

#define LT_CALLSITE_MAX 32 /* LIBTRACE_CALLSITE_DEPTH's upper bound */

enum lt_overflow {
	LT_OVERFLOW_BLOCK = 0, /* the producer drains its own ring: slower, nothing lost */
	LT_OVERFLOW_DROP = 1,  /* count as lost until the writer frees a chunk */
};

enum lt_mode {
	LT_MODE_STREAM = 0, /* the writer copies every sealed chunk out */
	LT_MODE_FLIGHT =
	    1, /* flight recorder: the rings keep the newest chunks, written at the end */
};

/* The resolved configuration of the core (config.c fills it from the LIBTRACE_* table; the
 * modules' own settings are read with lt_setting). */
struct lt_config {
	unsigned modules;
	uint64_t buffer_size;  /* ring bytes per thread */
	int buffer_size_given; /* LIBTRACE_BUFFER_SIZE was set (not the default) */
	int overflow;	       /* enum lt_overflow */
	int mode;	       /* enum lt_mode */
	int flight_signal;     /* flight mode: the signal that writes the rings out (0: none) */
	int debug;
	int quiet;
	int clock;	       /* enum lt_clock_kind, or -1 for auto */
	int callsite_depth;    /* call-site frames per traced call (0: none) */
	int64_t clock_skew_ns; /* tests: added to every clock reading */
	char output[4096];     /* last: the small fields and a short path share a page */
};

extern LT_HIDDEN struct lt_config lt_cfg;
/* getauxval, as init sees it: a unit test injects AT_SECURE through it. */
extern LT_HIDDEN unsigned long (*lt_getauxval)(unsigned long);

/* print.c: snprintf and vsnprintf, for the texts written at start (print.c says why). */
LT_HIDDEN int lt_snprintf(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
LT_HIDDEN int lt_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

LT_HIDDEN void lt_clock_init(int requested);
/* Ends the calibration lt_clock_init began (waits for what is left of its window). */
LT_HIDDEN void lt_clock_calibrate(void);
/* A (ticks, CLOCK_MONOTONIC ns) pair read as close together as five tries allow. */
LT_HIDDEN void lt_clock_pair(uint64_t *ticks, uint64_t *ns);

/* buffer.c, and writer.c for the writer thread */
LT_HIDDEN int lt_buffer_open(const char *dir, int after_fork);
/* Closes the ring and events files (lt_buffer_open failed, or half succeeded). */
LT_HIDDEN void lt_buffer_discard(void);
LT_HIDDEN int lt_buffer_attach(struct lt_thread *t);
LT_HIDDEN void lt_buffer_detach(struct lt_thread *t);
/* Drop policy: makes room for a record that must not be lost (the thread's end). */
LT_HIDDEN void lt_buffer_settle(struct lt_thread *t);
LT_HIDDEN void lt_buffer_flush_all(int snapshot_active);
/* At the end: frees the disk blocks of ring chunks already copied to the events file, and
 * cuts the ring file after what its chunks still hold. */
LT_HIDDEN void lt_buffer_trim(void);
/* Before exec: the ring file ends after what its chunks hold (as lt_buffer_trim ends it). */
LT_HIDDEN void lt_buffer_cut(void);
/* At the end: what processes made by a raw clone counted (a meta "lost" line). */
LT_HIDDEN void lt_buffer_unseen_flush(void);
LT_HIDDEN void lt_writer_stop(void);
/* Flight mode: catches LIBTRACE_FLIGHT_SIGNAL, if one is set (at init). */
LT_HIDDEN void lt_buffer_flight_signal(void);
/* Stops the writer thread and waits until it is gone; the next sealed chunk starts it again
 * (and the modules' paused helpers with it).  0, or -1 when it did not end in time. */
LT_HIDDEN int lt_writer_pause(void);
/* Between the two halves: the rings drained once (buffer.c, for the writer); the writer
 * woken, started on first use (writer.c, for the producers). */
LT_HIDDEN void lt_buf_drain_all(int writer); /* writer: 1 on the writer thread */
LT_HIDDEN void lt_buf_writer_kick(void);
/* Wakes the writer if it runs; never starts one (async-signal-safe). */
LT_HIDDEN void lt_buf_writer_nudge(void);
/* Notes the CPUs the writer may run on (at the first open). */
LT_HIDDEN void lt_buf_writer_init(void);
/* In the child of fork: the parent's writer thread is not there. */
LT_HIDDEN void lt_buf_writer_after_fork(void);
/* CPU time the writer threads of this process have used so far, in ns. */
LT_HIDDEN uint64_t lt_writer_cpu_ns(void);

/*
 * file.c: a file of the tracer's, kept usable whatever the program does to descriptors.
 * The descriptor sits high (from LT_FD_BASE, or above the program's soft RLIMIT_NOFILE)
 * and the descriptor wrappers (interpose/fd.c) hide it from the program: closing it,
 * fcntl and dup on it fail with EBADF as if it were not open, and a dup2/dup3 onto its
 * number first moves it elsewhere.  Every use goes between lt_file_fd and lt_file_done,
 * so that a move waits until no write through the old number is under way.
 */
struct lt_file {
	int fd;
	int users; /* uses under way (lt_file_fd .. lt_file_done) */
	dev_t dev;
	ino_t ino;
	int flags;
	char path[4096]; /* last: what follows the few bytes of a path is never touched */
};
/* Creates dir/name 0600 (O_EXCL, O_NOFOLLOW) on a high descriptor.  0 or -errno. */
LT_HIDDEN int lt_file_create(struct lt_file *f, const char *dir, const char *name, int flags);
/* f's descriptor, reopened by path when the program closed or reused it; -1 if gone.  A
 * result >= 0 must be given back with lt_file_done once the call that uses it returned. */
LT_HIDDEN int lt_file_fd(struct lt_file *f);
LT_HIDDEN void lt_file_done(struct lt_file *f);
/* Closes f's descriptor (the parent's files, in the child of fork) and forgets it. */
LT_HIDDEN void lt_file_close(struct lt_file *f);

/* thread.c */
LT_HIDDEN void lt_thread_init(void);
/* Writes the chunk counts of the threads ended since the last call (meta "chunks"). */
LT_HIDDEN void lt_thread_counts_flush(void);
LT_HIDDEN void lt_thread_after_fork_child(void);
LT_HIDDEN void lt_thread_map_after_fork_child(void);

/* strings.c */
LT_HIDDEN void lt_strings_after_fork_child(void);

/* init.c: installs fn (SA_SIGINFO, SA_RESTART) for signal sig, which `setting` named; says so
 * when it cannot. */
LT_HIDDEN void lt_catch_signal(int sig, void (*fn)(int, siginfo_t *, void *), const char *setting);

/* filter.c: selective recording (its hot half is in module.h). */
LT_HIDDEN void lt_filter_init(void); /* after the settings and the clock */
LT_HIDDEN void lt_filter_started(struct lt_thread *t0);
LT_HIDDEN void lt_filter_after_fork_child(void);
LT_HIDDEN void lt_filter_string(uint32_t id, const char *s); /* a name just interned */
LT_HIDDEN void lt_filter_thread_counts(struct lt_thread *t); /* its "dropped" meta lines */
LT_HIDDEN unsigned lt_recording_mask(void); /* the modules to record now: none when paused */
/* thread.c: lt_filter_thread_counts of every live thread. */
LT_HIDDEN void lt_thread_dropped_flush(void);

/* meta.c */
LT_HIDDEN int lt_meta_open(const char *dir);
/* Not tracing after all (lt_meta_open succeeded, a later step failed): drops the held lines
 * and closes the file, which the caller removes. */
LT_HIDDEN void lt_meta_discard(void);
LT_HIDDEN void lt_meta_sync(void);
/* 1: the calling thread's meta lines are gathered (at start); 0: written, and no more. */
LT_HIDDEN void lt_meta_hold(int on);

/*
 * module.c: the modules' hooks, each called on every registered module that has it, in
 * order (struct lt_module in module.h says when).
 */
LT_HIDDEN void lt_modules_preflight(void);
LT_HIDDEN void lt_modules_constructor(void);
LT_HIDDEN void lt_modules_meta(void);
LT_HIDDEN void lt_modules_start(int forked);
LT_HIDDEN void lt_modules_started(int forked);
LT_HIDDEN void lt_modules_fork_child(void);
/* At the end of init: the threaded hooks, if a second thread came while init ran. */
LT_HIDDEN void lt_modules_threaded_after_init(void);
LT_HIDDEN void lt_modules_pause(void);
LT_HIDDEN void lt_modules_resume(void);
LT_HIDDEN void lt_modules_before_exec(void);
LT_HIDDEN void lt_modules_end_flush(void);
LT_HIDDEN void lt_modules_end_stop(int wait);
LT_HIDDEN void lt_modules_thread_start(struct lt_thread *t);
LT_HIDDEN void lt_modules_thread_end(struct lt_thread *t);
/* Non-zero when a module will end the trace itself (the destructor leaves it alone). */
LT_HIDDEN int lt_modules_end_trace(void);

#endif /* LIBTRACE_LT_H */
