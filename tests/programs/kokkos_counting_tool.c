// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos_counting_tool.c - a stand-in for a Kokkos tool of the user's (kernel-timer,
 * space-time-stack), for tests/e2e/kokkos-tool.sh.  Build as a shared library.  It counts
 * the callbacks it receives and, at kokkosp_finalize_library, writes one "name count" line
 * per callback to the file named by KP_COUNT_FILE.  Its kernel and fence ids are its own
 * (1000 + a count, each given once): "bad_ids" counts the ends that came back with an id
 * it never gave out or had already seen end, and "open" the ids never ended; a tool that
 * is given another tool's ids counts them there.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct space {
	char name[64];
};

enum {
	INIT,
	FINALIZE,
	BEGIN_FOR,
	END_FOR,
	BEGIN_REDUCE,
	END_REDUCE,
	BEGIN_SCAN,
	END_SCAN,
	BEGIN_FENCE,
	END_FENCE,
	PUSH,
	POP,
	ALLOC,
	DEALLOC,
	BEGIN_COPY,
	END_COPY,
	NCOUNTS
};
static const char *const names[NCOUNTS] = {
    "init_library",	     "finalize_library",    "begin_parallel_for",  "end_parallel_for",
    "begin_parallel_reduce", "end_parallel_reduce", "begin_parallel_scan", "end_parallel_scan",
    "begin_fence",	     "end_fence",	    "push_profile_region", "pop_profile_region",
    "allocate_data",	     "deallocate_data",	    "begin_deep_copy",	   "end_deep_copy"};
static unsigned long counts[NCOUNTS], bad_ids;

#define MAX_IDS 65536
static unsigned char open_ids[MAX_IDS]; /* 1 from its begin to its end */
static uint64_t next_id;

static void count(int which)
{
	__atomic_add_fetch(&counts[which], 1, __ATOMIC_RELAXED);
}

static void begin(int which, uint64_t *id)
{
	count(which);
	uint64_t n = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
	if (n < MAX_IDS)
		__atomic_store_n(&open_ids[n], 1, __ATOMIC_RELAXED);
	*id = 1000 + n;
}

static void end(int which, uint64_t id)
{
	count(which);
	if (id < 1000 || id - 1000 >= MAX_IDS ||
	    !__atomic_exchange_n(&open_ids[id - 1000], 0, __ATOMIC_RELAXED))
		__atomic_add_fetch(&bad_ids, 1, __ATOMIC_RELAXED);
}

void kokkosp_init_library(int seq, uint64_t version, uint32_t n, void *info)
{
	(void)seq, (void)version, (void)n, (void)info;
	count(INIT);
}

void kokkosp_finalize_library(void)
{
	count(FINALIZE);
	const char *path = getenv("KP_COUNT_FILE");
	FILE *f = path ? fopen(path, "w") : NULL;
	if (!f)
		return;
	for (int i = 0; i < NCOUNTS; i++)
		fprintf(f, "%s %lu\n", names[i], counts[i]);
	unsigned long open = 0;
	for (uint64_t i = 0; i < next_id && i < MAX_IDS; i++)
		open += open_ids[i];
	fprintf(f, "bad_ids %lu\nopen %lu\n", bad_ids, open);
	fclose(f);
}

void kokkosp_begin_parallel_for(const char *name, uint32_t dev, uint64_t *id)
{
	(void)name, (void)dev;
	begin(BEGIN_FOR, id);
}

void kokkosp_end_parallel_for(uint64_t id)
{
	end(END_FOR, id);
}

void kokkosp_begin_parallel_reduce(const char *name, uint32_t dev, uint64_t *id)
{
	(void)name, (void)dev;
	begin(BEGIN_REDUCE, id);
}

void kokkosp_end_parallel_reduce(uint64_t id)
{
	end(END_REDUCE, id);
}

void kokkosp_begin_parallel_scan(const char *name, uint32_t dev, uint64_t *id)
{
	(void)name, (void)dev;
	begin(BEGIN_SCAN, id);
}

void kokkosp_end_parallel_scan(uint64_t id)
{
	end(END_SCAN, id);
}

void kokkosp_begin_fence(const char *name, uint32_t dev, uint64_t *id)
{
	(void)name, (void)dev;
	begin(BEGIN_FENCE, id);
}

void kokkosp_end_fence(uint64_t id)
{
	end(END_FENCE, id);
}

void kokkosp_push_profile_region(const char *name)
{
	(void)name;
	count(PUSH);
}

void kokkosp_pop_profile_region(void)
{
	count(POP);
}

void kokkosp_allocate_data(struct space s, const char *label, const void *ptr, uint64_t size)
{
	(void)s, (void)label, (void)ptr, (void)size;
	count(ALLOC);
}

void kokkosp_deallocate_data(struct space s, const char *label, const void *ptr, uint64_t size)
{
	(void)s, (void)label, (void)ptr, (void)size;
	count(DEALLOC);
}

void kokkosp_begin_deep_copy(struct space dst, const char *dst_label, const void *dst_ptr,
			     struct space src, const char *src_label, const void *src_ptr,
			     uint64_t size)
{
	(void)dst, (void)dst_label, (void)dst_ptr, (void)src, (void)src_label, (void)src_ptr;
	(void)size;
	count(BEGIN_COPY);
}

void kokkosp_end_deep_copy(void)
{
	count(END_COPY);
}
