// SPDX-License-Identifier: BSD-3-Clause
/*
 * pack.c - byte buffers that a parallel conversion's ranks send each other (convert.h):
 * packed in the sender's byte order (every rank runs on the same machine kind), read back
 * with every length checked.
 */
#include <stdlib.h>
#include <string.h>

#include "convert.h"

void cv_put(struct cv_pack *k, const void *p, size_t n)
{
	if (k->oom || !n)
		return;
	if (k->n + n > k->cap) {
		size_t cap = k->cap ? k->cap : 65536;
		while (cap < k->n + n)
			cap *= 2;
		unsigned char *b = realloc(k->b, cap);
		if (!b) {
			k->oom = 1;
			return;
		}
		k->b = b;
		k->cap = cap;
	}
	memcpy(k->b + k->n, p, n);
	k->n += n;
}

void cv_put32(struct cv_pack *k, uint32_t v)
{
	cv_put(k, &v, sizeof(v));
}

void cv_put64(struct cv_pack *k, uint64_t v)
{
	cv_put(k, &v, sizeof(v));
}

void cv_put_str(struct cv_pack *k, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) + 1 : 0;
	cv_put32(k, n);
	cv_put(k, s, n);
}

const void *cv_get(struct cv_unpack *u, size_t n)
{
	if (u->bad || u->n - u->at < n) {
		u->bad = 1;
		return NULL;
	}
	const void *p = u->b + u->at;
	u->at += n;
	return p;
}

uint32_t cv_get32(struct cv_unpack *u)
{
	uint32_t v = 0;
	const void *p = cv_get(u, sizeof(v));
	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

uint64_t cv_get64(struct cv_unpack *u)
{
	uint64_t v = 0;
	const void *p = cv_get(u, sizeof(v));
	if (p)
		memcpy(&v, p, sizeof(v));
	return v;
}

const char *cv_get_str(struct cv_unpack *u)
{
	uint32_t n = cv_get32(u);
	const char *s = cv_get(u, n);
	if (!s || !n || s[n - 1]) {
		u->bad = u->bad || n;
		return NULL;
	}
	return s;
}
