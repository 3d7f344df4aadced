/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2_refs.h - OTF2 definitions by reference, as trace-report's archive reader keeps them:
 * trace2otf2 numbers them 0, 1, 2... in the order it writes them, which finds them at once;
 * any other numbering is found by binary search.
 */
#ifndef LIBTRACE_OTF2_REFS_H
#define LIBTRACE_OTF2_REFS_H

#include <stddef.h>
#include <stdint.h>

struct refs {
	uint64_t *ref; /* in definition order */
	uint32_t *sorted;
	size_t n, cap;
};

#define NO_INDEX UINT32_MAX

/* Appends ref (the next definition).  0, or -1 when out of memory or full. */
int refs_add(struct refs *x, uint64_t ref);
/* Builds the search index.  0; -1 when out of memory; 1 when a reference is defined twice
 * (*dup is it). */
int refs_sort(struct refs *x, uint64_t *dup);
/* The definition order of ref, or NO_INDEX. */
uint32_t refs_find(const struct refs *x, uint64_t ref);
void refs_free(struct refs *x);

#endif /* LIBTRACE_OTF2_REFS_H */
