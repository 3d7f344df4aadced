/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ltm.h - the MPI companion library's helpers (core.c), used by the wrappers that
 * gen_wrappers.py generates from mpi.spec.  Built once per MPI ABI (LTM_LIBRARY names it).
 */
#ifndef LIBTRACE_LTM_H
#define LIBTRACE_LTM_H

#include <mpi.h>
#include <stdint.h>

#include "../format/format.h"

/* A traced call: the token of libtrace.so (NULL: pass through). */
struct ltm_call {
	void *t;
};

int ltm_enter(struct ltm_call *c, const char *name, const void *caller);
void ltm_leave(struct ltm_call *c, int rc);

uint64_t ltm_comm_id(MPI_Comm comm);
int ltm_comm_size(MPI_Comm comm);
int ltm_comm_rank(MPI_Comm comm);
uint64_t ltm_bytes(int count, MPI_Datatype type);
uint64_t ltm_sum_bytes(const int *counts, MPI_Datatype type, MPI_Comm comm);
uint32_t ltm_rank_arg(int rank); /* MPI_PROC_NULL, MPI_ANY_SOURCE: LT_MPI_NO_RANK */

/* Point to point. */
void ltm_send(struct ltm_call *c, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type);
void ltm_recv(struct ltm_call *c, MPI_Comm comm, const MPI_Status *st);
void ltm_isend(struct ltm_call *c, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
	       MPI_Request req);
void ltm_irecv(struct ltm_call *c, MPI_Comm comm, int source, int tag, MPI_Request req);
/* The request whose handle was `key` completed with status st (a receive's). */
void ltm_done(struct ltm_call *c, uint64_t key, const MPI_Status *st);
uint64_t ltm_req_key(MPI_Request req);
void ltm_cancel(struct ltm_call *c, MPI_Request req);

/* Collectives. */
void ltm_coll(struct ltm_call *c, unsigned op, MPI_Comm comm, int root, uint64_t sent,
	      uint64_t received);
/* A new communicator (after its creation call; MPI_COMM_NULL is ignored). */
void ltm_comm_new(struct ltm_call *c, MPI_Comm comm);
void ltm_comm_free(uint64_t key);
uint64_t ltm_comm_key(MPI_Comm comm);

/* Init and finalize, for every binding (C and Fortran): after a successful PMPI_Init or
 * PMPI_Init_thread (rank, size, clock offsets), and before PMPI_Finalize (clock offsets).
 * Every rank calls them alike, traced or not: they communicate. */
void ltm_init_done(void);
void ltm_finalizing(void);

#endif /* LIBTRACE_LTM_H */
