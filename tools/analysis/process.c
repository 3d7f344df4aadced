// SPDX-License-Identifier: BSD-3-Clause
/*
 * process.c - processes: hosts and their clocks, and which process created which (fork,
 * exec).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* The offset from a process's CLOCK_MONOTONIC to the trace's timeline (the first
 * process's): none on the same host, else the difference of their CLOCK_REALTIME
 * offsets. */
int64_t cv_host_offset(struct cv *cv, uint32_t host, int64_t real_minus_mono)
{
	if (!cv->nprocs || host == cv->procs[0].host)
		return 0; /* one host, one CLOCK_MONOTONIC */
	return real_minus_mono - (int64_t)cv->procs[0].real_minus_mono;
}

uint32_t cv_host_index(struct cv *cv, const char *host)
{
	uint32_t sid = cv_string(cv, host);
	for (uint32_t i = 0; i < cv->nhosts; i++)
		if (cv->hosts[i] == sid)
			return i;
	uint32_t *a = realloc(cv->hosts, (cv->nhosts + 1) * sizeof(*a));
	if (!a)
		return 0;
	cv->hosts = a;
	cv->hosts[cv->nhosts] = sid;
	return cv->nhosts++;
}

/*
 * Which process created which (processes are converted in order of their start, so a
 * creator always comes first): an image whose pid and host an earlier process had is what
 * that process exec'ed; otherwise a fork's "parent" line names the pid, whose image then
 * was the latest one started before the child.
 */
void cv_link_creators(struct cv *cv, const int *parent_pid)
{
	for (size_t i = 0; i < cv->nprocs; i++) {
		struct cv_process *c = &cv->procs[i];
		c->creator = -1;
		for (size_t j = 0; j < i; j++) /* the latest earlier image of the same pid */
			if (cv->procs[j].pid == c->pid && cv->procs[j].host == c->host)
				c->creator = (int)j;
		if (c->creator >= 0 || parent_pid[i] <= 0)
			continue;
		for (size_t j = 0; j < i; j++)
			if (cv->procs[j].pid == parent_pid[i] && cv->procs[j].host == c->host)
				c->creator = (int)j;
	}
}
