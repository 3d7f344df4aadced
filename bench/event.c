// SPDX-License-Identifier: BSD-3-Clause
/*
 * event - the cost of one recorded event, next to the floor of any tracer on this machine.
 *
 *   floor     rdtsc + a 16-byte record stored into a private buffer + a release store of
 *             its end (what the runtime's hot path must do at the least)
 *   region    ltr_region_begin_h / ltr_region_end_h: one event each, through the PLT into
 *             libtrace.so when preloaded (into the no-op stub otherwise)
 *   named     ltr_region_begin / ltr_region_end with a literal name (interning cache hit)
 *
 *   event [ITERS [REPS [CPU]]]
 *   event --record N      records N region events and exits (for the bytes-per-event figure)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>

#include "bench.h"
#include "libtrace/annotate.h"

static uint64_t ring[1 << 16]; /* 512 KiB, reused: hot like the runtime's chunks */
static uint64_t ring_used;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--record")) {
		/* Records exactly N region events (N/2 begin/end pairs) and nothing else. */
		long n = atol(argv[2]);
		uint32_t h = ltr_handle("bench");
		for (long i = 0; i < n / 2; i++) {
			ltr_region_begin_h(h);
			ltr_region_end_h(h);
		}
		return 0;
	}
	long iters = argc > 1 ? atol(argv[1]) : 10000000;
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	if (reps > BENCH_MAX_REPS)
		reps = BENCH_MAX_REPS;
	bench_pin(argc > 3 ? atoi(argv[3]) : 1);
	uint64_t pos = 0;
	BENCH("floor: rdtsc + 16 B store + release", iters, reps, {
		uint64_t *p = &ring[pos];
		p[0] = rdtsc();
		p[1] = 9 | (uint64_t)_i << 32;
		pos = (pos + 2) & ((1 << 16) - 1);
		__atomic_store_n(&ring_used, pos, __ATOMIC_RELEASE);
	});
	uint32_t h = ltr_handle("bench");
	/* Two events per iteration; every line reports nanoseconds per event. */
	BENCH_OPS("event: region begin/end by handle", iters / 2, reps, 2, {
		ltr_region_begin_h(h);
		ltr_region_end_h(h);
	});
	BENCH_OPS("event: region begin/end by name", iters / 2, reps, 2, {
		ltr_region_begin("bench");
		ltr_region_end("bench");
	});
	/* Bursts that fit in the thread's ring (8 MiB by default), with a pause between them
	 * for the writer: the hot path alone, without waiting for the disk. */
	long burst = 200000; /* 100000 pairs, 3.2 MB */
	BENCH_OPS("event: by handle, 200k bursts", burst / 2, reps, 2, {
		ltr_region_begin_h(h);
		ltr_region_end_h(h);
		if (_i == burst / 2 - 1)
			bench_pause(50);
	});
	printf("# handle %u (0: not traced)\n", h);
	return 0;
}
