// SPDX-License-Identifier: BSD-3-Clause
/*
 * clock.c - the process clock: rdtsc where the TSC is invariant, else CLOCK_MONOTONIC.
 *
 * Ticks are recorded raw; the tools map them to CLOCK_MONOTONIC nanoseconds through the
 * "sync" pairs of the meta file (one at start, more during the run, one at the end).  The
 * frequency estimated here at start only serves traces that end before a second pair.
 */
#include <time.h>
#if defined(__x86_64__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h> /* glibc >= 2.33: CPU_FEATURE_ACTIVE */
#endif
#if !defined(CPU_FEATURE_ACTIVE)
#include <cpuid.h>
#endif
#endif

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
/*
 * True when the TSC is invariant: CPUID leaf 0x80000007, EDX bit 8, the bit from which Linux
 * sets both constant_tsc and nonstop_tsc (Intel and AMD alike).  Read from the C library's
 * copy of the CPUID leaves, taken once when the process started: in a virtual machine each
 * CPUID instruction traps to the hypervisor (13 us each on the VM measured, and this test
 * took four), and /proc/cpuinfo costs the kernel a text of every CPU.
 */
static int tsc_is_invariant(void)
{
#if defined(CPU_FEATURE_PRESENT)
	return CPU_FEATURE_PRESENT(INVARIANT_TSC);
#else
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
#endif
}

/*
 * The calibration's window opens in lt_clock_init and closes in lt_clock_calibrate, after
 * the trace's directory and meta file were made: that work is most of the window, and only
 * what is left of CAL_NS is spent waiting.  Each end is a pair of lt_clock_pair (rdtsc on
 * both sides of the clock read, the closest of five tries), so that 0.25 ms gives the
 * frequency within about 0.02%.
 */
#define CAL_NS 250000u
static uint64_t cal_ticks, cal_ns;
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
	lt_clock_kind = LT_CLOCK_TSC; /* lt_clock_calibrate gives its frequency */
	lt_clock_pair(&cal_ticks, &cal_ns);
#else
	(void)requested;
#endif
}

void lt_clock_calibrate(void)
{
#if defined(__x86_64__)
	if (lt_clock_kind != LT_CLOCK_TSC || !cal_ns)
		return; /* CLOCK_MONOTONIC, or calibrated already (a fork child) */
	uint64_t ticks, ns;
	do
		lt_clock_pair(&ticks, &ns);
	while (ns - cal_ns < CAL_NS);
	double hz =
	    ticks > cal_ticks ? (double)(ticks - cal_ticks) * 1e9 / (double)(ns - cal_ns) : 0;
	cal_ns = 0;
	if (hz < 1e6) {
		lt_warn("clock: TSC calibration failed; using CLOCK_MONOTONIC");
		lt_clock_kind = LT_CLOCK_MONOTONIC;
		return;
	}
	clock_hz = hz;
#endif
}

/* Of 5 tries, the pair whose ticks bracket the CLOCK_MONOTONIC reading most tightly (a try
 * the thread was preempted in would move every time stamp of the process by up to the
 * preemption): *ticks the middle of the bracket. */
void lt_clock_pair(uint64_t *ticks, uint64_t *ns)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t t0 = lt_now(), m = lt_clock_mono_ns(), t1 = lt_now();
		if (t1 - t0 < best) {
			best = t1 - t0;
			*ticks = t0 + (t1 - t0) / 2;
			*ns = m;
		}
	}
}
