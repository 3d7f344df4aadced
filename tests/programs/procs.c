// SPDX-License-Identifier: BSD-3-Clause
/*
 * procs - process creation under the tracer: fork (the child keeps running traced code,
 * with a thread), fork + exec, vfork + exec, posix_spawn, system(), and dlopen/dlclose.
 *
 *   procs            the parent: records 100 "parent" values, then starts the others
 *   procs child N    an exec'd or spawned image: records N "child" values, exits with 0
 *   procs title ...  writes over its argument strings (a process title, as servers set
 *                    it), then forks a child that exits with 0
 *
 * Exit status 0 when every child ended as expected.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libtrace/annotate.h"

extern char **environ;

static void *thread_in_child(void *arg)
{
	for (long i = 0; i < 50; i++)
		ltr_counter("forked_thread", i);
	return arg;
}

static int wait_ok(pid_t pid, int want)
{
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		fprintf(stderr, "child %d: unexpected status 0x%x\n", (int)pid, st);
		return 0;
	}
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "child")) {
		for (long i = 0; i < atol(argv[2]); i++)
			ltr_counter("child", i);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "title")) {
		char *end = argv[argc - 1] + strlen(argv[argc - 1]);
		memset(argv[0], 0, (size_t)(end - argv[0]));
		strcpy(argv[0], "worker: idle");
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		return wait_ok(pid, 0) ? 0 : 1;
	}
	int ok = 1;
	for (long i = 0; i < 100; i++)
		ltr_counter("parent", i);

	/* fork without exec: the child records, starts a thread, exits 3. */
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < 100; i++)
			ltr_counter("forked", i);
		pthread_t th;
		pthread_create(&th, NULL, thread_in_child, NULL);
		pthread_join(th, NULL);
		exit(3);
	}
	ok &= wait_ok(pid, 3);

	/* fork + exec of ourselves. */
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", "10", (char *)NULL);
		_exit(127);
	}
	ok &= wait_ok(pid, 0);

	/* vfork + exec: the child runs on our memory until it execs. */
	pid = vfork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", "5", (char *)NULL);
		_exit(127);
	}
	ok &= wait_ok(pid, 0);

	/* posix_spawn of ourselves. */
	char *args[] = {argv[0], "child", "20", NULL};
	if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ) != 0)
		ok = 0;
	else
		ok &= wait_ok(pid, 0);

	/* system(): a shell, traced too since it inherits LD_PRELOAD. */
	if (system("exit 0") != 0)
		ok = 0;

	/* dlopen/dlclose of a library with a function we call. */
	void *h = dlopen("libm.so.6", RTLD_NOW);
	double (*c)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
	if (!c || c(0.0) != 1.0)
		ok = 0;
	if (h)
		dlclose(h);
	printf("%s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
