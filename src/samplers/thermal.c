// SPDX-License-Identifier: BSD-3-Clause
/*
 * thermal.c - the temperature sampler: hwmon sensors (sys/class/hwmon/hwmon<N>/temp<I>_input,
 * named by the device's `name` and the sensor's temp<I>_label) and thermal zones
 * (sys/class/thermal/thermal_zone<N>/temp, named by `type`).  Millidegrees Celsius in the
 * files; node-level metrics in degrees Celsius (double).  A sensor that stops answering
 * (the file is gone, the device was unplugged) is said once and read no more.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler.h"

#define SENSORS_MAX 64

static struct sensor {
	struct smp_src src;
	uint32_t metric;
	int live;
	char name[128];
} sensors[SENSORS_MAX] LT_PAGE_ALIGNED;
static unsigned nsensors;

/* Strips the trailing newline of a sysfs value. */
static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

static int dir_entries(const char *dir, const char *prefix, char names[][64], int max)
{
	struct smp_dir d;
	if (smp_dir_open(&d, dir))
		return -1;
	int n = 0;
	const char *e;
	while (n < max && (e = smp_dir_next(&d)))
		if (!strncmp(e, prefix, strlen(prefix)) && strlen(e) < 64)
			strcpy(names[n++], e);
	smp_dir_close(&d);
	/* A stable order: by name, shorter first (hwmon2 before hwmon10). */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0; j--) {
			size_t a = strlen(names[j - 1]), b = strlen(names[j]);
			if (a < b || (a == b && strcmp(names[j - 1], names[j]) <= 0))
				break;
			char t[64];
			strcpy(t, names[j]);
			strcpy(names[j], names[j - 1]);
			strcpy(names[j - 1], t);
		}
	return n;
}

static void add_sensor(const char *path, const char *name)
{
	if (nsensors >= SENSORS_MAX)
		return;
	struct sensor *s = &sensors[nsensors];
	if (smp_open(&s->src, path, 1))
		return;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->metric = smp_metric("node", "absolute", "C", name);
	s->live = 1;
	nsensors++;
}

static void find_hwmon(void)
{
	char dir[320], path[1024], buf[128], label[128];
	static LT_PAGE_ALIGNED char devs[64][64], files[256][64];
	if (smp_path(dir, sizeof(dir), "/sys/class/hwmon"))
		return;
	int nd = dir_entries(dir, "hwmon", devs, 64);
	for (int i = 0; i < nd; i++) {
		char devdir[400];
		snprintf(devdir, sizeof(devdir), "%s/%.63s", dir, devs[i]);
		snprintf(path, sizeof(path), "%s/name", devdir);
		if (smp_read_file(path, buf, sizeof(buf)) <= 0)
			snprintf(buf, sizeof(buf), "%.63s", devs[i]);
		chomp(buf);
		int nf = dir_entries(devdir, "temp", files, 256);
		for (int f = 0; f < nf; f++) {
			size_t len = strlen(files[f]);
			if (len < 7 || strcmp(files[f] + len - 6, "_input"))
				continue;
			char base[64];
			snprintf(base, sizeof(base), "%.*s", (int)(len - 6), files[f]);
			snprintf(path, sizeof(path), "%s/%s_label", devdir, base);
			if (smp_read_file(path, label, sizeof(label)) > 0)
				chomp(label);
			else
				snprintf(label, sizeof(label), "%s", base);
			char name[128];
			snprintf(name, sizeof(name), "%.60s %.60s", buf, label);
			snprintf(path, sizeof(path), "%s/%.63s", devdir, files[f]);
			add_sensor(path, name);
		}
	}
}

static void find_thermal(void)
{
	char dir[320], path[1024], type[64];
	static LT_PAGE_ALIGNED char zones[64][64];
	if (smp_path(dir, sizeof(dir), "/sys/class/thermal"))
		return;
	int nz = dir_entries(dir, "thermal_zone", zones, 64);
	for (int i = 0; i < nz; i++) {
		snprintf(path, sizeof(path), "%s/%.63s/type", dir, zones[i]);
		if (smp_read_file(path, type, sizeof(type)) > 0)
			chomp(type);
		else
			snprintf(type, sizeof(type), "unknown");
		char name[160];
		snprintf(name, sizeof(name), "%.63s (%.63s)", type, zones[i]);
		snprintf(path, sizeof(path), "%s/%.63s/temp", dir, zones[i]);
		add_sensor(path, name);
	}
}

static int thermal_start(void)
{
	nsensors = 0;
	find_hwmon();
	find_thermal();
	if (!nsensors) {
		char a[320], b[320];
		smp_path(a, sizeof(a), "/sys/class/hwmon");
		smp_path(b, sizeof(b), "/sys/class/thermal");
		smp_off("temperature",
			"no temperature sensor: no readable temp*_input under %s and no "
			"thermal_zone*/temp under %s (a virtual machine has none)",
			a, b);
		return -1;
	}
	return 0;
}

static void thermal_sample(void)
{
	char buf[64];
	for (unsigned i = 0; i < nsensors; i++) {
		struct sensor *s = &sensors[i];
		if (!s->live)
			continue;
		ssize_t n = smp_read(&s->src, buf, sizeof(buf));
		char *end;
		long long v = n > 0 ? strtoll(buf, &end, 10) : 0;
		if (n <= 0 || end == buf) {
			smp_off("temperature",
				"sensor %s (%s) stopped answering (%s): no more "
				"samples from it",
				s->name, s->src.path, n < 0 ? strerror((int)-n) : "no value");
			smp_close(&s->src);
			s->live = 0;
			continue;
		}
		smp_emit_double(s->metric, (double)v / 1000.0);
	}
}

static void thermal_stop(void)
{
	for (unsigned i = 0; i < nsensors; i++)
		smp_close(&sensors[i].src);
	nsensors = 0;
}

const struct smp_ops smp_thermal = {"temperature",  LT_SAMPLE_TEMPERATURE, thermal_start,
				    thermal_sample, thermal_stop,	   thermal_stop};
