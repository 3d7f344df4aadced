/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * parallel.h - the converter's ranks (convert.h, struct cv_par): under an MPI launcher, from
 * the MPI module of the launcher's MPI (libtrace-convert-mpi-openmpi.so or -mpich.so), which
 * trace2otf2 loads only when a launcher started it with more than one process, so that the
 * converter itself never depends on an MPI library; with -j N, processes of one machine
 * (local_par.c).
 */
#ifndef LIBTRACE_PARALLEL_H
#define LIBTRACE_PARALLEL_H

#include <stddef.h>

#include "convert.h"

struct conv_mpi {
	struct cv_par par;
	void (*finalize)(struct conv_mpi *m);
	void (*abort)(struct conv_mpi *m, int status); /* ends every rank: a rank failed alone */
};

/* The module's entry point: MPI_Init, then checks that MPI sees `expected` processes (the
 * launcher's count: another MPI's launcher makes it a singleton).  0 and *out, or -1 with
 * err set. */
typedef int (*conv_mpi_init_fn)(int *argc, char ***argv, int expected, struct conv_mpi **out,
				char *err, size_t errlen);
#define CONV_MPI_INIT "ltr_convert_mpi_init"

/* The MPI whose launcher started this process. */
enum conv_mpi_abi { CONV_MPI_NONE, CONV_MPI_OPENMPI, CONV_MPI_PMI };

/*
 * The number of processes an MPI launcher started (Open MPI's mpirun, MPICH's mpiexec,
 * Slurm's srun), 0 when none did, and whose it is (*abi): when the launcher (or its daemon)
 * is not this process's parent, it did not start this process, whatever the environment
 * says.
 */
int conv_launcher_size(enum conv_mpi_abi *abi);
/* Loads the launcher's MPI module (beside the executable, or in LIBDIR/libtrace: Open MPI's
 * for Open MPI, else MPICH's, then Open MPI's) and starts it: 0 and *out, or -1 with err
 * set. */
int conv_mpi_start(int *argc, char ***argv, int size, enum conv_mpi_abi abi, struct conv_mpi **out,
		   char *err, size_t errlen);
/* trace2otf2 -j N: forks ranks 1..N-1 of this process (which is rank 0); each returns with
 * its *out.  0, or -1 with err set. */
int conv_local_start(int n, struct conv_mpi **out, char *err, size_t errlen);

#endif /* LIBTRACE_PARALLEL_H */
