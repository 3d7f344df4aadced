// SPDX-License-Identifier: BSD-3-Clause
/*
 * otf2_refs.c - OTF2 definitions by reference (otf2_refs.h): a table in definition order
 * and, for a numbering other than 0, 1, 2..., a sorted index searched by bisection.
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>

#include "otf2_refs.h"

int refs_add(struct refs *x, uint64_t ref)
{
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 64;
		uint64_t *a = realloc(x->ref, cap * sizeof(*a));
		if (!a)
			return -1;
		x->ref = a;
		x->cap = cap;
	}
	if (x->n >= NO_INDEX)
		return -1;
	x->ref[x->n++] = ref;
	return 0;
}

static int by_ref(const void *a, const void *b, void *refs)
{
	const uint64_t *ref = refs;
	uint64_t x = ref[*(const uint32_t *)a], y = ref[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

int refs_sort(struct refs *x, uint64_t *dup)
{
	x->sorted = malloc((x->n ? x->n : 1) * sizeof(*x->sorted));
	if (!x->sorted)
		return -1;
	for (size_t i = 0; i < x->n; i++)
		x->sorted[i] = (uint32_t)i;
	qsort_r(x->sorted, x->n, sizeof(*x->sorted), by_ref, x->ref);
	for (size_t i = 1; i < x->n; i++)
		if (x->ref[x->sorted[i]] == x->ref[x->sorted[i - 1]]) {
			*dup = x->ref[x->sorted[i]];
			return 1;
		}
	return 0;
}

uint32_t refs_find(const struct refs *x, uint64_t ref)
{
	if (ref < x->n && x->ref[ref] == ref)
		return (uint32_t)ref;
	size_t lo = 0, hi = x->sorted ? x->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t r = x->ref[x->sorted[mid]];
		if (r == ref)
			return x->sorted[mid];
		if (r < ref)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NO_INDEX;
}

void refs_free(struct refs *x)
{
	free(x->ref);
	free(x->sorted);
}
