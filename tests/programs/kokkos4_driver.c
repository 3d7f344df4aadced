// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos4_driver.c - drives a Kokkos tool exactly as Kokkos 4.6 does (no Kokkos 4 in
 * Debian 12), for tests/e2e/kokkos.sh.  Build with -fopenmp; run with the tool preloaded
 * and no Kokkos variable set: like Kokkos >= 3.7 it loads the first entry of
 * KOKKOS_TOOLS_LIBS (which the preloaded tool must have set itself) with dlopen, looks up
 * all 28 kokkosp_* callbacks, and calls them in Kokkos 4.6's order and encodings:
 *
 *   init_library(0, 20240906, 0, NULL); request_tool_settings(1, {true});
 *   provide_tool_programming_interface(1, {fence}); parse_args twice; 3 declare_metadata
 *   on each of 2 host threads (execution space instances 1 and 2 of the OpenMP backend):
 *     K x parallel_for "main(int, char**)::<lambda(int)>" (already demangled, as 4.5+
 *       names unnamed kernels), device 0x01000000 | instance, each holding one real
 *       OpenMP parallel region of 2 threads and one "HostSpace fence" fence
 *     1 parallel_reduce "Functor/MyTag" on a Cuda-encoded device: type 2, device 1,
 *       instance 3
 *   on the main thread: a global fence (0x01000000), a deep-copy-resource fence
 *   (0x01ffffff), an allocation "v" of 4096 bytes in HostSpace, a deep copy of it to "w",
 *   its deallocation, dual-view sync and modify, a profile event, a section started twice
 *   and a region pushed around everything; sections "A" and "B" overlapping (start A,
 *   start B, stop A, stop B), a kernel with an empty name, metadata with an empty key;
 *   Kokkos 4.6's memory around a TeamPolicy kernel: a View "big" of 1 MiB, then the
 *   OpenMP backend's scratch resized: the free of its first scratch (13696 bytes,
 *   allocated before the tool was loaded, so never reported allocated) and the new one
 *   (155264 bytes); "big" freed; a "Kokkos::SortImpl::BinSortFunctor::bin_count" View of
 *   4096 bytes never freed (a BinSort the program leaked); then finalize_library, and
 *   after it the free of the scratch (Kokkos freeing its own memory at finalize).
 * The tool is the first entry of --kokkos-tools-libs=PATH when given (Kokkos takes the
 * argument over the variable), else of KOKKOS_TOOLS_LIBS; the first other argument is
 * the number of kernels per host thread.
 * Exit status 0; 2 when the tool cannot be loaded or lacks a callback.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <omp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct space {
	char name[64];
};
struct settings {
	bool requires_global_fencing;
	bool padding[255];
};
struct iface {
	void (*fence)(uint32_t);
	void (*padding[31])(void);
};

static void (*init)(int, uint64_t, uint32_t, void *);
static void (*finalize)(void);
static void (*begin_for)(const char *, uint32_t, uint64_t *);
static void (*end_for)(uint64_t);
static void (*begin_reduce)(const char *, uint32_t, uint64_t *);
static void (*end_reduce)(uint64_t);
static void (*begin_scan)(const char *, uint32_t, uint64_t *);
static void (*end_scan)(uint64_t);
static void (*push)(const char *);
static void (*pop)(void);
static void (*alloc)(struct space, const char *, const void *, uint64_t);
static void (*dealloc)(struct space, const char *, const void *, uint64_t);
static void (*begin_copy)(struct space, const char *, const void *, struct space, const char *,
			  const void *, uint64_t);
static void (*end_copy)(void);
static void (*create_section)(const char *, uint32_t *);
static void (*start_section)(uint32_t);
static void (*stop_section)(uint32_t);
static void (*destroy_section)(uint32_t);
static void (*event)(const char *);
static void (*begin_fence)(const char *, uint32_t, uint64_t *);
static void (*end_fence)(uint64_t);
static void (*dv_sync)(const char *, const void *, bool);
static void (*dv_modify)(const char *, const void *, bool);
static void (*metadata)(const char *, const char *);
static void (*tool_settings)(uint32_t, struct settings *);
static void (*tool_iface)(uint32_t, struct iface);
static void (*print_help)(char *);
static void (*parse_args)(int, char **);

static int kernels = 4;
static volatile double sink;

static void fence_fn(uint32_t dev)
{
	(void)dev;
}

static void *host_thread(void *arg)
{
	uint32_t instance = (uint32_t)(uintptr_t)arg;
	for (int k = 0; k < kernels; k++) {
		uint64_t id, fid;
		begin_for("main(int, char**)::<lambda(int)>", 0x01000000u | instance, &id);
		double sum = 0;
#pragma omp parallel for num_threads(2) reduction(+ : sum)
		for (int i = 0; i < 1000; i++)
			sum += i * 0.5;
		sink = sum;
		begin_fence("HostSpace fence", 0x01000000u | instance, &fid);
		end_fence(fid);
		end_for(id);
	}
	uint64_t id;
	begin_reduce("Functor/MyTag", 2u << 24 | 1u << 17 | 3u, &id);
	end_reduce(id);
	return NULL;
}

#define LOOKUP(var, name)                                                                    \
	do {                                                                                 \
		*(void **)&var = dlsym(h, "kokkosp_" name);                                  \
		if (!var) {                                                                  \
			fprintf(stderr, "kokkos4_driver: no kokkosp_%s in %s\n", name, lib); \
			return 2;                                                            \
		}                                                                            \
	} while (0)

int main(int argc, char **argv)
{
	const char *env = getenv("KOKKOS_TOOLS_LIBS");
	for (int i = 1, n = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--kokkos-tools-libs=", 20))
			env = argv[i] + 20;
		else if (n++ == 0)
			kernels = atoi(argv[i]);
	}
	if (!env || !*env) {
		fprintf(stderr, "kokkos4_driver: KOKKOS_TOOLS_LIBS is not set\n");
		return 2;
	}
	char lib[4096];
	snprintf(lib, sizeof(lib), "%.*s", (int)strcspn(env, ";"), env);
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "kokkos4_driver: %s\n", dlerror());
		return 2;
	}
	LOOKUP(init, "init_library");
	LOOKUP(finalize, "finalize_library");
	LOOKUP(begin_for, "begin_parallel_for");
	LOOKUP(end_for, "end_parallel_for");
	LOOKUP(begin_reduce, "begin_parallel_reduce");
	LOOKUP(end_reduce, "end_parallel_reduce");
	LOOKUP(begin_scan, "begin_parallel_scan");
	LOOKUP(end_scan, "end_parallel_scan");
	LOOKUP(push, "push_profile_region");
	LOOKUP(pop, "pop_profile_region");
	LOOKUP(alloc, "allocate_data");
	LOOKUP(dealloc, "deallocate_data");
	LOOKUP(begin_copy, "begin_deep_copy");
	LOOKUP(end_copy, "end_deep_copy");
	LOOKUP(create_section, "create_profile_section");
	LOOKUP(start_section, "start_profile_section");
	LOOKUP(stop_section, "stop_profile_section");
	LOOKUP(destroy_section, "destroy_profile_section");
	LOOKUP(event, "profile_event");
	LOOKUP(begin_fence, "begin_fence");
	LOOKUP(end_fence, "end_fence");
	LOOKUP(dv_sync, "dual_view_sync");
	LOOKUP(dv_modify, "dual_view_modify");
	LOOKUP(metadata, "declare_metadata");
	LOOKUP(tool_settings, "request_tool_settings");
	LOOKUP(tool_iface, "provide_tool_programming_interface");
	LOOKUP(print_help, "print_help");
	LOOKUP(parse_args, "parse_args");

	init(0, 20240906, 0, NULL);
	struct settings s = {.requires_global_fencing = true};
	tool_settings(1, &s);
	struct iface fi = {.fence = fence_fn};
	tool_iface(1, fi);
	parse_args(argc, argv);
	parse_args(argc, argv); /* 4.6 calls it twice */
	metadata("Kokkos Version", "4.6.1");
	metadata("KOKKOS_ENABLE_OPENMP", "yes");
	metadata("case", "kokkos4_driver");

	push("driver");
	pthread_t th[2];
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, host_thread, (void *)(i + 1));
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	uint64_t f;
	begin_fence("Kokkos::fence: Unnamed Global Fence", 0x01000000u, &f);
	end_fence(f);
	begin_fence("Kokkos::deep_copy: post copy fence", 0x01ffffffu, &f);
	end_fence(f);
	struct space host = {"Host"};
	static char buf[4096 + 128], wbuf[4096]; /* "w": memory of its own (a copy onto
						  * itself would move nothing) */
	alloc(host, "v", buf, 4096);
	begin_copy(host, "w", wbuf, host, "v", buf + 128, 4096);
	end_copy();
	dealloc(host, "v", buf, 4096);
	dv_sync("dv", buf, true);
	dv_modify("dv", buf, false);
	event("phase 2");
	uint32_t sec;
	create_section("init section", &sec);
	for (int r = 0; r < 2; r++) {
		start_section(sec);
		stop_section(sec);
	}
	destroy_section(sec);
	uint64_t id;
	begin_scan("scan", 0x01000001u, &id);
	end_scan(id);
	/* Overlapping sections (Kokkos allows them), an empty kernel name, an empty key. */
	uint32_t a, b;
	create_section("A", &a);
	create_section("B", &b);
	start_section(a);
	start_section(b);
	stop_section(a);
	stop_section(b);
	begin_for("", 0x01000001u, &id);
	end_for(id);
	metadata("", "a value under an empty key");
	static char big[64], scratch[2][64], bins[64]; /* addresses only */
	alloc(host, "big", big, 1048576);
	dealloc(host, "Kokkos::OpenMP::scratch_mem", scratch[0], 13696);
	alloc(host, "Kokkos::OpenMP::scratch_mem", scratch[1], 155264);
	dealloc(host, "big", big, 1048576);
	alloc(host, "Kokkos::SortImpl::BinSortFunctor::bin_count", bins, 4096);
	pop();
	finalize();
	dealloc(host, "Kokkos::OpenMP::scratch_mem", scratch[1], 155264);
	printf("kokkos4_driver: %d kernels per host thread, sum %.1f\n", kernels, sink);
	return 0;
}
