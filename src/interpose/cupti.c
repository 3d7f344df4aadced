// SPDX-License-Identifier: BSD-3-Clause
/*
 * cupti.c - module "cuda" through CUPTI: every CUDA runtime and driver call on the host,
 * and what the device did (kernels, copies, sets, synchronisation), joined by CUPTI's
 * correlation ids.  CUPTI is the primary layer because nvcc links cudart statically by
 * default (symbol wrappers see nothing there); device times are put on the host's
 * CLOCK_MONOTONIC (see "Device times" below and the README's CUDA section).
 *
 * Loading.  libcupti is opened with dlopen (LIBTRACE_CUPTI_LIB, else the one beside the
 * program's libcudart, else libcupti.so.13, .12, unversioned) and bound with dlsym: no link
 * dependency, and a program without CUDA never loads it.  It is started when the process
 * has CUDA: libcudart or libcuda loaded at start (cupti_init, from the constructor), or
 * dlopened later (a static cudart, nvcc's default, opens libcuda.so.1 inside its first
 * call).  Any failure (no driver: cuptiSubscribe says 999; another tool subscribed
 * already: 39) is written to the meta file once (`gpu_off cupti ...`) and CUDA stays with
 * the cudart wrappers (cuda.c).  While CUPTI records, those pass calls through.
 *
 * API callbacks arrive on the calling thread at the call's ENTER and EXIT.  Runtime calls
 * are recorded (GPU_ENTER/LEAVE, LT_GPU_CUPTI_RUNTIME); a driver call is recorded only
 * when no runtime call is open on the thread (a program or library using the driver API):
 * the driver calls cudart makes inside a runtime call are its implementation.  Their
 * correlation ids are noted (corr_alias) because CUPTI gives some activity records (sets,
 * copies without a runtime id) the driver call's id.  The guard stays taken from the
 * outermost ENTER to its EXIT, as across a wrapped call: what the runtime does inside is
 * not the program's.
 *
 * Activity records arrive in buffers we lend CUPTI, handed back full, at a flush, or at
 * exit (cuptiActivityFlushAll), on whichever thread CUPTI chooses: that thread writes them
 * as GPU_ACTIVITY records; the converter puts them on their streams.  Device times: CUPTI
 * stamps records with our CLOCK_MONOTONIC when it takes a timestamp callback (registered
 * before any activity kind is enabled, as CUPTI requires); otherwise its own clock
 * (CLOCK_REALTIME on Linux) is mapped linearly between paired readings (host, CUPTI) taken
 * at start and at every buffer (Score-P's scheme), and a stream's times never go
 * backwards (the converter clamps).  Records CUPTI dropped become LOST records.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "../shared/gpu.h"
#include "../core/lock.h"

/* CUPTI records CUDA for this process (the cuda claim says so to the cudart wrappers). */
static int active;

static void set_active(int on)
{
	active = on;
	lt_claim(LT_MOD_CUDA, on);
}

/* The CUPTI functions we use, bound with dlsym. */
#define CUPTI_FUNCTIONS(X)                                                             \
	X(cuptiGetVersion, (uint32_t *))                                               \
	X(cuptiGetResultString, (CUptiResult, const char **))                          \
	X(cuptiSubscribe, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))      \
	X(cuptiUnsubscribe, (CUpti_SubscriberHandle))                                  \
	X(cuptiEnableDomain, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain)) \
	X(cuptiActivityRegisterCallbacks,                                              \
	  (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))       \
	X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc))       \
	X(cuptiActivityEnable, (CUpti_ActivityKind))                                   \
	X(cuptiActivityFlushAll, (uint32_t))                                           \
	X(cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))          \
	X(cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))          \
	X(cuptiGetTimestamp, (uint64_t *))

static struct {
#define CUPTI_FIELD(name, params) CUptiResult(CUPTIAPI *name) params;
	CUPTI_FUNCTIONS(CUPTI_FIELD)
#undef CUPTI_FIELD
} cupti;

static int tried;	       /* start_once ran (once per process) */
static int ended;	       /* the exit flush ran: CUPTI may be going away, ask nothing more */
static int forked;	       /* a child of fork: CUPTI's threads and locks stayed in the parent */
static int exit_hook;	       /* flush_at_exit is registered */
static uint64_t last_flush_ns; /* the last flush after a synchronising call */

/* At most one flush after synchronising calls per FLUSH_GAP_NS: each is a blocking,
 * process-wide call; a program that synchronises thousands of times a second would pay
 * for it every time.  Buffers fill, and the exit flush takes what is left. */
#define FLUSH_GAP_NS 10000000ull

static void flush_at_exit(void);
static void cupti_flush(void);
static void *lib;
static CUpti_SubscriberHandle subscriber;

/* Device times when CUPTI takes no timestamp callback: linear between the first reading
 * pair and the latest (host = CLOCK_MONOTONIC ns, dev = cuptiGetTimestamp). */
static struct {
	int on;
	struct lt_lock lock;
	uint64_t host0, dev0, host1, dev1;
} sync_map = {.lock = LT_LOCK_INIT};

/* Driver correlation id -> the runtime call's id it served (see the top of the file).  A
 * slot is overwritten 65536 driver calls later: an older record then keeps its own id. */
#define ALIAS_SIZE 65536u
static uint64_t corr_alias[ALIAS_SIZE];

/* Context id -> device, learnt from kernel, copy and set records (synchronisation records
 * carry no device). */
#define CONTEXTS_MAX 64u
static uint64_t context_device[CONTEXTS_MAX]; /* context << 32 | device, 0: free */

/* The calls open on this thread, outermost first. */
#define OPEN_MAX 8
static __thread struct {
	struct lt_thread *t; /* its guard is ours while n > 0 */
	unsigned n;
	unsigned hidden;   /* driver calls open inside a runtime call, not recorded */
	unsigned internal; /* internal runtime calls open (see internal()), not recorded */
	int flushing;
	struct {
		uint32_t cbid, corr;
		uint8_t domain, op;
	} open[OPEN_MAX];
} cs LT_TLS;

static const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (cupti.cuptiGetResultString)
		cupti.cuptiGetResultString(r, &s);
	return s ? s : "unknown error";
}

static uint64_t CUPTIAPI host_clock(void)
{
	return lt_clock_mono_ns();
}

/* A reading pair: the tightest of 5 brackets of cuptiGetTimestamp by our clock (a thread
 * preempted inside one would shift every device time by as much). */
static void sync_point(int first)
{
	uint64_t best = UINT64_MAX, host = 0, dev = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t d = 0, a = lt_clock_mono_ns();
		if (cupti.cuptiGetTimestamp(&d) != CUPTI_SUCCESS)
			return;
		uint64_t b = lt_clock_mono_ns();
		if (b - a < best) {
			best = b - a;
			host = a + (b - a) / 2;
			dev = d;
		}
	}
	lt_lock(&sync_map.lock);
	if (first) {
		sync_map.host0 = host;
		sync_map.dev0 = dev;
	}
	sync_map.host1 = host;
	sync_map.dev1 = dev;
	lt_unlock(&sync_map.lock);
}

static uint64_t to_host(uint64_t dev)
{
	if (!sync_map.on || !dev)
		return dev;
	lt_lock(&sync_map.lock);
	double slope = 1.0;
	if (sync_map.dev1 > sync_map.dev0 + 1000000) /* a millisecond apart at least */
		slope = (double)(sync_map.host1 - sync_map.host0) /
			(double)(sync_map.dev1 - sync_map.dev0);
	int64_t d = (int64_t)(dev - sync_map.dev0);
	uint64_t host0 = sync_map.host0;
	lt_unlock(&sync_map.lock);
	int64_t h = (int64_t)host0 + (int64_t)((double)d * slope);
	return h < 0 ? 0 : (uint64_t)h;
}

/* ---- API callbacks ---- */

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
	case CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020:
		call_words(c, LT_GPU_OP_CALL, 2, U(P(cudaEventRecord_v3020_params)->event),
			   U(P(cudaEventRecord_v3020_params)->stream), 0, 0, 0);
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
		cs.internal++;
		return;
	}
	if (cs.internal && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		cs.hidden++;
		return;
	}
	if (cs.n && domain == CUPTI_CB_DOMAIN_DRIVER_API &&
	    cs.open[0].domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
		/* cudart's own driver call: note its id, record nothing */
		__atomic_store_n(&corr_alias[d->correlationId & (ALIAS_SIZE - 1)],
				 (uint64_t)d->correlationId << 32 | cs.open[cs.n - 1].corr,
				 __ATOMIC_RELAXED);
		cs.hidden++;
		return;
	}
	if (cs.n == OPEN_MAX)
		return;
	struct lt_thread *t = cs.n ? cs.t : lt_begin(LT_MOD_CUDA);
	if (!t)
		return;
	struct call c = {0};
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		runtime_call(t, cbid, d, &c);
	else
		driver_call(t, cbid, d, &c);
	unsigned api =
	    domain == CUPTI_CB_DOMAIN_RUNTIME_API ? LT_GPU_CUPTI_RUNTIME : LT_GPU_CUPTI_DRIVER;
	lt_gpu_enter(t, api, c.op, lt_string_id(t, d->functionName ? d->functionName : "?"),
		     d->correlationId, c.w, c.n, 0);
	/* Where the made object will be, for the EXIT (CUPTI keeps the word for us). */
	if (d->correlationData)
		*d->correlationData = U(c.made);
	cs.open[cs.n].cbid = cbid;
	cs.open[cs.n].corr = d->correlationId;
	cs.open[cs.n].domain = (uint8_t)domain;
	cs.open[cs.n].op = (uint8_t)c.op;
	if (cs.n++ == 0) {
		cs.t = t;
		lt_in_runtime = 1;
	}
}

static void api_exit(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		     const CUpti_CallbackData *d)
{
	if (cs.hidden && domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		cs.hidden--;
		return;
	}
	if (internal(domain, cbid)) {
		if (cs.internal)
			cs.internal--;
		return;
	}
	/* The first call is done: cudart has registered its exit handlers, which atexit runs
	 * after ours registered now, so the exit flush comes before cudart's teardown. */
	if (!__atomic_exchange_n(&exit_hook, 1, __ATOMIC_ACQ_REL))
		atexit(flush_at_exit);
	if (!cs.n || cs.open[cs.n - 1].cbid != cbid || cs.open[cs.n - 1].domain != domain)
		return; /* its ENTER came before CUPTI started, or was not recorded */
	unsigned n = --cs.n;
	struct lt_thread *t = cs.t;
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
	unsigned op = cs.open[n].op;
	lt_gpu_leave(t, api, op, rc, made);
	if (n == 0) {
		cs.t = NULL;
		/* The host waited for the device: what it did is known now. */
		uint64_t now = lt_clock_mono_ns();
		if (op == LT_GPU_OP_SYNC && !cs.flushing && !ended &&
		    now - __atomic_load_n(&last_flush_ns, __ATOMIC_RELAXED) > FLUSH_GAP_NS) {
			__atomic_store_n(&last_flush_ns, now, __ATOMIC_RELAXED);
			cs.flushing = 1;
			cupti.cuptiActivityFlushAll(0);
			cs.flushing = 0;
		}
		lt_in_runtime = 0;
		lt_finish(t);
	}
}

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)userdata;
	if ((domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) ||
	    forked)
		return;
	const CUpti_CallbackData *d = data;
	if (d->callbackSite == CUPTI_API_ENTER)
		api_enter(domain, cbid, d);
	else
		api_exit(domain, cbid, d);
}

/* ---- activity ---- */

#define BUFFER_SIZE (1u << 20)

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0; /* as many as fit */
}

static uint32_t runtime_corr(uint32_t corr)
{
	uint64_t a = __atomic_load_n(&corr_alias[corr & (ALIAS_SIZE - 1)], __ATOMIC_RELAXED);
	return a >> 32 == corr ? (uint32_t)a : corr;
}

static uint32_t device_of(uint32_t context, uint32_t device, int known)
{
	for (unsigned i = 0; i < CONTEXTS_MAX; i++) {
		uint64_t e = __atomic_load_n(&context_device[i], __ATOMIC_RELAXED);
		if (e >> 32 == context && e)
			return (uint32_t)e;
		if (!e) {
			if (!known)
				return 0;
			uint64_t v = (uint64_t)context << 32 | device;
			if (__atomic_compare_exchange_n(&context_device[i], &e, v, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
			    e == v)
				return device;
		}
	}
	return known ? device : 0;
}

static unsigned copy_kind(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return LT_GPU_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return LT_GPU_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return LT_GPU_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return LT_GPU_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return LT_GPU_COPY_PEER;
	default:
		return LT_GPU_COPY_UNKNOWN;
	}
}

static void put_activity(struct lt_thread *t, unsigned kind, uint32_t arg, uint64_t start,
			 uint64_t end, uint32_t device, uint32_t context, uint32_t stream,
			 uint32_t corr, unsigned n, const uint64_t *extra)
{
	unsigned w = 7 + n;
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, lt_now(), LT_REC_GPU_ACTIVITY, w, kind, arg);
	p[2] = to_host(start);
	p[3] = to_host(end);
	p[4] = (uint64_t)device << 32 | context;
	p[5] = stream;
	p[6] = runtime_corr(corr);
	for (unsigned i = 0; i < n; i++)
		p[7 + i] = extra[i];
	lt_commit(t);
}

static void activity(struct lt_thread *t, const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		uint64_t dims[3];
		struct lt_dim3 g = {(unsigned)k->gridX, (unsigned)k->gridY, (unsigned)k->gridZ};
		struct lt_dim3 b = {(unsigned)k->blockX, (unsigned)k->blockY, (unsigned)k->blockZ};
		lt_gpu_dims(dims, g, b);
		put_activity(t, LT_GPU_ACT_KERNEL, k->name ? lt_string_id(t, k->name) : 0, k->start,
			     k->end, device_of(k->contextId, k->deviceId, 1), k->contextId,
			     k->streamId, k->correlationId, 3, dims);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		uint64_t bytes = m->bytes;
		put_activity(t, LT_GPU_ACT_COPY, copy_kind(m->copyKind), m->start, m->end,
			     device_of(m->contextId, m->deviceId, 1), m->contextId, m->streamId,
			     m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId,
			     1, &bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		uint64_t bytes = m->bytes;
		put_activity(t, LT_GPU_ACT_SET, 0, m->start, m->end,
			     device_of(m->contextId, m->deviceId, 1), m->contextId, m->streamId,
			     m->correlationId, 1, &bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;
		put_activity(t, LT_GPU_ACT_SYNC, (uint32_t)s->type, s->start, s->end,
			     device_of(s->contextId, 0, 0), s->contextId, s->streamId,
			     s->correlationId, 0, NULL);
		break;
	}
	default:
		break;
	}
}

/*
 * The thread CUPTI hands a buffer to writes its records.  Inside a recorded call, or in
 * our own flush, the guard is ours already.  A thread of the runtime's (started inside a
 * call or while CUPTI started: its TLS guard is up for good) is registered for this, as
 * the records are the device's, and keeps its guard taken afterwards, so that nothing
 * else it does is recorded.  Without a thread state (tracing over) the records are
 * dropped: there is no stream left to count them in.
 */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	(void)size;
	struct lt_thread *t = NULL;
	int took = 0, quiet = 0;
	if (cs.n) {
		t = cs.t; /* inside a recorded call: the guard is ours */
	} else if (cs.flushing && lt_self && lt_self->guard) {
		t = lt_self; /* our own flush, the tracer's guard up (exec) */
	} else if (lt_tls_guard && lt_self && lt_self->guard) {
		t = lt_self; /* a runtime's thread, registered by an earlier buffer */
	} else {
		int saved = lt_tls_guard;
		lt_tls_guard = 0;
		t = lt_begin(LT_MOD_CUDA);
		lt_tls_guard = saved;
		took = t != NULL;
		quiet = saved != 0;
	}
	if (t) {
		if (sync_map.on)
			sync_point(0);
		CUpti_Activity *a = NULL;
		while (valid &&
		       cupti.cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
			activity(t, a);
		size_t dropped = 0;
		if (cupti.cuptiActivityGetNumDroppedRecords &&
		    cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
			CUPTI_SUCCESS &&
		    dropped)
			lt_emit1(t, LT_REC_LOST, LT_LOST_BUFFER, 0, dropped);
		if (took && !quiet)
			lt_finish(
			    t); /* a runtime's thread keeps the guard: its own calls stay out */
	}
	free(buffer);
}

/* ---- start ---- */

static void off(const char *why)
{
	lt_meta_escaped("gpu_off cupti", why);
	lt_info("CUDA device activity not recorded: %s", why);
}

static int has_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name, *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!strncmp(base, "libcudart.so", 12) || !strncmp(base, "libcuda.so", 10)) {
		if (!strncmp(base, "libcudart.so", 12) && base > name)
			snprintf(data, PATH_MAX, "%.*s", (int)(base - name), name);
		else if (!*(char *)data)
			strcpy(data, "-");
	}
	return 0;
}

static void *open_cupti(char *tried_list, size_t len)
{
	void *h = NULL;
	const char *lib_setting = lt_setting_str("LIBTRACE_CUPTI_LIB");
	if (lib_setting[0]) {
		snprintf(tried_list, len, "%s", lib_setting);
		return dlopen(lib_setting, RTLD_NOW | RTLD_LOCAL);
	}
	char dir[PATH_MAX] = "";
	dl_iterate_phdr(has_lib, dir);
	static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	char path[PATH_MAX + 64];
	size_t used = 0;
	for (int beside = dir[0] && dir[0] != '-'; beside >= 0 && !h; beside--)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++) {
			if (beside)
				snprintf(path, sizeof(path), "%s%s", dir, names[i]);
			else
				snprintf(path, sizeof(path), "%s", names[i]);
			int n =
			    snprintf(tried_list + used, len - used, "%s%s", used ? ", " : "", path);
			if (n > 0 && (size_t)n < len - used)
				used += (size_t)n;
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	return h;
}

static void flush_at_exit(void)
{
	cupti_flush();
	ended = 1; /* CUPTI may be gone after this; its callbacks, if any, still record */
}

/* CUDA does not work in the child of a fork (CUPTI's threads stayed in the parent, its
 * locks may be held there): nothing is asked of CUPTI, the cudart wrappers record again. */
static void after_fork_child(void)
{
	forked = 1;
	set_active(0);
}

static void start(void)
{
	char names[1024] = "";
	lib = open_cupti(names, sizeof(names));
	if (!lib) {
		char why[1200];
		snprintf(why, sizeof(why), "cannot load CUPTI (tried %s)", names);
		off(why);
		return;
	}
#define CUPTI_BIND(name, params) cupti.name = dlsym(lib, #name);
	CUPTI_FUNCTIONS(CUPTI_BIND)
#undef CUPTI_BIND
	(void)dlerror();
	if (!cupti.cuptiGetVersion || !cupti.cuptiSubscribe || !cupti.cuptiEnableDomain ||
	    !cupti.cuptiActivityRegisterCallbacks || !cupti.cuptiActivityEnable ||
	    !cupti.cuptiActivityFlushAll || !cupti.cuptiActivityGetNextRecord ||
	    !cupti.cuptiGetTimestamp || !cupti.cuptiUnsubscribe) {
		off("the CUPTI library lacks functions we need");
		return;
	}
	uint32_t version = 0;
	cupti.cuptiGetVersion(&version);
	/* Before any activity kind is enabled, as CUPTI requires. */
	CUptiResult r = cupti.cuptiActivityRegisterTimestampCallback
			    ? cupti.cuptiActivityRegisterTimestampCallback(host_clock)
			    : CUPTI_ERROR_NOT_SUPPORTED;
	if (r != CUPTI_SUCCESS) {
		sync_map.on = 1;
		sync_point(1);
	}
	r = cupti.cuptiSubscribe(&subscriber, on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		char why[256];
		snprintf(why, sizeof(why), "cuptiSubscribe: %d %s", (int)r, result_string(r));
		off(why);
		return;
	}
	set_active(1); /* from here on CUPTI sees the calls: the wrappers step aside */
	static const CUpti_ActivityKind kinds[] = {
	    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
	const char *failed = NULL;
	if ((r = cupti.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API)) ||
	    (r = cupti.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API)))
		failed = "cuptiEnableDomain";
	else if ((r = cupti.cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)))
		failed = "cuptiActivityRegisterCallbacks";
	for (size_t i = 0; !failed && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((r = cupti.cuptiActivityEnable(kinds[i])))
			failed = "cuptiActivityEnable";
	if (failed) {
		cupti.cuptiUnsubscribe(subscriber);
		set_active(0);
		char why[256];
		snprintf(why, sizeof(why), "%s: %d %s", failed, (int)r, result_string(r));
		off(why);
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	lt_meta_line("gpu cupti %u", version);
	lt_meta_line("gpu_clock %s", sync_map.on ? "sync" : "callback");
	lt_info("CUDA recorded through CUPTI %u", version);
}

static void start_once(void)
{
	if (__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL))
		return;
	if (lt_setting("LIBTRACE_CUPTI") == 1 /* off */ || !(lt_active & LT_MOD_CUDA))
		return;
	/* Loading CUPTI is the tracer's doing, not the program's: nothing it does is traced. */
	struct lt_thread *t = lt_self;
	long guard = t ? t->guard : 0;
	if (t)
		lt_guard_take(t);
	lt_tls_guard++;
	int in_runtime = lt_in_runtime;
	lt_in_runtime = 1; /* the threads CUPTI starts are its own */
	start();
	lt_in_runtime = in_runtime;
	lt_tls_guard--;
	if (t)
		t->guard = guard;
}

static void cupti_init(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	char dir[PATH_MAX] = "";
	dl_iterate_phdr(has_lib, dir);
	if (dir[0])
		start_once();
}

static void cupti_dlopened(const char *name, void *handle)
{
	if (!name || tried || __atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	int cudart = !strncmp(base, "libcudart.so", 12), driver = !strncmp(base, "libcuda.so", 10);
	if (handle && (cudart || driver)) {
		start_once();
	} else if (driver && !__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL)) {
		/* A CUDA runtime looked for the driver and found none: calls of a static cudart
		 * (nvcc's default) are invisible without it, those of a shared one are wrapped. */
		off("no CUDA driver (libcuda.so.1 not found): only calls to a shared libcudart "
		    "are recorded");
	}
}

static void cupti_flush(void)
{
	if (!active || ended || forked || cs.flushing)
		return;
	struct lt_thread *t = lt_self;
	long guard = t ? t->guard : 0;
	if (t)
		lt_guard_take(t);
	lt_tls_guard++;
	cs.flushing = 1;
	cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	cs.flushing = 0;
	lt_tls_guard--;
	if (t)
		t->guard = guard;
}

LT_MODULE(cupti) = {
    .name = "cupti",
    .bit = LT_MOD_CUDA,
    .order = 61,
    .constructor = cupti_init,
    .dlopened = cupti_dlopened,
    .before_exec = cupti_flush,
    .end_flush = cupti_flush,
};
