// SPDX-License-Identifier: BSD-3-Clause
/*
 * cuda_calls.cu - a small CUDA program for the tracer's tests: each of N host threads runs
 * the same sequence of runtime calls (allocations, copies both ways, a set, a `<<<>>>`
 * launch, an explicit cudaLaunchKernel, streams and events, synchronisation, frees; one
 * allocation is never freed).  It prints every call's result and, at the end, what it
 * did (the ground truth a test compares the trace with).  Without a GPU every call fails
 * (35, cudaErrorInsufficientDriver) and the program still runs to the end.
 *
 *   cuda_calls [threads] [rounds]
 */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void add(float *y, const float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += x[i];
}

__global__ void scale(float *y, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] *= a;
}

enum { N = 1024, BYTES = N * sizeof(float) };

static int rounds = 1;
static int verbose;

static void report(int thread, const char *call, cudaError_t e)
{
	if (verbose)
		printf("thread %d %s -> %d\n", thread, call, (int)e);
}

static void *work(void *arg)
{
	int id = (int)(long)arg;
	float host[N];
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	for (int r = 0; r < rounds; r++) {
		float *x = NULL, *y = NULL, *kept = NULL;
		cudaStream_t s = NULL;
		cudaEvent_t ev = NULL;
		report(id, "cudaMalloc", cudaMalloc((void **)&x, BYTES));
		report(id, "cudaMalloc", cudaMalloc((void **)&y, BYTES));
		report(id, "cudaMalloc", cudaMalloc((void **)&kept, 2 * BYTES)); /* never freed */
		report(id, "cudaStreamCreate", cudaStreamCreate(&s));
		report(id, "cudaEventCreate", cudaEventCreate(&ev));
		report(id, "cudaMemcpy", cudaMemcpy(x, host, BYTES, cudaMemcpyHostToDevice));
		report(id, "cudaMemsetAsync", cudaMemsetAsync(y, 0, BYTES, s));
		add<<<N / 256, 256, 0, s>>>(y, x, N);
		report(id, "<<<add>>>", cudaGetLastError());
		float a = 2.0f;
		int n = N;
		void *args[] = {&y, &a, &n};
		report(id, "cudaLaunchKernel",
		       cudaLaunchKernel((const void *)scale, dim3(N / 128), dim3(128), args, 0, s));
		report(id, "cudaEventRecord", cudaEventRecord(ev, s));
		report(id, "cudaEventSynchronize", cudaEventSynchronize(ev));
		report(id, "cudaStreamSynchronize", cudaStreamSynchronize(s));
		report(id, "cudaMemcpyAsync",
		       cudaMemcpyAsync(host, y, BYTES, cudaMemcpyDeviceToHost, s));
		report(id, "cudaDeviceSynchronize", cudaDeviceSynchronize());
		report(id, "cudaEventDestroy", cudaEventDestroy(ev));
		report(id, "cudaStreamDestroy", cudaStreamDestroy(s));
		report(id, "cudaFree", cudaFree(x));
		report(id, "cudaFree", cudaFree(y));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 2;
	rounds = argc > 2 ? atoi(argv[2]) : 1;
	verbose = getenv("CUDA_CALLS_VERBOSE") != NULL;
	int count = -1;
	cudaError_t e = cudaGetDeviceCount(&count);
	printf("cudaGetDeviceCount -> %d (%s), %d devices\n", (int)e, cudaGetErrorName(e), count);
	pthread_t th[64];
	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 0; i < threads; i++)
		pthread_create(&th[i], NULL, work, (void *)(long)i);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	/* The ground truth, per thread and round. */
	printf("per thread and round: cudaMalloc 3 (%d bytes), cudaFree 2, cudaMemcpy 1 "
	       "(HtoD %d bytes), cudaMemcpyAsync 1 (DtoH %d bytes), cudaMemsetAsync 1, "
	       "launches 2 (add %dx256, scale %dx128), cudaStreamCreate 1, cudaEventCreate 1, "
	       "cudaEventRecord 1, cudaEventSynchronize 1, cudaStreamSynchronize 1, "
	       "cudaDeviceSynchronize 1, cudaEventDestroy 1, cudaStreamDestroy 1\n",
	       4 * BYTES, BYTES, BYTES, N / 256, N / 128);
	printf("threads %d rounds %d\n", threads, rounds);
	return 0;
}
