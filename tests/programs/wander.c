// SPDX-License-Identifier: BSD-3-Clause
/*
 * wander - changes directory, then starts processes: whatever the current directory, they
 * trace into the directory their parent traced into.
 *
 *   wander DIR [GO]   records 10 "start" values, chdir(DIR), waits for the file GO when
 *                     given (a test changes the world meanwhile), then forks a child that
 *                     records 20 "forked" values and a child that execs itself
 *   wander child      the exec'd image: records 30 "execd" values
 *
 * Prints "ok" and exits with 0 when both children ended with 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libtrace/annotate.h"

static int wait_ok(pid_t pid)
{
	int st;
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "child")) {
		for (long i = 0; i < 30; i++)
			ltr_counter("execd", i);
		return 0;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: wander DIR [GO]\n");
		return 2;
	}
	for (long i = 0; i < 10; i++)
		ltr_counter("start", i);
	if (chdir(argv[1]) != 0) {
		perror(argv[1]);
		return 2;
	}
	for (int i = 0; argc > 2 && access(argv[2], F_OK) != 0; i++) {
		if (i == 1000) {
			fprintf(stderr, "%s never came\n", argv[2]);
			return 2;
		}
		usleep(10000);
	}
	pid_t pid = fork();
	if (pid == 0) {
		for (long i = 0; i < 20; i++)
			ltr_counter("forked", i);
		exit(0);
	}
	int ok = wait_ok(pid);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "child", (char *)NULL);
		_exit(127);
	}
	ok &= wait_ok(pid);
	printf("%s\n", ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
