// SPDX-License-Identifier: BSD-3-Clause
/*
 * cupti_app.c - the CUDA program of the CUPTI end-to-end test (tests/e2e/cupti-mock.sh) on a
 * machine without a GPU: THREADS threads each run the program "vector_add", whose CUDA calls
 * the stand-in CUPTI (tests/gpu/mock_cupti.c) reports to its subscriber as CUPTI would.
 * Then it prints what the program did, the ground truth the trace must show: a line
 * `program vector_add threads THREADS`, then lines `WHAT NAME COUNT BYTES`:
 *
 *   call FUNCTION       API calls the program made (not those cudart makes inside them);
 *                       BYTES: allocated, copied or set by them
 *   kernel NAME         kernel executions
 *   copy HtoD|DtoH      copies by direction
 *   set device          memsets
 *   sync device         device synchronisations
 *   leak FUNCTION       allocations never freed, by the function that made them
 *
 *   usage: cupti_app [THREADS [CUDA_LIBRARY]]    (default 1, none)
 *
 * No CUDA linkage.  CUDA_LIBRARY is opened first (dlopen), as a static CUDA runtime (nvcc's
 * default) opens the driver inside the program's first call: libtrace starts CUPTI when a
 * CUDA library comes into the process.  The mock is then found with dlopen(RTLD_NOLOAD) of
 * the library named by LIBTRACE_CUPTI_LIB, which libtrace loaded (or which the untraced run
 * preloads), or by CUPTI_APP_MOCK when libtrace was left to find it.  Exit status: 0; 1 when
 * CUDA_LIBRARY cannot be opened, or the library named by LIBTRACE_CUPTI_LIB is not loaded or is not
 * the mock; 2 bad usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCENARIO    "vector_add"
#define MAX_THREADS 256

/* What one thread of vector_add does (mock_cupti.c plays it). */
static const struct truth {
	const char *what, *name;
	unsigned count;
	unsigned long bytes;
} per_thread[] = {
    {"call", "cudaMalloc", 2, 2 * 4096},
    {"call", "cudaMemcpy", 2, 2 * 4096},
    {"call", "__cudaLaunchKernel", 1, 0},
    {"call", "cudaDeviceSynchronize", 1, 0},
    {"call", "cudaMemset", 1, 4096},
    {"call", "cudaFree", 1, 0},
    {"call", "cuLaunchKernel", 1, 0},
    {"kernel", "_Z3addPfPKfi", 1, 0},
    {"kernel", "_Z5scalePfi", 1, 0},
    {"copy", "HtoD", 1, 4096},
    {"copy", "DtoH", 1, 4096},
    {"set", "device", 1, 4096},
    {"sync", "device", 1, 0},
    {"leak", "cudaMalloc", 1, 4096},
};

static int (*play)(const char *scenario, int thread_no);

struct job {
	pthread_t thread;
	int no, result;
};

/* CUPTI_APP_CUDART=1: two allocations and a free through the cudart entry points the
 * process has (libtrace's wrappers, then the mock's), the second allocation kept: its call
 * site is this function's. */
__attribute__((noinline)) int cudart_calls(void)
{
	int (*alloc)(void **, size_t) = (int (*)(void **, size_t))dlsym(RTLD_DEFAULT, "cudaMalloc");
	int (*release)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "cudaFree");
	void *a = NULL, *b = NULL;
	if (!alloc || !release || alloc(&a, 4096) || alloc(&b, 4096) || release(a)) {
		fprintf(stderr, "cupti_app: cudaMalloc and cudaFree not found or failed\n");
		return 1;
	}
	return 0;
}

/* CUPTI_APP_SUBSCRIBE=1: after the threads, the program subscribes to CUPTI itself (as
 * PyTorch's profiler does) through the global cuptiSubscribe, enables the runtime API
 * domain (2) and plays the scenario once more (as player 201); it prints what its
 * subscription gave and how many callbacks it had.  CUPTI's ABI, without its header. */
static int own_callbacks;

static void own_callback(void *userdata, int domain, unsigned cbid, const void *data)
{
	(void)userdata, (void)domain, (void)cbid, (void)data;
	__atomic_add_fetch(&own_callbacks, 1, __ATOMIC_RELAXED);
}

static int own_subscriber(void *mock)
{
	int (*subscribe)(void **, void (*)(void *, int, unsigned, const void *), void *) =
	    (int (*)(void **, void (*)(void *, int, unsigned, const void *), void *))dlsym(
		RTLD_DEFAULT, "cuptiSubscribe");
	int (*enable)(unsigned, void *, int) =
	    (int (*)(unsigned, void *, int))dlsym(mock, "cuptiEnableDomain");
	void *subscriber = NULL;
	int r = subscribe && enable ? subscribe(&subscriber, own_callback, NULL) : -1;
	printf("own subscriber: cuptiSubscribe %d\n", r);
	if (r == 0 && (enable(1, subscriber, 2) || play(SCENARIO, 201)))
		return 1;
	printf("own subscriber: %d callbacks\n", own_callbacks);
	return 0;
}

static void *run(void *arg)
{
	struct job *j = arg;
	j->result = play(SCENARIO, j->no);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 1;
	if (argc > 3 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: cupti_app [THREADS (1..%d) [CUDA_LIBRARY]]\n", MAX_THREADS);
		return 2;
	}
	if (argc > 2 && !dlopen(argv[2], RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "cupti_app: %s\n", dlerror());
		return 1;
	}
	/* The same words whether the library is absent or is another one (the real CUPTI):
	 * a traced and an untraced run must print the same. */
	const char *lib = getenv("CUPTI_APP_MOCK"); /* where libtrace found it by itself */
	if (!lib || !*lib)
		lib = getenv("LIBTRACE_CUPTI_LIB");
	void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
	play = h ? (int (*)(const char *, int))dlsym(h, "mock_cupti_play") : NULL;
	if (!play) {
		fprintf(stderr, "cupti_app: the mock CUPTI (%s) is not loaded\n", lib ? lib : "");
		return 1;
	}

	/* Then this thread plays the scenario too (as player 254): its calls have no call site
	 * of their own, and must not get one left over from the calls before. */
	if (getenv("CUPTI_APP_CUDART") && (cudart_calls() || play(SCENARIO, 254)))
		return 1;

	/* CUPTI_APP_TOGGLE=SIGNO: this thread plays the scenario (as player 200) before the
	 * threads start, then sends itself SIGNO (a run started paused, LIBTRACE_TOGGLE_SIGNAL:
	 * the first play is not recorded, the threads' are). */
	const char *toggle = getenv("CUPTI_APP_TOGGLE");
	if (toggle && (play(SCENARIO, 200) || raise(atoi(toggle))))
		return 1;

	struct job jobs[MAX_THREADS];
	for (int i = 0; i < threads; i++) {
		jobs[i].no = i;
		if (pthread_create(&jobs[i].thread, NULL, run, &jobs[i])) {
			perror("cupti_app: pthread_create");
			return 1;
		}
	}
	int bad = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(jobs[i].thread, NULL);
		bad |= jobs[i].result != 0;
	}
	if (bad) {
		fprintf(stderr, "cupti_app: the mock does not know the scenario %s\n", SCENARIO);
		return 1;
	}

	if (getenv("CUPTI_APP_SUBSCRIBE") && own_subscriber(h))
		return 1;

	/* CUPTI_APP_FORK=1: a child that leaves at once with _exit, as a Python worker
	 * process does (CUPTI must not be asked anything there: its threads stayed here). */
	if (getenv("CUPTI_APP_FORK")) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "cupti_app: the forked child failed\n");
			return 1;
		}
	}
	printf("program %s threads %d\n", SCENARIO, threads);
	for (size_t i = 0; i < sizeof(per_thread) / sizeof(per_thread[0]); i++) {
		const struct truth *t = &per_thread[i];
		printf("%s %s %u %lu\n", t->what, t->name, t->count * threads, t->bytes * threads);
	}
	return 0;
}
