// SPDX-License-Identifier: BSD-3-Clause
/*
 * html.c - trace-report --html: one self-contained page (report.html, built into the
 * program) with the runs' data as JSON in it: metadata and warnings, the profile, the call
 * tree, memory, the threads' and cores' timelines (timeline.c's bins), the samplers' series
 * and the MPI message matrix.  The page draws them itself, offline.  Its size is the
 * profile's plus RP_BINS bins per thread and series: it summarises, it does not embed the
 * events.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "profile.h"

extern const char rp_report_html[]; /* report.html */

#define MARK "/*LIBTRACE_DATA*/"

static void warnings(struct jw *w, const struct rp_run *r)
{
	char text[RP_WARNINGS_MAX][RP_WARNING_LEN];
	int severe[RP_WARNINGS_MAX];
	jw_array(w, "warnings");
	for (size_t i = 0, n = rp_warnings(r, text, severe); i < n; i++)
		jw_str(w, NULL, text[i]);
	jw_end(w);
}

static void series(struct jw *w, const struct rp_series *s)
{
	jw_object(w, NULL);
	jw_str(w, "name", s->name);
	jw_str(w, "unit", s->unit);
	jw_u64(w, "origin", s->origin);
	jw_u64(w, "width", s->width);
	jw_array(w, "v");
	for (uint32_t i = 0; i < s->n; i++)
		if (isnan(s->v[i]))
			jw_null(w, NULL);
		else
			jw_double(w, NULL, s->v[i]);
	jw_end(w);
	jw_end(w);
}

static void u64s(struct jw *w, const char *key, const uint64_t *v, size_t n)
{
	jw_array(w, key);
	for (size_t i = 0; i < n; i++)
		jw_u64(w, NULL, v[i]);
	jw_end(w);
}

static void run_data(struct jw *w, const struct rp_run *r)
{
	const struct rp_meta *m = &r->meta;
	jw_object(w, NULL);
	jw_str(w, "trace", r->trace);
	jw_str(w, "program", m->program);
	jw_array(w, "arguments");
	for (size_t i = 0; i < m->nargs; i++)
		jw_str(w, NULL, m->args[i]);
	jw_end(w);
	jw_str(w, "host", m->host);
	jw_str(w, "start", m->start);
	jw_u64(w, "duration_ns", m->duration_ns);
	jw_u64(w, "processes", m->processes);
	jw_u64(w, "nthreads", m->threads);
	warnings(w, r);
	rp_write_regions_json(w, r);
	rp_write_tree_json(w, r);
	jw_array(w, "threads");
	for (size_t p = 0; p < r->nprocs; p++)
		for (size_t j = 0; j < r->procs[p].nthreads; j++) {
			const struct rp_thread *t = &r->procs[p].threads[j];
			jw_object(w, NULL);
			jw_str(w, "process", r->procs[p].name);
			jw_str(w, "name", t->name);
			jw_u64(w, "index", t->index);
			jw_u64(w, "events", t->events);
			jw_u64(w, "lost", t->lost);
			if (t->timeline) {
				const struct rp_timeline *tl = t->timeline;
				jw_object(w, "tl");
				jw_u64(w, "origin", tl->origin);
				jw_u64(w, "width", tl->width);
				jw_array(w, "region");
				for (uint32_t k = 0; k < tl->n; k++)
					jw_i64(w, NULL, tl->region[k]);
				jw_end(w);
				jw_array(w, "cpu");
				for (uint32_t k = 0; k < tl->n; k++)
					jw_i64(w, NULL, tl->cpu[k]);
				jw_end(w);
				jw_end(w);
			}
			jw_end(w);
		}
	jw_end(w);
	rp_write_memory_json(w, r);
	jw_array(w, "series");
	for (size_t i = 0; i < r->nseries; i++)
		if (r->series[i]->n)
			series(w, r->series[i]);
	jw_end(w);
	jw_object(w, "mpi");
	jw_u64(w, "size", r->mpi_size);
	u64s(w, "msgs", r->mpi_msgs, (size_t)r->mpi_size * r->mpi_size);
	u64s(w, "bytes", r->mpi_bytes, (size_t)r->mpi_size * r->mpi_size);
	jw_end(w);
	jw_end(w);
}

int rp_write_html(FILE *f, const struct rp_run *runs, size_t nruns)
{
	const char *mark = strstr(rp_report_html, MARK);
	char *data = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&data, &len);
	if (!mark || !m) {
		if (m)
			fclose(m);
		free(data);
		fputs(mark ? "trace-report: out of memory\n"
			   : "trace-report: the HTML page is missing its data mark\n",
		      stderr);
		return -1;
	}
	struct jw w;
	jw_init(&w, m);
	jw_object(&w, NULL);
	jw_str(&w, "schema", "libtrace-report/1");
	jw_array(&w, "runs");
	for (size_t i = 0; i < nruns; i++)
		run_data(&w, &runs[i]);
	jw_end(&w);
	jw_end(&w);
	fclose(m);
	fwrite(rp_report_html, 1, (size_t)(mark - rp_report_html), f);
	/* Inside a script element: "<" only in strings, where \u003c reads the same. */
	for (size_t i = 0; i < len; i++)
		if (data[i] == '<')
			fputs("\\u003c", f);
		else
			fputc(data[i], f);
	fputs(mark + strlen(MARK), f);
	free(data);
	return 0;
}
