/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtrace/mpi_abi.h - the entry points of libtrace.so that the MPI companion libraries
 * (libtrace-mpi-openmpi.so, libtrace-mpi-mpich.so) call; found with dlsym at their first
 * use, so that a companion preloaded without libtrace.so passes every call through.  Not
 * for programs: they use libtrace/annotate.h.  Record layouts: src/format/format.h (1.4).
 */
#ifndef LIBTRACE_MPI_ABI_H
#define LIBTRACE_MPI_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opens the region of MPI function `name` called from `caller`: a token for the calls
 * below, or NULL when this call is not traced (pass through). */
void *ltr_mpi_enter(const char *name, const void *caller);
/* Closes it with the function's return code; the token is spent. */
void ltr_mpi_leave(void *token, int rc);
/* A point-to-point event (kind: enum lt_mpi_p2p; peer: rank in comm). */
void ltr_mpi_p2p(void *token, unsigned kind, uint32_t peer, uint64_t comm, int64_t tag,
		 uint64_t bytes, uint64_t request);
/* A collective (op: enum lt_mpi_coll), right after its ltr_mpi_enter. */
void ltr_mpi_coll(void *token, unsigned op, uint32_t root, uint64_t comm, uint64_t sent,
		  uint64_t received);
/* A communicator this rank belongs to: its members' ranks in COMM_WORLD, in its order. */
void ltr_mpi_comm(void *token, uint64_t id, uint32_t size, const uint32_t *world_ranks);
/* This process's rank and COMM_WORLD's size, at MPI_Init; `library`: openmpi or mpich. */
void ltr_mpi_world(int rank, int size, const char *library);
/* Now, on the timeline the trace's records map to (ns). */
int64_t ltr_mpi_now(void);
/* A clock offset to rank 0 measured at local time local_ns (ltr_mpi_now's): rank 0's
 * clock read offset_ns more, within rtt_ns (the best round trip) / 2. */
void ltr_mpi_clock(int64_t local_ns, int64_t offset_ns, int64_t rtt_ns);

#ifdef __cplusplus
}
#endif

#endif /* LIBTRACE_MPI_ABI_H */
