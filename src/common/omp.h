/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * omp.h - the OpenMP record helpers shared by the two OpenMP sources (the libgomp wrappers
 * and the OMPT tool): region records carry the counters' readings of module omp.  A shared
 * helper, not a module: it holds no state.
 */
#ifndef LIBTRACE_SHARED_OMP_H
#define LIBTRACE_SHARED_OMP_H

#include "../core/module.h"
#include "modules.h"

/* OpenMP records that open or close a region on the thread (they carry counter readings). */
static inline int lt_omp_is_region(unsigned type)
{
	return type == LT_REC_OMP_ENTER || type == LT_REC_OMP_LEAVE ||
	       type == LT_REC_OMP_TEAM_BEGIN || type == LT_REC_OMP_TEAM_END ||
	       type == LT_REC_OMP_TASK_BEGIN || type == LT_REC_OMP_TASK_END;
}

/* lt_emit_cs, with the reading of a region record first. */
static inline void lt_omp_emit_cs(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
				  unsigned n, uint64_t p0, uint64_t p1)
{
	if (lt_omp_is_region(type))
		lt_counters(t, LT_MOD_OMP);
	lt_emit_cs(t, type, sub, arg, n, p0, p1);
}

/* lt_emit, with the reading of a region record first. */
static inline void lt_omp_emit(struct lt_thread *t, unsigned type, unsigned sub, uint32_t arg,
			       unsigned n, uint64_t p0, uint64_t p1)
{
	if (lt_omp_is_region(type))
		lt_counters(t, LT_MOD_OMP);
	lt_emit(t, type, sub, arg, n, p0, p1);
}

#endif /* LIBTRACE_SHARED_OMP_H */
