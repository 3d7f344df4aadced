// SPDX-License-Identifier: BSD-3-Clause
/*
 * maps.c - the index of a process's code mappings ("map" lines of its meta file): which
 * map holds an address, in a binary search, and the distinct paths.  A process may have
 * millions of maps (3 M lines took the tools over 10 s when each lookup scanned them all).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"

static int map_start_cmp(const void *a, const void *b)
{
	const struct rd_map_seg *x = a, *y = b;
	return x->start < y->start   ? -1
	       : x->start > y->start ? 1
				     : (x->map > y->map) - (x->map < y->map);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A max-heap of map indices: the newest map on top. */
static void heap_push(size_t *h, size_t *n, size_t v)
{
	size_t i = (*n)++;
	for (; i && h[(i - 1) / 2] < v; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(size_t *h, size_t *n)
{
	size_t v = h[--*n], i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && h[c + 1] > h[c])
			c++;
		if (h[c] <= v)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/*
 * Indexes the maps: a sweep over their bounds in address order, the maps that cover the
 * current bound on a heap with the newest on top (ended ones leave it as they surface), the
 * newest one owning each stretch.  Then the distinct paths, through a hash of them.  Without
 * memory for it the index stays empty and rd_map_at finds nothing.
 */
void rd_maps_index(struct rd_process *p)
{
	size_t n = p->nmaps;
	if (!n)
		return;
	struct rd_map_seg *by_start = malloc(n * sizeof(*by_start));
	uint64_t *bounds = malloc(2 * n * sizeof(*bounds));
	size_t *heap = malloc(n * sizeof(*heap));
	struct rd_map_seg *segs = malloc(2 * n * sizeof(*segs));
	size_t m = 0, nb = 0, nh = 0, ns = 0;
	if (!by_start || !bounds || !heap || !segs)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (p->maps[i].end <= p->maps[i].start)
			continue;
		by_start[m++] = (struct rd_map_seg){p->maps[i].start, p->maps[i].end, i};
		bounds[nb++] = p->maps[i].start;
		bounds[nb++] = p->maps[i].end;
	}
	/* From /proc/self/maps they come in order, and apart: no sorting then. */
	int sorted = 1;
	for (size_t i = 1; i < m && sorted; i++)
		sorted = map_start_cmp(&by_start[i - 1], &by_start[i]) <= 0;
	if (!sorted)
		qsort(by_start, m, sizeof(*by_start), map_start_cmp);
	sorted = 1;
	for (size_t i = 1; i < nb && sorted; i++)
		sorted = bounds[i - 1] <= bounds[i];
	if (!sorted)
		qsort(bounds, nb, sizeof(*bounds), u64_cmp);
	size_t j = 0;
	for (size_t k = 0; k + 1 < nb; k++) {
		uint64_t x = bounds[k];
		if (x == bounds[k + 1])
			continue;
		for (; j < m && by_start[j].start <= x; j++)
			heap_push(heap, &nh, by_start[j].map);
		while (nh && p->maps[heap[0]].end <= x)
			heap_pop(heap, &nh);
		if (!nh)
			continue;
		if (ns && segs[ns - 1].map == heap[0] && segs[ns - 1].end == x)
			segs[ns - 1].end = bounds[k + 1];
		else
			segs[ns++] = (struct rd_map_seg){x, bounds[k + 1], heap[0]};
	}
	p->map_segs = segs;
	p->nmap_segs = ns;
	segs = NULL;
	/* Distinct paths: open addressing over a power of two at least twice n. */
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	size_t *table = calloc(cap, sizeof(*table)); /* map index + 1; 0: empty */
	size_t *paths = malloc(n * sizeof(*paths));
	size_t np = 0;
	if (table && paths) {
		for (size_t i = 0; i < n; i++) {
			uint64_t h = 0xcbf29ce484222325ull;
			for (const char *c = p->maps[i].path; *c; c++)
				h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
			size_t at = (size_t)h & (cap - 1);
			while (table[at] && strcmp(p->maps[table[at] - 1].path, p->maps[i].path))
				at = (at + 1) & (cap - 1);
			if (!table[at]) {
				table[at] = i + 1;
				paths[np++] = i;
			}
		}
		p->map_paths = paths;
		p->nmap_paths = np;
		paths = NULL;
	}
	free(table);
	free(paths);
out:
	free(by_start);
	free(bounds);
	free(heap);
	free(segs);
}

const struct rd_map *rd_map_at(const struct rd_process *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nmap_segs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->map_segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->nmap_segs && p->map_segs[lo].start <= addr)
		return &p->maps[p->map_segs[lo].map];
	return NULL;
}
