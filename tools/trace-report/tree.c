// SPDX-License-Identifier: BSD-3-Clause
/*
 * tree.c - the profile's call tree as text (--tree), top-down and bottom-up as kokkos-tools'
 * space-time-stack shows them, and the sections of the table on memory and on copies.
 *
 * Top-down: each node is a region reached by one call path, over every thread; its
 * inclusive time, the share of the threads' time in outermost calls, its exclusive time
 * and calls; children by inclusive time, largest first.  Bottom-up: each region by the
 * exclusive time spent in it, under it the paths that called it (callers, then theirs),
 * each with the exclusive time that came through it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* A node of the bottom-up tree (regions told apart by kind and name). */
struct bnode {
	const char *name, *kind;
	uint64_t excl, calls;
	struct bnode *child, *next;
};

static void put_node(FILE *f, int depth, uint64_t incl, uint64_t excl, uint64_t calls,
		     uint64_t total, const char *name, const char *kind, int bottom_up)
{
	char a[32], b[32], esc[4096];
	rp_fmt_ns(a, sizeof(a), (double)(bottom_up ? excl : incl), 0);
	fprintf(f, "  %11s %6.1f%%", a,
		total ? 100.0 * (double)(bottom_up ? excl : incl) / (double)total : 0.0);
	if (!bottom_up)
		fprintf(f, " %11s", rp_fmt_ns(b, sizeof(b), (double)excl, 0));
	fprintf(f, " %9" PRIu64 "  %*s%s [%s]\n", calls, 2 * depth, "",
		rp_fmt_name(esc, sizeof(esc), name, 0), kind);
}

/* Children of node `parent` (-1: the roots), largest first, at least min of total. */
static void top_down(FILE *f, const struct rp_run *r, const size_t *first, const size_t *next,
		     int64_t parent, int depth, uint64_t total, uint64_t min)
{
	size_t n = 0;
	for (size_t i = first[parent + 1]; i != SIZE_MAX; i = next[i])
		n++;
	size_t *order = malloc((n + 1) * sizeof(*order)), k = 0;
	if (!order)
		return;
	for (size_t i = first[parent + 1]; i != SIZE_MAX; i = next[i])
		order[k++] = i;
	for (size_t i = 1; i < n; i++) /* insertion sort: few children each */
		for (size_t j = i;
		     j > 0 && r->tree[order[j]].incl_ns > r->tree[order[j - 1]].incl_ns; j--) {
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		const struct rp_node *t = &r->tree[order[i]];
		if (t->incl_ns < min)
			break;
		put_node(f, depth, t->incl_ns, t->excl_ns, t->calls, total, t->name, t->kind, 0);
		top_down(f, r, first, next, (int64_t)order[i], depth + 1, total, min);
	}
	free(order);
}

static struct bnode *badd(struct bnode **list, const struct rp_node *t, uint64_t excl,
			  uint64_t calls)
{
	for (struct bnode *b = *list; b; b = b->next)
		if (!strcmp(b->name, t->name) && !strcmp(b->kind, t->kind)) {
			b->excl += excl;
			b->calls += calls;
			return b;
		}
	struct bnode *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	*b = (struct bnode){t->name, t->kind, excl, calls, NULL, *list};
	*list = b;
	return b;
}

static void bprint(FILE *f, struct bnode *list, int depth, uint64_t total, uint64_t min)
{
	for (;;) { /* the heaviest first */
		struct bnode *best = NULL;
		for (struct bnode *b = list; b; b = b->next)
			if (b->excl != UINT64_MAX && (!best || b->excl > best->excl))
				best = b;
		if (!best || best->excl < min)
			return;
		put_node(f, depth, 0, best->excl, best->calls, total, best->name, best->kind, 1);
		bprint(f, best->child, depth + 1, total, min);
		best->excl = UINT64_MAX; /* printed */
	}
}

static void bfree(struct bnode *b)
{
	while (b) {
		struct bnode *next = b->next;
		bfree(b->child);
		free(b);
		b = next;
	}
}

void rp_write_tree(FILE *f, const struct rp_run *r, double min_share)
{
	fprintf(f, "Call tree of %s\n", r->trace);
	if (!r->ntree) {
		fprintf(f,
			"  (no call tree: no region was called, or a profile saved without one)\n");
		return;
	}
	size_t *first = malloc((r->ntree + 1) * sizeof(*first));
	size_t *next = malloc(r->ntree * sizeof(*next));
	if (!first || !next) {
		free(first);
		free(next);
		return;
	}
	for (size_t i = 0; i <= r->ntree; i++)
		first[i] = SIZE_MAX;
	uint64_t total = 0, excl = 0;
	for (size_t i = r->ntree; i-- > 0;) { /* lists in tree order */
		const struct rp_node *t = &r->tree[i];
		next[i] = first[t->parent + 1];
		first[t->parent + 1] = i;
		if (t->parent < 0)
			total += t->incl_ns;
		excl += t->excl_ns;
	}
	uint64_t min = (uint64_t)(min_share * (double)total);
	fprintf(f,
		"\nTop-down (inclusive time over all threads; %% of the threads' time in their "
		"outermost calls;\nnodes of %.1f%% or more%s):\n",
		100 * min_share, min_share > 0 ? ", --all for every node" : "");
	fprintf(f, "  %11s %7s %11s %9s  %s\n", "inclusive", "%", "exclusive", "calls", "region");
	top_down(f, r, first, next, -1, 0, total, min);

	struct bnode *roots = NULL;
	for (size_t i = 0; i < r->ntree; i++) {
		const struct rp_node *t = &r->tree[i];
		if (!t->excl_ns)
			continue;
		struct bnode **list = &roots;
		for (int64_t j = (int64_t)i; j >= 0 && list; j = r->tree[j].parent) {
			struct bnode *b = badd(list, &r->tree[j], t->excl_ns, t->calls);
			list = b ? &b->child : NULL;
		}
	}
	fprintf(f, "\nBottom-up (each region by its exclusive time, under it the paths that called "
		   "it):\n");
	fprintf(f, "  %11s %7s %9s  %s\n", "exclusive", "%", "calls", "region, callers below");
	bprint(f, roots, 0, excl, (uint64_t)(min_share * (double)excl));
	bfree(roots);
	free(first);
	free(next);
	if (r->tree_cut)
		fprintf(f, "\n(the tree reached its size limit: deeper call paths are left out)\n");
}

static char *fmt_bytes(char *buf, size_t len, double b)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	unsigned u = 0;
	while (b >= 1024 && u < 4) {
		b /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.2f %s" : "%.0f %s", b, units[u]);
	return buf;
}

void rp_write_memory(FILE *f, const struct rp_run *r)
{
	int copies = 0;
	for (size_t i = 0; i < r->nregions; i++)
		copies += r->regions[i].bytes != 0;
	if (copies) {
		fprintf(f, "\nData movement (bytes each region's calls copied or set, bandwidth "
			   "over their "
			   "time):\n");
		fprintf(f, "  %12s %9s %11s %12s  %s\n", "bytes", "calls", "time", "bandwidth",
			"region");
		for (size_t i = 0; i < r->nregions; i++) {
			const struct rp_region *g = &r->regions[i];
			if (!g->bytes)
				continue;
			double ns = (double)g->mean_ns * (double)g->calls;
			char b[32], t[32], bw[32], esc[4096];
			fmt_bytes(bw, sizeof(bw), ns > 0 ? (double)g->bytes * 1e9 / ns : 0);
			strcat(bw, "/s");
			fprintf(f, "  %12s %9" PRIu64 " %11s %12s  %s\n",
				fmt_bytes(b, sizeof(b), (double)g->bytes), g->calls,
				rp_fmt_ns(t, sizeof(t), ns, 0), ns > 0 ? bw : "-",
				rp_fmt_name(esc, sizeof(esc), g->name, 0));
		}
	}
	if (!r->nmemory)
		return;
	fprintf(f,
		"\nMemory (high-water mark per space, and the largest allocations live then):\n");
	for (size_t i = 0; i < r->nmemory; i++) {
		const struct rp_memory *m = &r->memory[i];
		char hw[32], at[32], end[32], esc[4096];
		fprintf(f,
			"  %s, %s: high water %s (%" PRIu64 " bytes) at %s, %" PRIu64
			" allocations live; %" PRIu64 " allocated, %" PRIu64
			" freed, %s live at the end\n",
			rp_fmt_name(esc, sizeof(esc), m->process, 0), m->space,
			fmt_bytes(hw, sizeof(hw), (double)m->high_water), m->high_water,
			rp_fmt_ns(at, sizeof(at), (double)m->at_ns, 0), m->live_at_high,
			m->allocations, m->frees,
			fmt_bytes(end, sizeof(end), (double)m->end_bytes));
		for (size_t j = 0; j < m->ntop; j++)
			fprintf(f, "    %12" PRIu64 " bytes  %s\n", m->top[j].bytes,
				rp_fmt_name(esc, sizeof(esc), m->top[j].label, 0));
		if (m->live_at_high > m->ntop)
			fprintf(f, "    ... and %" PRIu64 " smaller\n", m->live_at_high - m->ntop);
	}
}
