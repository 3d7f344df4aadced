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

int prv_number_objects(struct cv *cv, struct numbering *n)
{
	n->task = calloc(cv->nprocs ? cv->nprocs : 1, sizeof(*n->task));
	if (!n->task)
		return -1;
	n->ntasks = 0;
	n->nthreads = 0;
	for (size_t i = 0; i < cv->nprocs; i++)
		if (cv->procs[i].nlocs) {
			n->task[i] = ++n->ntasks;
			n->nthreads += cv->procs[i].nlocs;
		}
	return 0;
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

void prv_write_row(struct cv *cv, FILE *f, const struct numbering *n)
{
	fprintf(f, "LEVEL CPU SIZE %u\n", cv->nhosts);
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		fprintf(f, "1.");
		prv_put_label(f, cv->strings[cv->hosts[h]]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL NODE SIZE %u\n", cv->nhosts);
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		prv_put_label(f, cv->strings[cv->hosts[h]]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL APPL SIZE 1\n");
	for (size_t i = 0; i < cv->nprocs; i++)
		if (n->task[i]) {
			prv_put_label(f, cv->strings[cv->procs[i].name]);
			fputc('\n', f);
			break;
		}
	fprintf(f, "\nLEVEL TASK SIZE %u\n", n->ntasks);
	for (size_t i = 0; i < cv->nprocs; i++)
		if (n->task[i]) {
			prv_put_label(f, cv->strings[cv->procs[i].name]);
			fputc('\n', f);
		}
	fprintf(f, "\nLEVEL THREAD SIZE %zu\n", n->nthreads);
	for (size_t i = 0; i < cv->nprocs; i++)
		for (size_t j = 0; j < cv->procs[i].nlocs; j++) {
			const char *name = cv->strings[cv->locs[cv->procs[i].first_loc + j].name];
			prv_put_label(f, *name ? name : "thread");
			fputc('\n', f);
		}
}
