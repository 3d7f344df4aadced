// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi.c - MPI: calls, point-to-point and collective operations, communicators, and each
 * rank's clock put on rank 0's.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The offset to rank 0's clock at local time `local`: linear between the measurements,
 * constant before the first and after the last. */
int64_t cv_mpi_offset(const struct pstate *ps, int64_t local)
{
	const struct rd_mpi_clock *c = ps->mpi_clock; /* the reader bounds them by 2^60 */
	size_t n = ps->nmpi_clock;
	if (local <= c[0].local_ns)
		return c[0].offset_ns;
	for (size_t i = 1; i < n; i++)
		if (local < c[i].local_ns) {
			double f = (double)(local - c[i - 1].local_ns) /
				   (double)(c[i].local_ns - c[i - 1].local_ns);
			return c[i - 1].offset_ns +
			       (int64_t)(f * (double)(c[i].offset_ns - c[i - 1].offset_ns));
		}
	return c[n - 1].offset_ns;
}

/* The end of the open MPI collective of t, if any: before the Leave of its call. */
void cv_mpi_coll_close(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns)
{
	if (!t->coll.open)
		return;
	t->coll.open = 0;
	CV_EMIT(cv, mpi_coll_end, l, ns, t->coll.op, t->coll.comm, t->coll.root, t->coll.sent,
		t->coll.received);
}

/* The communicator of `id` (an index into cv->comms), registered on first sight;
 * UINT32_MAX when out of memory. */
static uint32_t comm_of(struct cv *cv, uint64_t id)
{
	if (!cv->comm_map && !(cv->comm_map = calloc(1, sizeof(*cv->comm_map))))
		return UINT32_MAX;
	uint64_t *v = cv_idmap_get(&cv->comm_map->m, id + 1, 1); /* keys are never 0 */
	if (!v)
		return UINT32_MAX;
	if (*v)
		return (uint32_t)(*v - 1);
	if (cv->ncomms == cv->comms_cap) {
		struct cv_comm *a = cv_grow(cv->comms, &cv->comms_cap, sizeof(*a));
		if (!a) {
			cv_idmap_del(&cv->comm_map->m, id + 1);
			return UINT32_MAX;
		}
		cv->comms = a;
	}
	cv->comms[cv->ncomms] =
	    (struct cv_comm){id, id == LT_MPI_COMM_SELF, NULL, cv->ncomm_refs++};
	*v = ++cv->ncomms;
	return cv->ncomms - 1;
}

uint32_t cv_world_rank(const struct cv *cv, uint32_t comm, uint32_t rank, uint32_t self)
{
	if (comm >= cv->ncomms || rank == LT_MPI_NO_RANK)
		return LT_MPI_NO_RANK;
	const struct cv_comm *c = &cv->comms[comm];
	if (c->id == LT_MPI_COMM_WORLD)
		return rank < cv->mpi_world ? rank : LT_MPI_NO_RANK;
	if (c->id == LT_MPI_COMM_SELF)
		return rank == 0 ? self : LT_MPI_NO_RANK;
	return c->ranks && rank < c->size ? c->ranks[rank] : LT_MPI_NO_RANK;
}

/* A communicator's members, recorded by each of them: as many records as it takes. */
static void mpi_comm(struct cv *cv, const struct lt_rec *r, const uint64_t *pl, unsigned np)
{
	uint64_t id = lt_rec_word(r, LT_W_MPI_COMM_ID);
	uint32_t c = np >= 1 ? comm_of(cv, id) : UINT32_MAX;
	if (c == UINT32_MAX || id == LT_MPI_COMM_WORLD || id == LT_MPI_COMM_SELF)
		return;
	struct cv_comm *cm = &cv->comms[c];
	if (!cm->ranks) {
		if (r->arg == 0 || r->arg > (1u << 24) ||
		    !(cm->ranks = malloc(r->arg * sizeof(*cm->ranks)))) {
			cv->stats.anomalies++;
			return;
		}
		for (uint32_t i = 0; i < r->arg; i++)
			cm->ranks[i] = LT_MPI_NO_RANK;
		cm->size = r->arg;
	} else if (cm->size != r->arg) {
		cv->stats.anomalies++; /* one id, two sizes: damage */
		return;
	}
	for (uint32_t i = 0; i < 2 * (np - 1) && r->sub + i < cm->size; i++)
		cm->ranks[r->sub + i] =
		    (uint32_t)(pl[LT_W_MPI_COMM_MEMBERS + i / 2] >> (i & 1 ? 32 : 0));
}

void cv_mpi_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		   const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	switch (r->type) {
	case LT_REC_MPI_ENTER: {
		const char *name = rd_string(ps->p, r->arg);
		if (!name) {
			cv->stats.anomalies++;
			name = "MPI (undefined string)";
		}
		uint32_t reg = cv_mpi_region(cv, name);
		if (cv_push(cv, t, reg, FN_MPI, 0, 0) == 0)
			CV_EMIT(cv, enter, l, ns, reg);
		break;
	}
	case LT_REC_MPI_LEAVE: {
		struct frame *f = cv_pop_match(cv, l, t, ns, FN_MPI, 0);
		if (f) {
			cv_mpi_coll_close(cv, l, t, ns);
			CV_EMIT(cv, leave, l, ns, f->region, 0);
		}
		break;
	}
	case LT_REC_MPI_COMM:
		mpi_comm(cv, r, pl, np);
		break;
	case LT_REC_MPI_P2P: {
		uint32_t c =
		    np > LT_W_MPI_P2P_REQUEST ? comm_of(cv, pl[LT_W_MPI_COMM_ID]) : UINT32_MAX;
		if (c == UINT32_MAX || r->sub > LT_MPI_CANCELLED) {
			cv->stats.anomalies++;
			break;
		}
		CV_EMIT(cv, mpi_p2p, l, ns, r->sub, c, r->arg, (uint32_t)pl[LT_W_MPI_P2P_TAG],
			pl[LT_W_MPI_P2P_BYTES], pl[LT_W_MPI_P2P_REQUEST]);
		break;
	}
	case LT_REC_MPI_COLL: {
		uint32_t c =
		    np > LT_W_MPI_COLL_RECEIVED ? comm_of(cv, pl[LT_W_MPI_COMM_ID]) : UINT32_MAX;
		/* Right after its call's Enter: the call is the innermost open frame. */
		if (c == UINT32_MAX || r->sub > LT_MPI_DESTROY_HANDLE || t->coll.open ||
		    !t->depth || t->stack[t->depth - 1].fn != FN_MPI) {
			cv->stats.anomalies++;
			break;
		}
		t->coll.open = 1;
		t->coll.op = r->sub;
		t->coll.comm = c;
		t->coll.root = r->arg;
		t->coll.sent = pl[LT_W_MPI_COLL_SENT];
		t->coll.received = pl[LT_W_MPI_COLL_RECEIVED];
		CV_EMIT(cv, mpi_coll_begin, l, ns);
		break;
	}
	}
}

/*
 * An MPI rank's clock, put on rank 0's with the offsets measured at MPI_Init and
 * MPI_Finalize (those whose round trip was within 4 times, or 20 us, of the best).  Where the rank
 * shares rank 0's host and every offset is within its measurement's error (half the round trip),
 * the clocks are one (CLOCK_MONOTONIC): the offsets are left out, as they can only add that error.
 */
void cv_mpi_clock(struct cv *cv, struct pstate *ps, const struct rank0 *r0)
{
	const struct rd_process *p = ps->p;
	if (cv->no_clock_align || !r0->found || p->mpi_size <= 0 || p->mpi_rank <= 1 ||
	    !p->nmpi_clock)
		return;
	/* A measurement whose best round trip was much slower than the other's (its rank was
	 * not running when rank 0 answered) is left out. */
	int64_t best = INT64_MAX;
	for (size_t i = 0; i < p->nmpi_clock; i++)
		if (p->mpi_clock[i].rtt_ns < best)
			best = p->mpi_clock[i].rtt_ns;
	size_t n = 0;
	for (size_t i = 0; i < p->nmpi_clock; i++)
		if (p->mpi_clock[i].rtt_ns <= 4 * best || p->mpi_clock[i].rtt_ns <= best + 20000)
			ps->mpi_clock[n++] = p->mpi_clock[i];
	uint32_t host0 = cv_host_index(cv, r0->host);
	int within = host0 == cv->procs[ps->pidx].host;
	for (size_t i = 0; i < n && within; i++) {
		int64_t o = ps->mpi_clock[i].offset_ns;
		within = (o < 0 ? -o : o) <= ps->mpi_clock[i].rtt_ns / 2;
	}
	if (within)
		return;
	ps->nmpi_clock = n;
	ps->offset_ns = cv_host_offset(cv, host0, r0->real_minus_mono);
	cv->mpi_aligned++;
}
