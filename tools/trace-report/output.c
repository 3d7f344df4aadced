// SPDX-License-Identifier: BSD-3-Clause
/*
 * output.c - profiles for people (a table: the run's metadata, regions by exclusive time,
 * processes, threads) and for spreadsheets (CSV, one row per region and run, times in ns).
 * The JSON form is in store.c.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "profile.h"

char *rp_fmt_ns(char *buf, size_t len, double ns, int sign)
{
	const char *s = sign ? (ns < 0 ? "-" : "+") : (ns < 0 ? "-" : "");
	double a = fabs(ns);
	if (a < 1e3)
		snprintf(buf, len, "%s%.0f ns", s, a);
	else if (a < 1e6)
		snprintf(buf, len, "%s%.3f us", s, a / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%s%.3f ms", s, a / 1e6);
	else
		snprintf(buf, len, "%s%.3f s", s, a / 1e9);
	return buf;
}

char *rp_fmt_command(char *buf, size_t len, const struct rp_meta *m)
{
	size_t n = (size_t)snprintf(buf, len, "%s", m->program ? m->program : "?");
	for (size_t i = 0; i < m->nargs && n < len; i++) {
		int quote = !m->args[i][0] || strpbrk(m->args[i], " \t\"'") != NULL;
		n += (size_t)snprintf(buf + n, len - n, quote ? " '%s'" : " %s", m->args[i]);
	}
	if (n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

static void write_meta(FILE *f, const struct rp_run *r)
{
	const struct rp_meta *m = &r->meta;
	char cmd[512], dur[32];
	fprintf(f, "Profile of %s\n", r->trace);
	fprintf(f, "  program    %s\n", rp_fmt_command(cmd, sizeof(cmd), m));
	fprintf(f, "  executable %s\n", m->executable);
	fprintf(f, "  started    %s on %s", m->start, m->host);
	for (size_t i = 0; i < m->nhosts; i++)
		if (strcmp(m->hosts[i], m->host))
			fprintf(f, ", %s", m->hosts[i]);
	fprintf(f, ", ran %s (clock %s)\n", rp_fmt_ns(dur, sizeof(dur), (double)m->duration_ns, 0),
		m->clock);
	fprintf(f, "  processes  %" PRIu64 ", threads %" PRIu64 ", ranks %" PRIu64 "\n",
		m->processes, m->threads, m->ranks);
	fprintf(f, "  git        %s\n", m->git_revision ? m->git_revision : "-");
	fprintf(f, "  events     %" PRIu64 "\n", r->totals.events);
	const struct rp_totals *t = &r->totals;
	if (t->lost)
		fprintf(f,
			"!! %" PRIu64 " EVENTS WERE LOST while tracing: the counts and times below "
			"are short of what ran !!\n",
			t->lost);
	if (t->damaged)
		fprintf(f, "!! the trace is damaged: this is the profile of what could be read\n");
	if (t->cut_processes)
		fprintf(f,
			"!! %" PRIu64
			" process%s ended abruptly or left files cut short: profiled up "
			"to where the trace ends\n",
			t->cut_processes, t->cut_processes == 1 ? "" : "es");
	if (t->unclosed)
		fprintf(f, "   %" PRIu64 " regions left open were closed at their thread's end\n",
			t->unclosed);
}

static void write_regions(FILE *f, const struct rp_run *r, size_t top)
{
	uint64_t total = 0;
	for (size_t i = 0; i < r->nregions; i++)
		total += r->regions[i].excl_ns;
	size_t n = top && top < r->nregions ? top : r->nregions;
	if (n < r->nregions)
		fprintf(f, "\nRegions by exclusive time (top %zu of %zu; --all for all):\n", n,
			r->nregions);
	else
		fprintf(f, "\nRegions by exclusive time (%zu):\n", r->nregions);
	if (!r->nregions) {
		fprintf(f, "  (none)\n");
		return;
	}
	fprintf(f, "  %11s %6s %11s %9s %11s %11s %11s %6s  %-14s %-8s %s\n", "exclusive", "%",
		"inclusive", "calls", "min/call", "mean/call", "max/call", "imbal", "max thread",
		"kind", "region");
	for (size_t i = 0; i < n; i++) {
		const struct rp_region *g = &r->regions[i];
		char ex[32], in[32], mn[32], me[32], mx[32];
		fprintf(f, "  %11s %5.1f%% %11s %9" PRIu64 " %11s %11s %11s %6.2f  %-14s %-8s %s\n",
			rp_fmt_ns(ex, sizeof(ex), (double)g->excl_ns, 0),
			total ? 100.0 * (double)g->excl_ns / (double)total : 0.0,
			rp_fmt_ns(in, sizeof(in), (double)g->incl_ns, 0), g->calls,
			rp_fmt_ns(mn, sizeof(mn), (double)g->min_ns, 0),
			rp_fmt_ns(me, sizeof(me), (double)g->mean_ns, 0),
			rp_fmt_ns(mx, sizeof(mx), (double)g->max_ns, 0), g->imbalance,
			g->max_thread, g->kind, g->name);
	}
}

static void write_procs(FILE *f, const struct rp_run *r, size_t top)
{
	if (!r->nprocs)
		return;
	fprintf(f, "\nProcesses:\n  %-22s %8s %-16s %7s %11s %11s %10s %8s %s\n", "process", "pid",
		"program", "threads", "lifetime", "in regions", "events", "lost", "ended");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		char lt[32], ir[32];
		fprintf(f, "  %-22s %8d %-16s %7zu %11s %11s %10" PRIu64 " %8" PRIu64 " %s\n",
			p->name, p->pid, p->program, p->nthreads,
			rp_fmt_ns(lt, sizeof(lt), (double)p->lifetime_ns, 0),
			rp_fmt_ns(ir, sizeof(ir), (double)p->in_regions_ns, 0), p->events, p->lost,
			p->ended ? "normally" : "killed or cut short");
	}
	size_t shown = 0, all = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		all += r->procs[i].nthreads;
	fprintf(f, "\nThreads:\n  %-22s %8s %11s %11s %10s %8s %s\n", "thread", "tid", "lifetime",
		"in regions", "events", "lost", "name");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		for (size_t j = 0; j < p->nthreads && (!top || shown < top); j++, shown++) {
			const struct rp_thread *t = &p->threads[j];
			char who[300], lt[32], ir[32];
			snprintf(who, sizeof(who), "%s/%u", p->name, t->index);
			fprintf(f, "  %-22s %8u %11s %11s %10" PRIu64 " %8" PRIu64 " %s\n", who,
				t->tid, rp_fmt_ns(lt, sizeof(lt), (double)t->lifetime_ns, 0),
				rp_fmt_ns(ir, sizeof(ir), (double)t->in_regions_ns, 0), t->events,
				t->lost, t->name);
		}
	}
	if (shown < all)
		fprintf(f, "  ... and %zu more threads (--all for all)\n", all - shown);
}

void rp_write_table(FILE *f, const struct rp_run *runs, size_t nruns, size_t top)
{
	for (size_t i = 0; i < nruns; i++) {
		if (i)
			fputs("\n\n", f);
		write_meta(f, &runs[i]);
		write_regions(f, &runs[i], top);
		write_procs(f, &runs[i], top);
	}
	fprintf(f,
		"\nTimes: inclusive counts a region's outermost calls on each thread, summed "
		"over threads;\nexclusive leaves out the regions called from it; imbal = the "
		"busiest thread's inclusive\ntime over the mean of the threads that called it.\n");
}

/* A CSV field (RFC 4180 quoting, Unix line ends): quoted when it holds a comma, a quote or a line
 * break. */
static void csv_field(FILE *f, const char *s, int last)
{
	if (strpbrk(s, ",\"\r\n")) {
		putc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				putc('"', f);
			putc(*s, f);
		}
		putc('"', f);
	} else {
		fputs(s, f);
	}
	fputs(last ? "\n" : ",", f);
}

void rp_write_csv(FILE *f, const struct rp_run *runs, size_t nruns)
{
	static const char *cols[] = {
	    "run",	     "trace",	  "program",	  "kind",	   "role",
	    "region",	     "calls",	  "inclusive_ns", "exclusive_ns",  "min_ns",
	    "mean_ns",	     "max_ns",	  "threads",	  "thread_min_ns", "thread_mean_ns",
	    "thread_max_ns", "imbalance", "max_thread",
	};
	size_t ncols = sizeof(cols) / sizeof(cols[0]);
	for (size_t i = 0; i < ncols; i++)
		csv_field(f, cols[i], i == ncols - 1);
	for (size_t i = 0; i < nruns; i++) {
		const struct rp_run *r = &runs[i];
		for (size_t j = 0; j < r->nregions; j++) {
			const struct rp_region *g = &r->regions[j];
			char num[64];
			snprintf(num, sizeof(num), "%zu", i);
			csv_field(f, num, 0);
			csv_field(f, r->trace, 0);
			csv_field(f, r->meta.program, 0);
			csv_field(f, g->kind, 0);
			csv_field(f, g->role, 0);
			csv_field(f, g->name, 0);
			fprintf(f,
				"%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64 ",%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.6g,",
				g->calls, g->incl_ns, g->excl_ns, g->min_ns, g->mean_ns, g->max_ns,
				g->threads, g->thread_min_ns, g->thread_mean_ns, g->thread_max_ns,
				isfinite(g->imbalance) ? g->imbalance : 0.0);
			csv_field(f, g->max_thread, 1);
		}
	}
}
