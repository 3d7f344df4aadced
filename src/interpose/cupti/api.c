// SPDX-License-Identifier: BSD-3-Clause
/*
 * api.c - module cupti's API callbacks: each runtime or driver call's GPU_ENTER and
 * GPU_LEAVE, on the calling thread (cupti.c says which calls are recorded, and why).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "private.h"

__thread struct lt_cupti_calls lt_cupti_cs LT_TLS;
/* Pages of their own, mapped only when CUPTI is used: 768 KiB that a program without CUDA
 * keeps for its own address space (`ulimit -v`). */
uint64_t *lt_cupti_corr_alias;
uint32_t *lt_cupti_paused_corr;
int lt_cupti_in_calls;
int lt_cupti_handing_over;

static int exit_hook;	       /* lt_cupti_flush_at_exit is registered */
static uint64_t last_flush_ns; /* the last flush after a synchronising call */

/* At most one flush after synchronising calls per FLUSH_GAP_NS: each is a blocking,
 * process-wide call; a program that synchronises thousands of times a second would pay
 * for it every time.  Buffers fill, and the exit flush takes what is left. */
#define FLUSH_GAP_NS 10000000ull

/* What a runtime or driver call does, and its GPU_ENTER words (format.h). */
struct call {
	unsigned op;
	unsigned n;
	uint64_t w[LT_GPU_ARGS_MAX];
	void **made; /* where the call stores what it makes (read at EXIT) */
};

#define U(x) ((uint64_t)(uintptr_t)(x))

static void call_words(struct call *c, unsigned op, unsigned n, uint64_t a, uint64_t b, uint64_t d,
		       uint64_t e, uint64_t f)
{
	c->op = op;
	c->n = n;
	c->w[0] = a;
	c->w[1] = b;
	c->w[2] = d;
	c->w[3] = e;
	c->w[4] = f;
}

static void launch_words(struct lt_thread *t, struct call *c, const CUpti_CallbackData *d,
			 struct lt_dim3 g, struct lt_dim3 b, uint64_t shared, uint64_t stream)
{
	c->op = LT_GPU_OP_LAUNCH;
	c->n = 6;
	lt_gpu_dims(c->w, g, b);
	c->w[3] = shared;
	c->w[4] = stream;
	c->w[5] = d->symbolName ? lt_string_id(t, d->symbolName) : 0;
}

#define P(type) ((const type *)d->functionParams)

/*
 * The allocation and free calls' parameters begin alike: where the pointer goes (or the
 * pointer freed), then the size.  One layout reads them all (checked below against every
 * struct it stands for); the memory kind comes from the callback id.
 */
struct alloc_params {
	void **ptr;
	size_t size;
};
struct free_params {
	void *ptr;
};
#define SAME_PREFIX(t, a, b)                                                      \
	_Static_assert(offsetof(t, a) == offsetof(struct alloc_params, ptr) &&    \
			   offsetof(t, b) == offsetof(struct alloc_params, size), \
		       #t " is not laid out as struct alloc_params")
SAME_PREFIX(cudaMalloc_v3020_params, devPtr, size);
SAME_PREFIX(cudaMallocHost_v3020_params, ptr, size);
SAME_PREFIX(cudaHostAlloc_v3020_params, pHost, size);
SAME_PREFIX(cudaMallocManaged_v6000_params, devPtr, size);
SAME_PREFIX(cudaMallocAsync_v11020_params, devPtr, size);
SAME_PREFIX(cudaMallocAsync_ptsz_v11020_params, devPtr, size);
_Static_assert(offsetof(cudaFree_v3020_params, devPtr) == 0 &&
		   offsetof(cudaFreeHost_v3020_params, ptr) == 0 &&
		   offsetof(cudaFreeAsync_v11020_params, devPtr) == 0 &&
		   offsetof(cudaFreeAsync_ptsz_v11020_params, devPtr) == 0,
	       "a free's pointer is not its first parameter");
/* The per-thread-stream variants take their plain function's parameters. */
#define SAME_AS(t, u, a, b)                                                                  \
	_Static_assert(offsetof(t, a) == offsetof(u, a) && offsetof(t, b) == offsetof(u, b), \
		       #t " is not laid out as " #u)
SAME_AS(cudaEventRecord_ptsz_v7000_params, cudaEventRecord_v3020_params, event, stream);
SAME_AS(cudaStreamWaitEvent_ptsz_v7000_params, cudaStreamWaitEvent_v3020_params, stream, event);
SAME_AS(cudaGraphLaunch_ptsz_v10000_params, cudaGraphLaunch_v10000_params, graphExec, stream);
/* A cooperative launch takes cudaLaunchKernel's parameters. */
_Static_assert(sizeof(cudaLaunchCooperativeKernel_v9000_params) ==
		       sizeof(cudaLaunchKernel_v7000_params) &&
		   offsetof(cudaLaunchCooperativeKernel_v9000_params, stream) ==
		       offsetof(cudaLaunchKernel_v7000_params, stream),
	       "cooperative launches are not laid out as cudaLaunchKernel");

static unsigned mem_kind(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020:
		return LT_GPU_MEM_HOST;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
		return LT_GPU_MEM_MANAGED;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
		return LT_GPU_MEM_ASYNC;
	default:
		return LT_GPU_MEM_DEVICE;
	}
}

static void runtime_call(struct lt_thread *t, CUpti_CallbackId cbid, const CUpti_CallbackData *d,
			 struct call *c)
{
	if (!d->functionParams) {
		if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020)
			call_words(c, LT_GPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
		return;
	}
	switch (cbid) {
	case CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocHost_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocManaged_v6000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_ptsz_v11020:
		call_words(c, LT_GPU_OP_ALLOC, 2, P(struct alloc_params)->size, mem_kind(cbid), 0,
			   0, 0);
		c->made = P(struct alloc_params)->ptr;
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_ptsz_v11020:
		call_words(c, LT_GPU_OP_FREE, 2, U(P(struct free_params)->ptr), mem_kind(cbid), 0,
			   0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_ptds_v7000: {
		const cudaMemcpy_v3020_params *p = P(cudaMemcpy_v3020_params);
		call_words(c, LT_GPU_OP_COPY, 4, p->count, U(p->dst), U(p->src), (unsigned)p->kind,
			   0);
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000: {
		const cudaMemcpyAsync_v3020_params *p = P(cudaMemcpyAsync_v3020_params);
		call_words(c, LT_GPU_OP_COPY, 5, p->count, U(p->dst), U(p->src), (unsigned)p->kind,
			   U(p->stream));
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemset_ptds_v7000: {
		const cudaMemset_v3020_params *p = P(cudaMemset_v3020_params);
		call_words(c, LT_GPU_OP_SET, 3, p->count, U(p->devPtr), (unsigned)p->value, 0, 0);
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000: {
		const cudaMemsetAsync_v3020_params *p = P(cudaMemsetAsync_v3020_params);
		call_words(c, LT_GPU_OP_SET, 4, p->count, U(p->devPtr), (unsigned)p->value,
			   U(p->stream), 0);
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
	/* CUDA 13's `<<<>>>` entry points take cudaLaunchKernel's arguments with a kernel
	 * handle first (crt/host_runtime.h); their headers declare no parameter struct. */
	case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
	case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000: {
		const cudaLaunchKernel_v7000_params *p = P(cudaLaunchKernel_v7000_params);
		struct lt_dim3 g = {p->gridDim.x, p->gridDim.y, p->gridDim.z};
		struct lt_dim3 b = {p->blockDim.x, p->blockDim.y, p->blockDim.z};
		launch_words(t, c, d, g, b, p->sharedMem, U(p->stream));
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
	case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
		const cudaLaunchConfig_t *cfg = P(cudaLaunchKernelExC_v11060_params)->config;
		if (!cfg)
			break;
		struct lt_dim3 g = {cfg->gridDim.x, cfg->gridDim.y, cfg->gridDim.z};
		struct lt_dim3 b = {cfg->blockDim.x, cfg->blockDim.y, cfg->blockDim.z};
		launch_words(t, c, d, g, b, cfg->dynamicSmemBytes, U(cfg->stream));
		break;
	}
	case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
		call_words(c, LT_GPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_ptsz_v7000:
		call_words(c, LT_GPU_OP_SYNC, 1, U(P(cudaStreamSynchronize_v3020_params)->stream),
			   0, 0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020:
		call_words(c, LT_GPU_OP_SYNC, 1, U(P(cudaEventSynchronize_v3020_params)->event), 0,
			   0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreate_v3020:
		c->made = (void **)P(cudaStreamCreate_v3020_params)->pStream;
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000:
		c->made = (void **)P(cudaStreamCreateWithFlags_v5000_params)->pStream;
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050:
		c->made = (void **)P(cudaStreamCreateWithPriority_v5050_params)->pStream;
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020:
		c->made = (void **)P(cudaEventCreate_v3020_params)->event;
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020:
		c->made = (void **)P(cudaEventCreateWithFlags_v3020_params)->event;
		break;
	/* The same words as the cudart wrappers write (cuda.c). */
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_ptsz_v7000:
		call_words(c, LT_GPU_OP_CALL, 2, U(P(cudaEventRecord_v3020_params)->event),
			   U(P(cudaEventRecord_v3020_params)->stream), 0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020:
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_ptsz_v7000:
		call_words(c, LT_GPU_OP_CALL, 2, U(P(cudaStreamWaitEvent_v3020_params)->stream),
			   U(P(cudaStreamWaitEvent_v3020_params)->event), 0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
	case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000:
		call_words(c, LT_GPU_OP_CALL, 2, U(P(cudaGraphLaunch_v10000_params)->graphExec),
			   U(P(cudaGraphLaunch_v10000_params)->stream), 0, 0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050:
		call_words(c, LT_GPU_OP_CALL, 1, U(P(cudaStreamDestroy_v5050_params)->stream), 0, 0,
			   0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020:
		call_words(c, LT_GPU_OP_CALL, 1, U(P(cudaEventDestroy_v3020_params)->event), 0, 0,
			   0, 0);
		break;
	case CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020:
		call_words(c, LT_GPU_OP_CALL, 1, (unsigned)P(cudaSetDevice_v3020_params)->device, 0,
			   0, 0, 0);
		break;
	default:
		break;
	}
}

static void driver_call(struct lt_thread *t, CUpti_CallbackId cbid, const CUpti_CallbackData *d,
			struct call *c)
{
	if (!d->functionParams) {
		if (cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize ||
		    cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2)
			call_words(c, LT_GPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
		return;
	}
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = P(cuLaunchKernel_params);
		struct lt_dim3 g = {p->gridDimX, p->gridDimY, p->gridDimZ};
		struct lt_dim3 b = {p->blockDimX, p->blockDimY, p->blockDimZ};
		launch_words(t, c, d, g, b, p->sharedMemBytes, U(p->hStream));
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2:
		call_words(c, LT_GPU_OP_ALLOC, 2, P(cuMemAlloc_v2_params)->bytesize,
			   LT_GPU_MEM_DEVICE, 0, 0, 0);
		c->made = (void **)P(cuMemAlloc_v2_params)->dptr;
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2:
		call_words(c, LT_GPU_OP_FREE, 2, P(cuMemFree_v2_params)->dptr, LT_GPU_MEM_DEVICE, 0,
			   0, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2: {
		const cuMemcpyHtoD_v2_params *p = P(cuMemcpyHtoD_v2_params);
		call_words(c, LT_GPU_OP_COPY, 4, p->ByteCount, p->dstDevice, U(p->srcHost),
			   LT_GPU_COPY_HTOD, 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2: {
		const cuMemcpyDtoH_v2_params *p = P(cuMemcpyDtoH_v2_params);
		call_words(c, LT_GPU_OP_COPY, 4, p->ByteCount, U(p->dstHost), p->srcDevice,
			   LT_GPU_COPY_DTOH, 0);
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const CUlaunchConfig *cfg = P(cuLaunchKernelEx_params)->config;
		if (!cfg)
			break;
		struct lt_dim3 g = {cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ};
		struct lt_dim3 b = {cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ};
		launch_words(t, c, d, g, b, cfg->sharedMemBytes, U(cfg->hStream));
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize:
	case CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize_v2:
		call_words(c, LT_GPU_OP_SYNC, 0, 0, 0, 0, 0, 0);
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize:
	case CUPTI_DRIVER_TRACE_CBID_cuStreamSynchronize_ptsz:
		call_words(c, LT_GPU_OP_SYNC, 1, U(P(cuStreamSynchronize_params)->hStream), 0, 0, 0,
			   0);
		break;
	default:
		break;
	}
}

/*
 * CUDA 13 reports the entry points of nvcc's generated code (__cudaRegisterFatBinary,
 * __cudaRegisterFunction, __cudaPushCallConfiguration, __cudaPopCallConfiguration,
 * __cudaGetKernel...) as runtime calls: they are not the program's calls (the launch that
 * follows them is), and neither are the driver calls made inside them.
 */
static int internal(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
	       cbid >= CUPTI_RUNTIME_TRACE_CBID___cudaRegisterFatBinary_v13000 &&
	       cbid <= CUPTI_RUNTIME_TRACE_CBID___cudaGetProcAddress_v13000 &&
	       cbid != CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000 &&
	       cbid != CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000;
}

static void api_enter(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const CUpti_CallbackData *d)
{
	if (internal(domain, cbid)) {
		lt_cupti_cs.internal++;
		return;
	}
	if (lt_cupti_cs.internal && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		lt_cupti_cs.hidden++;
		return;
	}
	if (lt_cupti_cs.n && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
	    lt_cupti_cs.open[0].domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		/* cudart's own driver call: note its id, record nothing */
		__atomic_store_n(&lt_cupti_corr_alias[d->correlationId & (ALIAS_SIZE - 1)],
				 (uint64_t)d->correlationId << 32 |
				     lt_cupti_cs.open[lt_cupti_cs.n - 1].corr,
				 __ATOMIC_RELAXED);
		lt_cupti_cs.hidden++;
		return;
	}
	if (lt_cupti_cs.n == OPEN_MAX)
		return;
	struct lt_thread *t = lt_cupti_cs.n ? lt_cupti_cs.t : lt_begin(LT_MOD_CUDA);
	if (!t) {
		if (lt_recording_paused(LT_MOD_CUDA))
			__atomic_store_n(&lt_cupti_paused_corr[d->correlationId & (ALIAS_SIZE - 1)],
					 d->correlationId, __ATOMIC_RELAXED);
		return;
	}
	if (!lt_cupti_cs.n) {
		/* An outermost call: counted while under way, none begins during a hand-over. */
		__atomic_add_fetch(&lt_cupti_in_calls, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&lt_cupti_handing_over, __ATOMIC_SEQ_CST)) {
			__atomic_sub_fetch(&lt_cupti_in_calls, 1, __ATOMIC_SEQ_CST);
			lt_finish(t);
			return;
		}
	}
	struct call c = {0};
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		runtime_call(t, cbid, d, &c);
	else
		driver_call(t, cbid, d, &c);
	unsigned api =
	    domain == CUPTI_CB_DOMAIN_RUNTIME_API ? LT_GPU_CUPTI_RUNTIME : LT_GPU_CUPTI_DRIVER;
	uint32_t name = lt_string_id(t, d->functionName ? d->functionName : "?");
	int out = lt_gpu_filtered(t, name, c.op == LT_GPU_OP_LAUNCH && c.n > 5 ? c.w[5] : 0);
	/* The program's call site, where a wrapper of the shared cudart noted it (gpu.h). */
	int site = 0;
	if (!lt_cupti_cs.n && domain == CUPTI_CB_DOMAIN_RUNTIME_API && lt_gpu_caller.ra) {
		lt_note_caller(t, lt_gpu_caller);
		lt_gpu_caller.ra = 0;
		site = 1;
	}
	if (!out)
		lt_gpu_enter(t, api, c.op, name, d->correlationId, c.w, c.n, site);
	/* Where the made object will be, for the EXIT (CUPTI keeps the word for us). */
	if (d->correlationData)
		*d->correlationData = U(c.made);
	lt_cupti_cs.open[lt_cupti_cs.n].cbid = cbid;
	lt_cupti_cs.open[lt_cupti_cs.n].corr = d->correlationId;
	lt_cupti_cs.open[lt_cupti_cs.n].domain = (uint8_t)domain;
	lt_cupti_cs.open[lt_cupti_cs.n].op = (uint8_t)c.op;
	lt_cupti_cs.open[lt_cupti_cs.n].out = (uint8_t)out;
	if (lt_cupti_cs.n++ == 0) {
		lt_cupti_cs.t = t;
		lt_in_runtime = 1;
	}
}

static void api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		     const CUpti_CallbackData *d)
{
	if (lt_cupti_cs.hidden && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		lt_cupti_cs.hidden--;
		return;
	}
	if (internal(domain, cbid)) {
		if (lt_cupti_cs.internal)
			lt_cupti_cs.internal--;
		return;
	}
	/* The first call is done: cudart has registered its exit handlers, which atexit runs
	 * after ours registered now, so the exit flush comes before cudart's teardown. */
	if (!__atomic_exchange_n(&exit_hook, 1, __ATOMIC_ACQ_REL))
		atexit(lt_cupti_flush_at_exit);
	if (!lt_cupti_cs.n || lt_cupti_cs.open[lt_cupti_cs.n - 1].cbid != cbid ||
	    lt_cupti_cs.open[lt_cupti_cs.n - 1].domain != domain)
		return; /* its ENTER came before CUPTI started, or was not recorded */
	unsigned n = --lt_cupti_cs.n;
	struct lt_thread *t = lt_cupti_cs.t;
	int rc = 0;
	if (d->functionReturnValue)
		rc = domain == CUPTI_CB_DOMAIN_RUNTIME_API
			 ? *(const int *)d->functionReturnValue
			 : (int)*(const CUresult *)d->functionReturnValue;
	uint64_t made = 0;
	void **where = d->correlationData ? (void **)(uintptr_t)*d->correlationData : NULL;
	if (!rc && where)
		made = U(*where);
	unsigned api =
	    domain == CUPTI_CB_DOMAIN_RUNTIME_API ? LT_GPU_CUPTI_RUNTIME : LT_GPU_CUPTI_DRIVER;
	unsigned op = lt_cupti_cs.open[n].op;
	if (!lt_cupti_cs.open[n].out)
		lt_gpu_leave(t, api, op, rc, made);
	if (n == 0) {
		lt_cupti_cs.t = NULL;
		/* The host waited for the device: what it did is known now. */
		uint64_t now = lt_clock_mono_ns();
		if (op == LT_GPU_OP_SYNC && !lt_cupti_cs.flushing && !lt_cupti_ended &&
		    now - __atomic_load_n(&last_flush_ns, __ATOMIC_RELAXED) > FLUSH_GAP_NS) {
			__atomic_store_n(&last_flush_ns, now, __ATOMIC_RELAXED);
			lt_cupti_cs.flushing = 1;
			lt_cupti.cuptiActivityFlushAll(0);
			lt_cupti_cs.flushing = 0;
		}
		lt_in_runtime = 0;
		lt_finish(t);
		__atomic_sub_fetch(&lt_cupti_in_calls, 1, __ATOMIC_SEQ_CST);
	}
}

void CUPTIAPI lt_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
				   CUpti_CallbackId cbid, const void *data)
{
	(void)userdata;
	if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
	    lt_cupti_forked)
		return;
	const CUpti_CallbackData *d = data;
	if (d->callbackSite == CUPTI_API_ENTER)
		api_enter(domain, cbid, d);
	else
		api_exit(domain, cbid, d);
}
