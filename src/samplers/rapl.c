// SPDX-License-Identifier: BSD-3-Clause
/*
 * rapl.c - the energy sampler: RAPL energy per package and DRAM domain as node-level running
 * totals in joules (power is their derivative).
 *
 * Sources, in order:
 *  1. powercap sysfs: sys/class/powercap/intel-rapl:<P>[:<D>]/{name,energy_uj,
 *     max_energy_range_uj}; the counter wraps at max_energy_range_uj, which the running
 *     total absorbs (one wrap per period at most, i.e. hours at any real power).
 *  2. Since Linux 5.10 energy_uj is readable by root only: then perf's power PMU
 *     (sys/bus/event_source/devices/power: type, events/energy-pkg and energy-ram with their
 *     .scale, one counter per package on the CPUs of its cpumask), which needs
 *     perf_event_paranoid <= 0 or CAP_PERFMON.
 *  3. Otherwise one message that says why and what would help.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sampler.h"

#define ZONES_MAX 32

static struct zone {
	struct smp_src src; /* energy_uj, or src.fd = -1 and perf_fd for perf */
	int perf_fd;
	double scale; /* joules per unit */
	uint64_t max, last, total;
	uint32_t metric;
	int live, first;
	char name[96];
} zones[ZONES_MAX] LT_PAGE_ALIGNED;
static unsigned nzones;

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* "intel-rapl:0:1" -> its parent "intel-rapl:0" (the package), or "" for a package. */
static void zone_parent(const char *z, char *out, size_t len)
{
	const char *last = strrchr(z, ':'), *first = strchr(z, ':');
	if (last && first && last != first)
		snprintf(out, len, "%.*s", (int)(last - z), z);
	else
		out[0] = '\0';
}

/* 1 when an energy file was refused (EACCES), else 0. */
static int find_powercap(void)
{
	char dir[320], path[1024], name[64], pname[64], parent[64];
	int denied = 0;
	if (smp_path(dir, sizeof(dir), "/sys/class/powercap"))
		return 0;
	struct smp_dir d;
	if (smp_dir_open(&d, dir))
		return 0;
	static char ents[ZONES_MAX][64];
	int n = 0;
	const char *e;
	while (n < ZONES_MAX && (e = smp_dir_next(&d)))
		if (!strncmp(e, "intel-rapl:", 11) && strlen(e) < 64)
			strcpy(ents[n++], e);
	smp_dir_close(&d);
	/* Packages first, then their domains, in name order. */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp(ents[j - 1], ents[j]) > 0; j--) {
			char t[64];
			strcpy(t, ents[j]);
			strcpy(ents[j], ents[j - 1]);
			strcpy(ents[j - 1], t);
		}
	for (int i = 0; i < n && nzones < ZONES_MAX; i++) {
		struct zone *z = &zones[nzones];
		snprintf(path, sizeof(path), "%s/%.63s/name", dir, ents[i]);
		if (smp_read_file(path, name, sizeof(name)) <= 0)
			snprintf(name, sizeof(name), "%.63s", ents[i]);
		chomp(name);
		char buf[64];
		snprintf(path, sizeof(path), "%s/%.63s/max_energy_range_uj", dir, ents[i]);
		z->max = smp_read_file(path, buf, sizeof(buf)) > 0 ? strtoull(buf, NULL, 10) : 0;
		snprintf(path, sizeof(path), "%s/%.63s/energy_uj", dir, ents[i]);
		int err = smp_open(&z->src, path, 1);
		if (err) {
			denied |= err == -EACCES || err == -EPERM;
			continue;
		}
		zone_parent(ents[i], parent, sizeof(parent));
		pname[0] = '\0';
		if (parent[0]) {
			snprintf(path, sizeof(path), "%s/%.63s/name", dir, parent);
			if (smp_read_file(path, pname, sizeof(pname)) > 0)
				chomp(pname);
		}
		snprintf(z->name, sizeof(z->name), "RAPL %.40s%s%.40s", pname, pname[0] ? " " : "",
			 name);
		z->perf_fd = -1;
		z->scale = 1e-6;
		z->first = 1;
		z->live = 1;
		z->metric = smp_metric("node", "accumulated", "J", z->name);
		nzones++;
	}
	return denied;
}

/* perf's power PMU, one counter per package for energy-pkg and energy-ram.  0 when at
 * least one counter opened; else -errno of the last failure. */
static int find_perf(void)
{
	char path[400], buf[256];
	if (smp_path(path, sizeof(path), "/sys/bus/event_source/devices/power/type") ||
	    smp_read_file(path, buf, sizeof(buf)) <= 0)
		return -ENOENT;
	unsigned type = (unsigned)strtoul(buf, NULL, 10);
	char cpus[256] = "0";
	if (!smp_path(path, sizeof(path), "/sys/bus/event_source/devices/power/cpumask") &&
	    smp_read_file(path, buf, sizeof(buf)) > 0)
		snprintf(cpus, sizeof(cpus), "%s", buf);
	static const char *const events[][2] = {{"energy-pkg", "package"}, {"energy-ram", "dram"}};
	int err = -ENOENT;
	for (size_t e = 0; e < 2; e++) {
		if (smp_path(path, sizeof(path), "/sys/bus/event_source/devices/power/events/%s",
			     events[e][0]) ||
		    smp_read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		char *ev = strstr(buf, "event=");
		if (!ev)
			continue;
		uint64_t config = strtoull(ev + 6, NULL, 0);
		double scale = 2.3283064365386962890625e-10; /* the kernel's usual 2^-32 J */
		if (!smp_path(path, sizeof(path),
			      "/sys/bus/event_source/devices/power/events/%s.scale",
			      events[e][0]) &&
		    smp_read_file(path, buf, sizeof(buf)) > 0)
			scale = strtod(buf, NULL);
		int pkg = 0;
		for (char *s = cpus; *s && nzones < ZONES_MAX; pkg++) {
			char *end;
			long cpu = strtol(s, &end, 10);
			if (end == s)
				break;
			s = end;
			while (*s == ',' || *s == '\n' || *s == '-')
				s++; /* a range in the mask: its first CPU stands for the package */
			struct perf_event_attr a;
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = type;
			a.config = config;
			int fd = (int)syscall(SYS_perf_event_open, &a, -1, (int)cpu, -1,
					      PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				err = -errno;
				continue;
			}
			struct zone *z = &zones[nzones++];
			memset(z, 0, sizeof(*z));
			z->src.fd = -1;
			z->perf_fd = fd;
			z->scale = scale;
			z->first = 1;
			z->live = 1;
			snprintf(z->name, sizeof(z->name), "RAPL %s %d", events[e][1], pkg);
			z->metric = smp_metric("node", "accumulated", "J", z->name);
			err = 0;
		}
	}
	return nzones ? 0 : err;
}

static int rapl_start(void)
{
	nzones = 0;
	int denied = find_powercap();
	if (nzones)
		return 0;
	int perr = find_perf();
	if (nzones)
		return 0;
	char dir[320];
	smp_path(dir, sizeof(dir), "/sys/class/powercap");
	if (denied) {
		char buf[32] = "?";
		smp_read_file("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));
		chomp(buf);
		smp_off("energy",
			"%s/intel-rapl:*/energy_uj is readable by root only (Linux >= 5.10) and "
			"perf's power events are %s (perf_event_paranoid=%s): run as root, make "
			"energy_uj readable (chmod o+r), or allow perf (sysctl "
			"kernel.perf_event_paranoid=0 or CAP_PERFMON)",
			dir, perr == -ENOENT ? "absent" : "not permitted", buf);
	} else {
		smp_off("energy",
			"no RAPL: no intel-rapl zone under %s and no perf power PMU (a virtual "
			"machine or a processor without RAPL has none)",
			dir);
	}
	return -1;
}

static void rapl_sample(void)
{
	char buf[64];
	for (unsigned i = 0; i < nzones; i++) {
		struct zone *z = &zones[i];
		if (!z->live)
			continue;
		uint64_t v = 0;
		int ok;
		if (z->perf_fd >= 0) {
			ok = read(z->perf_fd, &v, sizeof(v)) == (ssize_t)sizeof(v);
		} else {
			char *end;
			ssize_t n = smp_read(&z->src, buf, sizeof(buf));
			v = n > 0 ? strtoull(buf, &end, 10) : 0;
			ok = n > 0 && end != buf;
		}
		if (!ok) {
			smp_off("energy", "%s (%s) stopped answering: no more samples from it",
				z->name, z->src.fd >= 0 ? z->src.path : "perf");
			smp_close(&z->src);
			z->live = 0;
			continue;
		}
		if (z->first) {
			z->first = 0;
		} else if (v >= z->last) {
			z->total += v - z->last;
		} else if (z->max && z->last <= z->max) {
			z->total += z->max - z->last + v; /* wrapped at max_energy_range_uj */
		} else {
			z->total += v; /* a counter reset without a known range */
		}
		z->last = v;
		smp_emit_double(z->metric, (double)z->total * z->scale);
	}
}

static void rapl_stop(void)
{
	for (unsigned i = 0; i < nzones; i++) {
		smp_close(&zones[i].src);
		if (zones[i].perf_fd >= 0)
			close(zones[i].perf_fd);
		zones[i].perf_fd = -1;
	}
	nzones = 0;
}

/* In the child: forget the parent's zones; the child's sampler finds its own.  The parent's
 * perf descriptors stay open in the child (closing a number the program may reuse after
 * fork is worse than leaking one per package). */
static void rapl_after_fork(void)
{
	for (unsigned i = 0; i < nzones; i++)
		smp_close(&zones[i].src);
	nzones = 0;
}

const struct smp_ops smp_rapl = {"energy",    LT_SAMPLE_ENERGY, rapl_start,
				 rapl_sample, rapl_stop,	rapl_after_fork};
