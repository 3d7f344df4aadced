// SPDX-License-Identifier: BSD-3-Clause
/*
 * cuda.c - module "cuda", its fallback layer: the entry points of the shared CUDA runtime
 * (libcudart.so, programs built with `nvcc -cudart shared`).
 *
 * CUPTI (cupti/) is the primary mechanism: it sees every runtime and driver call, in a
 * static cudart (nvcc's default) and in NVIDIA's libraries too, and the device's work.
 * These wrappers see only calls that go through the dynamic symbol table to a shared
 * libcudart, measure host time only, and need no driver: without a GPU every call returns
 * cudaErrorInsufficientDriver (35) and is still recorded with its arguments and error.
 * While CUPTI records (it claims module cuda: lt_claimed) they pass calls through, so that
 * no call is recorded twice, and only note where the program called from (lt_gpu_caller):
 * CUPTI's record of the call carries that call site.
 *
 * The guard stays taken across the real call: what cudart does inside (its own locks, the
 * threads it starts) is not the program's.  No CUDA header is needed: the prototypes below
 * are the ABI of cuda_runtime_api.h (cudaError_t and enums are int, handles pointers, dim3
 * three unsigned passed by value).  Nothing here is a link-time dependency: each real
 * function comes from dlsym(RTLD_NEXT) at its first call.
 *
 * Kernel names: nvcc's registration code hands each kernel's host stub and mangled name to
 * __cudaRegisterFunction; CUDA 13's launch stubs turn the stub into a handle once
 * (__cudaGetKernel) and launch through __cudaLaunchKernel(_ptsz); explicit
 * cudaLaunchKernel calls pass the stub.  `<<<>>>` first calls __cudaPushCallConfiguration,
 * which only stores the configuration (it returns 0 even without a driver): not recorded,
 * the launch is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/gpu.h"

typedef int cuda_err;
typedef void *cuda_stream;
typedef void *cuda_event;

#define CUDA_ERR_UNKNOWN 999 /* cudaErrorUnknown: the real function could not be found */

/* cudaLaunchConfig_t, as far as we read it. */
struct cuda_launch_config {
	struct lt_dim3 grid, block;
	size_t shared;
	cuda_stream stream;
};

/* The real function, looked up once (in a libcudart loaded with RTLD_LOCAL too); NULL
 * only when no libcudart is loaded (a program that found our symbol with dlsym): the
 * wrapper then fails the call like cudart would. */
static __attribute__((noinline)) void *cuda_sym(const char *name)
{
	static const char *const runtimes[] = {"libcudart.so.13", "libcudart.so.12",
					       "libcudart.so.11.0", "libcudart.so", NULL};
	return lt_dlsym_runtime(name, runtimes);
}

#define REAL(name, params)                                              \
	static cuda_err(*real_##name) params;                           \
	if (unlikely(!real_##name) && !(real_##name = cuda_sym(#name))) \
	return CUDA_ERR_UNKNOWN

extern const struct lt_module lt_module_cuda;

/* Records the call's GPU_ENTER; NULL when not recording (module off, CUPTI records).  A
 * launch passes the key of its kernel's name (`kernel`), which goes into w[5].  A call the
 * name filters leave out keeps its thread (the guard) and notes in the module's word that
 * it writes nothing. */
static struct lt_thread *call_begin(const char *name, unsigned op, uint64_t *w, unsigned n,
				    const void *kernel, struct lt_caller c)
{
	if (lt_claimed(LT_MOD_CUDA)) {
		lt_gpu_caller = c; /* for CUPTI's record of this call */
		return NULL;
	}
	struct lt_thread *t = lt_begin(LT_MOD_CUDA);
	if (!t)
		return NULL;
	int e = errno; /* the program's, for the runtime to see */
	uint32_t name_id = lt_string_id(t, name);
	if (kernel)
		w[5] = lt_gpu_kernel_id(t, kernel);
	int out = lt_gpu_filtered(t, name_id, kernel ? w[5] : 0);
	lt_local(t, &lt_module_cuda)->n = (uint64_t)out;
	if (!out) {
		lt_note_caller(t, c);
		lt_gpu_enter(t, LT_GPU_CUDART, op, name_id, 0, w, n, 1);
	}
	lt_in_runtime = 1;
	errno = e;
	return t;
}

static cuda_err call_end(struct lt_thread *t, unsigned op, cuda_err rc, uint64_t made)
{
	if (t) {
		int e = errno; /* the runtime's, for the program to see */
		if (!lt_local(t, &lt_module_cuda)->n)
			lt_gpu_leave(t, LT_GPU_CUDART, op, rc, rc ? 0 : made);
		lt_in_runtime = 0;
		lt_finish(t);
		errno = e;
	} else {
		lt_gpu_caller.ra = 0;
	}
	return rc;
}

/* A wrapper: `params` and `args` of the function, `op`, what it made on success (`made`,
 * evaluated after the call) and the op's payload words (format.h, GPU_ENTER). */
#define WRAP(name, params, args, op, made, ...)                                            \
	LT_EXPORT cuda_err name params                                                     \
	{                                                                                  \
		REAL(name, params);                                                        \
		uint64_t w_[] = {0, __VA_ARGS__};                                          \
		struct lt_thread *t = call_begin(                                          \
		    #name, op, w_ + 1, sizeof(w_) / sizeof(w_[0]) - 1, NULL, LT_CALLER()); \
		cuda_err rc = real_##name args;                                            \
		return call_end(t, op, rc, (made));                                        \
	}

#define U(x)	       ((uint64_t)(uintptr_t)(x))
#define MADE(ptr)      ((ptr) ? U(*(ptr)) : 0)
#define DEFAULT_STREAM 0

/* Memory. */
WRAP(cudaMalloc, (void **p, size_t n), (p, n), LT_GPU_OP_ALLOC, MADE(p), n, LT_GPU_MEM_DEVICE)
WRAP(cudaMallocHost, (void **p, size_t n), (p, n), LT_GPU_OP_ALLOC, MADE(p), n, LT_GPU_MEM_HOST)
WRAP(cudaHostAlloc, (void **p, size_t n, unsigned f), (p, n, f), LT_GPU_OP_ALLOC, MADE(p), n,
     LT_GPU_MEM_HOST)
WRAP(cudaMallocManaged, (void **p, size_t n, unsigned f), (p, n, f), LT_GPU_OP_ALLOC, MADE(p), n,
     LT_GPU_MEM_MANAGED)
WRAP(cudaMallocAsync, (void **p, size_t n, cuda_stream s), (p, n, s), LT_GPU_OP_ALLOC, MADE(p), n,
     LT_GPU_MEM_ASYNC)
WRAP(cudaMallocAsync_ptsz, (void **p, size_t n, cuda_stream s), (p, n, s), LT_GPU_OP_ALLOC, MADE(p),
     n, LT_GPU_MEM_ASYNC)
WRAP(cudaFree, (void *p), (p), LT_GPU_OP_FREE, 0, U(p), LT_GPU_MEM_DEVICE)
WRAP(cudaFreeHost, (void *p), (p), LT_GPU_OP_FREE, 0, U(p), LT_GPU_MEM_HOST)
WRAP(cudaFreeAsync, (void *p, cuda_stream s), (p, s), LT_GPU_OP_FREE, 0, U(p), LT_GPU_MEM_ASYNC)
WRAP(cudaFreeAsync_ptsz, (void *p, cuda_stream s), (p, s), LT_GPU_OP_FREE, 0, U(p),
     LT_GPU_MEM_ASYNC)

/* Copies and sets.  The kind is cudaMemcpyKind, whose values are enum lt_gpu_copy's. */
#define COPY_PARAMS (void *d, const void *s, size_t n, int k)
#define COPY_ARGS   (d, s, n, k)
WRAP(cudaMemcpy, COPY_PARAMS, COPY_ARGS, LT_GPU_OP_COPY, 0, n, U(d), U(s), (unsigned)k,
     DEFAULT_STREAM)
WRAP(cudaMemcpy_ptds, COPY_PARAMS, COPY_ARGS, LT_GPU_OP_COPY, 0, n, U(d), U(s), (unsigned)k,
     DEFAULT_STREAM)
#define COPY_ASYNC_PARAMS (void *d, const void *s, size_t n, int k, cuda_stream st)
#define COPY_ASYNC_ARGS	  (d, s, n, k, st)
WRAP(cudaMemcpyAsync, COPY_ASYNC_PARAMS, COPY_ASYNC_ARGS, LT_GPU_OP_COPY, 0, n, U(d), U(s),
     (unsigned)k, U(st))
WRAP(cudaMemcpyAsync_ptsz, COPY_ASYNC_PARAMS, COPY_ASYNC_ARGS, LT_GPU_OP_COPY, 0, n, U(d), U(s),
     (unsigned)k, U(st))
#define COPY2D_PARAMS (void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, int k)
#define COPY2D_ARGS   (d, dp, s, sp, w, h, k)
WRAP(cudaMemcpy2D, COPY2D_PARAMS, COPY2D_ARGS, LT_GPU_OP_COPY, 0, (uint64_t)w *h, U(d), U(s),
     (unsigned)k, DEFAULT_STREAM)
WRAP(cudaMemcpy2D_ptds, COPY2D_PARAMS, COPY2D_ARGS, LT_GPU_OP_COPY, 0, (uint64_t)w *h, U(d), U(s),
     (unsigned)k, DEFAULT_STREAM)
WRAP(cudaMemcpyPeer, (void *d, int dd, const void *s, int sd, size_t n), (d, dd, s, sd, n),
     LT_GPU_OP_COPY, 0, n, U(d), U(s), LT_GPU_COPY_PEER, DEFAULT_STREAM)
WRAP(cudaMemset, (void *d, int v, size_t n), (d, v, n), LT_GPU_OP_SET, 0, n, U(d), (unsigned)v,
     DEFAULT_STREAM)
WRAP(cudaMemset_ptds, (void *d, int v, size_t n), (d, v, n), LT_GPU_OP_SET, 0, n, U(d), (unsigned)v,
     DEFAULT_STREAM)
WRAP(cudaMemsetAsync, (void *d, int v, size_t n, cuda_stream s), (d, v, n, s), LT_GPU_OP_SET, 0, n,
     U(d), (unsigned)v, U(s))
WRAP(cudaMemsetAsync_ptsz, (void *d, int v, size_t n, cuda_stream s), (d, v, n, s), LT_GPU_OP_SET,
     0, n, U(d), (unsigned)v, U(s))

/* Synchronisation. */
WRAP(cudaDeviceSynchronize, (void), (), LT_GPU_OP_SYNC, 0, 0)
WRAP(cudaStreamSynchronize, (cuda_stream s), (s), LT_GPU_OP_SYNC, 0, U(s))
WRAP(cudaStreamSynchronize_ptsz, (cuda_stream s), (s), LT_GPU_OP_SYNC, 0, U(s))
WRAP(cudaEventSynchronize, (cuda_event e), (e), LT_GPU_OP_SYNC, 0, U(e))

/* Streams, events, devices. */
WRAP(cudaStreamCreate, (cuda_stream * s), (s), LT_GPU_OP_CALL, MADE(s))
WRAP(cudaStreamCreateWithFlags, (cuda_stream * s, unsigned f), (s, f), LT_GPU_OP_CALL, MADE(s))
WRAP(cudaStreamCreateWithPriority, (cuda_stream * s, unsigned f, int p), (s, f, p), LT_GPU_OP_CALL,
     MADE(s))
WRAP(cudaStreamDestroy, (cuda_stream s), (s), LT_GPU_OP_CALL, 0, U(s))
WRAP(cudaStreamWaitEvent, (cuda_stream s, cuda_event e, unsigned f), (s, e, f), LT_GPU_OP_CALL, 0,
     U(s), U(e))
WRAP(cudaStreamWaitEvent_ptsz, (cuda_stream s, cuda_event e, unsigned f), (s, e, f), LT_GPU_OP_CALL,
     0, U(s), U(e))
WRAP(cudaEventCreate, (cuda_event * e), (e), LT_GPU_OP_CALL, MADE(e))
WRAP(cudaEventCreateWithFlags, (cuda_event * e, unsigned f), (e, f), LT_GPU_OP_CALL, MADE(e))
WRAP(cudaEventRecord, (cuda_event e, cuda_stream s), (e, s), LT_GPU_OP_CALL, 0, U(e), U(s))
WRAP(cudaEventRecord_ptsz, (cuda_event e, cuda_stream s), (e, s), LT_GPU_OP_CALL, 0, U(e), U(s))
WRAP(cudaEventDestroy, (cuda_event e), (e), LT_GPU_OP_CALL, 0, U(e))
WRAP(cudaGetDeviceCount, (int *n), (n), LT_GPU_OP_CALL, 0, 0)
WRAP(cudaSetDevice, (int d), (d), LT_GPU_OP_CALL, 0, (unsigned)d)
WRAP(cudaGraphLaunch, (void *g, cuda_stream s), (g, s), LT_GPU_OP_CALL, 0, U(g), U(s))
WRAP(cudaGraphLaunch_ptsz, (void *g, cuda_stream s), (g, s), LT_GPU_OP_CALL, 0, U(g), U(s))

/* Launches.  `key` finds the kernel's name: a host stub or a CUDA 13 kernel handle. */
static struct lt_thread *launch_begin(const char *name, const void *key, struct lt_dim3 g,
				      struct lt_dim3 b, size_t shared, cuda_stream s,
				      struct lt_caller c)
{
	uint64_t w[LT_GPU_ARGS_MAX];
	lt_gpu_dims(w, g, b);
	w[3] = shared;
	w[4] = U(s);
	w[5] = 0;
	return call_begin(name, LT_GPU_OP_LAUNCH, w, 6, key, c);
}

#define LAUNCH_PARAMS \
	(const void *k, struct lt_dim3 g, struct lt_dim3 b, void **args, size_t shm, cuda_stream s)
#define WRAP_LAUNCH(name)                                                                \
	LT_EXPORT cuda_err name LAUNCH_PARAMS                                            \
	{                                                                                \
		REAL(name, LAUNCH_PARAMS);                                               \
		struct lt_thread *t = launch_begin(#name, k, g, b, shm, s, LT_CALLER()); \
		cuda_err rc = real_##name(k, g, b, args, shm, s);                        \
		return call_end(t, LT_GPU_OP_LAUNCH, rc, 0);                             \
	}

WRAP_LAUNCH(__cudaLaunchKernel)
WRAP_LAUNCH(__cudaLaunchKernel_ptsz)
WRAP_LAUNCH(cudaLaunchKernel)
WRAP_LAUNCH(cudaLaunchKernel_ptsz)
WRAP_LAUNCH(cudaLaunchCooperativeKernel)
WRAP_LAUNCH(cudaLaunchCooperativeKernel_ptsz)

#define LAUNCH_EX_PARAMS (const struct cuda_launch_config *cfg, const void *k, void **args)
#define WRAP_LAUNCH_EX(name)                                                                    \
	LT_EXPORT cuda_err name LAUNCH_EX_PARAMS                                                \
	{                                                                                       \
		REAL(name, LAUNCH_EX_PARAMS);                                                   \
		struct lt_thread *t = cfg ? launch_begin(#name, k, cfg->grid, cfg->block,       \
							 cfg->shared, cfg->stream, LT_CALLER()) \
					  : NULL;                                               \
		cuda_err rc = real_##name(cfg, k, args);                                        \
		return call_end(t, LT_GPU_OP_LAUNCH, rc, 0);                                    \
	}

WRAP_LAUNCH_EX(cudaLaunchKernelExC)
WRAP_LAUNCH_EX(cudaLaunchKernelExC_ptsz)

/* Registration: not recorded, it names kernels. */
LT_EXPORT void __cudaRegisterFunction(void **module, const char *stub, char *device_fun,
				      const char *device_name, int thread_limit, void *tid,
				      void *bid, void *block, void *grid, int *warp_size)
{
	static void (*real)(void **, const char *, char *, const char *, int, void *, void *,
			    void *, void *, int *);
	if (unlikely(!real) && !(real = cuda_sym("__cudaRegisterFunction")))
		return;
	lt_gpu_kernel_name_set(stub, device_name);
	real(module, stub, device_fun, device_name, thread_limit, tid, bid, block, grid, warp_size);
}

LT_EXPORT cuda_err __cudaGetKernel(void **kernel, const void *stub)
{
	REAL(__cudaGetKernel, (void **, const void *));
	cuda_err rc = real___cudaGetKernel(kernel, stub);
	if (rc == 0 && kernel && *kernel)
		lt_gpu_kernel_alias(*kernel, stub);
	return rc;
}

LT_MODULE(cuda) = {.name = "cuda", .bit = LT_MOD_CUDA, .order = 60};
