// SPDX-License-Identifier: BSD-3-Clause
/*
 * unify.c - a parallel conversion's definitions (convert.h, cv_unify): each rank packs its
 * registry, rank 0 rebuilds the whole trace's in the order a serial conversion has it, and
 * sends every rank its maps (its ids -> the archive's).
 *
 * The serial order: process after process, what each process used first, in the order it
 * used it.  A rank converts its processes in that order too, and notes how far its registry
 * had grown as each process began (cv.marks): what it defined between the marks of
 * process p is, in order, what p used first among the rank's processes.  The rank that
 * converted p made every definition p uses; the others only read p's metadata, which it
 * read too.  So, process by process, taking p's owner's definitions and then the other
 * ranks' and keeping the new ones gives every definition its serial id.
 *
 * What belongs to one process (its locations, OpenMP teams, GPU contexts and windows,
 * leaks) comes from its owner; MPI communicators, which every member records, are merged.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* n elements of `size` bytes, copied (aligned) into a new array; NULL when n is 0. */
static void *get_array(struct cv_unpack *u, uint32_t n, size_t size)
{
	if (!n || u->bad)
		return NULL;
	if ((u->n - u->at) / size < n) {
		u->bad = 1;
		return NULL;
	}
	void *a = malloc((size_t)n * size);
	const void *p = cv_get(u, (size_t)n * size);
	if (!a || !p) {
		free(a);
		u->bad = 1;
		return NULL;
	}
	memcpy(a, p, (size_t)n * size);
	return a;
}

/* What one rank defined and converted, read back on rank 0, and its maps. */
struct img {
	int failed;
	uint32_t nprocs;
	struct cv_sizes *marks;
	uint32_t nstrings, nregions, nmetrics, nscls, nctxs, npapis, nteams, ncomms, ngroups, nwins,
	    nlocs, nleaks, nnotes, ncomm_refs;
	const char **strings, **keys, **notes;
	struct cv_region *regions;
	struct cv_metric *metrics;
	struct cv_scl *scls;
	struct cv_ctx *ctxs;
	struct cv_papi *papis;
	struct cv_team *teams; /* members: into the buffer's copy */
	struct cv_comm *comms;
	struct cv_gpu_group *groups;
	struct cv_gpu_win *wins;
	uint64_t *first_loc, *nlocs_of; /* by process */
	struct cv_loc *locs;
	struct cv_leak *leaks;
	struct cv_stats stats;
	uint64_t sample_period, mpi_aligned;
	/* maps to rank 0's (global) ids */
	uint32_t *smap, *rmap, *mmap, *scmap, *cxmap, *pmap, *refmap, *tmap, *cmap, *gmap, *wmap,
	    *lmap;
	uint32_t *refs;		    /* refs_of() */
	uint32_t at_group, at_leak; /* cursors: the owner's next GPU context, leak */
};

static void pack_members(struct cv_pack *k, const uint32_t *m, uint32_t n)
{
	cv_put32(k, n);
	cv_put(k, m, (size_t)n * sizeof(*m));
}

static void pack(const struct cv *cv, int failed, struct cv_pack *k)
{
	cv_put32(k, (uint32_t)failed);
	cv_put32(k, (uint32_t)cv->nprocs);
	cv_put(k, cv->marks, (cv->nprocs + 1) * sizeof(*cv->marks));
	cv_put32(k, cv->nstrings);
	for (uint32_t i = 0; i < cv->nstrings; i++)
		cv_put_str(k, cv->strings[i]);
	cv_put32(k, cv->nregions);
	cv_put(k, cv->regions, cv->nregions * sizeof(*cv->regions));
	for (uint32_t i = 0; i < cv->nregions; i++)
		cv_put_str(k, cv->region_keys ? cv->region_keys[i] : NULL);
	cv_put32(k, cv->nmetrics);
	cv_put(k, cv->metrics, cv->nmetrics * sizeof(*cv->metrics));
	cv_put32(k, cv->nscls);
	cv_put(k, cv->scls, cv->nscls * sizeof(*cv->scls));
	cv_put32(k, cv->nctxs);
	cv_put(k, cv->ctxs, cv->nctxs * sizeof(*cv->ctxs));
	cv_put32(k, cv->npapis);
	cv_put(k, cv->papis, cv->npapis * sizeof(*cv->papis));
	cv_put32(k, cv->nteams);
	for (uint32_t i = 0; i < cv->nteams; i++) {
		const struct cv_team *t = &cv->teams[i];
		cv_put32(k, t->process);
		cv_put32(k, t->forker);
		cv_put32(k, t->size);
		cv_put32(k, t->comm);
		pack_members(k, t->members, t->nmembers);
	}
	cv_put32(k, cv->ncomms);
	for (uint32_t i = 0; i < cv->ncomms; i++) {
		const struct cv_comm *c = &cv->comms[i];
		cv_put64(k, c->id);
		cv_put32(k, c->size);
		cv_put32(k, c->comm);
		pack_members(k, c->ranks, c->ranks ? c->size : 0);
	}
	cv_put32(k, cv->ngpu_groups);
	cv_put(k, cv->gpu_groups, cv->ngpu_groups * sizeof(*cv->gpu_groups));
	cv_put32(k, cv->ngpu_wins);
	for (uint32_t i = 0; i < cv->ngpu_wins; i++) {
		const struct cv_gpu_win *w = &cv->gpu_wins[i];
		cv_put32(k, w->process);
		cv_put32(k, w->name);
		cv_put32(k, w->comm);
		pack_members(k, w->members, w->nmembers);
	}
	for (size_t p = 0; p < cv->nprocs; p++) {
		cv_put64(k, cv->procs[p].first_loc);
		cv_put64(k, cv->procs[p].nlocs);
	}
	cv_put32(k, (uint32_t)cv->nlocs);
	cv_put(k, cv->locs, cv->nlocs * sizeof(*cv->locs));
	cv_put32(k, (uint32_t)cv->nleaks);
	cv_put(k, cv->leaks, cv->nleaks * sizeof(*cv->leaks));
	cv_put32(k, (uint32_t)cv->nnotes);
	for (size_t i = 0; i < cv->nnotes; i++)
		cv_put_str(k, cv->notes[i]);
	cv_put(k, &cv->stats, sizeof(cv->stats));
	cv_put64(k, cv->sample_period);
	cv_put64(k, cv->mpi_aligned);
	cv_put32(k, cv->ncomm_refs);
}

static uint32_t *get_members(struct cv_unpack *u)
{
	uint32_t n = cv_get32(u);
	return get_array(u, n, sizeof(uint32_t));
}

static void unpack(struct cv_unpack *u, struct img *m)
{
	m->failed = (int)cv_get32(u);
	m->nprocs = cv_get32(u);
	if (m->nprocs > (1u << 26))
		u->bad = 1;
	m->marks = get_array(u, m->nprocs + 1, sizeof(*m->marks));
	m->nstrings = cv_get32(u);
	m->strings = calloc(m->nstrings + 1, sizeof(*m->strings));
	for (uint32_t i = 0; m->strings && i < m->nstrings && !u->bad; i++)
		m->strings[i] = cv_get_str(u);
	m->nregions = cv_get32(u);
	m->regions = get_array(u, m->nregions, sizeof(*m->regions));
	m->keys = calloc(m->nregions + 1, sizeof(*m->keys));
	for (uint32_t i = 0; m->keys && i < m->nregions && !u->bad; i++)
		m->keys[i] = cv_get_str(u);
	m->nmetrics = cv_get32(u);
	m->metrics = get_array(u, m->nmetrics, sizeof(*m->metrics));
	m->nscls = cv_get32(u);
	m->scls = get_array(u, m->nscls, sizeof(*m->scls));
	m->nctxs = cv_get32(u);
	m->ctxs = get_array(u, m->nctxs, sizeof(*m->ctxs));
	m->npapis = cv_get32(u);
	m->papis = get_array(u, m->npapis, sizeof(*m->papis));
	m->nteams = cv_get32(u);
	m->teams = calloc(m->nteams + 1, sizeof(*m->teams));
	for (uint32_t i = 0; m->teams && i < m->nteams && !u->bad; i++) {
		struct cv_team *t = &m->teams[i];
		t->process = cv_get32(u);
		t->forker = cv_get32(u);
		t->size = cv_get32(u);
		t->comm = cv_get32(u);
		t->nmembers = t->cap = 0;
		uint32_t n = cv_get32(u);
		t->members = get_array(u, n, sizeof(uint32_t));
		t->nmembers = t->members ? n : 0;
	}
	m->ncomms = cv_get32(u);
	m->comms = calloc(m->ncomms + 1, sizeof(*m->comms));
	for (uint32_t i = 0; m->comms && i < m->ncomms && !u->bad; i++) {
		struct cv_comm *c = &m->comms[i];
		c->id = cv_get64(u);
		c->size = cv_get32(u);
		c->comm = cv_get32(u);
		c->ranks = get_members(u);
	}
	m->ngroups = cv_get32(u);
	m->groups = get_array(u, m->ngroups, sizeof(*m->groups));
	m->nwins = cv_get32(u);
	m->wins = calloc(m->nwins + 1, sizeof(*m->wins));
	for (uint32_t i = 0; m->wins && i < m->nwins && !u->bad; i++) {
		struct cv_gpu_win *w = &m->wins[i];
		w->process = cv_get32(u);
		w->name = cv_get32(u);
		w->comm = cv_get32(u);
		uint32_t n = cv_get32(u);
		w->members = get_array(u, n, sizeof(uint32_t));
		w->nmembers = w->members ? n : 0;
	}
	m->first_loc = calloc(m->nprocs + 1, sizeof(*m->first_loc));
	m->nlocs_of = calloc(m->nprocs + 1, sizeof(*m->nlocs_of));
	for (uint32_t p = 0; m->first_loc && m->nlocs_of && p < m->nprocs; p++) {
		m->first_loc[p] = cv_get64(u);
		m->nlocs_of[p] = cv_get64(u);
	}
	m->nlocs = cv_get32(u);
	m->locs = get_array(u, m->nlocs, sizeof(*m->locs));
	m->nleaks = cv_get32(u);
	m->leaks = get_array(u, m->nleaks, sizeof(*m->leaks));
	m->nnotes = cv_get32(u);
	m->notes = calloc(m->nnotes + 1, sizeof(*m->notes));
	for (uint32_t i = 0; m->notes && i < m->nnotes && !u->bad; i++)
		m->notes[i] = cv_get_str(u);
	const void *st = cv_get(u, sizeof(m->stats));
	if (st)
		memcpy(&m->stats, st, sizeof(m->stats));
	m->sample_period = cv_get64(u);
	m->mpi_aligned = cv_get64(u);
	m->ncomm_refs = cv_get32(u);
	if (!m->strings || !m->keys || !m->teams || !m->comms || !m->wins || !m->first_loc ||
	    !m->nlocs_of || !m->notes)
		u->bad = 1;
	/* Indices that must stay in range below. */
	for (uint32_t i = 0; !u->bad && i < m->nstrings; i++)
		u->bad = !m->strings[i];
	for (uint32_t i = 0; !u->bad && i < m->nregions; i++)
		u->bad = !m->keys[i] || strlen(m->keys[i]) < 2;
	for (uint32_t p = 0; !u->bad && p < m->nprocs; p++)
		u->bad = m->first_loc[p] + m->nlocs_of[p] > m->nlocs;
}

static void img_free(struct img *m)
{
	free(m->marks);
	free(m->strings);
	free(m->keys);
	free(m->notes);
	free(m->regions);
	free(m->metrics);
	free(m->scls);
	free(m->ctxs);
	free(m->papis);
	for (uint32_t i = 0; m->teams && i < m->nteams; i++) {
		free(m->teams[i].members);
		free(m->teams[i].nums);
	}
	free(m->teams);
	for (uint32_t i = 0; m->comms && i < m->ncomms; i++)
		free(m->comms[i].ranks);
	free(m->comms);
	free(m->groups);
	for (uint32_t i = 0; m->wins && i < m->nwins; i++)
		free(m->wins[i].members);
	free(m->wins);
	free(m->first_loc);
	free(m->nlocs_of);
	free(m->locs);
	free(m->leaks);
	free(m->smap);
	free(m->rmap);
	free(m->mmap);
	free(m->scmap);
	free(m->cxmap);
	free(m->pmap);
	free(m->refmap);
	free(m->tmap);
	free(m->cmap);
	free(m->gmap);
	free(m->wmap);
	free(m->lmap);
	free(m->refs);
}

/*
 * The definitions of kind `field` rank r made in slot s: slot 0 is before the first
 * process, slot p + 1 process p, slot nprocs + 1 after the last.
 */
#define SLOT_FROM(m, s, field)	    ((s) == 0 ? 0 : (m)->marks[(s)-1].field)
#define SLOT_TO(m, s, field, total) ((s) <= (m)->nprocs ? (m)->marks[s].field : (total))

/* Rank order for slot s: the process's owner first. */
static void slot_order(struct img *im, int n, uint32_t nprocs, uint32_t s, int *order)
{
	int owner = 0;
	if (s >= 1 && s <= nprocs)
		for (int r = 0; r < n; r++)
			if (im[r].marks[s - 1].converted) {
				owner = r;
				break;
			}
	order[0] = owner;
	for (int r = 0, k = 1; r < n; r++)
		if (r != owner)
			order[k++] = r;
}

static uint32_t *new_map(uint32_t n)
{
	uint32_t *a = calloc(n + 1, sizeof(*a));
	return a;
}

/* Each comm ref of image m: kind (0 team, 1 MPI communicator, 2 GPU window) << 30 | its
 * index, UINT32_MAX for none; NULL when memory ran out. */
static uint32_t *refs_of(const struct img *m)
{
	uint32_t *a = malloc(((size_t)m->ncomm_refs + 1) * sizeof(*a));
	if (!a)
		return NULL;
	memset(a, 0xff, ((size_t)m->ncomm_refs + 1) * sizeof(*a));
	for (uint32_t i = 0; i < m->nteams; i++)
		if (m->teams[i].comm < m->ncomm_refs)
			a[m->teams[i].comm] = i;
	for (uint32_t i = 0; i < m->ncomms; i++)
		if (m->comms[i].comm < m->ncomm_refs)
			a[m->comms[i].comm] = 1u << 30 | i;
	for (uint32_t i = 0; i < m->nwins; i++)
		if (m->wins[i].comm < m->ncomm_refs)
			a[m->wins[i].comm] = 2u << 30 | i;
	return a;
}

static int grow_one(void **a, uint32_t n, uint32_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	void *b = cv_grow(*a, cap, size);
	if (!b)
		return -1;
	*a = b;
	return 0;
}

/* Rank 0: builds g from the images; -1 when memory ran out. */
static int build(const struct cv *cv, struct img *im, int n, struct cv *g)
{
	uint32_t np = (uint32_t)cv->nprocs;
	int *order = calloc((size_t)n, sizeof(*order));
	g->procs = calloc(cv->max_procs + 1, sizeof(*g->procs));
	if (!order || !g->procs) {
		free(order);
		return -1;
	}
	for (int r = 0; r < n; r++) {
		struct img *m = &im[r];
		m->smap = new_map(m->nstrings);
		m->rmap = new_map(m->nregions);
		m->mmap = new_map(m->nmetrics);
		m->scmap = new_map(m->nscls);
		m->cxmap = new_map(m->nctxs);
		m->pmap = new_map(m->npapis);
		m->refmap = new_map(m->ncomm_refs);
		m->tmap = new_map(m->nteams);
		m->cmap = new_map(m->ncomms);
		m->gmap = new_map(m->ngroups);
		m->wmap = new_map(m->nwins);
		m->lmap = new_map(m->nlocs);
		m->refs = refs_of(m);
		if (!m->refs || !m->smap || !m->rmap || !m->mmap || !m->scmap || !m->cxmap ||
		    !m->pmap || !m->refmap || !m->tmap || !m->cmap || !m->gmap || !m->wmap ||
		    !m->lmap) {
			free(order);
			return -1;
		}
	}
	/* Definitions that name others come after them: strings first. */
	for (uint32_t s = 0; s <= np + 1; s++) {
		slot_order(im, n, np, s, order);
		for (int k = 0; k < n; k++) {
			struct img *m = &im[order[k]];
			for (uint32_t i = SLOT_FROM(m, s, strings);
			     i < SLOT_TO(m, s, strings, m->nstrings); i++)
				m->smap[i] = cv_string(g, m->strings[i]);
		}
	}
#define STR(m, id) ((id) == CV_NO_STRING || (id) >= (m)->nstrings ? CV_NO_STRING : (m)->smap[id])
	for (uint32_t s = 0; s <= np + 1; s++) {
		slot_order(im, n, np, s, order);
		for (int k = 0; k < n; k++) {
			struct img *m = &im[order[k]];
			for (uint32_t i = SLOT_FROM(m, s, regions);
			     i < SLOT_TO(m, s, regions, m->nregions); i++) {
				struct cv_region r = m->regions[i];
				r.name = STR(m, r.name);
				r.canonical = STR(m, r.canonical);
				r.file = STR(m, r.file);
				r.desc = r.desc && r.desc - 1 < m->nstrings
					     ? m->smap[r.desc - 1] + 1
					     : 0;
				m->rmap[i] = cv_region_id(g, m->keys[i][0], m->keys[i] + 2, &r);
			}
			for (uint32_t i = SLOT_FROM(m, s, metrics);
			     i < SLOT_TO(m, s, metrics, m->nmetrics); i++) {
				const struct cv_metric *x = &m->metrics[i];
				uint32_t name = STR(m, x->name), unit = STR(m, x->unit);
				if (name == CV_NO_STRING || unit == CV_NO_STRING)
					continue;
				m->mmap[i] = cv_metric_id(g, g->strings[name], x->is_double,
							  g->strings[unit]);
				if (m->mmap[i] < g->nmetrics)
					g->metrics[m->mmap[i]].accumulated = x->accumulated;
			}
			for (uint32_t i = SLOT_FROM(m, s, scls); i < SLOT_TO(m, s, scls, m->nscls);
			     i++) {
				struct cv_scl c = m->scls[i];
				c.file = STR(m, c.file);
				c.function = STR(m, c.function);
				m->scmap[i] = cv_scl_id(g, &c) - 1;
			}
			for (uint32_t i = SLOT_FROM(m, s, papis);
			     i < SLOT_TO(m, s, papis, m->npapis); i++) {
				struct cv_papi p = m->papis[i];
				for (unsigned j = 0; j < p.n && j < 16; j++)
					p.names[j] = STR(m, p.names[j]);
				m->pmap[i] = cv_papi_id(g, &p) - 1;
			}
		}
	}
	/* Calling contexts name regions, call sites and their parents (made before them). */
	for (uint32_t s = 0; s <= np + 1; s++) {
		slot_order(im, n, np, s, order);
		for (int k = 0; k < n; k++) {
			struct img *m = &im[order[k]];
			for (uint32_t i = SLOT_FROM(m, s, ctxs); i < SLOT_TO(m, s, ctxs, m->nctxs);
			     i++) {
				const struct cv_ctx *c = &m->ctxs[i];
				uint32_t parent = c->parent && c->parent - 1 < i
						      ? m->cxmap[c->parent - 1] + 1
						      : 0;
				uint32_t reg = c->region < m->nregions ? m->rmap[c->region] : 0;
				uint32_t scl = c->scl < m->nscls ? m->scmap[c->scl] + 1 : 0;
				m->cxmap[i] = cv_context(g, reg, scl, parent) - 1;
			}
		}
	}
	/* GPU contexts, then the locations, process by process from their owners. */
	for (uint32_t p = 0; p < np; p++) {
		slot_order(im, n, np, p + 1, order);
		struct img *m = &im[order[0]];
		/* a rank's contexts (and leaks) come process after process */
		while (m->at_group < m->ngroups && m->groups[m->at_group].process < p)
			m->at_group++;
		for (uint32_t i = m->at_group; i < m->ngroups && m->groups[i].process == p;
		     i = ++m->at_group) {
			if (grow_one((void **)&g->gpu_groups, g->ngpu_groups, &g->gpu_groups_cap,
				     sizeof(*g->gpu_groups)))
				goto oom;
			m->gmap[i] = g->ngpu_groups;
			g->gpu_groups[g->ngpu_groups++] =
			    (struct cv_gpu_group){p, STR(m, m->groups[i].name)};
		}
	}
	for (uint32_t p = 0; p < np; p++) {
		slot_order(im, n, np, p + 1, order);
		struct img *m = &im[order[0]];
		g->procs[p].first_loc = g->nlocs;
		g->procs[p].nlocs = m->nlocs_of[p];
		for (uint64_t i = m->first_loc[p]; i < m->first_loc[p] + m->nlocs_of[p]; i++) {
			struct cv_loc *l = cv_new_loc(g);
			if (!l)
				goto oom;
			*l = m->locs[i];
			l->name = STR(m, l->name);
			l->papi = l->papi && l->papi - 1 < m->npapis ? m->pmap[l->papi - 1] + 1 : 0;
			if (l->kind == CV_LOC_GPU_STREAM)
				l->gpu = l->gpu < m->ngroups ? m->gmap[l->gpu] : 0;
			l->out = NULL;
			m->lmap[i] = (uint32_t)g->nlocs++;
		}
	}
	/* Teams, MPI communicators and GPU windows share one numbering, in first-use order. */
	for (uint32_t s = 0; s <= np + 1; s++) {
		slot_order(im, n, np, s, order);
		for (int k = 0; k < n; k++) {
			struct img *m = &im[order[k]];
			for (uint32_t ref = SLOT_FROM(m, s, comm_refs);
			     ref < SLOT_TO(m, s, comm_refs, m->ncomm_refs); ref++) {
				uint32_t x = m->refs[ref] & ((1u << 30) - 1);
				int kind =
				    m->refs[ref] == UINT32_MAX ? -1 : (int)(m->refs[ref] >> 30);
				if (kind == 0) {
					const struct cv_team *t = &m->teams[x];
					if (grow_one((void **)&g->teams, g->nteams, &g->teams_cap,
						     sizeof(*g->teams)))
						goto oom;
					m->tmap[x] = g->nteams;
					struct cv_team *gt = &g->teams[g->nteams++];
					*gt = (struct cv_team){.process = t->process,
							       .forker = t->forker,
							       .size = t->size,
							       .comm = g->ncomm_refs++};
					if (t->nmembers &&
					    !(gt->members = calloc(t->nmembers, sizeof(uint32_t))))
						goto oom;
					for (uint32_t j = 0; j < t->nmembers; j++)
						if (t->members[j] < m->nlocs)
							gt->members[gt->nmembers++] =
							    m->lmap[t->members[j]];
					gt->cap = gt->nmembers;
					m->refmap[ref] = gt->comm;
				} else if (kind == 1) {
					const struct cv_comm *c = &m->comms[x];
					uint32_t j = 0;
					while (j < g->ncomms && g->comms[j].id != c->id)
						j++;
					if (j == g->ncomms) {
						if (grow_one((void **)&g->comms, g->ncomms,
							     &g->comms_cap, sizeof(*g->comms)))
							goto oom;
						g->comms[g->ncomms++] = (struct cv_comm){
						    c->id, c->size, NULL, g->ncomm_refs++};
					}
					m->cmap[x] = j;
					m->refmap[ref] = g->comms[j].comm;
				} else if (kind == 2) {
					const struct cv_gpu_win *w = &m->wins[x];
					if (grow_one((void **)&g->gpu_wins, g->ngpu_wins,
						     &g->gpu_wins_cap, sizeof(*g->gpu_wins)))
						goto oom;
					m->wmap[x] = g->ngpu_wins;
					struct cv_gpu_win *gw = &g->gpu_wins[g->ngpu_wins++];
					*gw = (struct cv_gpu_win){
					    w->process, STR(m, w->name), g->ncomm_refs++, NULL, 0,
					    0};
					if (w->nmembers &&
					    !(gw->members = calloc(w->nmembers, sizeof(uint32_t))))
						goto oom;
					for (uint32_t j = 0; j < w->nmembers; j++)
						if (w->members[j] < m->nlocs)
							gw->members[gw->nmembers++] =
							    m->lmap[w->members[j]];
					gw->cap = gw->nmembers;
					m->refmap[ref] = gw->comm;
				}
			}
		}
	}
	/* A communicator's members: what any of its ranks recorded. */
	for (int r = 0; r < n; r++) {
		struct img *m = &im[r];
		for (uint32_t i = 0; i < m->ncomms; i++) {
			const struct cv_comm *c = &m->comms[i];
			struct cv_comm *gc = &g->comms[m->cmap[i]];
			if (!c->ranks || !c->size)
				continue;
			if (!gc->ranks) {
				if (!(gc->ranks = malloc(c->size * sizeof(*gc->ranks))))
					goto oom;
				gc->size = c->size;
				for (uint32_t j = 0; j < c->size; j++)
					gc->ranks[j] = LT_MPI_NO_RANK;
			}
			if (gc->size != c->size) {
				g->stats.anomalies++; /* one id, two sizes: damage */
				continue;
			}
			for (uint32_t j = 0; j < c->size; j++)
				if (c->ranks[j] != LT_MPI_NO_RANK)
					gc->ranks[j] = c->ranks[j];
		}
	}
	/* Leaks, process by process; notes in first-use order. */
	for (uint32_t p = 0; p < np; p++) {
		slot_order(im, n, np, p + 1, order);
		struct img *m = &im[order[0]];
		while (m->at_leak < m->nleaks && m->leaks[m->at_leak].process < p)
			m->at_leak++;
		for (uint32_t i = m->at_leak; i < m->nleaks && m->leaks[i].process == p;
		     i = ++m->at_leak) {
			struct cv_leak lk = m->leaks[i];
			lk.label = STR(m, lk.label);
			lk.space = STR(m, lk.space);
			lk.scl = lk.scl && lk.scl - 1 < m->nscls ? m->scmap[lk.scl - 1] + 1 : 0;
			uint32_t cap = (uint32_t)g->leaks_cap;
			if (grow_one((void **)&g->leaks, (uint32_t)g->nleaks, &cap, sizeof(lk)))
				goto oom;
			g->leaks_cap = cap;
			g->leaks[g->nleaks++] = lk;
		}
	}
	for (uint32_t s = 0; s <= np + 1; s++) {
		slot_order(im, n, np, s, order);
		for (int k = 0; k < n; k++) {
			struct img *m = &im[order[k]];
			for (uint32_t i = SLOT_FROM(m, s, notes);
			     i < SLOT_TO(m, s, notes, m->nnotes); i++)
				cv_note(g, m->notes[i]);
		}
	}
	free(order);
	return 0;
oom:
	free(order);
	return -1;
#undef STR
}

/* What every rank counted of its own processes, added up; what every rank read of every
 * process (their number, which ended early, damage) is rank 0's. */
static void add_stats(struct cv *g, const struct cv *cv, const struct img *im, int n)
{
	struct cv_stats *t = &g->stats;
	uint64_t anomalies = t->anomalies; /* build()'s */
	*t = cv->stats;
	t->records = t->events = t->lost = t->threads = t->unclosed = 0;
	t->anomalies = anomalies;
	t->too_deep = t->truncated = t->gpu_ops = t->gpu_clamped = 0;
	t->kokkos_unseen_frees = t->kokkos_unseen_bytes = 0;
	t->first_ns = UINT64_MAX;
	t->last_ns = 0;
	for (int r = 0; r < n; r++) {
		const struct cv_stats *s = &im[r].stats;
		t->records += s->records;
		t->events += s->events;
		t->lost += s->lost;
		t->threads += s->threads;
		t->unclosed += s->unclosed;
		t->anomalies += s->anomalies;
		t->too_deep += s->too_deep;
		t->truncated += s->truncated;
		t->gpu_ops += s->gpu_ops;
		t->gpu_clamped += s->gpu_clamped;
		t->kokkos_unseen_frees += s->kokkos_unseen_frees;
		t->kokkos_unseen_bytes += s->kokkos_unseen_bytes;
		t->damaged |= s->damaged;
		if (s->first_ns < t->first_ns)
			t->first_ns = s->first_ns;
		if (s->first_ns != UINT64_MAX && s->last_ns > t->last_ns)
			t->last_ns = s->last_ns;
		g->mpi_aligned += im[r].mpi_aligned;
		if (im[r].sample_period &&
		    (!g->sample_period || im[r].sample_period < g->sample_period))
			g->sample_period = im[r].sample_period;
	}
	if (t->first_ns == UINT64_MAX) /* no event at all */
		t->first_ns = t->last_ns = 0;
}

/* Rank 0's own process-level state in g: processes, hosts, properties. */
static int copy_procs(struct cv *g, const struct cv *cv, const struct img *self)
{
	g->max_procs = cv->max_procs;
	g->nprocs = cv->nprocs;
	g->hosts = calloc(cv->nhosts + 1, sizeof(*g->hosts));
	if (!g->hosts)
		return -1;
	for (size_t p = 0; p < cv->nprocs; p++) { /* its locations: from build() */
		struct cv_process *gp = &g->procs[p];
		size_t first = gp->first_loc, nlocs = gp->nlocs;
		*gp = cv->procs[p];
		gp->name = self->smap[cv->procs[p].name];
		gp->dir_name = strdup(cv->procs[p].dir_name ? cv->procs[p].dir_name : "");
		gp->program = strdup(cv->procs[p].program ? cv->procs[p].program : "");
		gp->first_loc = first;
		gp->nlocs = nlocs;
	}
	for (uint32_t h = 0; h < cv->nhosts; h++)
		g->hosts[h] = self->smap[cv->hosts[h]];
	g->nhosts = cv->nhosts;
	for (size_t i = 0; i < cv->nprops; i++)
		cv_add_prop(g, cv->props[2 * i], cv->props[2 * i + 1]);
	g->sampling = cv->sampling;
	g->mpi_world = cv->mpi_world;
	g->no_clock_align = cv->no_clock_align;
	return 0;
}

/* Rank 0: every rank's maps, one after the other (struct cv_maps: MAPS of them); g: the
 * archive's definitions, or NULL. */
#define MAPS 11
static void pack_maps(const struct img *im, int n, int failed, const struct cv *g,
		      struct cv_pack *k)
{
	cv_put32(k, (uint32_t)failed);
	cv_put32(k, g ? g->nmetrics : 0);
	for (int r = 0; r < n; r++) {
		const struct img *m = &im[r];
		uint32_t *sites = g && m->scmap ? malloc((m->nscls + 1) * sizeof(*sites)) : NULL;
		for (uint32_t i = 0; sites && i < m->nscls; i++)
			sites[i] = m->scmap[i] < g->nscls ? g->scls[m->scmap[i]].site : CV_NO_SITE;
		if (g && m->scmap && m->nscls && !sites)
			k->oom = 1;
		const uint32_t *maps[] = {m->smap,   m->rmap, m->mmap, m->scmap, m->cxmap, m->pmap,
					  m->refmap, m->wmap, m->lmap, m->cmap,	 sites};
		const uint32_t lens[] = {m->nstrings, m->nregions, m->nmetrics,		m->nscls,
					 m->nctxs,    m->npapis,   m->ncomm_refs,	m->nwins,
					 m->nlocs,    m->ncomms,   sites ? m->nscls : 0};
		for (int i = 0; i < MAPS; i++) {
			cv_put32(k, lens[i]);
			if (maps[i])
				cv_put(k, maps[i], lens[i] * sizeof(uint32_t));
		}
		free(sites);
	}
}

static int unpack_maps(struct cv *cv, const void *buf, size_t len, int n, int *failed)
{
	struct cv_unpack u = {buf, len, 0, 0};
	*failed = (int)cv_get32(&u);
	struct cv_maps *mp = &cv->maps;
	mp->global_nmetrics = cv_get32(&u);
	uint32_t nsites = 0;
	uint32_t **maps[] = {&mp->strings, &mp->regions, &mp->metrics,	 &mp->scls,
			     &mp->ctxs,	   &mp->papis,	 &mp->comm_refs, &mp->wins,
			     &mp->locs,	   &mp->comms,	 &mp->sites};
	uint32_t *lens[] = {&mp->nstrings, &mp->nregions, &mp->nmetrics,   &mp->nscls,
			    &mp->nctxs,	   &mp->npapis,	  &mp->ncomm_refs, &mp->nwins,
			    &mp->nlocs,	   &mp->ncomms,	  &nsites};
	for (int r = 0; r < n && !u.bad; r++)
		for (int i = 0; i < MAPS && !u.bad; i++) {
			uint32_t k = cv_get32(&u);
			if (r != cv->par->rank) {
				cv_get(&u, (size_t)k * sizeof(uint32_t));
				continue;
			}
			*maps[i] = get_array(&u, k, sizeof(uint32_t));
			*lens[i] = k;
			if (k && !*maps[i])
				u.bad = 1;
		}
	if (!u.bad && nsites != mp->nscls) { /* sites: one per call site */
		free(mp->sites);
		mp->sites = NULL;
		u.bad = 1;
	}
	return u.bad ? -1 : 0;
}

int cv_unify(struct cv *cv, int failed)
{
	struct cv_par *par = cv->par;
	struct cv_pack k = {0};
	pack(cv, failed, &k);
	void **all = NULL;
	size_t *lens = NULL;
	int rc = par->gather(par, k.oom ? "" : (const char *)k.b, k.oom ? 0 : k.n, &all, &lens);
	free(k.b);
	struct cv_pack maps = {0};
	int any_failed = failed || rc != 0;
	if (par->rank == 0 && rc == 0) {
		int n = par->size;
		struct img *im = calloc((size_t)n, sizeof(*im));
		struct cv *g = calloc(1, sizeof(*g));
		int bad = !im || !g;
		for (int r = 0; r < n && !bad; r++) {
			struct cv_unpack u = {all[r], lens[r], 0, 0};
			unpack(&u, &im[r]);
			bad = u.bad || im[r].nprocs != cv->nprocs;
			any_failed |= im[r].failed;
		}
		if (!bad) {
			g->ops = cv->ops;
			g->out = cv->out;
			bad = build(cv, im, n, g) || copy_procs(g, cv, &im[0]);
		}
		if (!bad) {
			add_stats(g, cv, im, n);
			cv->global = g;
		} else if (g) {
			cv_free(g);
			free(g);
		}
		any_failed |= bad;
		pack_maps(im, im ? n : 0, any_failed, cv->global, &maps);
		for (int r = 0; im && r < n; r++)
			img_free(&im[r]);
		free(im);
		any_failed |= maps.oom;
	}
	for (int r = 0; all && r < par->size; r++)
		free(all[r]);
	free(all);
	free(lens);
	void *buf = maps.oom ? NULL : maps.b;
	size_t len = maps.oom ? 0 : maps.n;
	if (par->bcast(par, &buf, &len))
		return -1;
	int told = 1;
	if (len && unpack_maps(cv, buf, len, par->size, &told) == 0)
		any_failed |= told;
	else
		any_failed = 1;
	if (buf != maps.b)
		free(buf);
	free(maps.b);
	return any_failed ? -1 : 0;
}
