// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_par.c - a parallel conversion's Paraver trace (convert.h, cv.par): each rank has
 * sorted the records of its processes into the runs of its scratch file, with its own ids.
 *
 *   1. The trace's span (rank 0 knows its first and last time; every rank its last record)
 *      goes to every rank, which closes its threads' lives on it (Not created).
 *   2. Each rank rewrites its scratch file in place with the archive's ids (cv.maps): its
 *      locations, strings (labels of markers, callers, samples, string attributes),
 *      metrics, PAPI sets, MPI communicators, and the values of its regions' events.  The
 *      locations keep their order, so every run stays sorted.
 *   3. Rank 0 gets what the .pcf, the .row and the header need (labels in the order the
 *      processes used them first, the CPUs of each host, which metric locations are
 *      threads), and every MPI message half: it matches them (a run of its own), then
 *      merges every rank's runs into the .prv, reading the others' scratch files by name.
 *   4. Rank 0 says whether it succeeded; then every rank removes its scratch file.
 *
 * The output is a serial conversion's, but for native PAPI events whose name hashes
 * collide (their types are chosen per rank).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "paraver.h"

/* ---- step 2: the archive's ids in this rank's records ---- */

#define MAP(m, n, x) ((x) < (n) ? (m)[x] : (x))

/* The value of an event of region r's type, on this rank and in the archive. */
static uint64_t global_value(const struct cv *cv, const struct rinfo *ri, uint32_t r)
{
	const struct cv_maps *mp = &cv->maps;
	uint32_t g = MAP(mp->regions, mp->nregions, r);
	if (!ri->value)
		return (uint64_t)g + 1;
	if (ri->kind == K_MPI && ri->value >= MPI_VALUE_OTHER)
		return MPI_VALUE_OTHER + (uint64_t)g;
	if ((ri->kind == K_CUDA || ri->kind == K_HIP || ri->kind == K_GPU_DEVICE) &&
	    ri->value >= GPU_VALUE_OTHER)
		return GPU_VALUE_OTHER + (uint64_t)g;
	return ri->value; /* Extrae's number */
}

struct remap {
	const struct cv *cv;
	struct pmap values; /* (type << 32 | this rank's value) -> the archive's (.time) */
	uint32_t labelled[CV_ATTR_COUNT];
	unsigned nlabelled;
};

static uint64_t string_value(const struct cv_maps *mp, uint64_t v)
{
	return v && v - 1 < mp->nstrings ? (uint64_t)mp->strings[v - 1] + 1 : v;
}

static void remap_rec(const struct remap *m, struct rec *r)
{
	const struct cv_maps *mp = &m->cv->maps;
	r->loc = MAP(mp->locs, mp->nlocs, r->loc);
	if (r->kind == REC_COMM)
		r->b = MAP(mp->locs, mp->nlocs, r->b);
	if (r->kind != REC_EVENT)
		return;
	uint32_t t = r->b;
	const struct pending *e = r->a <= UINT32_MAX ? prv_pmap_slot((struct pmap *)&m->values,
								     (uint64_t)t << 32 | r->a, 0)
						     : NULL;
	if (e && e->used) {
		r->a = e->time;
	} else if (t >= TY_METRIC && t - TY_METRIC < mp->nmetrics) {
		r->b = TY_METRIC + mp->metrics[t - TY_METRIC];
	} else if ((t >= TY_CALLER && t <= TY_CALLER + MAX_CALLER) ||
		   (t >= TY_CALLER_LINE && t <= TY_CALLER_LINE + MAX_CALLER) ||
		   (t >= TY_SAMPLE && t < TY_SAMPLE + MAX_SAMPLE) ||
		   (t >= TY_SAMPLE_LINE && t < TY_SAMPLE_LINE + MAX_SAMPLE) ||
		   (t >= TY_MARKER && t < TY_MARKER + CV_MARK_KINDS)) {
		r->a = string_value(mp, r->a);
	} else if (t == TY_PAPI_SET) {
		r->a = r->a && r->a - 1 < mp->npapis ? (uint64_t)mp->papis[r->a - 1] + 1 : r->a;
	} else if (t == TY_MPI_COMM) {
		r->a = r->a && r->a - 1 < mp->ncomms ? (uint64_t)mp->comms[r->a - 1] + 1 : r->a;
	} else {
		for (unsigned i = 0; i < m->nlabelled; i++)
			if (t == m->labelled[i])
				r->a = string_value(mp, r->a);
	}
}

static int remap_scratch(struct cv *cv)
{
	struct out *o = cv->out;
	struct remap m = {.cv = cv};
	for (uint32_t r = 0; r < o->nregions; r++) {
		const struct rinfo *ri = &o->regions[r];
		if (!ri->known || !ri->type)
			continue;
		uint64_t mine = ri->value ? ri->value : (uint64_t)r + 1;
		uint64_t theirs = global_value(cv, ri, r);
		if (mine == theirs)
			continue;
		struct pending *e = prv_pmap_slot(&m.values, (uint64_t)ri->type << 32 | mine, 1);
		if (!e) {
			free(m.values.slot);
			return -1;
		}
		e->time = theirs;
	}
	for (int id = 0; id < CV_ATTR_COUNT; id++)
		if (prv_attr_types[id].labelled)
			m.labelled[m.nlabelled++] = prv_attr_types[id].type
							? prv_attr_types[id].type
							: TY_ATTR + (uint32_t)id;
	int fd = fileno(o->scratch), rc = 0;
	struct rec *b = o->run; /* spilled: free to use */
	for (uint64_t at = 0; at < o->records && !rc;) {
		size_t n = o->records - at < RUN_RECORDS ? (size_t)(o->records - at) : RUN_RECORDS;
		off_t off = (off_t)(at * sizeof(*b));
		size_t len = n * sizeof(*b);
		if (pread(fd, b, len, off) != (ssize_t)len) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < n; i++)
			remap_rec(&m, &b[i]);
		if (pwrite(fd, b, len, off) != (ssize_t)len)
			rc = -1;
		at += n;
	}
	free(m.values.slot);
	if (rc)
		prv_fail(o, "rewriting the scratch file", errno ? errno : EIO);
	return rc;
}

/* ---- step 3: what rank 0 needs ---- */

static void pack(struct cv *cv, struct cv_pack *k)
{
	struct out *o = cv->out;
	const struct cv_maps *mp = &cv->maps;
	cv_put64(k, o->error[0] != 0);
	const char *path = o->scratch_path ? o->scratch_path : "";
	cv_put64(k, strlen(path) + 1);
	cv_put(k, path, strlen(path) + 1);
	cv_put64(k, o->records);
	cv_put64(k, o->nruns);
	uint64_t *ends = prv_run_ends(o);
	if (!ends)
		k->oom = 1;
	for (size_t i = 0; ends && i < o->nruns; i++)
		cv_put64(k, ends[i]);
	free(ends);
	cv_put64(k, o->nlabels);
	for (size_t i = 0; i < o->nlabels; i++) {
		const struct label *l = &o->labels[i];
		cv_put64(k, l->type);
		cv_put64(k, MAP(mp->strings, mp->nstrings, l->sid));
		cv_put64(k, l->process);
	}
	uint64_t kept = 0;
	for (size_t i = 0; i < o->nlocs && i < cv->nlocs; i++)
		kept += o->locs[i].kept != 0;
	cv_put64(k, kept);
	for (size_t i = 0; i < o->nlocs && i < cv->nlocs; i++)
		if (o->locs[i].kept)
			cv_put64(k, MAP(mp->locs, mp->nlocs, (uint32_t)i));
	cv_put64(k, o->nhost_cpus);
	for (uint32_t h = 0; h < o->nhost_cpus; h++)
		cv_put64(k, o->host_cpus[h]);
	cv_put64(k, o->cpu_metric ? (uint64_t)MAP(mp->metrics, mp->nmetrics, o->cpu_metric - 1) + 1
				  : 0);
	cv_put64(k, o->max_caller);
	cv_put64(k, o->samples);
	cv_put64(k, o->attrs_used);
	cv_put64(k, (uint64_t)o->mpi_colls);
	for (int half = 0; half < 2; half++) {
		const struct msg *a = half ? o->recvs : o->sends;
		size_t n = half ? o->nrecvs : o->nsends;
		cv_put64(k, n);
		for (size_t i = 0; i < n; i++) {
			struct msg m = a[i];
			m.loc = MAP(mp->locs, mp->nlocs, m.loc);
			cv_put(k, &m, sizeof(m));
		}
	}
}

/* One rank's summary, read into g (rank 0's view of the whole trace) and src. */
static int unpack(struct cv_unpack *u, struct cv *g, struct out *go, struct out *o,
		  struct label **labels, size_t *nlabels, size_t *labels_cap,
		  struct prv_source *src, char **path)
{
	int failed = (int)cv_get64(u);
	uint64_t plen = cv_get64(u);
	const char *p = cv_get(u, plen);
	if (!p || !plen || p[plen - 1])
		return -1;
	*path = strdup(p);
	uint64_t records = cv_get64(u), nruns = cv_get64(u);
	uint64_t *ends = nruns && nruns < (1u << 30) ? calloc(nruns, sizeof(*ends)) : NULL;
	for (uint64_t i = 0; ends && i < nruns; i++)
		ends[i] = cv_get64(u);
	src->nruns = ends ? nruns : 0;
	src->run_end = ends;
	g->stats.events += records;
	uint64_t nl = cv_get64(u);
	for (uint64_t i = 0; i < nl && !u->bad; i++) {
		struct label l;
		l.type = (uint32_t)cv_get64(u);
		l.sid = (uint32_t)cv_get64(u);
		l.process = (uint32_t)cv_get64(u);
		if (*nlabels == *labels_cap) {
			size_t c = *labels_cap ? 2 * *labels_cap : 64;
			struct label *a = realloc(*labels, c * sizeof(*a));
			if (!a)
				return -1;
			*labels = a;
			*labels_cap = c;
		}
		(*labels)[(*nlabels)++] = l;
	}
	uint64_t nk = cv_get64(u);
	for (uint64_t i = 0; i < nk && !u->bad; i++) {
		uint64_t li = cv_get64(u);
		if (li < go->nlocs)
			go->locs[li].kept = 1;
	}
	uint64_t nh = cv_get64(u);
	for (uint64_t h = 0; h < nh && !u->bad; h++) {
		uint32_t c = (uint32_t)cv_get64(u);
		if (h < go->nhost_cpus && c > go->host_cpus[h])
			go->host_cpus[h] = c;
	}
	uint32_t cpu_metric = (uint32_t)cv_get64(u), max_caller = (uint32_t)cv_get64(u),
		 samples = (uint32_t)cv_get64(u);
	if (cpu_metric && (!go->cpu_metric || cpu_metric < go->cpu_metric))
		go->cpu_metric = cpu_metric;
	if (max_caller > go->max_caller)
		go->max_caller = max_caller;
	if (samples > go->samples)
		go->samples = samples;
	go->attrs_used |= cv_get64(u);
	go->mpi_colls |= (int)cv_get64(u);
	for (int half = 0; half < 2 && !u->bad; half++) {
		uint64_t n = cv_get64(u);
		for (uint64_t i = 0; i < n && !u->bad; i++) {
			const void *m = cv_get(u, sizeof(struct msg));
			struct msg **a = half ? &o->recvs : &o->sends;
			size_t *na = half ? &o->nrecvs : &o->nsends,
			       *cap = half ? &o->recvs_cap : &o->sends_cap;
			if (!m)
				break;
			if (*na == *cap) {
				size_t c = *cap ? 2 * *cap : 256;
				struct msg *b = realloc(*a, c * sizeof(*b));
				if (!b)
					return -1;
				*a = b;
				*cap = c;
			}
			memcpy(&(*a)[(*na)++], m, sizeof(struct msg));
		}
	}
	return u->bad || failed || (nruns && !ends) ? -1 : 0;
}

static int label_cmp(const void *x, const void *y)
{
	const struct label *a = x, *b = y;
	return a->process < b->process ? -1 : a->process > b->process;
}

/* Rank 0: the outputs of the whole trace; -1 with o->error set on a failure. */
static int write_all(struct cv *cv, void **all, const size_t *lens)
{
	struct out *o = cv->out;
	struct cv *g = cv->global;
	int n = cv->par->size;
	struct out go = {0};
	struct prv_source *src = calloc((size_t)n, sizeof(*src));
	char **paths = calloc((size_t)n, sizeof(*paths));
	int rc = src && paths && g ? 0 : -1;
	go.name = o->name;
	go.nlocs = g ? g->nlocs : 0;
	go.locs = calloc(go.nlocs + 1, sizeof(*go.locs));
	go.nhost_cpus = g ? g->nhosts : 0;
	go.host_cpus = calloc(go.nhost_cpus + 1, sizeof(*go.host_cpus));
	if (!go.locs || !go.host_cpus)
		rc = -1;
	/* The gathered halves replace rank 0's own (packed already). */
	free(o->sends);
	free(o->recvs);
	o->sends = o->recvs = NULL;
	o->nsends = o->nrecvs = o->sends_cap = o->recvs_cap = 0;
	if (!rc)
		g->stats.events = 0;
	struct label *labels = NULL;
	size_t nl = 0, nl_cap = 0;
	for (int r = 0; r < n && !rc; r++) {
		struct cv_unpack u = {all[r], lens[r], 0, 0};
		rc = unpack(&u, g, &go, o, &labels, &nl, &nl_cap, &src[r], &paths[r]);
	}
	/* Labels in the order the processes used them first: each rank's are in that order;
	 * a stable sort by process, then the first of each. */
	for (size_t i = 1; !rc && i < nl; i++)
		for (size_t j = i; j > 0 && label_cmp(&labels[j - 1], &labels[j]) > 0; j--) {
			struct label x = labels[j];
			labels[j] = labels[j - 1];
			labels[j - 1] = x;
		}
	for (size_t i = 0; !rc && i < nl; i++) {
		go.process = labels[i].process;
		prv_note_label(&go, labels[i].type, labels[i].sid);
	}
	free(labels);
	/* The messages, matched: one more run of rank 0's, already in the archive's ids. */
	if (!rc) {
		uint64_t before = o->records;
		prv_match_messages(o);
		prv_spill(o);
		if (fflush(o->scratch) != 0)
			rc = -1;
		g->stats.events += o->records - before;
		free((void *)src[0].run_end);
		src[0].run_end = prv_run_ends(o);
		src[0].nruns = src[0].run_end ? o->nruns : 0;
		src[0].fd = fileno(o->scratch);
		if (!src[0].run_end && o->nruns)
			rc = -1;
	}
	for (int r = 1; r < n && !rc; r++)
		if ((src[r].fd = open(paths[r], O_RDONLY | O_CLOEXEC)) < 0) {
			prv_fail(o, paths[r], errno);
			rc = -1;
		}
	if (!rc) {
		/* The end of the trace: the last record of any rank. */
		go.end = o->end;
		void *mine = g->out;
		g->out = &go;
		for (uint32_t s = 0; s < g->npapis; s++)
			prv_papi_types(g, s);
		rc = prv_write_outputs(g, &go, src, (size_t)n);
		g->out = mine;
		if (go.error[0])
			memcpy(o->error, go.error, sizeof(o->error));
	}
	for (int r = 0; src && r < n; r++) {
		if (r && src[r].fd > 0)
			close(src[r].fd);
		free((void *)src[r].run_end);
		free(paths ? paths[r] : NULL);
	}
	free(src);
	free(paths);
	free(go.locs);
	free(go.host_cpus);
	free(go.labels);
	free(go.label_set.slot);
	free(go.papi_types);
	free(go.regions);
	if (rc && !o->error[0])
		prv_fail(o, "merging the ranks' records", ENOMEM);
	return rc;
}

int prv_finish_parallel(struct cv *cv)
{
	struct out *o = cv->out;
	struct cv_par *par = cv->par;
	/* 1. The span: rank 0's first and last time, every rank's last record. */
	void **all = NULL;
	size_t *lens = NULL;
	uint64_t end = o->end;
	int rc = par->gather(par, &end, sizeof(end), &all, &lens);
	uint64_t span[3] = {0, 0, 0}; /* first, last, end */
	if (par->rank == 0 && !rc && cv->global) {
		span[0] = cv->global->stats.first_ns;
		span[1] = cv->global->stats.last_ns;
		for (int r = 0; r < par->size; r++)
			if (lens[r] == sizeof(uint64_t) && *(uint64_t *)all[r] > span[2])
				span[2] = *(uint64_t *)all[r];
	}
	for (int r = 0; all && r < par->size; r++)
		free(all[r]);
	free(all);
	free(lens);
	void *b = span;
	size_t len = sizeof(span);
	if (par->bcast(par, &b, &len) || len != sizeof(span))
		rc = -1;
	else if (b != span)
		memcpy(span, b, sizeof(span));
	if (b != span)
		free(b);
	if (rc)
		prv_fail(o, "sharing the trace's span", EIO);
	cv->stats.first_ns = span[0];
	cv->stats.last_ns = span[1];
	o->end = span[2];
	/* 2. Closed lives, every run spilled, the archive's ids. */
	if (!o->error[0])
		prv_close_states(cv);
	prv_spill(o);
	if (fflush(o->scratch) != 0)
		prv_fail(o, "writing the scratch file", errno);
	if (!o->error[0])
		remap_scratch(cv);
	/* 3. Rank 0 writes. */
	struct cv_pack k = {0};
	pack(cv, &k);
	rc = par->gather(par, k.oom ? (const void *)"" : k.b, k.oom ? 0 : k.n, &all, &lens);
	free(k.b);
	char ok = 0;
	if (par->rank == 0) {
		ok = !rc && !k.oom && write_all(cv, all, lens) == 0;
		for (int r = 0; all && r < par->size; r++)
			free(all[r]);
		free(all);
		free(lens);
	}
	/* 4. Whether it worked; the scratch files go with prv_free. */
	char *okp = &ok;
	len = 1;
	if (par->bcast(par, (void **)&okp, &len) || len != 1)
		ok = 0;
	else
		ok = *okp;
	if (okp != &ok)
		free(okp);
	if (par->rank == 0) {
		if (!ok) {
			if (!o->error[0])
				prv_fail(o, "a converter rank failed", EIO);
			prv_remove_outputs(o);
		}
	} else if (!ok && !o->error[0]) {
		prv_fail(o, "rank 0 could not write the trace", EIO);
	}
	return ok ? 0 : -1;
}
