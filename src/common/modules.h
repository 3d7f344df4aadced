/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * modules.h - the LIBTRACE_MODULES bits, shared by the modules (the core knows none of them:
 * it tests the bit a wrapper passes to lt_begin).  The option table (config.c) takes its
 * module names from the same list: a new module word is one line of LT_MODULE_WORDS.
 */
#ifndef LIBTRACE_COMMON_MODULES_H
#define LIBTRACE_COMMON_MODULES_H

/* The modules' words, in bit order: the option table's names come from this list too. */
#define LT_MODULE_WORDS(X)                                                                   \
	X(PTHREAD, "pthread") /* pthread synchronisation and thread lifetime */              \
	X(PROC, "proc")	      /* fork, exec, posix_spawn, dlopen */                          \
	X(USER, "user")	      /* the annotation API (ltr_*) */                               \
	X(OMP, "omp")	      /* OpenMP: libgomp's GOMP_* entry points, OMPT runtimes */     \
	X(KOKKOS, "kokkos")   /* the Kokkos profiling interface (kokkosp_*) */               \
	X(MPI, "mpi")	      /* MPI, through the companion library libtrace-mpi-<abi>.so */ \
	X(CUDA, "cuda")	      /* CUDA: CUPTI, else the shared CUDA runtime's entry points */ \
	X(HIP, "hip")	      /* HIP: the HIP runtime's entry points (libamdhip64) */

#define LT_MODULE_INDEX_(id, word) LT_MOD_INDEX_##id,
enum { LT_MODULE_WORDS(LT_MODULE_INDEX_) LT_MOD_COUNT };
#undef LT_MODULE_INDEX_

#define LT_MODULE_BIT_(id, word) LT_MOD_##id = 1u << LT_MOD_INDEX_##id,
enum lt_module_bit { LT_MODULE_WORDS(LT_MODULE_BIT_) };
#undef LT_MODULE_BIT_
#define LT_MOD_ALL ((1u << LT_MOD_COUNT) - 1)

#endif /* LIBTRACE_COMMON_MODULES_H */
