/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * modules.h - the LIBTRACE_MODULES bits, shared by the modules (the core knows none of them:
 * it tests the bit a wrapper passes to lt_begin).  Bit i is the option table's module name
 * i (lt_module_names in config.c); a new bit is a new name there.
 */
#ifndef LIBTRACE_SHARED_MODULES_H
#define LIBTRACE_SHARED_MODULES_H

enum lt_module_bit {
	LT_MOD_PTHREAD = 1u << 0, /* pthread synchronisation and thread lifetime */
	LT_MOD_PROC = 1u << 1,	  /* fork, exec, posix_spawn, dlopen */
	LT_MOD_USER = 1u << 2,	  /* the annotation API (ltr_*) */
	LT_MOD_OMP = 1u << 3,	  /* OpenMP: libgomp's GOMP_* entry points, OMPT runtimes */
	LT_MOD_KOKKOS = 1u << 4,  /* the Kokkos profiling interface (kokkosp_*) */
	LT_MOD_MPI = 1u << 5,	  /* MPI, through the companion library libtrace-mpi-<abi>.so */
	LT_MOD_CUDA = 1u << 6,	  /* CUDA: CUPTI, else the shared CUDA runtime's entry points */
	LT_MOD_HIP = 1u << 7,	  /* HIP: the HIP runtime's entry points (libamdhip64) */
};
#define LT_MOD_ALL                                                                              \
	(LT_MOD_PTHREAD | LT_MOD_PROC | LT_MOD_USER | LT_MOD_OMP | LT_MOD_KOKKOS | LT_MOD_MPI | \
	 LT_MOD_CUDA | LT_MOD_HIP)

#endif /* LIBTRACE_SHARED_MODULES_H */
