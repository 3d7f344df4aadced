/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private.h - what the files of module gomp share: gomp.c (the runtime's functions, parallel
 * regions, worksharing), lock.c (mutual exclusion, the lock API), task.c (tasks).  No other
 * file includes it.
 */
#ifndef LIBTRACE_INTERPOSE_GOMP_PRIVATE_H
#define LIBTRACE_INTERPOSE_GOMP_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../core/module.h"
#include "../../common/omp.h"

/* The runtime's function `name` (gomp.c says where it is looked for). */
LT_HIDDEN void *lt_gomp_sym(const char *name);

/* Whether the GOMP_* and omp_* functions behind ours are libgomp's (1), or another
 * runtime's compatibility layer (0: LLVM libomp, which reports through OMPT, even for the
 * constructs before it started our tool).  -1 before the first call. */
extern LT_HIDDEN int lt_gomp_native;
/* Finds out which (for lt_gomp_native). */
LT_HIDDEN int lt_gomp_detect(void);

/* OMP_ENTER with the call site: only in an exported function that the program calls. */
#define OMP_ENTER_CS(t, ...) (LT_NOTE_CALLER(t), lt_omp_emit_cs(t, LT_REC_OMP_ENTER, __VA_ARGS__))

/* The thread's state when OpenMP constructs are recorded here, else NULL. */
static inline struct lt_thread *omp_begin(void)
{
	if (unlikely(lt_gomp_native < 0))
		lt_gomp_native = lt_gomp_detect();
	if (!lt_gomp_native || lt_claimed(LT_MOD_OMP))
		return NULL;
	return lt_begin(LT_MOD_OMP);
}

#endif /* LIBTRACE_INTERPOSE_GOMP_PRIVATE_H */
