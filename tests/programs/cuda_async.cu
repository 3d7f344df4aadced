// SPDX-License-Identifier: BSD-3-Clause
/*
 * cuda_async.cu - asynchronous CUDA for tools/gpu-check.sh (needs a GPU): pinned host
 * memory, copies and kernels on two streams ordered by an event, a stream-ordered
 * allocation (cudaMallocAsync / cudaFreeAsync), and a CUDA graph of two kernels captured
 * from a third stream and launched GRAPHS times.  It checks the results on the host and
 * prints what it did (the ground truth the check compares the trace with):
 *
 *   launches L graph_launches G graph_kernels K copies C
 *   result ok|wrong
 *
 *   cuda_async [GRAPHS]       (default 3)
 *
 * Exit status 0 when every call succeeded and the results are right, 1 otherwise.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

__global__ void fill(float *y, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = v;
}

__global__ void axpy(float *y, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] += a * x[i];
}

enum { N = 1 << 16, BYTES = N * sizeof(float), BLOCK = 256, GRID = N / BLOCK };

static int failed;

static void check(const char *what, cudaError_t e)
{
	if (e != cudaSuccess) {
		fprintf(stderr, "cuda_async: %s: %s\n", what, cudaGetErrorString(e));
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	int graphs = argc > 1 ? atoi(argv[1]) : 3;
	if (graphs < 1 || graphs > 1000) {
		fprintf(stderr, "usage: cuda_async [GRAPHS (1..1000)]\n");
		return 2;
	}
	float *host = NULL, *x = NULL, *y = NULL, *tmp = NULL;
	cudaStream_t s1, s2, s3;
	cudaEvent_t done;
	int launches = 0, copies = 0;
	check("cudaMallocHost", cudaMallocHost((void **)&host, BYTES));
	check("cudaMalloc", cudaMalloc((void **)&x, BYTES));
	check("cudaMalloc", cudaMalloc((void **)&y, BYTES));
	check("cudaStreamCreate", cudaStreamCreate(&s1));
	check("cudaStreamCreate", cudaStreamCreate(&s2));
	check("cudaStreamCreate", cudaStreamCreate(&s3));
	check("cudaEventCreate", cudaEventCreate(&done));
	if (failed)
		return 1;
	for (int i = 0; i < N; i++)
		host[i] = 1.0f;

	/* s1: x from the host, a scratch buffer of its own; s2 waits for it, then y = 2 + 3x. */
	check("cudaMemcpyAsync", cudaMemcpyAsync(x, host, BYTES, cudaMemcpyHostToDevice, s1));
	copies++;
	check("cudaMallocAsync", cudaMallocAsync((void **)&tmp, BYTES, s1));
	fill<<<GRID, BLOCK, 0, s1>>>(tmp, 0.0f, N);
	launches++;
	check("cudaFreeAsync", cudaFreeAsync(tmp, s1));
	check("cudaEventRecord", cudaEventRecord(done, s1));
	check("cudaStreamWaitEvent", cudaStreamWaitEvent(s2, done, 0));
	fill<<<GRID, BLOCK, 0, s2>>>(y, 2.0f, N);
	axpy<<<GRID, BLOCK, 0, s2>>>(y, x, 3.0f, N);
	launches += 2;
	check("cudaStreamSynchronize", cudaStreamSynchronize(s2));

	/* A graph of two kernels (y += x, y += 2x), captured on s3 and launched `graphs` times. */
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	check("cudaStreamBeginCapture",
	      cudaStreamBeginCapture(s3, cudaStreamCaptureModeThreadLocal));
	axpy<<<GRID, BLOCK, 0, s3>>>(y, x, 1.0f, N);
	axpy<<<GRID, BLOCK, 0, s3>>>(y, x, 2.0f, N);
	check("cudaStreamEndCapture", cudaStreamEndCapture(s3, &graph));
	check("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));
	for (int g = 0; g < graphs; g++)
		check("cudaGraphLaunch", cudaGraphLaunch(exec, s3));
	check("cudaStreamSynchronize", cudaStreamSynchronize(s3));

	check("cudaMemcpyAsync", cudaMemcpyAsync(host, y, BYTES, cudaMemcpyDeviceToHost, s3));
	copies++;
	check("cudaStreamSynchronize", cudaStreamSynchronize(s3));
	float want = 2.0f + 3.0f + 3.0f * (float)graphs;
	int right = 1;
	for (int i = 0; i < N; i++)
		right &= host[i] == want;

	cudaGraphExecDestroy(exec);
	cudaGraphDestroy(graph);
	cudaEventDestroy(done);
	cudaStreamDestroy(s1);
	cudaStreamDestroy(s2);
	cudaStreamDestroy(s3);
	cudaFree(x);
	cudaFree(y);
	cudaFreeHost(host);
	printf("launches %d graph_launches %d graph_kernels %d copies %d\n", launches, graphs,
	       2 * graphs, copies);
	printf("result %s\n", right ? "ok" : "wrong");
	return failed || !right;
}
