/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fortran.h - the Fortran wrappers of the Open MPI companion (fortran.c, and the ones
 * gen_wrappers.py --fortran writes from mpi.spec).
 *
 * Open MPI's Fortran bindings (libmpi_mpifh: mpif.h and `use mpi`) call PMPI_* straight
 * away, so the C wrappers never see a Fortran call: mpi_send_ and its other spellings
 * (mpi_send, mpi_send__, MPI_SEND) are interposed here.  Each wrapper converts the handles
 * it records (MPI_Comm_f2c...) and calls Open MPI's own profiling entry point (pmpi_send_),
 * looked up at its first call: Open MPI keeps handling every Fortran sentinel
 * (MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE...), and the companion has no link
 * dependency on libmpi_mpifh or libgfortran (a C program never calls these).
 * MPICH's Fortran bindings call the C MPI_* functions, which its companion wraps: it has
 * no Fortran wrappers (they would record each call twice).
 */
#ifndef LIBTRACE_LTM_FORTRAN_H
#define LIBTRACE_LTM_FORTRAN_H

#include "ltm.h"

/* A Fortran INTEGER is an MPI_Fint; Open MPI's Fortran status is the C status's words
 * (MPI_STATUS_SIZE: 6 in Open MPI 4.1), which MPI_Status_f2c converts. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint is not a C int");
#define LTMF_STATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))

/* The real Fortran entry point `name` (pmpi_send_...), stored in *cache at the first call.
 * Never NULL: when it cannot be found (no Fortran library loaded, yet a Fortran entry
 * point called) the process is aborted with a message, as the loader would have. */
void *ltmf_resolve(void **cache, const char *name);

/* real_<sym>, declared with the entry point's type, called through this. */
#define LTMF_REAL(sym) ((__typeof__(real_##sym))ltmf_resolve((void **)&real_##sym, #sym))

/* Another spelling of the Fortran entry point `target` (mpi_send, mpi_send__, MPI_SEND). */
#define LTMF_ALIAS(target, name) extern __typeof__(target) name __attribute__((alias(#target)))

/* The C status of Fortran status f (into *c), or NULL when it cannot be converted. */
static inline const MPI_Status *ltmf_status(const MPI_Fint *f, MPI_Status *c)
{
	return PMPI_Status_f2c(f, c) == MPI_SUCCESS ? c : NULL;
}

/* The key under which the C wrappers track the request with Fortran handle f. */
static inline uint64_t ltmf_req_key(MPI_Fint f)
{
	return ltm_req_key(PMPI_Request_f2c(f));
}

#endif /* LIBTRACE_LTM_FORTRAN_H */
