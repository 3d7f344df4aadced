/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pack.h - the packed form of a chunk in the events file (format 2.0), written by the
 * runtime's chunk copier and read back by the tools: both sides include this header, so
 * the encoder and the decoder cannot drift apart.
 *
 * The ring always holds raw records (format.h); a chunk copied to `events` may be stored
 * packed instead, flagged LT_CHUNK_PACKED.  Its header's `used` is then still the raw
 * record bytes it stands for, `reserved` the packed bytes that follow the header, and
 * `capacity` the header plus the packed bytes padded to 8 (zeros): the chunk's size in the
 * file, covered by the header's check.  Unpacked, the records are exactly the raw ones.
 *
 * Each chunk is packed on its own, from an empty state, so it decodes without any other.
 * The state: the previous record's time stamp (0 at first); a table of 64 record headers,
 * each entry with the payload of the last record that had its header, if that had at most
 * LT_PACK_SAME_MAX payload words; a table of 128 payload words; the last literal payload
 * word (0 at first).  Every entry is empty at first.  A header h goes to entry
 * lt_pack_slot(h) >> 1 of its table, a payload word v to entry lt_pack_slot(v) of its.
 * "Header" is a record's second word: type | words << 8 | sub << 16 | arg << 32.  A record:
 *
 *   header   one byte: 0x00 + k (k < 64): the header in entry k of the header table (not
 *            empty), payload words follow; 0x40 + k: that header, and the same payload as
 *            the entry holds (it must hold one), no payload bytes follow; 0x80: the literal
 *            header, type (1 byte), words (1 byte, >= 2), sub (varint), arg (varint), goes
 *            into the header table (its entry's payload emptied), payload words follow.
 *   ts       varint of the zigzag of (ts - previous ts) as a signed 64-bit number.
 *   payload  for each of the words - 2 payload words, one byte: 0..127, the value in that
 *            entry of the payload table (not empty); 0x80, a varint literal; 0x81, the
 *            zigzag varint of (value - last literal).  A literal (either form) goes into
 *            the payload table and becomes the last literal.  Then the record's payload
 *            becomes its header entry's (emptied if it has more than LT_PACK_SAME_MAX words).
 *
 * Varints are LEB128: 7 bits a byte, low first, at most 10 bytes, no bits past 64.  Any
 * other byte, a reference to an empty entry, a varint or record cut by the end of the
 * packed bytes, a sub or arg out of range, or records adding up to other than `used`
 * bytes make the chunk malformed: a reader reports it and skips the rest of the chunk.
 */
#ifndef LIBTRACE_PACK_H
#define LIBTRACE_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LT_PACK_SLOTS	   128u
#define LT_PACK_HDR_SLOTS  64u
#define LT_PACK_SAME	   0x40u /* + k: header entry k with its payload */
#define LT_PACK_SAME_MAX   4u
#define LT_PACK_LITERAL	   0x80u
#define LT_PACK_DELTA	   0x81u
#define LT_PACK_VARINT_MAX 10u
/* The most bytes one packed record takes: literal header, time stamp, 253 literal words. */
#define LT_PACK_REC_MAX (1u + 2u + 2u * LT_PACK_VARINT_MAX + LT_PACK_VARINT_MAX + 253u * 11u)

struct lt_pack_state {
	uint64_t ts, lit;
	uint64_t val_used[LT_PACK_SLOTS / 64];
	uint64_t hdr[LT_PACK_HDR_SLOTS], val[LT_PACK_SLOTS];
	uint8_t same[LT_PACK_HDR_SLOTS]; /* 1 + payload words held in pay[k], 0: none */
	uint64_t pay[LT_PACK_HDR_SLOTS][LT_PACK_SAME_MAX];
};

static inline unsigned lt_pack_slot(uint64_t v)
{
	return (unsigned)((v * 0x9e3779b97f4a7c15ull) >> 57);
}

static inline void lt_pack_reset(struct lt_pack_state *s)
{
	s->ts = s->lit = 0;
	memset(s->hdr, 0, sizeof(s->hdr)); /* 0 words: no header, an empty entry */
	memset(s->val_used, 0, sizeof(s->val_used));
	memset(s->same, 0, sizeof(s->same));
}

/* A record's payload p[0 .. m) becomes header entry k's. */
static inline void lt_pack_keep(struct lt_pack_state *s, unsigned k, const uint64_t *p, unsigned m)
{
	if (m > LT_PACK_SAME_MAX) {
		s->same[k] = 0;
		return;
	}
	for (unsigned i = 0; i < m; i++)
		s->pay[k][i] = p[i];
	s->same[k] = (uint8_t)(1 + m);
}

static inline int lt_pack_has(const uint64_t *used, unsigned i)
{
	return (int)(used[i / 64] >> (i % 64) & 1u);
}

static inline void lt_pack_put(uint64_t *used, uint64_t *tab, unsigned i, uint64_t v)
{
	used[i / 64] |= 1ull << (i % 64);
	tab[i] = v;
}

static inline uint8_t *lt_pack_varint(uint8_t *o, uint64_t v)
{
	if (v < 0x80) {
		*o++ = (uint8_t)v;
		return o;
	}
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

static inline uint64_t lt_pack_zigzag(uint64_t d)
{
	return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static inline unsigned lt_pack_varint_len(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/*
 * Packs the raw records rec[0 .. bytes) into out (cap bytes).  Returns the packed length,
 * or 0 when the packed form would not be shorter than the raw one or would not fit, or the
 * records are not well formed (a record of fewer than 2 words, or one past the end): the
 * chunk is then written raw.  No allocation, no system call: usable in a signal handler.
 */
static inline size_t lt_pack_chunk(struct lt_pack_state *s, const uint64_t *rec, size_t bytes,
				   uint8_t *out, size_t cap)
{
	lt_pack_reset(s);
	if (cap > bytes)
		cap = bytes;
	size_t words = bytes / 8, i = 0;
	uint8_t *o = out, *end = out + cap;
	while (i < words) {
		if (words - i < 2)
			return 0;
		uint64_t h = rec[i + 1];
		unsigned n = (unsigned)(h >> 8 & 0xff);
		if (n < 2 || n > words - i)
			return 0;
		/* The worst case of this record must fit (a short check, not per byte). */
		if ((size_t)(end - o) <
		    1u + 2u + 2u * LT_PACK_VARINT_MAX + LT_PACK_VARINT_MAX + (n - 2u) * 11u)
			return 0;
		unsigned k = lt_pack_slot(h) >> 1, m = n - 2;
		const uint64_t *p = rec + i + 2;
		uint64_t dts = lt_pack_zigzag(rec[i] - s->ts);
		s->ts = rec[i];
		i += n;
		if (s->hdr[k] == h) {
			if (s->same[k] == 1 + m) {
				unsigned w = 0;
				while (w < m && s->pay[k][w] == p[w])
					w++;
				if (w == m) {
					*o++ = (uint8_t)(LT_PACK_SAME + k);
					o = lt_pack_varint(o, dts);
					continue;
				}
			}
			*o++ = (uint8_t)k;
		} else {
			*o++ = LT_PACK_LITERAL;
			*o++ = (uint8_t)h;
			*o++ = (uint8_t)n;
			o = lt_pack_varint(o, h >> 16 & 0xffff);
			o = lt_pack_varint(o, h >> 32);
			s->hdr[k] = h;
		}
		o = lt_pack_varint(o, dts);
		for (unsigned w = 0; w < m; w++) {
			uint64_t v = p[w];
			unsigned j = lt_pack_slot(v);
			if (lt_pack_has(s->val_used, j) && s->val[j] == v) {
				*o++ = (uint8_t)j;
				continue;
			}
			uint64_t d = lt_pack_zigzag(v - s->lit);
			if (lt_pack_varint_len(d) < lt_pack_varint_len(v)) {
				*o++ = LT_PACK_DELTA;
				o = lt_pack_varint(o, d);
			} else {
				*o++ = LT_PACK_LITERAL;
				o = lt_pack_varint(o, v);
			}
			s->lit = v;
			lt_pack_put(s->val_used, s->val, j, v);
		}
		lt_pack_keep(s, k, p, m);
	}
	return (size_t)(o - out);
}

/* Reads a varint at in[*at .. len): 0, or -1 when cut short or too long. */
static inline int lt_unpack_varint(const uint8_t *in, size_t len, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned i = 0; i < LT_PACK_VARINT_MAX; i++) {
		if (*at >= len)
			return -1;
		uint8_t b = in[(*at)++];
		if (i == LT_PACK_VARINT_MAX - 1 && b > 1)
			return -1; /* bits past 64 */
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/*
 * Decodes the packed record at in[*at .. len) into rec (room for LT_REC_WORDS_MAX words),
 * advancing *at.  Returns the record's words, or 0 when it is malformed, with *why saying
 * how.  The state changes only as the encoder's did: a record that fails leaves it unfit
 * for the rest of the chunk, which is skipped anyway.
 */
static inline unsigned lt_unpack_rec(struct lt_pack_state *s, const uint8_t *in, size_t len,
				     size_t *at, uint64_t *rec, const char **why)
{
	if (*at >= len) {
		*why = "record cut short";
		return 0;
	}
	uint8_t b = in[(*at)++];
	uint64_t h;
	unsigned k;
	int same = 0;
	if (b < 2 * LT_PACK_HDR_SLOTS) {
		k = b % LT_PACK_HDR_SLOTS;
		same = b >= LT_PACK_SAME;
		if (!(s->hdr[k] >> 8 & 0xff)) {
			*why = "reference to an empty header entry";
			return 0;
		}
		h = s->hdr[k];
		if (same && !s->same[k]) {
			*why = "reference to a header entry without a payload";
			return 0;
		}
	} else if (b == LT_PACK_LITERAL) {
		uint64_t sub, arg;
		if (len - *at < 2) {
			*why = "literal header cut short";
			return 0;
		}
		uint64_t type = in[*at], n = in[*at + 1];
		*at += 2;
		if (lt_unpack_varint(in, len, at, &sub) || lt_unpack_varint(in, len, at, &arg)) {
			*why = "bad varint in a literal header";
			return 0;
		}
		if (n < 2 || sub > 0xffff || arg > 0xffffffffu) {
			*why = "literal header out of range";
			return 0;
		}
		h = type | n << 8 | sub << 16 | arg << 32;
		k = lt_pack_slot(h) >> 1;
		s->hdr[k] = h;
	} else {
		*why = "bad header byte";
		return 0;
	}
	unsigned n = (unsigned)(h >> 8 & 0xff);
	uint64_t d;
	if (lt_unpack_varint(in, len, at, &d)) {
		*why = "bad time stamp varint";
		return 0;
	}
	s->ts += (d >> 1) ^ (uint64_t) - (int64_t)(d & 1);
	rec[0] = s->ts;
	rec[1] = h;
	if (same) {
		for (unsigned w = 2; w < n; w++)
			rec[w] = s->pay[k][w - 2];
		return n;
	}
	for (unsigned w = 2; w < n; w++) {
		if (*at >= len) {
			*why = "record cut short";
			return 0;
		}
		b = in[(*at)++];
		uint64_t v;
		if (b < LT_PACK_SLOTS) {
			if (!lt_pack_has(s->val_used, b)) {
				*why = "reference to an empty payload entry";
				return 0;
			}
			rec[w] = s->val[b];
			continue;
		}
		if ((b != LT_PACK_LITERAL && b != LT_PACK_DELTA) ||
		    lt_unpack_varint(in, len, at, &v)) {
			*why = b == LT_PACK_LITERAL || b == LT_PACK_DELTA ? "bad payload varint"
									  : "bad payload byte";
			return 0;
		}
		if (b == LT_PACK_DELTA)
			v = s->lit + ((v >> 1) ^ (uint64_t) - (int64_t)(v & 1));
		s->lit = v;
		lt_pack_put(s->val_used, s->val, lt_pack_slot(v), v);
		rec[w] = v;
	}
	lt_pack_keep(s, k, rec + 2, n - 2);
	return n;
}

#endif /* LIBTRACE_PACK_H */
