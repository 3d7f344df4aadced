/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sampler.h - the sampler thread's samplers (energy, temperature, memory, CPU): each one is a small
 * ops struct that finds its sources once, then reads them every period and writes METRIC (or CPU)
 * records into the sampler thread's own ring.
 *
 * Every path a sampler reads is under LIBTRACE_SYSFS_ROOT (smp_open), so tests can supply a
 * fake tree; the runtime's own read of /proc/self/maps never moves.  Sources are
 * kept open and read with pread; a descriptor the program closed or reused is noticed
 * (device and inode) and the file reopened by path.
 *
 * State lives in static arrays of fixed size, never on the heap: after fork the child
 * forgets the parent's sources (closing only descriptors that are still ours) and starts
 * over, whatever the sampler thread was doing at the instant of the fork.
 */
#ifndef LIBTRACE_SAMPLER_H
#define LIBTRACE_SAMPLER_H

#include <stdint.h>
#include <sys/types.h>

#include "../core/module.h"

/* Samplers of the sampler thread, selected by LIBTRACE_SAMPLERS (bits in the order of the
 * option table's sampler names). */
enum lt_sampler {
	LT_SAMPLE_ENERGY = 1u << 0,	 /* RAPL: powercap sysfs, perf power events, PAPI */
	LT_SAMPLE_TEMPERATURE = 1u << 1, /* hwmon temp*_input, thermal zones */
	LT_SAMPLE_MEMORY = 1u << 2,	 /* resident set size, memory per NUMA node */
	LT_SAMPLE_CPU = 1u << 3,	 /* each thread's CPU and NUMA node (migrations) */
};

/* Threads record their CPU (LT_SAMPLE_CPU with the sampler thread on). */
extern LT_HIDDEN int lt_cpu_records;
/* The NUMA node of a CPU, 0xffff when unknown. */
LT_HIDDEN unsigned lt_cpu_node(int cpu);
/* A CPU record of t's current CPU (sched_getcpu) and its node. */
LT_HIDDEN void lt_cpu_record(struct lt_thread *t);

/* A file a sampler reads again and again. */
struct smp_src {
	int fd; /* -1: closed */
	dev_t dev;
	ino_t ino;
	char path[320];
};

/* root + the path formatted from fmt, into buf.  0, or -ENAMETOOLONG. */
LT_HIDDEN int smp_path(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Opens the file at root + path (already root-prefixed when `rooted`).  0 or -errno. */
LT_HIDDEN int smp_open(struct smp_src *s, const char *path, int rooted);
/* Reads the whole file (up to len - 1 bytes) from offset 0 and NUL-terminates it.  The
 * length, or -errno (-ENOENT when the file is gone for good). */
LT_HIDDEN ssize_t smp_read(struct smp_src *s, char *buf, size_t len);
/* pread of s at `off`: bytes read, or -errno. */
LT_HIDDEN ssize_t smp_pread(struct smp_src *s, char *buf, size_t len, uint64_t off);
/* Closes s if its descriptor is still the one it opened. */
LT_HIDDEN void smp_close(struct smp_src *s);
/* One-shot read of root + path into buf; length or -errno. */
LT_HIDDEN ssize_t smp_read_file(const char *path, char *buf, size_t len);

/* A directory read without the C library's opendir, which allocates: a sampler thread's
 * first malloc gives it an arena of its own, 64 MiB of the program's address space. */
struct smp_dir {
	int fd;
	int len, pos; /* of buf */
	char buf[4096];
};
/* Opens the directory at path (root-prefixed already).  0 or -errno. */
LT_HIDDEN int smp_dir_open(struct smp_dir *d, const char *path);
/* The next entry's name ("." and ".." included), or NULL at the end. */
LT_HIDDEN const char *smp_dir_next(struct smp_dir *d);
LT_HIDDEN void smp_dir_close(struct smp_dir *d);

/* Declares a metric (a meta "metric" line) and returns its id. */
LT_HIDDEN uint32_t smp_metric(const char *scope, const char *mode, const char *unit,
			      const char *name);
/* A METRIC record on the sampler thread, stamped now. */
LT_HIDDEN void smp_emit_int(uint32_t metric, int64_t v);
LT_HIDDEN void smp_emit_double(uint32_t metric, double v);
/* A CPU record about thread `index`, stamped `ts`. */
LT_HIDDEN void smp_emit_cpu(uint64_t ts, uint32_t index, int cpu);
/* Says once why sampler `name` is off or degraded: meta "sampler_off" and an info line. */
LT_HIDDEN void smp_off(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The sampler thread's own index (its records are not the program's). */
LT_HIDDEN uint32_t smp_self_index(void);

struct smp_ops {
	const char *name;
	unsigned bit; /* enum lt_sampler */
	/* Finds the sources on the sampler thread: 0 when it samples, -1 when off (it said
	 * why through smp_off). */
	int (*start)(void);
	void (*sample)(void);
	void (*stop)(void);	  /* on the sampler thread, at the end */
	void (*after_fork)(void); /* in the child: forget the parent's sources */
};

extern LT_HIDDEN const struct smp_ops smp_rapl, smp_thermal, smp_memory, smp_cpu;

/* numa.c: the NUMA topology (cpu -> node), read once at start. */
LT_HIDDEN int smp_numa_nodes(void);
LT_HIDDEN void smp_numa_after_fork_child(void);

#endif /* LIBTRACE_SAMPLER_H */
