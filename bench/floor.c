// SPDX-License-Identifier: BSD-3-Clause
/*
 * floor - what a traced lock+unlock pair costs at the least on this machine, untraced: the
 * two halves of the whole process's cost (bench/size.sh), each without the tracer.
 *
 *   producer   pthread_mutex_lock + unlock, each call stamped with rdtsc and written as the
 *              wrappers write it (a 24-byte CALL record: time, header, mutex) into an 8 MiB
 *              ring, its end published with a release store; nobody reads the ring: the
 *              program's thread's part with a writer that costs it nothing
 *   pack cache the tracer's own packer (format/pack.h) over those records, a 1 MiB chunk
 *              packed again and again: the writer's part with the records in its cache
 *   pack mem   the same over a 64 MiB chunk: read from memory
 *   plain      the untraced pair
 *
 *   floor [ITERS [REPS]]      (ITERS pairs per repetition; default 10000000, 7)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "bench.h"
#include "format.h"
#include "pack.h"

#define RING_WORDS (1u << 20) /* 8 MiB, a thread's ring */

static uint64_t ring[RING_WORDS];
static size_t ring_end;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t call_header(enum lt_fn fn)
{
	return LT_REC_CALL | 3u << 8 | (uint64_t)fn << 16;
}

static inline void put(uint64_t ts, enum lt_fn fn)
{
	size_t k = ring_end;
	ring[k] = ts;
	ring[k + 1] = call_header(fn);
	ring[k + 2] = (uint64_t)(uintptr_t)&mutex;
	k += 3;
	__atomic_store_n(&ring_end, k + 3 <= RING_WORDS ? k : 0, __ATOMIC_RELEASE);
}

/* `pairs` lock+unlock pairs' records, 20 to 27 ticks apart, as the wrappers write them. */
static uint64_t *records(size_t pairs)
{
	uint64_t *r = malloc(pairs * 6 * sizeof(*r));
	if (!r) {
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	uint64_t ts = rdtsc();
	for (size_t i = 0; i < pairs; i++) {
		uint64_t *p = r + 6 * i;
		p[0] = ts += 20 + (i * 7 & 7);
		p[1] = call_header(LT_FN_pthread_mutex_lock);
		p[2] = (uint64_t)(uintptr_t)&mutex;
		p[3] = ts += 20 + (i * 5 & 7);
		p[4] = call_header(LT_FN_pthread_mutex_unlock);
		p[5] = p[2];
	}
	return r;
}

/* Packs `pairs` pairs' records as chunks of `chunk_pairs` each, iters / pairs times. */
static void pack(const char *name, size_t pairs, size_t chunk_pairs, long iters, int reps)
{
	uint64_t *r = records(pairs);
	size_t chunk = chunk_pairs * 48;
	uint8_t *out = malloc(chunk);
	static struct lt_pack_state state;
	struct lt_pack_state *s = &state;
	if (!out) {
		fprintf(stderr, "floor: out of memory\n");
		exit(1);
	}
	size_t packed = 0;
	long passes = iters / (long)pairs > 0 ? iters / (long)pairs : 1;
	BENCH_OPS(name, passes, reps, (double)pairs, {
		for (size_t c = 0; c < pairs; c += chunk_pairs)
			packed += lt_pack_chunk(s, r + 6 * c, chunk, out, chunk);
	});
	if (!packed) {
		fprintf(stderr, "floor: the packer wrote nothing\n");
		exit(1);
	}
	free(out);
	free(r);
}

int main(int argc, char **argv)
{
	long iters = 10000000;
	int reps = 7;
	if (!bench_args(argc, argv, &iters, &reps))
		return 2;
	bench_pin(1);
	memset(ring, 0, sizeof(ring));
	BENCH("plain: lock + unlock", iters, reps, {
		pthread_mutex_lock(&mutex);
		pthread_mutex_unlock(&mutex);
	});
	BENCH("producer: 2 x (rdtsc + 24 B record)", iters, reps, {
		pthread_mutex_lock(&mutex);
		put(rdtsc(), LT_FN_pthread_mutex_lock);
		uint64_t ts = rdtsc(); /* before the release, as the wrapper stamps it */
		pthread_mutex_unlock(&mutex);
		put(ts, LT_FN_pthread_mutex_unlock);
	});
	/* 1 MiB chunks (the runtime's default chunk), in cache and from memory. */
	pack("pack cache: 1 MiB chunk, per pair", 21845, 21845, iters, reps);
	pack("pack mem: 64 MiB of chunks, per pair", 64 * 21845, 21845, iters, reps);
	return 0;
}
