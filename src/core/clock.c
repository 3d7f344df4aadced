// SPDX-License-Identifier: BSD-3-Clause
/*
 * clock.c - the process clock: rdtsc where the TSC is invariant, else CLOCK_MONOTONIC.
 *
 * Ticks are recorded raw; the tools map them to CLOCK_MONOTONIC nanoseconds through the
 * "sync" pairs of the meta file (one at start, more during the run, one at the end).  The
 * frequency estimated here at start only serves traces that end before a second pair.
 *
 * A program may turn the TSC off for its thread (prctl PR_SET_TSC, PR_TSC_SIGSEGV; seccomp's
 * strict mode does it too): rdtsc then raises SIGSEGV, and so does the vDSO's clock_gettime,
 * which reads the TSC.  The prctl wrapper (interpose/proc.c) calls lt_clock_tsc_off first,
 * and init checks whether the process started that way (the setting survives exec): from
 * then on every clock is read with the clock_gettime system call, and the ticks of a trace
 * that began with the TSC go on as CLOCK_MONOTONIC converted at the calibrated frequency
 * from a pair taken at the switch (LT_CLOCK_EMULATED), so that the trace keeps one unit.
 */
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
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
static uint64_t skew;		   /* LIBTRACE_TEST_CLOCK_SKEW, two's complement */
static int clock_syscall;	   /* the TSC was turned off: no vDSO */
static uint64_t emu_ticks, emu_ns; /* LT_CLOCK_EMULATED: the pair taken at the switch */
static double emu_ticks_per_ns;

int lt_clock_gettime(clockid_t id, struct timespec *ts)
{
	if (__builtin_expect(__atomic_load_n(&clock_syscall, __ATOMIC_ACQUIRE), 0))
		return (int)syscall(SYS_clock_gettime, id, ts);
	return clock_gettime(id, ts);
}

/* CLOCK_MONOTONIC, moved by the test skew: the timeline every record maps to (raw ticks
 * through the meta file's pairs of this clock and the tick counter). */
uint64_t lt_clock_mono_ns(void)
{
	struct timespec ts;
	lt_clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + skew;
}

uint64_t lt_clock_real_ns(void)
{
	struct timespec ts;
	lt_clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t lt_clock_ticks_slow(void)
{
	uint64_t ns = lt_clock_mono_ns();
	if (__atomic_load_n(&lt_clock_kind, __ATOMIC_ACQUIRE) != LT_CLOCK_EMULATED)
		return ns;
	return emu_ticks + (uint64_t)((double)(int64_t)(ns - emu_ns) * emu_ticks_per_ns);
}

int lt_clock_tsc_is_off(void)
{
	int tsc = 0;
	return prctl(PR_GET_TSC, &tsc, 0, 0, 0) == 0 && tsc == PR_TSC_SIGSEGV;
}

void lt_clock_tsc_off(void)
{
	if (__atomic_load_n(&clock_syscall, __ATOMIC_ACQUIRE))
		return;
	if (lt_clock_kind == LT_CLOCK_TSC) {
		lt_clock_pair(&emu_ticks, &emu_ns); /* the TSC still works on this thread */
		emu_ticks_per_ns = clock_hz / 1e9;
		__atomic_store_n(&lt_clock_kind, LT_CLOCK_EMULATED, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&clock_syscall, 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON)
		lt_warn(
		    "the program turns the TSC off (PR_SET_TSC): the trace's clock is read "
		    "with a system call from now on, at a cost of about a microsecond an event");
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
	if (lt_clock_tsc_is_off()) {
		/* Started so (inherited over fork and exec): the system call from the start. */
		clock_syscall = 1;
		if (requested == LT_CLOCK_TSC)
			lt_warn("clock: the TSC is turned off for this process; using "
				"CLOCK_MONOTONIC");
		return;
	}
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
