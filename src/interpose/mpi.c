// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi.c - what the MPI companion libraries (src/mpi, libtrace-mpi-<abi>.so) call to record,
 * module "mpi".  libtrace.so itself knows no MPI: the companion, built against one MPI's
 * headers, interposes MPI_* through PMPI and hands plain numbers here (include/libtrace/
 * mpi_abi.h).  The guard stays taken from ltr_mpi_enter to ltr_mpi_leave, across the PMPI
 * call: what the MPI library does inside (its own locks and threads' calls on this
 * thread) is not the program's, nor are the threads it starts meanwhile (pthread.c).  No
 * allocation, no lock.
 */
#include <stdint.h>
#include <string.h>

#include "libtrace/mpi_abi.h"
#include <stdlib.h>

#include "../core/module.h"
#include "../common/modules.h"

extern const struct lt_module lt_module_mpi;

LT_EXPORT void *ltr_mpi_enter(const char *name, const void *caller)
{
	struct lt_thread *t = lt_begin(LT_MOD_MPI);
	if (!t)
		return NULL;
	lt_in_runtime = 1;
	uint32_t name_id = lt_string_id(t, name);
	if (lt_str_skip(name_id)) {
		/* Filtered out: the call keeps its guard, and writes nothing but communicator
		 * definitions, which later calls need. */
		t->dropped[LT_DROP_FILTER]++;
		lt_local(t, &lt_module_mpi)->n = 1;
		return t;
	}
	t->cs_ra = (uint64_t)(uintptr_t)caller;
	t->cs_fp = 0; /* frame 1 only: the companion's frame is not the program's */
	uint64_t *at = t->pos;
	uint64_t ts = lt_now();
	uint64_t ra = lt_callsite(t, ts);
	unsigned w = 2 + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, LT_REC_MPI_ENTER | (ra ? LT_REC_F_CALLSITE : 0), w, 0, name_id);
	if (ra)
		p[2] = ra;
	lt_commit(t);
	lt_short_open(t, at);
	return t;
}

LT_EXPORT void ltr_mpi_leave(void *token, int rc)
{
	struct lt_thread *t = token;
	if (!t)
		return;
	if (lt_local(t, &lt_module_mpi)->n)
		lt_local(t, &lt_module_mpi)->n = 0; /* filtered out */
	else if (!lt_short_close(t))
		lt_emit0(t, LT_REC_MPI_LEAVE, 0, (uint32_t)rc);
	lt_in_runtime = 0;
	lt_finish(t);
}

LT_EXPORT void ltr_mpi_p2p(void *token, unsigned kind, uint32_t peer, uint64_t comm, int64_t tag,
			   uint64_t bytes, uint64_t request)
{
	struct lt_thread *t = token;
	if (!t || lt_local(t, &lt_module_mpi)->n)
		return;
	uint64_t *p = lt_reserve(t, 6);
	lt_rec_put(p, lt_now(), LT_REC_MPI_P2P, 6, kind, peer);
	p[2] = comm;
	p[3] = (uint64_t)tag;
	p[4] = bytes;
	p[5] = request;
	lt_commit(t);
}

LT_EXPORT void ltr_mpi_coll(void *token, unsigned op, uint32_t root, uint64_t comm, uint64_t sent,
			    uint64_t received)
{
	struct lt_thread *t = token;
	if (!t || lt_local(t, &lt_module_mpi)->n)
		return;
	uint64_t *p = lt_reserve(t, 5);
	lt_rec_put(p, lt_now(), LT_REC_MPI_COLL, 5, op, root);
	p[2] = comm;
	p[3] = sent;
	p[4] = received;
	lt_commit(t);
}

LT_EXPORT void ltr_mpi_comm(void *token, uint64_t id, uint32_t size, const uint32_t *world_ranks)
{
	struct lt_thread *t = token;
	if (!t)
		return;
	/* As many records as it takes, LT_REC_WORDS_MAX words each. */
	const uint32_t per = 2 * (LT_REC_WORDS_MAX - 3);
	uint32_t first = 0;
	do {
		uint32_t n = size - first < per ? size - first : per;
		unsigned w = 3 + (n + 1) / 2;
		uint64_t *p = lt_reserve(t, w);
		lt_rec_put(p, lt_now(), LT_REC_MPI_COMM, w, first > 0xffff ? 0xffff : first, size);
		p[2] = id;
		for (uint32_t i = 0; i < n; i += 2)
			p[3 + i / 2] = world_ranks[first + i] |
				       (i + 1 < n ? (uint64_t)world_ranks[first + i + 1] << 32 : 0);
		lt_commit(t);
		first += n;
	} while (first < size && first <= 0xffff);
}

LT_EXPORT void ltr_mpi_world(int rank, int size, const char *library)
{
	lt_meta_line(LT_META_MPI_RANK " %d", rank);
	lt_meta_line(LT_META_MPI_SIZE " %d", size);
	lt_meta_escaped(LT_META_MPI_LIBRARY, library);
}

LT_EXPORT int64_t ltr_mpi_now(void)
{
	return (int64_t)lt_clock_mono_ns();
}

LT_EXPORT void ltr_mpi_clock(int64_t local_ns, int64_t offset_ns, int64_t rtt_ns)
{
	lt_meta_line(LT_META_MPI_CLOCK " %lld %lld %lld", (long long)local_ns, (long long)offset_ns,
		     (long long)rtt_ns);
}

/* The rank as the launcher tells it, before MPI_Init (meta header). */
static void mpi_meta(void)
{
	static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
						"SLURM_PROCID"};
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *r = lt_foreign_env(rank_vars[i]);
		if (r && *r >= '0' && *r <= '9') {
			lt_meta_line(LT_META_MPI_RANK " %d", atoi(r));
			break;
		}
	}
}

LT_MODULE(mpi) = {.name = "mpi", .bit = LT_MOD_MPI, .order = 50, .meta = mpi_meta};
