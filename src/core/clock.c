// SPDX-License-Identifier: BSD-3-Clause
/*
 * clock.c - the process clock: rdtsc where the TSC is invariant, else CLOCK_MONOTONIC.
 *
 * Ticks are recorded raw; the tools map them to CLOCK_MONOTONIC nanoseconds through the
 * "sync" pairs of the meta file (one at start, more during the run, one at the end).  The
 * frequency estimated here at start only serves traces that end before a second pair.
 */
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lt.h"

int lt_clock_kind = LT_CLOCK_MONOTONIC;
static double clock_hz = 1e9;
static uint64_t skew; /* LIBTRACE_TEST_CLOCK_SKEW, two's complement */

/* CLOCK_MONOTONIC, moved by the test skew: the timeline every record maps to (raw ticks
 * through the meta file's pairs of this clock and the tick counter). */
uint64_t lt_clock_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + skew;
}

uint64_t lt_clock_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double lt_clock_hz(void)
{
	return clock_hz;
}

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* True when /proc/cpuinfo's first "flags" line has constant_tsc and nonstop_tsc. */
static int tsc_is_invariant(void)
{
	char buf[8192];
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *flags = strstr(buf, "\nflags");
	if (!flags)
		return 0;
	char *eol = strchr(flags + 1, '\n');
	if (eol)
		*eol = '\0';
	return strstr(flags, " constant_tsc") && strstr(flags, " nonstop_tsc");
}

/* Ticks per second over a short busy window (about 0.5 ms at start-up). */
static double tsc_calibrate(void)
{
	uint64_t m0 = lt_clock_mono_ns(), t0 = rdtsc(), m1, t1;
	do {
		m1 = lt_clock_mono_ns();
		t1 = rdtsc();
	} while (m1 - m0 < 500000);
	if (t1 <= t0)
		return 0;
	return (double)(t1 - t0) * 1e9 / (double)(m1 - m0);
}
#endif

void lt_clock_init(int requested)
{
	lt_clock_kind = LT_CLOCK_MONOTONIC;
	clock_hz = 1e9;
	skew = (uint64_t)lt_cfg.clock_skew_ns;
#if defined(__x86_64__)
	if (requested == LT_CLOCK_MONOTONIC)
		return;
	if (!tsc_is_invariant()) {
		if (requested == LT_CLOCK_TSC)
			lt_warn("clock: the TSC is not invariant here; using CLOCK_MONOTONIC");
		return;
	}
	double hz = tsc_calibrate();
	if (hz < 1e6) {
		lt_warn("clock: TSC calibration failed; using CLOCK_MONOTONIC");
		return;
	}
	clock_hz = hz;
	lt_clock_kind = LT_CLOCK_TSC;
#else
	(void)requested;
#endif
}
