/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gpu.h - what the CUDA and HIP layers share (modules "cuda" and "hip"): the encoders of
 * the GPU_ENTER and GPU_LEAVE records (format.h) and the table of kernel names.
 *
 * Three layers record GPU API calls: the wrappers of the shared CUDA runtime (cuda.c), the
 * wrappers of the HIP runtime (hip.c) and CUPTI's callbacks (cupti/api.c).  When CUPTI is
 * active it sees every CUDA runtime call, the wrappers' included: the cudart wrappers then
 * pass calls through without a record (the cuda claim, lt_claimed), so nothing is recorded twice.
 */
#ifndef LIBTRACE_GPU_H
#define LIBTRACE_GPU_H

#include <stdint.h>

#include "../core/module.h"
#include "modules.h"

/* Payload words of a GPU_ENTER after the correlation id (format.h: LAUNCH has 6). */
#define LT_GPU_ARGS_MAX 6

/*
 * LIBTRACE_MIN_DURATION applies to the calls that give the device no work of their own
 * (queries, stream and event management, synchronisations): a shorter one leaves no
 * records.  Launches, copies, sets, allocations and frees always stay: their device records
 * and the leak report are joined to them.
 */
static inline int lt_gpu_shortable(unsigned op)
{
	return op == LT_GPU_OP_CALL || op == LT_GPU_OP_SYNC;
}

/*
 * Writes the GPU_ENTER of a call: `args` are the op's words p[1..n] (n <= 6), trailing
 * zeros may be left out.  The call site noted in t (LT_NOTE_CALLER) goes last when
 * `callsite` is set.
 */
static inline void lt_gpu_enter(struct lt_thread *t, unsigned api, unsigned op, uint32_t name,
				uint64_t corr, const uint64_t *args, unsigned n, int callsite)
{
	uint64_t *at = t->pos;
	uint64_t ts = lt_now();
	uint64_t ra = callsite ? lt_callsite(t, ts) : 0;
	unsigned w = 3 + n + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, LT_REC_GPU_ENTER | (ra ? LT_REC_F_CALLSITE : 0), w, api | op << 4, name);
	p[2] = corr;
	for (unsigned i = 0; i < n; i++)
		p[3 + i] = args[i];
	if (ra)
		p[3 + n] = ra;
	lt_commit(t);
	if (lt_gpu_shortable(op))
		lt_short_open(t, at);
}

/*
 * The name filters (LIBTRACE_EXCLUDE, LIBTRACE_INCLUDE, filter.c): a call goes by its
 * function's name (`name`), a launch by its kernel's when that is known (`kernel`, 0:
 * unknown), so that a filter over kernel names keeps or drops their launches whatever
 * the call.  True when the call is not to be recorded: it is counted in the thread's
 * dropped calls and writes nothing; its caller keeps the guard across the real call.
 */
static inline int lt_gpu_filtered(struct lt_thread *t, uint32_t name, uint64_t kernel)
{
	if (!lt_str_skip(kernel ? (uint32_t)kernel : name))
		return 0;
	t->dropped[LT_DROP_FILTER]++;
	return 1;
}

/*
 * The program's call site of a CUDA runtime call while CUPTI records: CUPTI's callback runs
 * deep inside the runtime, where the caller is out of reach, so the wrapper of the shared
 * libcudart notes it here before it passes the call through, and clears it after; the
 * callback of the outermost runtime call takes it (gpu.c).  A static cudart has no wrapper:
 * its calls have no call site.
 */
extern LT_HIDDEN __thread struct lt_caller lt_gpu_caller LT_TLS;

/* The GPU_LEAVE of a call; `made` (the allocated address, the created stream or event)
 * is written when not 0. */
static inline void lt_gpu_leave(struct lt_thread *t, unsigned api, unsigned op, int rc,
				uint64_t made)
{
	if (lt_gpu_shortable(op) && lt_short_close(t))
		return; /* shorter than LIBTRACE_MIN_DURATION: the enter is taken back */
	if (made)
		lt_emit1(t, LT_REC_GPU_LEAVE, api | op << 4, (uint32_t)rc, made);
	else
		lt_emit0(t, LT_REC_GPU_LEAVE, api | op << 4, (uint32_t)rc);
}

/* dim3 as the SysV ABI passes it (two INTEGER eightbytes), in CUDA and HIP alike. */
struct lt_dim3 {
	unsigned x, y, z;
};

/* LAUNCH's p[1..3]: grid x | y << 32, grid z | block x << 32, block y | z << 32. */
static inline void lt_gpu_dims(uint64_t *w, struct lt_dim3 grid, struct lt_dim3 block)
{
	w[0] = grid.x | (uint64_t)grid.y << 32;
	w[1] = grid.z | (uint64_t)block.x << 32;
	w[2] = block.y | (uint64_t)block.z << 32;
}

/*
 * Kernel names (gpu.c).  The runtimes' registration calls (__cudaRegisterFunction,
 * __hipRegisterFunction) tell the mangled name of each kernel's host stub; CUDA 13's
 * __cudaGetKernel gives launches a handle for a stub, hipModuleGetFunction a handle for a
 * name.  Insertions lock; lookups do not.  NULL: unknown.
 */
LT_HIDDEN void lt_gpu_kernel_name_set(const void *key, const char *name);
LT_HIDDEN void lt_gpu_kernel_alias(const void *key, const void *known);
LT_HIDDEN const char *lt_gpu_kernel_name(const void *key);

/* The string id of a kernel's name for LAUNCH's p[6] (0: unknown). */
static inline uint64_t lt_gpu_kernel_id(struct lt_thread *t, const void *key)
{
	const char *name = lt_gpu_kernel_name(key);
	return name ? lt_string_id(t, name) : 0;
}

#endif /* LIBTRACE_GPU_H */
