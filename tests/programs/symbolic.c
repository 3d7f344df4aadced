// SPDX-License-Identifier: BSD-3-Clause
/*
 * symbolic - start routines in every kind of module, for the symbol resolution tests:
 * one in the executable (exe_work), one in a linked shared library (lib_work), one in a
 * library loaded with dlopen mid-run (plug_work).  Each is a thread's start routine.
 *
 *   symbolic PLUGIN_PATH
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

void *lib_work(void *arg);

static volatile long sink;
static int named; /* exe_work runs until main has named it */

static void *exe_work(void *arg)
{
	while (!__atomic_load_n(&named, __ATOMIC_ACQUIRE))
		sched_yield();
	for (long i = 0; i < 1000; i++)
		sink += i;
	return arg;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PLUGIN_PATH\n", argv[0]);
		return 2;
	}
	void *plugin = dlopen(argv[1], RTLD_NOW);
	if (!plugin) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	void *(*plug_work)(void *) = (void *(*)(void *))dlsym(plugin, "plug_work");
	void *(*routines[])(void *) = {exe_work, lib_work, plug_work};
	for (int i = 0; i < 3; i++) {
		pthread_t th;
		if (!routines[i] || pthread_create(&th, NULL, routines[i], NULL)) {
			fprintf(stderr, "thread %d failed\n", i);
			return 1;
		}
		if (i == 0) {
			pthread_setname_np(th, "exe-worker"); /* named by its creator */
			__atomic_store_n(&named, 1, __ATOMIC_RELEASE);
		}
		pthread_join(th, NULL);
	}
	dlclose(plugin);
	printf("ok\n");
	return 0;
}
