// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_maps - the reader's index of a process's code mappings (rd_map_at): against a plain
 * scan (the newest map holding the address wins, as a dlopen after a dlclose maps over an
 * older one) on maps that overlap and come out of order, and at scale: a meta file of a
 * million map lines, each found at its first byte, at its last, and not past its end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/format/format.h"
#include "../../tools/reader/reader.h"
#include "test.h"

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* Writes dir/meta with n maps given by starts and ends; 0 when written. */
static int write_meta(const char *dir, const uint64_t *lo, const uint64_t *hi, size_t n)
{
	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, LT_META_FILE);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%s %d.%d\n", LT_META_MAGIC, LT_FORMAT_MAJOR, LT_FORMAT_MINOR);
	fprintf(f, "%s 1000 1000 1000\n", LT_META_SYNC); /* a meta file needs a clock reading */
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s %llx %llx 0 /lib/m%zu.so\n", LT_META_MAP, (unsigned long long)lo[i],
			(unsigned long long)hi[i], i);
	return fclose(f);
}

/* The map index a plain scan finds (newest first), or -1. */
static long scan(const uint64_t *lo, const uint64_t *hi, size_t n, uint64_t a)
{
	for (size_t i = n; i-- > 0;)
		if (a >= lo[i] && a < hi[i])
			return (long)i;
	return -1;
}

static long found(const struct rd_process *p, uint64_t a)
{
	const struct rd_map *m = rd_map_at(p, a);
	return m ? (long)(m - p->maps) : -1;
}

int main(void)
{
	char dir[] = "/tmp/test_maps.XXXXXX";
	if (!mkdtemp(dir))
		return 2;
	char err[512];
	struct rd_process p;

	/* Overlapping, out of order, some empty (ignored): 3000 maps over a small range. */
	enum { N = 3000 };
	static uint64_t lo[N], hi[N];
	srand(7);
	for (size_t i = 0; i < N; i++) {
		lo[i] = 0x10000 + (uint64_t)(rand() % 200000) * 16;
		hi[i] = lo[i] + (uint64_t)(rand() % 4000) * 16;
	}
	CHECK(write_meta(dir, lo, hi, N) == 0);
	CHECK(rd_process_meta(&p, dir, quiet, NULL, err, sizeof(err)) == 0);
	CHECK_EQ(p.nmaps, N);
	long bad = 0;
	for (int k = 0; k < 40000; k++) {
		uint64_t a = 0x10000 - 64 + (uint64_t)(rand() % 3300000);
		bad += scan(lo, hi, N, a) != found(&p, a);
	}
	for (size_t i = 0; i < N; i++) /* every bound, and one before it */
		for (int d = -1; d <= 0; d++) {
			bad += scan(lo, hi, N, lo[i] + d) != found(&p, lo[i] + d);
			bad += scan(lo, hi, N, hi[i] + d) != found(&p, hi[i] + d);
		}
	CHECK_EQ(bad, 0);
	CHECK_EQ(p.nmap_paths, N); /* every path differs */
	rd_process_close(&p);

	/* A million maps, as /proc/self/maps gives them: in order, apart. */
	enum { M = 1000000 };
	uint64_t *mlo = malloc(M * sizeof(*mlo)), *mhi = malloc(M * sizeof(*mhi));
	if (!mlo || !mhi)
		return 2;
	for (size_t i = 0; i < M; i++) {
		mlo[i] = 0x400000 + (uint64_t)i * 0x3000;
		mhi[i] = mlo[i] + 0x2000;
	}
	CHECK(write_meta(dir, mlo, mhi, M) == 0);
	CHECK(rd_process_meta(&p, dir, quiet, NULL, err, sizeof(err)) == 0);
	CHECK_EQ(p.nmaps, M);
	bad = 0;
	for (size_t i = 0; i < M; i++)
		bad += found(&p, mlo[i]) != (long)i || found(&p, mhi[i] - 1) != (long)i ||
		       found(&p, mhi[i]) != -1;
	CHECK_EQ(bad, 0);
	CHECK_EQ(found(&p, 0x400000 - 1), -1);
	rd_process_close(&p);
	free(mlo);
	free(mhi);

	char path[600];
	snprintf(path, sizeof(path), "%s/%s", dir, LT_META_FILE);
	unlink(path);
	rmdir(dir);
	TEST_DONE();
}
