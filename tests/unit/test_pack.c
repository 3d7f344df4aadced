// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_pack - the packed chunk form (src/format/pack.h): records of every shape packed and
 * unpacked give back the same bytes; every cut and many damaged copies of a packed chunk
 * are refused or decode within bounds, never past the end of the input.
 *
 *   test_pack                 the codec alone
 *   test_pack PROCESS_DIR     also every packed chunk of that process's events file: it
 *                             unpacks to exactly `used` bytes, and packing those again
 *                             gives exactly the stored bytes (prints the chunk counts)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "pack.h"
#include "test.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Unpacks in[0..len) into out; returns the raw bytes, or -1 when it is malformed. */
static long unpack_all(const uint8_t *in, size_t len, uint64_t *out, size_t out_words)
{
	static struct lt_pack_state s;
	lt_pack_reset(&s);
	size_t at = 0, w = 0;
	uint64_t rec[LT_REC_WORDS_MAX];
	const char *why;
	while (at < len) {
		unsigned n = lt_unpack_rec(&s, in, len, &at, rec, &why);
		if (!n)
			return -1;
		CHECK(at <= len);
		if (w + n > out_words)
			return -1;
		memcpy(out + w, rec, n * 8u);
		w += n;
	}
	return (long)(w * 8);
}

/* A chunk of records like the runtime's: few headers, payload words that repeat. */
static size_t make_records(uint64_t *r, size_t max_words)
{
	static const uint64_t pool[] = {0,	  1,	 0x7ffd12345670ull, 0x55aa00001234ull,
					0x401000, ~0ull, 1ull << 63};
	size_t w = 0;
	uint64_t ts = next();
	while (w + 70 < max_words) {
		unsigned kind = next() % 10;
		unsigned n = kind < 6	? 2 + next() % 3
			     : kind < 9 ? 2 + next() % 8
					: 2 + next() % 66;
		unsigned type = 1 + next() % (LT_REC_TYPE_MAX - 1);
		if (next() % 4 == 0)
			type |= LT_REC_F_CALLSITE;
		uint64_t sub = next() % 4 ? next() % 3 : next() & 0xffff;
		uint64_t arg = next() % 4 ? next() % 5 : next() & 0xffffffffu;
		ts += next() % 8 == 0 ? next() : next() % 300;
		if (next() % 50 == 0)
			ts -= next() % 1000; /* a record stamped earlier (CALLSITE, GPU activity) */
		r[w] = ts;
		r[w + 1] = type | (uint64_t)n << 8 | sub << 16 | arg << 32;
		for (unsigned i = 2; i < n; i++)
			r[w + i] = next() % 3	? pool[next() % 7] + (next() % 4) * 8
				   : next() % 2 ? next()
						: r[w + i - 1] + next() % 100;
		if (next() % 3 == 0 && w >= 8 && (r[w - 8 + 1] >> 8 & 0xff) == n)
			memmove(r + w + 1, r + w - 8 + 1, (n - 1) * 8u); /* a repeated record */
		w += n;
	}
	return w * 8;
}

static void roundtrip(void)
{
	static uint64_t raw[65536], back[65536];
	static uint8_t packed[65536 * 8];
	static struct lt_pack_state s;
	for (int round = 0; round < 200; round++) {
		size_t words = 16 + next() % 60000;
		size_t bytes = make_records(raw, words);
		size_t plen = lt_pack_chunk(&s, raw, bytes, packed, sizeof(packed));
		if (!plen)
			continue; /* not shorter: written raw */
		CHECK(plen <= bytes);
		CHECK_EQ(unpack_all(packed, plen, back, 65536), (long)bytes);
		CHECK(memcmp(raw, back, bytes) == 0);
		/* Every cut is refused or decodes records of the raw prefix only. */
		for (size_t cut = 0; cut < plen && cut < 600; cut++) {
			long got = unpack_all(packed, cut, back, 65536);
			CHECK(got == -1 || (got <= (long)bytes && !memcmp(raw, back, (size_t)got)));
		}
		/* Damage: decoding stays within the input and never crashes. */
		for (int d = 0; d < 50; d++) {
			static uint8_t bad[65536 * 8];
			memcpy(bad, packed, plen);
			for (int k = 0; k < 1 + d % 4; k++)
				bad[next() % plen] = (uint8_t)next();
			long got = unpack_all(bad, plen, back, 65536);
			CHECK(got >= -1);
		}
	}
	/* The worst cases: no packing gain, ill-formed records, the output buffer too small. */
	for (size_t i = 0; i < 64; i++)
		raw[i] = next();
	raw[1] = 2 | 1u << 8; /* a record of one word */
	CHECK_EQ(lt_pack_chunk(&s, raw, 64 * 8, packed, sizeof(packed)), 0);
	raw[1] = 2 | 200u << 8; /* past the end */
	CHECK_EQ(lt_pack_chunk(&s, raw, 64 * 8, packed, sizeof(packed)), 0);
	size_t bytes = make_records(raw, 4096);
	CHECK_EQ(lt_pack_chunk(&s, raw, bytes, packed, 100), 0);
	/* The lock/unlock pattern: CALL_ENTER + CALL_LEAVE + CALL with a call site. */
	size_t w = 0;
	uint64_t ts = 1000;
	for (int i = 0; i < 1000; i++) {
		uint64_t t = LT_REC_CALL_ENTER | LT_REC_F_CALLSITE;
		raw[w++] = ts += 40;
		raw[w++] = t | 4u << 8 | (uint64_t)LT_FN_pthread_mutex_lock << 16;
		raw[w++] = 0x7ffd12345670ull;
		raw[w++] = 0x401234;
		raw[w++] = ts += 40;
		raw[w++] = LT_REC_CALL_LEAVE | 2u << 8 | (uint64_t)LT_FN_pthread_mutex_lock << 16;
		raw[w++] = ts += 40;
		raw[w++] = (LT_REC_CALL | LT_REC_F_CALLSITE) | 4u << 8 |
			   (uint64_t)LT_FN_pthread_mutex_unlock << 16;
		raw[w++] = 0x7ffd12345670ull;
		raw[w++] = 0x401240;
	}
	size_t plen = lt_pack_chunk(&s, raw, w * 8, packed, sizeof(packed));
	printf("lock/unlock pattern: %zu raw bytes, %zu packed (%.1f a pair)\n", w * 8, plen,
	       plen / 1000.0);
	CHECK(plen > 0 && plen <= 7 * 1000);
	CHECK_EQ(unpack_all(packed, plen, back, 65536), (long)(w * 8));
	CHECK(memcmp(raw, back, w * 8) == 0);
}

/* Every packed chunk of an events file unpacks to `used` bytes and packs back the same. */
static void check_events(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, LT_EVENTS_FILE);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	off_t size = lseek(fd, 0, SEEK_END);
	static uint64_t raw[1 << 21], again[1 << 21];
	static uint8_t stored[1 << 24];
	static struct lt_pack_state s;
	unsigned chunks = 0, packed = 0;
	off_t off = LT_FILE_HEADER_SIZE;
	while (off + (off_t)sizeof(struct lt_chunk_header) <= size) {
		struct lt_chunk_header h;
		CHECK(pread(fd, &h, sizeof(h), off) == (ssize_t)sizeof(h));
		CHECK(h.magic == LT_CHUNK_MAGIC && h.check == lt_chunk_check(&h));
		uint64_t len = h.capacity - h.header_size;
		CHECK(len <= sizeof(stored));
		if (h.magic != LT_CHUNK_MAGIC || len > sizeof(stored))
			break;
		CHECK(pread(fd, stored, len, off + h.header_size) == (ssize_t)len);
		chunks++;
		if (h.flags & LT_CHUNK_PACKED) {
			packed++;
			CHECK(h.reserved <= len && len - h.reserved < 8);
			CHECK_EQ(unpack_all(stored, h.reserved, raw, 1 << 21), (long)h.used);
			size_t p = lt_pack_chunk(&s, raw, h.used, (uint8_t *)again, sizeof(again));
			CHECK_EQ(p, h.reserved);
			CHECK(memcmp(again, stored, h.reserved) == 0);
		} else {
			CHECK_EQ(len, h.used);
		}
		off += (off_t)h.capacity;
	}
	CHECK_EQ(off, size);
	close(fd);
	printf("%s: %u chunks, %u packed\n", path, chunks, packed);
}

int main(int argc, char **argv)
{
	roundtrip();
	for (int i = 1; i < argc; i++)
		check_events(argv[i]);
	TEST_DONE();
}
