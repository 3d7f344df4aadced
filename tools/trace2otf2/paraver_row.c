// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_row.c - NAME.row: the names of the Paraver objects (nodes, tasks, threads).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paraver.h"

static const struct cv *sort_cv; /* for by_rank (qsort has no context) */

/* MPI ranks first, in rank order; then the other processes in the order they started. */
static int by_rank(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	int ra = sort_cv->procs[a].mpi_rank, rb = sort_cv->procs[b].mpi_rank;
	if ((ra < 0) != (rb < 0))
		return ra < 0 ? 1 : -1;
	if (ra != rb)
		return ra < rb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Threads by their index in the process (the order it made them). */
static int by_index(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint64_t ia = sort_cv->locs[a].index, ib = sort_cv->locs[b].index;
	if (ia != ib)
		return ia < ib ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Is location li a Paraver thread (its process's metrics are not, unless kept)? */
static int is_thread(const struct cv *cv, size_t li)
{
	const struct out *o = cv->out;
	return cv->locs[li].kind != CV_LOC_METRIC || (li < o->nlocs && o->locs[li].kept);
}

int prv_number_objects(struct cv *cv, struct numbering *n)
{
	const struct out *o = cv->out;
	size_t np = cv->nprocs ? cv->nprocs : 1;
	n->task = calloc(np, sizeof(*n->task));
	n->order = calloc(np, sizeof(*n->order));
	n->nthreads_of = calloc(np, sizeof(*n->nthreads_of));
	n->thread = calloc(cv->nlocs ? cv->nlocs : 1, sizeof(*n->thread));
	n->by_number = calloc(cv->nlocs ? cv->nlocs : 1, sizeof(*n->by_number));
	n->cpu_base = calloc(cv->nhosts ? cv->nhosts : 1, sizeof(*n->cpu_base));
	if (!n->task || !n->order || !n->nthreads_of || !n->thread || !n->by_number || !n->cpu_base)
		return -1;
	n->ntasks = 0;
	n->nthreads = 0;
	for (size_t i = 0; i < cv->nprocs; i++) {
		const struct cv_process *pr = &cv->procs[i];
		uint32_t k = 0, *at = n->by_number + pr->first_loc;
		/* Its threads in the order the process made them, as Extrae numbers them (the
		 * order of their first records is another each run: the OpenMP thread numbers of
		 * a team, which its threads are made in), then its GPU streams. */
		for (int pass = 0; pass < 2; pass++) {
			uint32_t from = k;
			for (size_t li = pr->first_loc; li < pr->first_loc + pr->nlocs; li++)
				if (is_thread(cv, li) &&
				    (cv->locs[li].kind == CV_LOC_GPU_STREAM) == pass)
					at[k++] = (uint32_t)li;
			if (!pass) {
				sort_cv = cv;
				qsort(at + from, k - from, sizeof(*at), by_index);
			}
		}
		for (uint32_t j = 0; j < k; j++)
			n->thread[at[j]] = j + 1;
		n->nthreads_of[i] = k;
		n->nthreads += k;
		if (k)
			n->order[n->ntasks++] = (uint32_t)i;
	}
	sort_cv = cv;
	qsort(n->order, n->ntasks, sizeof(*n->order), by_rank);
	for (uint32_t k = 0; k < n->ntasks; k++)
		n->task[n->order[k]] = k + 1;
	n->ncpus = 0;
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		n->cpu_base[h] = n->ncpus;
		n->ncpus += h < o->nhost_cpus && o->host_cpus[h] ? o->host_cpus[h] : 1;
	}
	return 0;
}

void prv_free_numbering(struct numbering *n)
{
	free(n->task);
	free(n->order);
	free(n->thread);
	free(n->by_number);
	free(n->nthreads_of);
	free(n->cpu_base);
}

/* The number of CPUs of host h in the header: the highest one a thread ran on, + 1. */
uint32_t prv_host_cpus(const struct cv *cv, const struct numbering *n, uint32_t h)
{
	return (h + 1 < cv->nhosts ? n->cpu_base[h + 1] : n->ncpus) - n->cpu_base[h];
}

/* A label on one line: newlines and tabs become spaces. */
void prv_put_label(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s, f);
}

/* A region's value label: "function [file:line]" where known, as Extrae writes them. */
void prv_region_label(FILE *f, const struct cv *cv, const struct cv_region *r)
{
	if (r->file != CV_NO_STRING && r->line && r->canonical != CV_NO_STRING) {
		prv_put_label(f, cv->strings[r->canonical]);
		fprintf(f, " [%s:%u]", prv_base_name(cv->strings[r->file]), r->line);
	} else {
		prv_put_label(f, cv->strings[r->name]);
	}
}

/* As Extrae names them: CPUs "CPU c.node" per node, nodes by host, the application by the
 * program (of task 1), tasks as the converter names processes, threads "THREAD 1.t.h"
 * and GPU streams by their names. */
void prv_write_row(struct cv *cv, FILE *f, const struct numbering *n)
{
	fprintf(f, "LEVEL CPU SIZE %u\n", n->ncpus);
	for (uint32_t h = 0; h < cv->nhosts; h++)
		for (uint32_t c = 1; c <= prv_host_cpus(cv, n, h); c++)
			fprintf(f, "CPU %u.%u\n", c, h + 1);
	fprintf(f, "\nLEVEL NODE SIZE %u\n", cv->nhosts);
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		prv_put_label(f, cv->strings[cv->hosts[h]]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL APPL SIZE 1\n");
	const char *program = n->ntasks ? cv->procs[n->order[0]].program : NULL;
	prv_put_label(f, program ? program : "application");
	fprintf(f, "\n\nLEVEL TASK SIZE %u\n", n->ntasks);
	for (uint32_t k = 0; k < n->ntasks; k++) {
		const struct cv_process *pr = &cv->procs[n->order[k]];
		prv_put_label(f, cv->strings[pr->name]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL THREAD SIZE %zu\n", n->nthreads);
	for (uint32_t k = 0; k < n->ntasks; k++) {
		const struct cv_process *pr = &cv->procs[n->order[k]];
		for (uint32_t j = 0; j < n->nthreads_of[n->order[k]]; j++) {
			uint32_t li = n->by_number[pr->first_loc + j];
			const struct cv_loc *l = &cv->locs[li];
			const char *name = cv->strings[l->name];
			if (l->kind == CV_LOC_GPU_STREAM)
				prv_put_label(f, *name ? name : "GPU stream");
			else
				fprintf(f, "THREAD 1.%u.%u", k + 1, j + 1);
			fputc('\n', f);
		}
	}
}
