// SPDX-License-Identifier: BSD-3-Clause
/*
 * count.c - a test-only output backend: counts the events the analysis core hands over, per
 * callback, and writes one "NAME COUNT" line each to OUT.counts.  It shows what adding a
 * format takes (this file and one line in the backend table) and lets a test check the
 * core's events against an independent count of the records (tests/e2e/backend-count.sh).
 * Only the callbacks it counts are set: the others are NULL, which the core must respect.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"

enum {
	N_LOCATIONS,
	N_THREADS, /* locations of the program's threads */
	N_ENTER,
	N_ENTER_USER, /* Enters of annotated regions (CV_ROLE_USER) */
	N_LEAVE,
	N_THREAD_CREATE,
	N_THREAD_BEGIN,
	N_THREAD_END,
	N_METRIC,
	N_METRIC_COUNTER, /* of the annotation API's counters (unit "#") */
	N_METRIC_CPU,	  /* the CPU a thread runs on, from CPU records */
	N_MARKER,
	N_COUNT
};

static const char *const names[N_COUNT] = {
    [N_LOCATIONS] = "locations",
    [N_THREADS] = "locations.thread",
    [N_ENTER] = "enter",
    [N_ENTER_USER] = "enter.user",
    [N_LEAVE] = "leave",
    [N_THREAD_CREATE] = "thread_create",
    [N_THREAD_BEGIN] = "thread_begin",
    [N_THREAD_END] = "thread_end",
    [N_METRIC] = "metric",
    [N_METRIC_COUNTER] = "metric.counter",
    [N_METRIC_CPU] = "metric.cpu",
    [N_MARKER] = "marker",
};

struct counts {
	char *path;
	unsigned long long n[N_COUNT];
	int err;
};

#define C(cv) ((struct counts *)(cv)->out)

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	C(cv)->n[N_LOCATIONS]++;
	if (l->kind == CV_LOC_THREAD)
		C(cv)->n[N_THREADS]++;
	return 0;
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	(void)t;
	l->nevents++;
	C(cv)->n[N_ENTER]++;
	if (cv->regions[region].role == CV_ROLE_USER)
		C(cv)->n[N_ENTER_USER]++;
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	(void)t, (void)region, (void)closed;
	l->nevents++;
	C(cv)->n[N_LEAVE]++;
}

static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)t, (void)seq;
	l->nevents++;
	C(cv)->n[N_THREAD_CREATE]++;
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	(void)t, (void)seq, (void)tid;
	l->nevents++;
	C(cv)->n[N_THREAD_BEGIN]++;
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)t, (void)seq;
	l->nevents++;
	C(cv)->n[N_THREAD_END]++;
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	(void)t, (void)raw;
	l->nevents++;
	C(cv)->n[N_METRIC]++;
	if (!strcmp(cv->strings[cv->metrics[m].unit], "#"))
		C(cv)->n[N_METRIC_COUNTER]++;
	else if (!strcmp(cv->strings[cv->metrics[m].name], "CPU"))
		C(cv)->n[N_METRIC_CPU]++;
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	(void)t, (void)kind, (void)text;
	l->nevents++;
	C(cv)->n[N_MARKER]++;
}

static int finish(struct cv *cv)
{
	struct counts *c = C(cv);
	FILE *f = fopen(c->path, "w");
	if (!f) {
		c->err = errno;
		return -1;
	}
	for (int i = 0; i < N_COUNT; i++)
		fprintf(f, "%s %llu\n", names[i], c->n[i]);
	if (fclose(f) != 0) {
		c->err = errno;
		return -1;
	}
	return 0;
}

static const struct cv_ops count_ops = {
    .name = "count",
    .location_begin = location_begin,
    .enter = enter,
    .leave = leave,
    .thread_create = thread_create,
    .thread_begin = thread_begin,
    .thread_end = thread_end,
    .metric = metric,
    .marker = marker,
    .finish = finish,
};

static const char *const count_exts[] = {".counts", NULL};

static int count_open(struct cv *cv, const char *name, char *err, size_t errlen)
{
	struct counts *c = calloc(1, sizeof(*c));
	if (!c || !(c->path = malloc(strlen(name) + sizeof(".counts")))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sprintf(c->path, "%s.counts", name);
	cv->out = c;
	return 0;
}

static const char *count_error(struct cv *cv)
{
	struct counts *c = C(cv);
	return c && c->err ? strerror(c->err) : NULL;
}

static void count_free(struct cv *cv)
{
	struct counts *c = C(cv);
	if (c)
		free(c->path);
	free(c);
	cv->out = NULL;
}

const struct cv_backend cv_count_backend = {
    .name = "count",
    .description = "(tests) the number of events of each kind: OUT.counts",
    .output = CV_OUTPUT_FILES,
    .exts = count_exts,
    .written = ".counts",
    .what = "counts",
    .needs = 0,
    .ops = &count_ops,
    .open = count_open,
    .error = count_error,
    .free = count_free,
};
