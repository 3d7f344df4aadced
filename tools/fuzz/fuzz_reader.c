// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_reader.c - libFuzzer target of the trace reader: one input is one process directory
 * (its meta, ring and events files, see pack_trace.py), read the way the converter reads
 * it: opened, every thread walked with a cursor, every time stamp converted.
 *
 * Input layout: u16 meta length, u32 ring length (little-endian), the meta text, the ring
 * file, and the rest is the events file.  Lengths beyond the input are cut to it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

static char dir[64];
static volatile uint64_t sink; /* keeps the reads from being optimised away */

static void put(const char *name, const uint8_t *data, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	while (len) {
		ssize_t n = write(fd, data, len);
		if (n <= 0)
			abort();
		data += n;
		len -= (size_t)n;
	}
	close(fd);
}

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* At exit: the scratch directory goes (a run that crashes leaves it, with its input). */
static void remove_dir(void)
{
	static const char *const files[] = {LT_META_FILE, "ring", LT_EVENTS_FILE};
	char path[sizeof(dir) + 16];
	for (int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "%s/fuzz-reader.%d",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
		mkdir(dir, 0700);
		atexit(remove_dir);
	}
	if (size < 6)
		return 0;
	size_t meta = (size_t)data[0] | (size_t)data[1] << 8;
	size_t ring =
	    (size_t)data[2] | (size_t)data[3] << 8 | (size_t)data[4] << 16 | (size_t)data[5] << 24;
	data += 6;
	size -= 6;
	if (meta > size)
		meta = size;
	if (ring > size - meta)
		ring = size - meta;
	put(LT_META_FILE, data, meta);
	put("ring", data + meta, ring);
	put(LT_EVENTS_FILE, data + meta + ring, size - meta - ring);

	struct rd_process p;
	char err[512];
	if (rd_process_open(&p, dir, quiet, NULL, err, sizeof(err)) != 0)
		return 0;
	uint64_t sum = 0;
	for (size_t t = 0; t < p.nthreads; t++) {
		struct rd_cursor c;
		rd_cursor_init(&c, &p, &p.threads[t], quiet, NULL);
		const struct lt_rec *r;
		while ((r = rd_cursor_next(&c))) {
			sum += rd_ticks_to_ns(&p, r->ts) + r->words;
			const char *s = rd_string(&p, r->arg);
			if (s)
				sum += (unsigned char)s[0];
		}
		rd_cursor_fini(&c);
	}
	rd_process_close(&p);
	sink = sum;
	return 0;
}
