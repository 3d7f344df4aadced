// SPDX-License-Identifier: BSD-3-Clause
/*
 * hip_calls.c - HIP runtime calls with known arguments, for tests/e2e/hip.sh: plain C
 * built with gcc against Debian's libamdhip64 (no hipcc, no GPU needed).
 *
 *   hip_calls THREADS ROUNDS TRUTH
 *
 * The main thread makes one call of every HIP entry point libtrace wraps; then THREADS
 * threads each make ROUNDS times a fixed sequence: malloc, copy to the device, memset, a
 * launch of a registered kernel through hipLaunchKernel, a `<<<>>>` launch as clang
 * compiles it (__hipPushCallConfiguration, then, only if that succeeded, the stub's
 * __hipPopCallConfiguration and hipLaunchKernel), hipModuleLaunchKernel, a stream and an
 * event created, recorded, waited for and destroyed, a device sync, a copy back, free.
 *
 * stdout: each thread's calls and return codes, and the totals: the same traced and
 * untraced.  TRUTH (a file) gets every call as the trace must show it: "T<thread> <name>
 * rc=<code> key=value...", in trace-dump's spelling, with the addresses the program passed
 * (these differ from run to run, hence a file apart).  Thread 0 is the main thread, 1..N
 * the threads in creation order.  A launch is noted once: by the push when it fails (no
 * GPU), else by the hipLaunchKernel of the stub.
 *
 * Without a device the runtime fails every call (hipGetDeviceCount 100, others 101)
 * before it touches memory, so handles the calls would have made are preset to distinct
 * fake values (streams, events, device pointers) and passed on: the trace must show them.
 */
#include <hip/hip_runtime_api.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What hipcc's module constructor calls for each kernel (no header declares it). */
extern void __hipRegisterFunction(void **modules, const void *host, char *device_fn,
				  const char *device_name, unsigned thread_limit, void *tid,
				  void *bid, dim3 *block, dim3 *grid, int *wave_size);

#define KERNEL_A "_Z8kernel_aPfi"
#define CHEVRON	 "_Z9chevron_kPfi"
#define MODFUN	 "_Z6modfunPf"

/* A thread's log: its stdout lines and its truth lines, printed by main in thread order. */
struct log {
	int thread;
	char *out, *truth;
	size_t out_len, truth_len;
	FILE *o, *t;
	unsigned calls, launches, rc[3]; /* rc 0, 100, 101 */
	unsigned rc_other;
};

static void log_open(struct log *lg, int thread)
{
	memset(lg, 0, sizeof(*lg));
	lg->thread = thread;
	lg->o = open_memstream(&lg->out, &lg->out_len);
	lg->t = open_memstream(&lg->truth, &lg->truth_len);
	if (!lg->o || !lg->t) {
		perror("open_memstream");
		exit(2);
	}
}

/* Notes a call: its name and code on stdout, and as the trace must show it (fmt: the
 * GPU_ENTER's key=value words). */
static __attribute__((format(printf, 4, 5))) hipError_t note(struct log *lg, const char *fn,
							     hipError_t rc, const char *fmt, ...)
{
	fprintf(lg->o, "thread %d: %s %d\n", lg->thread, fn, (int)rc);
	fprintf(lg->t, "T%d %s rc=%d ", lg->thread, fn, (int)rc);
	va_list ap;
	va_start(ap, fmt);
	vfprintf(lg->t, fmt, ap);
	va_end(ap);
	fputc('\n', lg->t);
	lg->calls++;
	if (rc == hipSuccess)
		lg->rc[0]++;
	else if (rc == hipErrorNoDevice)
		lg->rc[1]++;
	else if (rc == hipErrorInvalidDevice)
		lg->rc[2]++;
	else
		lg->rc_other++;
	return rc;
}

/* A pointer as trace-dump prints it (0x0 for NULL, where printf's %p writes (nil)). */
#define P(x) ((unsigned long)(uintptr_t)(x))

static void *fake(uintptr_t base, int thread)
{
	return (void *)(base + ((uintptr_t)thread << 16));
}

/* Kernels' host stubs: their addresses are what launches pass. */
static void kernel_a(float *p, int n)
{
	(void)p, (void)n;
}

/* The `<<<>>>` stub, as clang emits it: pops the configuration and launches itself (a
 * function of its own, as clang's is: the launch's call site is in it). */
static __attribute__((noinline)) hipError_t chevron_k(struct log *lg, float *p, int n)
{
	dim3 grid, block;
	size_t shm;
	hipStream_t stream;
	__hipPopCallConfiguration(&grid, &block, &shm, &stream);
	void *args[] = {&p, &n};
	hipError_t rc = hipLaunchKernel((const void *)chevron_k, grid, block, args, shm, stream);
	lg->launches++;
	return note(lg, "hipLaunchKernel", rc,
		    "grid=%ux%ux%u block=%ux%ux%u shared=%zu stream=0x%lx kernel=" CHEVRON, grid.x,
		    grid.y, grid.z, block.x, block.y, block.z, shm, P(stream));
}

/* chevron_k<<<grid, block, shm, stream>>>(p, n) */
static void chevron(struct log *lg, dim3 grid, dim3 block, size_t shm, hipStream_t stream, float *p,
		    int n)
{
	hipError_t rc = __hipPushCallConfiguration(grid, block, shm, stream);
	if (rc == hipSuccess) {
		chevron_k(lg, p, n);
		return;
	}
	lg->launches++;
	note(lg, "__hipPushCallConfiguration", rc,
	     "grid=%ux%ux%u block=%ux%ux%u shared=%zu stream=0x%lx kernel=?", grid.x, grid.y,
	     grid.z, block.x, block.y, block.z, shm, P(stream));
}

__attribute__((constructor)) static void register_kernels(void)
{
	static void *module[4]; /* what __hipRegisterFatBinary would return; not read here */
	__hipRegisterFunction(module, (const void *)kernel_a, (char *)KERNEL_A, KERNEL_A, -1u, NULL,
			      NULL, NULL, NULL, NULL);
	__hipRegisterFunction(module, (const void *)chevron_k, (char *)CHEVRON, CHEVRON, -1u, NULL,
			      NULL, NULL, NULL, NULL);
}

static int rounds;
static char host_buf[64][1 << 16];

/* The fixed sequence of a thread (thread >= 1): bytes differ per thread. */
static void *worker(void *arg)
{
	struct log *lg = arg;
	int i = lg->thread;
	size_t bytes = 4096u * (unsigned)i;
	char *h = host_buf[i % 64];
	for (int r = 0; r < rounds; r++) {
		void *d = fake(0xd0000000u, i);
		hipStream_t s = fake(0x50000000u, i);
		hipEvent_t e = fake(0xe0000000u, i);
		void *args[] = {&d, &i};
		dim3 g = {4, 1, 1}, b = {256, 1, 1};
		dim3 cg = {8, 2, 1}, cb = {64, 2, 1};

		note(lg, "hipMalloc", hipMalloc(&d, bytes), "bytes=%zu mem=device", bytes);
		note(lg, "hipMemcpy", hipMemcpy(d, h, bytes, hipMemcpyHostToDevice),
		     "bytes=%zu dst=0x%lx src=0x%lx kind=HtoD stream=0x0", bytes, P(d), P(h));
		note(lg, "hipMemset", hipMemset(d, 0x5a, bytes), "bytes=%zu dst=0x%lx value=90",
		     bytes, P(d));
		lg->launches++;
		note(lg, "hipLaunchKernel",
		     hipLaunchKernel((const void *)kernel_a, g, b, args, 0, 0),
		     "grid=4x1x1 block=256x1x1 shared=0 stream=0x0 kernel=" KERNEL_A);
		chevron(lg, cg, cb, 128, 0, d, i);
		lg->launches++;
		note(lg, "hipModuleLaunchKernel",
		     hipModuleLaunchKernel(NULL, 2, 3, 1, 32, 1, 1, 64, s, args, NULL),
		     "grid=2x3x1 block=32x1x1 shared=64 stream=0x%lx kernel=?", P(s));
		note(lg, "hipStreamCreate", hipStreamCreate(&s), "%s", "");
		note(lg, "hipStreamSynchronize", hipStreamSynchronize(s), "on=0x%lx", P(s));
		note(lg, "hipEventCreate", hipEventCreate(&e), "%s", "");
		note(lg, "hipEventRecord", hipEventRecord(e, s), "obj=0x%lx obj2=0x%lx", P(e),
		     P(s));
		note(lg, "hipEventSynchronize", hipEventSynchronize(e), "on=0x%lx", P(e));
		note(lg, "hipStreamDestroy", hipStreamDestroy(s), "obj=0x%lx", P(s));
		note(lg, "hipEventDestroy", hipEventDestroy(e), "obj=0x%lx", P(e));
		note(lg, "hipDeviceSynchronize", hipDeviceSynchronize(), "on=0x0");
		note(lg, "hipMemcpy", hipMemcpy(h, d, bytes, hipMemcpyDeviceToHost),
		     "bytes=%zu dst=0x%lx src=0x%lx kind=DtoH stream=0x0", bytes, P(h), P(d));
		note(lg, "hipFree", hipFree(d), "ptr=0x%lx mem=device", P(d));
	}
	return NULL;
}

/* One call of every other wrapped entry point, on the main thread (thread 0). */
static void main_calls(struct log *lg)
{
	int count = -1;
	void *d = fake(0xd0000000u, 0), *d2 = fake(0xd8000000u, 0), *p = fake(0xc0000000u, 0);
	hipStream_t s = fake(0x50000000u, 0);
	hipEvent_t e = fake(0xe0000000u, 0);
	hipFunction_t f = NULL;
	hipModule_t mod = fake(0xa0000000u, 0);
	char *h = host_buf[0];
	dim3 g = {16, 1, 1}, b = {128, 1, 1};
	void *args[] = {&d};

	note(lg, "hipGetDeviceCount", hipGetDeviceCount(&count), "%s", "");
	note(lg, "hipSetDevice", hipSetDevice(0), "obj=0x0");
	note(lg, "hipModuleGetFunction", hipModuleGetFunction(&f, mod, MODFUN), "obj=0x%lx",
	     P(mod));
	note(lg, "hipMallocManaged", hipMallocManaged(&p, 1000, hipMemAttachGlobal),
	     "bytes=1000 mem=managed");
	note(lg, "hipHostMalloc", hipHostMalloc(&p, 2000, 0), "bytes=2000 mem=\"pinned host\"");
	note(lg, "hipMallocAsync", hipMallocAsync(&d2, 3000, s),
	     "bytes=3000 mem=\"stream-ordered device\"");
	note(lg, "hipMemcpyAsync", hipMemcpyAsync(d, d2, 100, hipMemcpyDeviceToDevice, s),
	     "bytes=100 dst=0x%lx src=0x%lx kind=DtoD stream=0x%lx", P(d), P(d2), P(s));
	note(lg, "hipMemcpyWithStream", hipMemcpyWithStream(h, d, 101, hipMemcpyDefault, s),
	     "bytes=101 dst=0x%lx src=0x%lx kind=Default stream=0x%lx", P(h), P(d), P(s));
	note(lg, "hipMemcpy_spt", hipMemcpy_spt(d, h, 102, hipMemcpyHostToDevice),
	     "bytes=102 dst=0x%lx src=0x%lx kind=HtoD stream=0x0", P(d), P(h));
	note(lg, "hipMemcpyAsync_spt", hipMemcpyAsync_spt(h, d, 103, hipMemcpyDeviceToHost, s),
	     "bytes=103 dst=0x%lx src=0x%lx kind=DtoH stream=0x%lx", P(h), P(d), P(s));
	note(lg, "hipMemcpyHtoD", hipMemcpyHtoD(d, h, 104),
	     "bytes=104 dst=0x%lx src=0x%lx kind=HtoD stream=0x0", P(d), P(h));
	note(lg, "hipMemcpyDtoH", hipMemcpyDtoH(h, d, 105),
	     "bytes=105 dst=0x%lx src=0x%lx kind=DtoH stream=0x0", P(h), P(d));
	note(lg, "hipMemcpyDtoD", hipMemcpyDtoD(d2, d, 106),
	     "bytes=106 dst=0x%lx src=0x%lx kind=DtoD stream=0x0", P(d2), P(d));
	note(lg, "hipMemcpyHtoDAsync", hipMemcpyHtoDAsync(d, h, 107, s),
	     "bytes=107 dst=0x%lx src=0x%lx kind=HtoD stream=0x%lx", P(d), P(h), P(s));
	note(lg, "hipMemcpyDtoHAsync", hipMemcpyDtoHAsync(h, d, 108, s),
	     "bytes=108 dst=0x%lx src=0x%lx kind=DtoH stream=0x%lx", P(h), P(d), P(s));
	note(lg, "hipMemcpyDtoDAsync", hipMemcpyDtoDAsync(d2, d, 109, s),
	     "bytes=109 dst=0x%lx src=0x%lx kind=DtoD stream=0x%lx", P(d2), P(d), P(s));
	note(lg, "hipMemsetAsync", hipMemsetAsync(d, 7, 110, s),
	     "bytes=110 dst=0x%lx value=7 stream=0x%lx", P(d), P(s));
	note(lg, "hipMemset_spt", hipMemset_spt(d, 255, 111), "bytes=111 dst=0x%lx value=255",
	     P(d));
	note(lg, "hipStreamCreateWithFlags", hipStreamCreateWithFlags(&s, hipStreamNonBlocking),
	     "%s", "");
	note(lg, "hipStreamWaitEvent", hipStreamWaitEvent(s, e, 0), "obj=0x%lx obj2=0x%lx", P(s),
	     P(e));
	note(lg, "hipStreamWaitEvent_spt", hipStreamWaitEvent_spt(s, e, 0), "obj=0x%lx obj2=0x%lx",
	     P(s), P(e));
	note(lg, "hipStreamSynchronize_spt", hipStreamSynchronize_spt(s), "on=0x%lx", P(s));
	lg->launches++;
	note(lg, "hipExtLaunchKernel",
	     hipExtLaunchKernel((const void *)kernel_a, g, b, args, 32, s, NULL, NULL, 0),
	     "grid=16x1x1 block=128x1x1 shared=32 stream=0x%lx kernel=" KERNEL_A, P(s));
	lg->launches++;
	note(lg, "hipLaunchKernel_spt",
	     hipLaunchKernel_spt((const void *)kernel_a, g, b, args, 0, s),
	     "grid=16x1x1 block=128x1x1 shared=0 stream=0x%lx kernel=" KERNEL_A, P(s));
	chevron(lg, g, b, 0, s, d, 1);
	note(lg, "hipFreeAsync", hipFreeAsync(d2, s), "ptr=0x%lx mem=\"stream-ordered device\"",
	     P(d2));
	note(lg, "hipHostFree", hipHostFree(p), "ptr=0x%lx mem=\"pinned host\"", P(p));
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s THREADS ROUNDS TRUTH\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]);
	rounds = atoi(argv[2]);
	FILE *truth = fopen(argv[3], "w");
	if (n < 1 || n > 63 || rounds < 1 || !truth) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	struct log *logs = calloc((size_t)n + 1, sizeof(*logs));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	if (!logs || !th)
		return 2;
	log_open(&logs[0], 0);
	main_calls(&logs[0]);
	for (int i = 1; i <= n; i++) {
		log_open(&logs[i], i);
		if (pthread_create(&th[i - 1], NULL, worker, &logs[i])) {
			perror("pthread_create");
			return 2;
		}
	}
	unsigned calls = 0, launches = 0, rc[3] = {0}, other = 0;
	for (int i = 0; i <= n; i++) {
		if (i > 0)
			pthread_join(th[i - 1], NULL);
		fclose(logs[i].o);
		fclose(logs[i].t);
		fputs(logs[i].out, stdout);
		fputs(logs[i].truth, truth);
		calls += logs[i].calls;
		launches += logs[i].launches;
		for (int k = 0; k < 3; k++)
			rc[k] += logs[i].rc[k];
		other += logs[i].rc_other;
		free(logs[i].out);
		free(logs[i].truth);
	}
	fclose(truth);
	printf("total: calls=%u launches=%u rc0=%u rc100=%u rc101=%u other=%u\n", calls, launches,
	       rc[0], rc[1], rc[2], other);
	free(logs);
	free(th);
	return 0;
}
