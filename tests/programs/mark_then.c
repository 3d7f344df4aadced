// SPDX-License-Identifier: BSD-3-Clause
/*
 * mark_then - records a known number of annotations, then ends the way asked (the launcher's
 * tests: the trace must hold them all, however the program ended).
 *
 *   mark_then N END
 *
 * Records N markers "mark" inside one region "marks", then, by END:
 *   a number 0..255  exits with that status;
 *   -SIG             dies of signal SIG: SIGSEGV by a real invalid write, others by kill();
 *   wait             prints "ready PID" on stdout and waits for a signal to end it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libtrace/annotate.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s N STATUS|-SIG|wait\n", argv[0]);
		return 2;
	}
	long n = atol(argv[1]);
	const char *end = argv[2];
	ltr_region_begin("marks");
	for (long i = 0; i < n; i++)
		ltr_marker("mark");
	ltr_region_end("marks");
	fflush(stdout);
	if (!strcmp(end, "wait")) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	int v = atoi(end);
	if (v >= 0)
		return v;
	if (-v == SIGSEGV)
		*(volatile int *)NULL = 1;
	kill(getpid(), -v);
	return 100; /* the signal was ignored or blocked */
}
