// SPDX-License-Identifier: BSD-3-Clause
/*
 * cuda_launch.cu - what a CUDA call costs on the host with a GPU: loops of `<<<>>>` launches
 * of an empty kernel (the stream is synchronised every 256 launches, so that the launch
 * queue never fills and the loop times the host's side), synchronous 4 KiB copies to the
 * device, and cudaMalloc + cudaFree pairs.  bench/cuda-gpu.sh runs it untraced, traced
 * through CUPTI, traced by the cudart wrappers (LIBTRACE_CUPTI=off) and preloaded with the
 * CUDA module off; it needs an NVIDIA GPU (bench/gpu.sh measures the wrappers without one).
 *
 *   cuda_launch [ITERS [REPS]]       (defaults: 20000, 11)
 *
 * The first line names the device (or the error that stopped the program: exit 2); then
 * one "NAME median N ns" line per loop, in nanoseconds per call (per pair for malloc +
 * free).  The thread pins itself to CPU 0.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

__global__ void empty(void)
{
}

/* Outside the BENCH macro, whose arguments cannot hold the launch's commas. */
static void launch(cudaStream_t s)
{
	empty<<<1, 32, 0, s>>>();
}

int main(int argc, char **argv)
{
	long iters = 20000;
	int reps = 11;
	if (!bench_args(argc, argv, &iters, &reps))
		return 2;
	bench_pin(0);
	cudaDeviceProp prop;
	cudaError_t e = cudaGetDeviceProperties(&prop, 0);
	if (e != cudaSuccess) {
		printf("# no device: %s\n", cudaGetErrorString(e));
		return 2;
	}
	printf("# %s\n", prop.name);
	static char host[4096];
	void *dev = NULL;
	cudaStream_t s;
	if (cudaMalloc(&dev, sizeof(host)) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
		return 2;
	volatile int sink = 0;
	BENCH("<<<>>> launch, empty kernel", iters, reps, {
		launch(s);
		if ((_i & 255) == 255)
			sink += cudaStreamSynchronize(s);
	});
	sink += cudaStreamSynchronize(s);
	BENCH("cudaMemcpy 4 KiB HtoD", iters, reps,
	      sink += cudaMemcpy(dev, host, sizeof(host), cudaMemcpyHostToDevice));
	BENCH_OPS("cudaMalloc + cudaFree (per pair)", iters / 4, reps, 1, {
		void *p = NULL;
		sink += cudaMalloc(&p, 4096);
		sink += cudaFree(p);
	});
	cudaFree(dev);
	return sink == 42; /* keeps the results live */
}
