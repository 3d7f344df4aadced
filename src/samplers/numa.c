// SPDX-License-Identifier: BSD-3-Clause
/*
 * numa.c - placement and memory: the NUMA topology (which CPU belongs to which node, from
 * sys/devices/system/node/node<N>/cpulist, read once: no libnuma), the cpu sampler (each
 * live thread's CPU from proc/self/task/<tid>/stat, written as a CPU record when it
 * changed), and the memory sampler (resident set size from proc/self/statm; memory per
 * NUMA node from proc/self/numa_maps where the machine has two nodes or more).
 *
 * Threads also record their CPU themselves, cheaply (getcpu, which gives the node too): at
 * their start and right after they change their own affinity (interpose/sched.c), so a
 * migration the program asks for shows at the instant it happened, not at the next sample.
 * The map is read when something first needs it (the samplers, or a thread's record under
 * LIBTRACE_SYSFS_ROOT, whose nodes are the tree's), not at start: a short process does not
 * pay for it.  getcpu's node and the map's come from the same kernel table; they differ
 * only where sys/devices/system/node is hidden (some containers) or for a CPU numbered
 * CPUS_MAX or more: a thread's own record then has the node, the sampler's record of the
 * same CPU says unknown (0xffff).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/lock.h"
#include "sampler.h"

#define CPUS_MAX  4096
#define NODES_MAX 64

static LT_PAGE_ALIGNED uint16_t cpu_node[CPUS_MAX]; /* node + 1; 0: unknown */
static int nnodes = -1;				    /* -1: not read yet */
static int node_ids[NODES_MAX];			    /* the nodes found, in order */

/* Parses a cpulist ("0-3,8,10-11") and gives its CPUs to node n. */
static void cpulist_apply(const char *s, int n)
{
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10);
		if (end == s)
			break;
		long b = a;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		for (long c = a; c <= b && c >= 0 && c < CPUS_MAX; c++)
			cpu_node[c] = (uint16_t)(n + 1);
		while (*s == ',' || *s == '\n' || *s == ' ')
			s++;
	}
}

static struct lt_lock map_lock = LT_LOCK_INIT;

/* Fills cpu_node and node_ids; returns the number of nodes found. */
static int read_map(void)
{
	int found = 0;
	char dir[320], path[640], buf[4096];
	if (smp_path(dir, sizeof(dir), "/sys/devices/system/node"))
		return 0;
	struct smp_dir d;
	if (smp_dir_open(&d, dir))
		return 0;
	const char *e;
	while (found < NODES_MAX && (e = smp_dir_next(&d))) {
		char *end;
		if (strncmp(e, "node", 4))
			continue;
		long n = strtol(e + 4, &end, 10);
		if (end == e + 4 || *end || n < 0 || n > 0xfffe)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpulist", dir, e);
		if (smp_read_file(path, buf, sizeof(buf)) < 0)
			continue;
		cpulist_apply(buf, (int)n);
		node_ids[found++] = (int)n;
	}
	smp_dir_close(&d);
	/* In node order (readdir's order is the file system's). */
	for (int i = 1; i < found; i++)
		for (int j = i; j > 0 && node_ids[j - 1] > node_ids[j]; j--) {
			int x = node_ids[j];
			node_ids[j] = node_ids[j - 1];
			node_ids[j - 1] = x;
		}
	return found;
}

int smp_numa_nodes(void)
{
	int n = __atomic_load_n(&nnodes, __ATOMIC_ACQUIRE);
	if (n >= 0)
		return n;
	lt_lock(&map_lock);
	n = nnodes;
	if (n < 0) {
		int saved = errno;
		n = read_map();
		errno = saved;
		__atomic_store_n(&nnodes, n, __ATOMIC_RELEASE);
	}
	lt_unlock(&map_lock);
	return n;
}

/* In the child of fork: a lock held by a thread that did not come along is free again
 * (the map, when it was read in full, stays: the same machine). */
void smp_numa_after_fork_child(void)
{
	map_lock = (struct lt_lock)LT_LOCK_INIT;
}

unsigned lt_cpu_node(int cpu)
{
	smp_numa_nodes();
	if (cpu < 0 || cpu >= CPUS_MAX || !cpu_node[cpu])
		return 0xffff;
	return cpu_node[cpu] - 1u;
}

void lt_cpu_record(struct lt_thread *t)
{
	unsigned cpu, node;
	if (lt_setting_str("LIBTRACE_SYSFS_ROOT")[0]) {
		int c = sched_getcpu();
		if (c >= 0)
			lt_emit0(t, LT_REC_CPU, lt_cpu_node(c), (uint32_t)c);
	} else if (getcpu(&cpu, &node) == 0) {
		lt_emit0(t, LT_REC_CPU, node, cpu);
	}
}

/* ---- memory ---- */

static struct smp_src statm = {.fd = -1}, numa_maps = {.fd = -1};
static uint32_t m_rss, m_node[NODES_MAX];
static int per_node;		       /* memory per node is sampled */
static uint64_t numa_every, numa_tick; /* read numa_maps every numa_every-th period */
static long page_size;
static LT_PAGE_ALIGNED char big[1 << 16];

static int memory_start(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	if (page_size <= 0)
		page_size = 4096;
	int err = smp_open(&statm, "/proc/self/statm", 0);
	if (err) {
		smp_off("memory", "cannot read %s: %s", statm.path, strerror(-err));
		return -1;
	}
	m_rss = smp_metric("process", "absolute", "B", "Resident set size");
	int n = smp_numa_nodes();
	if (n < 2) {
		smp_off("memory-per-node",
			"%s: memory per NUMA node is the resident set size (not sampled)",
			n == 1 ? "one NUMA node" : "no NUMA topology in sys/devices/system/node");
		return 0;
	}
	err = smp_open(&numa_maps, "/proc/self/numa_maps", 0);
	if (err) {
		smp_off("memory-per-node", "cannot read %s: %s", numa_maps.path, strerror(-err));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		char name[64];
		snprintf(name, sizeof(name), "Memory on NUMA node %d", node_ids[i]);
		m_node[i] = smp_metric("process", "absolute", "B", name);
	}
	per_node = 1;
	/* The kernel walks every mapping's pages for numa_maps: at most ten reads a second. */
	numa_every = 100000000u / lt_setting("LIBTRACE_SAMPLE_PERIOD");
	if (numa_every < 1)
		numa_every = 1;
	numa_tick = 0;
	return 0;
}

/* Adds one numa_maps line's N<node>=<pages> x kernelpagesize_kB to bytes[]. */
static void numa_line(char *line, uint64_t *bytes)
{
	uint64_t kb = (uint64_t)page_size / 1024;
	char *k = strstr(line, "kernelpagesize_kB=");
	if (k)
		kb = strtoull(k + 18, NULL, 10);
	for (char *s = strstr(line, " N"); s; s = strstr(s + 1, " N")) {
		char *end;
		long node = strtol(s + 2, &end, 10);
		if (end == s + 2 || *end != '=')
			continue;
		uint64_t pages = strtoull(end + 1, NULL, 10);
		for (int i = 0; i < nnodes; i++)
			if (node_ids[i] == node)
				bytes[i] += pages * kb * 1024;
	}
}

/* Reads numa_maps in pieces (it can be long) and writes the bytes per node. */
static void numa_sample(void)
{
	uint64_t bytes[NODES_MAX] = {0}, off = 0;
	size_t have = 0;
	for (;;) {
		ssize_t n = smp_pread(&numa_maps, big + have, sizeof(big) - 1 - have, off);
		if (n < 0) {
			smp_off("memory-per-node", "%s: %s; no more samples", numa_maps.path,
				strerror((int)-n));
			smp_close(&numa_maps);
			per_node = 0;
			return;
		}
		if (n == 0)
			break;
		off += (uint64_t)n;
		have += (size_t)n;
		big[have] = '\0';
		char *line = big, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			numa_line(line, bytes);
			line = nl + 1;
		}
		have = (size_t)(big + have - line);
		memmove(big, line, have);
		if (have == sizeof(big) - 1)
			have = 0; /* a line longer than the buffer: drop it */
	}
	if (have) {
		big[have] = '\0';
		numa_line(big, bytes);
	}
	for (int i = 0; i < nnodes; i++)
		smp_emit_int(m_node[i], (int64_t)bytes[i]);
}

static void memory_sample(void)
{
	char buf[256];
	if (statm.fd >= 0) {
		ssize_t n = smp_read(&statm, buf, sizeof(buf));
		unsigned long long size, resident;
		if (n > 0 && sscanf(buf, "%llu %llu", &size, &resident) == 2) {
			smp_emit_int(m_rss, (int64_t)(resident * (uint64_t)page_size));
		} else {
			smp_off("memory", "%s: unreadable now; no more samples", statm.path);
			smp_close(&statm);
		}
	}
	if (per_node && numa_tick++ % numa_every == 0)
		numa_sample();
}

static void memory_stop(void)
{
	smp_close(&statm);
	smp_close(&numa_maps);
}

static void memory_after_fork(void)
{
	memory_stop(); /* the parent's /proc/self is not ours */
	per_node = 0;
}

const struct smp_ops smp_memory = {"memory",	  LT_SAMPLE_MEMORY, memory_start,
				   memory_sample, memory_stop,	    memory_after_fork};

/* ---- cpu ---- */

#define TASKS_MAX  1024 /* threads followed */
#define TASK_SLOTS 2048 /* their hash table: twice as many slots */
#define READS_MAX  64	/* stat files read per sample: the rest at the next ones, in turn */
/* The threads' stat files are opened, read and closed at each sample (about 5 us each
 * here): descriptors are the program's, and a tracer holding one per thread could push a
 * program over its limit.  A sample reads READS_MAX of them at most, taking the threads in
 * turn from where the last one stopped: with many threads alive, each thread's CPU is
 * read every few periods, and the sampler's time per period stays bounded (1,000 threads
 * read every period would keep it, and a core, busy). */

/* The last CPU seen of each live thread, by tid and index; rebuilt at each sample from
 * the previous table, so that the threads that ended are forgotten. */
static struct task {
	uint32_t tid, index;
	int cpu; /* last seen, -1: not yet */
	int used;
} tasks[2][TASK_SLOTS] LT_PAGE_ALIGNED;
static int tasks_now;	 /* the table of the last sample */
static size_t next_read; /* the position in the thread list where reading goes on */

static struct task *task_find(struct task *tab, uint32_t tid, uint32_t index, int add)
{
	unsigned h = (tid * 2654435761u ^ index) & (TASK_SLOTS - 1);
	while (tab[h].used && (tab[h].tid != tid || tab[h].index != index))
		h = (h + 1) & (TASK_SLOTS - 1);
	if (!tab[h].used) {
		if (!add)
			return NULL;
		tab[h] = (struct task){tid, index, -1, 1};
	}
	return &tab[h];
}

static void cpu_stop(void)
{
	memset(tasks, 0, sizeof(tasks));
	next_read = 0;
}

static int cpu_start(void)
{
	char path[400];
	if (smp_path(path, sizeof(path), "/proc/self/task") || access(path, R_OK) != 0) {
		smp_off("cpu",
			"cannot read %s: %s (threads still record their CPU at start and "
			"after changing their affinity)",
			path, strerror(errno));
		return -1;
	}
	cpu_stop();
	return 0;
}

/* Field 39 (processor) of a stat line; the name in parentheses may hold anything. */
static int stat_cpu(const char *buf)
{
	const char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	for (int field = 2; field < 39 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? atoi(p + 1) : -1;
}

static void cpu_sample(void)
{
	uint32_t idx[TASKS_MAX], tid[TASKS_MAX];
	size_t n = lt_thread_list(idx, tid, TASKS_MAX);
	struct task *old = tasks[tasks_now], *now = tasks[!tasks_now];
	memset(now, 0, sizeof(tasks[0]));
	size_t from = n ? next_read % n : 0;
	unsigned reads = 0;
	for (size_t j = 0; j < n; j++) {
		size_t k = (from + j) % n;
		if (idx[k] == smp_self_index())
			continue;
		struct task *was = task_find(old, tid[k], idx[k], 0);
		struct task *tk = task_find(now, tid[k], idx[k], 1);
		tk->cpu = was ? was->cpu : -1;
		if (reads == READS_MAX)
			continue;
		reads++;
		next_read = k + 1;
		char path[400], buf[1024];
		if (smp_path(path, sizeof(path), "/proc/self/task/%u/stat", tid[k]))
			continue;
		/* Stamped before the read: what the read sees held at that instant or later. */
		uint64_t ts = lt_now();
		ssize_t r = smp_read_file(path, buf, sizeof(buf));
		int cpu = r > 0 ? stat_cpu(buf) : -1;
		if (cpu >= 0 && cpu != tk->cpu) {
			smp_emit_cpu(ts, tk->index, cpu); /* the converter drops repeats */
			tk->cpu = cpu;
		}
	}
	tasks_now = !tasks_now;
}

const struct smp_ops smp_cpu = {"cpu", LT_SAMPLE_CPU, cpu_start, cpu_sample, cpu_stop, cpu_stop};
