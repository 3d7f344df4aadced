// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench/unwind.c - what one stack sample costs the sampled thread, measured directly: the
 * unwinding the sampler's signal handler does (libunwind's local unwinding with a per-thread
 * cache, from a signal context, DWARF only), repeated on a stack of DEPTH frames built
 * without frame pointers.  Prints the median over repetitions of the ns per unwind.
 *
 *   bench_unwind [DEPTH [N]]    (defaults: 9 frames, 20000 unwinds per repetition)
 */
#define _GNU_SOURCE
#define UNW_LOCAL_ONLY
#include <stdint.h>
#include <ucontext.h>
#include <libunwind.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long n_unwinds = 20000;
static volatile unsigned long frames_seen;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The handler's work: unwind the interrupted context n_unwinds times. */
static volatile double per_unwind, per_fast;
static volatile unsigned long frames_fast;
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	double t0 = now_ns();
	for (long i = 0; i < n_unwinds; i++) {
		unw_cursor_t cur;
		if (unw_init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
			break;
		unsigned n = 0;
		do {
			unw_word_t ip;
			if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
				break;
			n++;
		} while (n < 64 && unw_step(&cur) > 0);
		frames_seen = n;
	}
	per_unwind = (now_ns() - t0) / (double)n_unwinds;
	/* The same with libunwind's fast path (unw_backtrace: frame kinds cached per address),
	 * from the handler's own frame through the signal frame. */
	void *ips[64];
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	t0 = now_ns();
	for (long i = 0; i < n_unwinds; i++) {
		int n = unw_backtrace(ips, 64), k = 0;
		while (k < n && (uintptr_t)ips[k] != pc)
			k++;
		frames_fast = (unsigned long)(n - k);
	}
	per_fast = (now_ns() - t0) / (double)n_unwinds;
}

__attribute__((noinline)) static void descend(int depth)
{
	if (depth > 1) {
		descend(depth - 1);
		__asm__ volatile("" ::: "memory");
		return;
	}
	raise(SIGUSR1);
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 9;
	if (argc > 2)
		n_unwinds = atol(argv[2]);
	unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	double v[11], w[11];
	descend(depth); /* the first: libunwind reads the DWARF of the frames and caches it */
	for (int r = 0; r < 11; r++) {
		descend(depth);
		v[r] = per_unwind;
		w[r] = per_fast;
	}
	qsort(v, 11, sizeof(v[0]), dcmp);
	qsort(w, 11, sizeof(w[0]), dcmp);
	printf("unw_step, %lu frames: median %.0f ns (min %.0f, max %.0f) over 11 x %ld\n",
	       frames_seen, v[5], v[0], v[10], n_unwinds);
	printf("unw_backtrace, %lu frames: median %.0f ns (min %.0f, max %.0f)\n", frames_fast,
	       w[5], w[0], w[10]);
	return 0;
}
