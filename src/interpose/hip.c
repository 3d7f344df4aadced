// SPDX-License-Identifier: BSD-3-Clause
/*
 * hip.c - the hip module: the HIP runtime's entry points (libamdhip64.so), recorded as
 * GPU_ENTER/GPU_LEAVE records of api LT_GPU_HIP (format.h, gpu.h).
 *
 * What it sees: every call the program makes into the shared HIP runtime (the only kind
 * there is: ROCm ships no static HIP runtime), with its arguments and return code, on the
 * calling thread; kernels by the name __hipRegisterFunction or hipModuleGetFunction gave
 * their handle.  Without a GPU the runtime still answers (hipGetDeviceCount 100, the other
 * calls 101, HIP 5.2): the calls are recorded all the same.  What it does not see: device
 * time, and calls that libraries make to the runtime through their own handle.
 *
 * Every wrapper holds the thread's guard across the real call (as the MPI layer does):
 * what the runtime does inside (its locks, the entry points it calls through its own PLT:
 * hipMemcpyHtoD -> hipMemcpy, hipExtLaunchKernel -> hipModuleLaunchKernel) is not recorded,
 * so each program call is one ENTER/LEAVE pair; lt_in_runtime keeps the threads the runtime
 * starts then untraced.  errno is the program's on both sides of the real call.  No HIP
 * header is needed: the prototypes below are the ABI of HIP 5.2 (handles are pointers,
 * hipError_t and hipMemcpyKind are int-sized enums, dim3 is passed by value).
 *
 * Device side (the seam): ROCm's tools get device activity from rocprofiler-sdk (roctracer
 * before it; neither is in Debian 12, and this project is lent only NVIDIA GPUs).  A
 * backend would be one more file, rocprofiler.c, built only where
 * <rocprofiler-sdk/registration.h> is found (as cupti/ is where cupti.h is).  It exports
 * rocprofiler_configure(), which rocprofiler-register finds among the symbols of the
 * preloaded library when the HIP runtime initialises; its tool_init creates a buffered
 * tracing context for kernel dispatches and memory copies, and the buffer callback writes
 * GPU_ACTIVITY records with times put on CLOCK_MONOTONIC as cupti/activity.c does (paired
 * lt_now()/rocprofiler_get_timestamp() readings).  If it also takes the HIP API callbacks,
 * these wrappers must then pass calls through without a record, as the cudart wrappers do
 * when CUPTI is active (gpu.h), so that nothing is recorded twice.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/gpu.h"

typedef int hipError_t;
typedef int hipMemcpyKind; /* its values are enum lt_gpu_copy's */
typedef void *hipStream_t;
typedef void *hipEvent_t;
typedef void *hipFunction_t;
typedef void *hipModule_t;
typedef struct lt_dim3 dim3;

enum {
	hipSuccess = 0,
	hipErrorInsufficientDriver = 35, /* what a wrapper answers when no runtime is loaded */
};

/*
 * The runtime's function `name`: the next definition after ours, else the runtime already
 * in the process, asked by name.  A library loaded with RTLD_LOCAL (a Python extension
 * linked with libamdhip64) has the runtime out of the global scope, where RTLD_NEXT does
 * not look, while its calls still reach our wrappers.  NULL when no runtime is loaded (a
 * program that looks for HIP with dlsym(RTLD_DEFAULT) finds our wrappers).
 */
static __attribute__((noinline)) void *hip_sym(const char *name)
{
	static const char *const runtimes[] = {"libamdhip64.so.5", "libamdhip64.so.6",
					       "libamdhip64.so.7", "libamdhip64.so", NULL};
	return lt_dlsym_runtime(name, runtimes);
}

extern const struct lt_module lt_module_hip;

/* The GPU_ENTER of a call named `fn` (its call site noted in t), then into the runtime.  A
 * call the name filters leave out (a launch goes by its kernel's name, w[5]) writes
 * nothing, and says so in the module's word for hip_leave. */
static __attribute__((noinline)) void hip_enter(struct lt_thread *t, const char *fn, unsigned op,
						const uint64_t *w, unsigned n)
{
	uint32_t name = lt_string_id(t, fn);
	int out = lt_gpu_filtered(t, name, op == LT_GPU_OP_LAUNCH && n > 5 ? w[5] : 0);
	lt_local(t, &lt_module_hip)->n = (uint64_t)out;
	if (!out)
		lt_gpu_enter(t, LT_GPU_HIP, op, name, 0, w, n, 1);
	lt_in_runtime = 1;
}

/* Back from the runtime: the GPU_LEAVE (`made`: what the call made, 0: nothing). */
static __attribute__((noinline)) void hip_leave(struct lt_thread *t, unsigned op, hipError_t rc,
						const void *made)
{
	lt_in_runtime = 0;
	if (!lt_local(t, &lt_module_hip)->n)
		lt_gpu_leave(t, LT_GPU_HIP, op, rc, (uint64_t)(uintptr_t)made);
	lt_finish(t);
}

/*
 * WRAP_AT(name, params, args, op, words, made, site) defines the wrapper of
 * hipError_t name(params): GPU_ENTER with the op's payload `words` (a parenthesised list,
 * format.h; may be empty), the real call, GPU_LEAVE with its return code and, when it
 * succeeded, `made` (a pointer expression: what the call allocated or created).  `site`
 * runs after the call site is noted (launches made by the `<<<>>>` stub take the push's).
 */
#define WRAP_AT(name, params, args, op, words, made, site)                                  \
	static hipError_t(*real_##name) params;                                             \
	LT_EXPORT hipError_t name params                                                    \
	{                                                                                   \
		int err = errno;                                                            \
		LT_RESOLVE_BY(name, hip_sym);                                               \
		struct lt_thread *t = likely(real_##name) ? lt_begin(LT_MOD_HIP) : NULL;    \
		errno = err;                                                                \
		if (!t)                                                                     \
			return real_##name ? real_##name args : hipErrorInsufficientDriver; \
		LT_NOTE_CALLER(t);                                                          \
		site;                                                                       \
		const uint64_t w[] = {0, LT_UNPAREN words}; /* w[0]: C has no empty {} */   \
		hip_enter(t, #name, op, w + 1, sizeof(w) / sizeof(w[0]) - 1);               \
		errno = err;                                                                \
		hipError_t rc = real_##name args;                                           \
		err = errno;                                                                \
		hip_leave(t, op, rc, rc == hipSuccess ? (made) : NULL);                     \
		errno = err;                                                                \
		return rc;                                                                  \
	}

#define WRAP(name, params, args, op, words, made) \
	WRAP_AT(name, params, args, op, words, made, (void)0)

/* The pointer a successful call stored in *out (NULL: none). */
#define OUT(out) ((out) ? (const void *)*(out) : NULL)
#define U(x)	 ((uint64_t)(uintptr_t)(x))

/* Allocations and frees: ALLOC (bytes, kind of memory), FREE (address, kind of memory). */
WRAP(hipMalloc, (void **ptr, size_t size), (ptr, size), LT_GPU_OP_ALLOC, (size, LT_GPU_MEM_DEVICE),
     OUT(ptr))
WRAP(hipMallocManaged, (void **ptr, size_t size, unsigned flags), (ptr, size, flags),
     LT_GPU_OP_ALLOC, (size, LT_GPU_MEM_MANAGED), OUT(ptr))
WRAP(hipHostMalloc, (void **ptr, size_t size, unsigned flags), (ptr, size, flags), LT_GPU_OP_ALLOC,
     (size, LT_GPU_MEM_HOST), OUT(ptr))
WRAP(hipMallocAsync, (void **ptr, size_t size, hipStream_t stream), (ptr, size, stream),
     LT_GPU_OP_ALLOC, (size, LT_GPU_MEM_ASYNC), OUT(ptr))
WRAP(hipFree, (void *ptr), (ptr), LT_GPU_OP_FREE, (U(ptr), LT_GPU_MEM_DEVICE), NULL)
WRAP(hipHostFree, (void *ptr), (ptr), LT_GPU_OP_FREE, (U(ptr), LT_GPU_MEM_HOST), NULL)
WRAP(hipFreeAsync, (void *ptr, hipStream_t stream), (ptr, stream), LT_GPU_OP_FREE,
     (U(ptr), LT_GPU_MEM_ASYNC), NULL)

/* Copies: COPY (bytes, destination, source, direction, stream). */
#define COPY(bytes, dst, src, kind, stream) (bytes, U(dst), U(src), (uint64_t)(kind), U(stream))

WRAP(hipMemcpy, (void *dst, const void *src, size_t bytes, hipMemcpyKind kind),
     (dst, src, bytes, kind), LT_GPU_OP_COPY, COPY(bytes, dst, src, kind, 0), NULL)
WRAP(hipMemcpy_spt, (void *dst, const void *src, size_t bytes, hipMemcpyKind kind),
     (dst, src, bytes, kind), LT_GPU_OP_COPY, COPY(bytes, dst, src, kind, 0), NULL)
WRAP(hipMemcpyWithStream,
     (void *dst, const void *src, size_t bytes, hipMemcpyKind kind, hipStream_t stream),
     (dst, src, bytes, kind, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, kind, stream), NULL)
WRAP(hipMemcpyAsync,
     (void *dst, const void *src, size_t bytes, hipMemcpyKind kind, hipStream_t stream),
     (dst, src, bytes, kind, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, kind, stream), NULL)
WRAP(hipMemcpyAsync_spt,
     (void *dst, const void *src, size_t bytes, hipMemcpyKind kind, hipStream_t stream),
     (dst, src, bytes, kind, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, kind, stream), NULL)
WRAP(hipMemcpyHtoD, (void *dst, void *src, size_t bytes), (dst, src, bytes), LT_GPU_OP_COPY,
     COPY(bytes, dst, src, LT_GPU_COPY_HTOD, 0), NULL)
WRAP(hipMemcpyDtoH, (void *dst, void *src, size_t bytes), (dst, src, bytes), LT_GPU_OP_COPY,
     COPY(bytes, dst, src, LT_GPU_COPY_DTOH, 0), NULL)
WRAP(hipMemcpyDtoD, (void *dst, void *src, size_t bytes), (dst, src, bytes), LT_GPU_OP_COPY,
     COPY(bytes, dst, src, LT_GPU_COPY_DTOD, 0), NULL)
WRAP(hipMemcpyHtoDAsync, (void *dst, void *src, size_t bytes, hipStream_t stream),
     (dst, src, bytes, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, LT_GPU_COPY_HTOD, stream),
     NULL)
WRAP(hipMemcpyDtoHAsync, (void *dst, void *src, size_t bytes, hipStream_t stream),
     (dst, src, bytes, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, LT_GPU_COPY_DTOH, stream),
     NULL)
WRAP(hipMemcpyDtoDAsync, (void *dst, void *src, size_t bytes, hipStream_t stream),
     (dst, src, bytes, stream), LT_GPU_OP_COPY, COPY(bytes, dst, src, LT_GPU_COPY_DTOD, stream),
     NULL)

/* Sets: SET (bytes, destination, value, stream). */
WRAP(hipMemset, (void *dst, int value, size_t bytes), (dst, value, bytes), LT_GPU_OP_SET,
     (bytes, U(dst), (uint32_t)value), NULL)
WRAP(hipMemset_spt, (void *dst, int value, size_t bytes), (dst, value, bytes), LT_GPU_OP_SET,
     (bytes, U(dst), (uint32_t)value), NULL)
WRAP(hipMemsetAsync, (void *dst, int value, size_t bytes, hipStream_t stream),
     (dst, value, bytes, stream), LT_GPU_OP_SET, (bytes, U(dst), (uint32_t)value, U(stream)), NULL)

/*
 * Launches: LAUNCH (grid, block, dynamic shared memory, stream, kernel name).
 *
 * Exactly one LAUNCH per launch.  A `<<<>>>` (or hipLaunchKernelGGL) compiles to
 * __hipPushCallConfiguration(grid, block, shm, stream) at the launch site and, only when
 * that returned 0, a call of the kernel's host stub, which calls __hipPopCallConfiguration
 * and then hipLaunchKernel(stub, ...) (clang checks the push's result: verified on HIP
 * 5.2).  So a push that succeeds records nothing: the hipLaunchKernel that follows records
 * the launch, with the kernel's name, and with the push's call site (the `<<<>>>` line, not
 * the stub), which the push leaves in stub_caller for it.  A push that fails (every push
 * without a GPU: 101) is the whole launch, and records it as a LAUNCH named
 * __hipPushCallConfiguration; the kernel is unknown there (the stub is never called).
 * Both of its records are written after the call (gpu.h stamps an ENTER when it is
 * written): a failed push takes no time worth showing.
 */
static __thread struct lt_caller stub_caller LT_TLS; /* ra 0: no push pending */

/* A launch takes the call site of the push before it, if any (the `<<<>>>` line). */
static inline void stub_site(struct lt_thread *t)
{
	if (stub_caller.ra) {
		lt_note_caller(t, stub_caller);
		stub_caller.ra = 0;
	}
}

/* Word i of LAUNCH's grid and block (gpu.h), as an expression. */
static inline uint64_t dims(dim3 grid, dim3 block, unsigned i)
{
	uint64_t w[3];
	lt_gpu_dims(w, grid, block);
	return w[i];
}

#define LAUNCH(grid, block, shm, stream, key)                                               \
	(dims(grid, block, 0), dims(grid, block, 1), dims(grid, block, 2), (uint64_t)(shm), \
	 U(stream), lt_gpu_kernel_id(t, key))

WRAP_AT(hipLaunchKernel,
	(const void *fn, dim3 grid, dim3 block, void **args, size_t shm, hipStream_t stream),
	(fn, grid, block, args, shm, stream), LT_GPU_OP_LAUNCH,
	LAUNCH(grid, block, shm, stream, fn), NULL, stub_site(t))
WRAP_AT(hipLaunchKernel_spt,
	(const void *fn, dim3 grid, dim3 block, void **args, size_t shm, hipStream_t stream),
	(fn, grid, block, args, shm, stream), LT_GPU_OP_LAUNCH,
	LAUNCH(grid, block, shm, stream, fn), NULL, stub_site(t))
WRAP(hipExtLaunchKernel,
     (const void *fn, dim3 grid, dim3 block, void **args, size_t shm, hipStream_t stream,
      hipEvent_t start, hipEvent_t stop, int flags),
     (fn, grid, block, args, shm, stream, start, stop, flags), LT_GPU_OP_LAUNCH,
     LAUNCH(grid, block, shm, stream, fn), NULL)
WRAP(hipModuleLaunchKernel,
     (hipFunction_t f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
      unsigned shm, hipStream_t stream, void **params, void **extra),
     (f, gx, gy, gz, bx, by, bz, shm, stream, params, extra), LT_GPU_OP_LAUNCH,
     LAUNCH(((dim3){gx, gy, gz}), ((dim3){bx, by, bz}), shm, stream, f), NULL)

static hipError_t (*real___hipPushCallConfiguration)(dim3 grid, dim3 block, size_t shm,
						     hipStream_t stream);

LT_EXPORT hipError_t __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shm,
						hipStream_t stream)
{
	int err = errno;
	LT_RESOLVE_BY(__hipPushCallConfiguration, hip_sym);
	struct lt_thread *t = likely(real___hipPushCallConfiguration) ? lt_begin(LT_MOD_HIP) : NULL;
	errno = err;
	if (!t)
		return real___hipPushCallConfiguration
			   ? real___hipPushCallConfiguration(grid, block, shm, stream)
			   : hipErrorInsufficientDriver;
	lt_in_runtime = 1;
	hipError_t rc = real___hipPushCallConfiguration(grid, block, shm, stream);
	err = errno;
	lt_in_runtime = 0;
	if (rc == hipSuccess) {
		stub_caller = LT_CALLER();
		lt_finish(t);
	} else {
		LT_NOTE_CALLER(t);
		uint64_t w[LT_GPU_ARGS_MAX] = {0, 0, 0, shm, U(stream), 0}; /* kernel unknown */
		lt_gpu_dims(w, grid, block);
		hip_enter(t, "__hipPushCallConfiguration", LT_GPU_OP_LAUNCH, w, LT_GPU_ARGS_MAX);
		hip_leave(t, LT_GPU_OP_LAUNCH, rc, NULL);
	}
	errno = err;
	return rc;
}

/*
 * Kernel names.  A program's module constructor registers each kernel's host stub with its
 * (mangled) device name; hipModuleGetFunction gives a handle for a name.  Registration is
 * not recorded as a call, and names are kept whatever holds the guard (a library's
 * constructor may run inside a dlopen or another traced call).
 */
static void (*real___hipRegisterFunction)(void **modules, const void *host, char *device_fn,
					  const char *device_name, unsigned thread_limit, void *tid,
					  void *bid, dim3 *block, dim3 *grid, int *wave_size);

LT_EXPORT void __hipRegisterFunction(void **modules, const void *host, char *device_fn,
				     const char *device_name, unsigned thread_limit, void *tid,
				     void *bid, dim3 *block, dim3 *grid, int *wave_size)
{
	int err = errno;
	LT_RESOLVE_BY(__hipRegisterFunction, hip_sym);
	lt_gpu_kernel_name_set(host, device_name ? device_name : device_fn);
	errno = err;
	if (real___hipRegisterFunction)
		real___hipRegisterFunction(modules, host, device_fn, device_name, thread_limit, tid,
					   bid, block, grid, wave_size);
}

/* hipModuleGetFunction's product: the handle, named in the kernel table. */
static const void *named(hipFunction_t *f, const char *name)
{
	if (!f || !*f)
		return NULL;
	lt_gpu_kernel_name_set(*f, name);
	return *f;
}

WRAP(hipModuleGetFunction, (hipFunction_t * f, hipModule_t module, const char *name),
     (f, module, name), LT_GPU_OP_CALL, (U(module)), named(f, name))

/* Host waits: SYNC (the stream or event waited for; 0: the device). */
WRAP(hipDeviceSynchronize, (void), (), LT_GPU_OP_SYNC, (0), NULL)
WRAP(hipStreamSynchronize, (hipStream_t stream), (stream), LT_GPU_OP_SYNC, (U(stream)), NULL)
WRAP(hipStreamSynchronize_spt, (hipStream_t stream), (stream), LT_GPU_OP_SYNC, (U(stream)), NULL)
WRAP(hipEventSynchronize, (hipEvent_t event), (event), LT_GPU_OP_SYNC, (U(event)), NULL)

/* Streams, events, devices: CALL (the objects it concerns, in argument order). */
WRAP(hipStreamCreate, (hipStream_t * stream), (stream), LT_GPU_OP_CALL, (), OUT(stream))
WRAP(hipStreamCreateWithFlags, (hipStream_t * stream, unsigned flags), (stream, flags),
     LT_GPU_OP_CALL, (), OUT(stream))
WRAP(hipStreamDestroy, (hipStream_t stream), (stream), LT_GPU_OP_CALL, (U(stream)), NULL)
WRAP(hipEventCreate, (hipEvent_t * event), (event), LT_GPU_OP_CALL, (), OUT(event))
WRAP(hipEventRecord, (hipEvent_t event, hipStream_t stream), (event, stream), LT_GPU_OP_CALL,
     (U(event), U(stream)), NULL)
WRAP(hipEventDestroy, (hipEvent_t event), (event), LT_GPU_OP_CALL, (U(event)), NULL)
WRAP(hipStreamWaitEvent, (hipStream_t stream, hipEvent_t event, unsigned flags),
     (stream, event, flags), LT_GPU_OP_CALL, (U(stream), U(event)), NULL)
WRAP(hipStreamWaitEvent_spt, (hipStream_t stream, hipEvent_t event, unsigned flags),
     (stream, event, flags), LT_GPU_OP_CALL, (U(stream), U(event)), NULL)
WRAP(hipGetDeviceCount, (int *count), (count), LT_GPU_OP_CALL, (), NULL)
WRAP(hipSetDevice, (int device), (device), LT_GPU_OP_CALL, ((uint32_t)device), NULL)

LT_MODULE(hip) = {.name = "hip", .bit = LT_MOD_HIP, .order = 70};
