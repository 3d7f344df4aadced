// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpu_calls - what a GPU runtime call costs on the host: loops of malloc + free, a 4 KiB
 * copy to the device and a kernel launch through the runtime's C entry points.  One source
 * for both runtimes, chosen when it is built (bench/gpu.sh builds both, with gcc, no GPU
 * compiler and no header):
 *
 *   -DGPU_HIP  ... -lamdhip64                        hipMalloc, hipFree, hipMemcpy, hipLaunchKernel
 *   -DGPU_CUDA ... -L/usr/local/cuda/lib -lcudart    the same in the shared CUDA runtime
 *
 *   gpu_calls [ITERS [REPS]]       (defaults: 20000, 11)
 *
 * Without a GPU every call fails at once (HIP 101, CUDA 35) but still goes all the way
 * through a tracer's wrapper and into the runtime: what tracing adds per call is the same
 * as with a GPU, where the runtime's own time would only be larger.  The first line names
 * the runtime and the code its calls return; then one "NAME median N ns" line per loop, in
 * nanoseconds per call (malloc + free: per pair).  The thread pins itself to CPU 0 (a
 * tracer's writer thread stays free to run elsewhere).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

/* dim3 as the runtimes take it: by value, two INTEGER eightbytes. */
struct dim3 {
	unsigned x, y, z;
};

#if defined(GPU_HIP)
#define RT	  "HIP"
#define GPU(name) hip##name
#elif defined(GPU_CUDA)
#define RT	  "CUDA (shared cudart)"
#define GPU(name) cuda##name
#else
#error "build with -DGPU_HIP or -DGPU_CUDA"
#endif
#define GPU_COPY_HTOD 1 /* hipMemcpyHostToDevice, cudaMemcpyHostToDevice */

/* The runtime API's C prototypes (error codes and enums are int, streams pointers). */
extern int GPU(Malloc)(void **p, size_t n);
extern int GPU(Free)(void *p);
extern int GPU(Memcpy)(void *dst, const void *src, size_t n, int kind);
extern int GPU(LaunchKernel)(const void *fn, struct dim3 grid, struct dim3 block, void **args,
			     size_t shm, void *stream);

static void kernel(void)
{
}

int main(int argc, char **argv)
{
	long iters = 20000;
	int reps = 11;
	if (!bench_args(argc, argv, &iters, &reps))
		return 2;
	bench_pin(0);
	static char host[4096];
	void *dev = NULL;
	struct dim3 grid = {4, 1, 1}, block = {256, 1, 1};
	void *args[] = {&dev};
	int rc = GPU(Malloc)(&dev, 4096); /* the runtime's initialisation, outside the loops */
	printf("# %s runtime: Malloc returns %d\n", RT, rc);
	if (rc == 0)
		GPU(Free)(dev);
	volatile int sink = 0;
	BENCH_OPS("Malloc + Free (per pair)", iters, reps, 1, {
		void *p = NULL;
		sink += GPU(Malloc)(&p, 4096);
		sink += GPU(Free)(p);
	});
	BENCH("Memcpy 4 KiB HtoD", iters, reps,
	      sink += GPU(Memcpy)(dev, host, sizeof(host), GPU_COPY_HTOD));
	BENCH("LaunchKernel", iters, reps,
	      sink += GPU(LaunchKernel)((const void *)kernel, grid, block, args, 0, NULL));
	return sink == 42; /* keeps the results live */
}
