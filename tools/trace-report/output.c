// SPDX-License-Identifier: BSD-3-Clause
/*
 * output.c - profiles for people (a table: the run's metadata, regions by exclusive time,
 * processes, threads) and for spreadsheets (CSV, one row per region and run, times in ns).
 * The JSON form is in store.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json.h"
#include "profile.h"

/*
 * An output file (-o, --junit, --markdown) is written beside its name and renamed onto it
 * once complete: a failed write (a full disk) leaves whatever was there before, never a
 * cut or empty report, and no link is written through.  A name that is a symbolic link
 * (dangling or not) or anything but a regular file is refused: a report in a shared
 * directory must not overwrite the file a planted link points to.
 */
FILE *rp_out_open(struct rp_out *o, const char *path)
{
	o->f = NULL;
	o->path = path;
	struct stat st;
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			fprintf(stderr,
				"trace-report: %s: a symbolic link; not writing through it\n",
				path);
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "trace-report: %s: exists and is not a regular file\n",
				path);
			return NULL;
		}
	} else if (errno != ENOENT) {
		fprintf(stderr, "trace-report: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path) >= (int)sizeof(o->tmp)) {
		fprintf(stderr, "trace-report: %s: name too long\n", path);
		return NULL;
	}
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "trace-report: %s: cannot create it: %s\n", path, strerror(errno));
		return NULL;
	}
	if (!(o->f = fdopen(fd, "w"))) { /* 0600, as main's umask would make it */
		fprintf(stderr, "trace-report: %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		return NULL;
	}
	return o->f;
}

int rp_out_close(struct rp_out *o, int ok)
{
	if (!o->f)
		return -1;
	int err = fflush(o->f) != 0 || ferror(o->f) ? errno : 0;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	if (!err && ok && rename(o->tmp, o->path) != 0)
		err = errno;
	if (err || !ok) {
		unlink(o->tmp);
		if (err)
			fprintf(stderr, "trace-report: %s: write error: %s\n", o->path,
				strerror(err ? err : EIO));
		return -1;
	}
	return 0;
}

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

/* Characters on the screen: the bytes that do not continue a UTF-8 sequence. */
static size_t screen_width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

char *rp_fmt_name(char *buf, size_t len, const char *s, size_t max)
{
	size_t n = 0;
	if (!len)
		return buf;
	for (; s && *s && n + 5 <= len; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	if (s && *s) { /* did not fit: cut, "..." saying so */
		size_t w = screen_width(buf);
		if (!max || max >= w)
			max = w > 4 ? w - 1 : 4;
	}
	if (max > 3 && screen_width(buf) > max) {
		size_t w = 0, i = 0;
		for (; buf[i]; i++) {
			if (((unsigned char)buf[i] & 0xc0) != 0x80 && w++ == max - 3)
				break;
		}
		snprintf(buf + i, len - i, "...");
	}
	return buf;
}

/* A name in a column `width` characters wide (what rp_fmt_name made of it), left-aligned. */
static void put_cell(FILE *f, const char *cell, size_t width)
{
	fputs(cell, f);
	for (size_t w = screen_width(cell); w < width; w++)
		putc(' ', f);
}

/* The width of a column of names: its longest (escaped) value, the header's, at most max. */
static size_t col_width(size_t width, const char *s, size_t max)
{
	char buf[512];
	size_t w = screen_width(rp_fmt_name(buf, sizeof(buf), s, max));
	return w > width ? w : width;
}

#define COL_MAX 40 /* a column of names is at most this wide: longer ones end in "..." */

/* "<process dir>/<thread index>" in at most COL_MAX characters: the index is kept whole. */
static char *fmt_thread(char *buf, size_t len, const char *who)
{
	const char *slash = strrchr(who, '/');
	char dir[512], idx[64];
	if (!slash || strlen(slash) >= sizeof(idx) || (size_t)(slash - who) >= sizeof(dir))
		return rp_fmt_name(buf, len, who, COL_MAX);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - who), who);
	rp_fmt_name(idx, sizeof(idx), slash, 0);
	char head[512];
	rp_fmt_name(head, sizeof(head), dir, COL_MAX - screen_width(idx));
	size_t n = strlen(head), k = strlen(idx);
	if (n + k >= len)
		return rp_fmt_name(buf, len, who, COL_MAX);
	memcpy(buf, head, n);
	memcpy(buf + n, idx, k + 1);
	return buf;
}

char *rp_fmt_command(char *buf, size_t len, const struct rp_meta *m)
{
	char arg[1024];
	size_t n = (size_t)snprintf(
	    buf, len, "%s", rp_fmt_name(arg, sizeof(arg), m->program ? m->program : "?", 0));
	for (size_t i = 0; i < m->nargs && n < len; i++) {
		int quote = !m->args[i][0] || strpbrk(m->args[i], " \t\"'") != NULL;
		n += (size_t)snprintf(buf + n, len - n, quote ? " '%s'" : " %s",
				      rp_fmt_name(arg, sizeof(arg), m->args[i], 0));
	}
	if (n >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
	return buf;
}

static void write_meta(FILE *f, const struct rp_run *r)
{
	const struct rp_meta *m = &r->meta;
	char cmd[512], dur[32], name[1024];
	fprintf(f, "Profile of %s\n", rp_fmt_name(name, sizeof(name), r->trace, 0));
	fprintf(f, "  program    %s\n", rp_fmt_command(cmd, sizeof(cmd), m));
	fprintf(f, "  executable %s\n", rp_fmt_name(name, sizeof(name), m->executable, 0));
	fprintf(f, "  started    %s on %s", m->start, rp_fmt_name(name, sizeof(name), m->host, 0));
	for (size_t i = 0; i < m->nhosts; i++)
		if (strcmp(m->hosts[i], m->host))
			fprintf(f, ", %s", rp_fmt_name(name, sizeof(name), m->hosts[i], 0));
	fprintf(f, ", ran %s (clock %s)\n", rp_fmt_ns(dur, sizeof(dur), (double)m->duration_ns, 0),
		m->clock);
	fprintf(f, "  processes  %" PRIu64 ", threads %" PRIu64 ", ranks %" PRIu64 "\n",
		m->processes, m->threads, m->ranks);
	fprintf(f, "  git        %s\n", m->git_revision ? m->git_revision : "-");
	fprintf(f, "  events     %" PRIu64 "\n", r->totals.events);
	if (m->has_writer_cpu)
		fprintf(f, "  writer     %s of CPU time (the tracer's writer thread)\n",
			rp_fmt_ns(dur, sizeof(dur), (double)m->writer_cpu_ns, 0));
	if (m->tracer_end_ns)
		fprintf(
		    f, "  ending     %s after the program's end (the tracer's own, in no thread)\n",
		    rp_fmt_ns(dur, sizeof(dur), (double)m->tracer_end_ns, 0));
	char w[RP_WARNINGS_MAX][RP_WARNING_LEN];
	int severe[RP_WARNINGS_MAX];
	for (size_t i = 0, n = rp_warnings(r, w, severe); i < n; i++)
		fprintf(f, "%s %s\n", severe[i] ? "!!" : "  ", w[i]);
}

size_t rp_warnings(const struct rp_run *r, char (*out)[RP_WARNING_LEN], int *severe)
{
	const struct rp_totals *t = &r->totals;
	size_t n = 0;
	if (t->lost) {
		severe[n] = 1;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64 " EVENTS WERE LOST while tracing: the counts and times below "
			 "are short of what ran",
			 t->lost);
	}
	if (t->damaged) {
		severe[n] = 1;
		snprintf(out[n++], RP_WARNING_LEN,
			 "the trace is damaged: this is the profile of what could be read");
	}
	if (t->cut_processes) {
		severe[n] = 1;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64
			 " process%s ended abruptly or left files cut short: profiled up "
			 "to where the trace ends",
			 t->cut_processes, t->cut_processes == 1 ? "" : "es");
	}
	if (t->flight) {
		severe[n] = 0;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64
			 " process%s ran as a flight recorder (LIBTRACE_MODE=flight): profiled "
			 "over each thread's last records, a window; what came before was not "
			 "kept (not lost)",
			 t->flight, t->flight == 1 ? "" : "es");
	}
	if (t->anomalies) {
		severe[n] = 1;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64 " anomalies: records that made no sense (a leave without its "
			 "enter, nesting too deep) were passed over",
			 t->anomalies);
	}
	if (t->dropped_short || t->dropped_filter) {
		severe[n] = 0;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64 " calls and regions were left out on purpose (%" PRIu64
			 " too short, %" PRIu64 " filtered by name): not in the counts below",
			 t->dropped_short + t->dropped_filter, t->dropped_short, t->dropped_filter);
	}
	if (t->unclosed) {
		severe[n] = 0;
		snprintf(out[n++], RP_WARNING_LEN,
			 "%" PRIu64 " regions left open were closed when the process ended (or, "
			 "if it did not end normally, at their thread's last event)",
			 t->unclosed);
	}
	return n;
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
	size_t wt = strlen("max thread"), wk = strlen("kind");
	for (size_t i = 0; i < n; i++) {
		char cell[512];
		size_t w = screen_width(fmt_thread(cell, sizeof(cell), r->regions[i].max_thread));
		wt = w > wt ? w : wt;
		char kind[256]; /* "kokkos:reduce": a kernel's pattern after its kind */
		snprintf(kind, sizeof(kind), "%s%s%s", r->regions[i].kind,
			 r->regions[i].type ? ":" : "",
			 r->regions[i].type ? r->regions[i].type : "");
		wk = col_width(wk, kind, COL_MAX);
	}
	fprintf(f, "  %11s %6s %11s %9s %11s %11s %11s %6s  ", "exclusive", "%", "inclusive",
		"calls", "min/call", "mean/call", "max/call", "imbal");
	put_cell(f, "max thread", wt + 1);
	put_cell(f, "kind", wk + 1);
	fputs("region\n", f);
	for (size_t i = 0; i < n; i++) {
		const struct rp_region *g = &r->regions[i];
		char ex[32], in[32], mn[32], me[32], mx[32], cell[512];
		fprintf(f, "  %11s %5.1f%% %11s %9" PRIu64 " %11s %11s %11s %6.2f  ",
			rp_fmt_ns(ex, sizeof(ex), (double)g->excl_ns, 0),
			total ? 100.0 * (double)g->excl_ns / (double)total : 0.0,
			rp_fmt_ns(in, sizeof(in), (double)g->incl_ns, 0), g->calls,
			rp_fmt_ns(mn, sizeof(mn), (double)g->min_ns, 0),
			rp_fmt_ns(me, sizeof(me), (double)g->mean_ns, 0),
			rp_fmt_ns(mx, sizeof(mx), (double)g->max_ns, 0), g->imbalance);
		put_cell(f, fmt_thread(cell, sizeof(cell), g->max_thread), wt + 1);
		char kind[256];
		snprintf(kind, sizeof(kind), "%s%s%s", g->kind, g->type ? ":" : "",
			 g->type ? g->type : "");
		put_cell(f, rp_fmt_name(cell, sizeof(cell), kind, COL_MAX), wk + 1);
		char *name = malloc(strlen(g->name) * 4 + 1); /* the last column: whole */
		fprintf(f, "%s\n",
			name ? rp_fmt_name(name, strlen(g->name) * 4 + 1, g->name, 0) : "?");
		free(name);
	}
}

static void write_procs(FILE *f, const struct rp_run *r, size_t top)
{
	if (!r->nprocs)
		return;
	/* A process's time in regions adds up its threads': with several threads it can be
	 * longer than its lifetime. */
	size_t wp = strlen("process"), wg = strlen("program"), ww = strlen("thread");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		char who[512];
		wp = col_width(wp, p->name, COL_MAX);
		wg = col_width(wg, p->program, COL_MAX);
		for (size_t j = 0; j < p->nthreads; j++) {
			char cell[512];
			snprintf(who, sizeof(who), "%s/%u", p->name, p->threads[j].index);
			size_t w = screen_width(fmt_thread(cell, sizeof(cell), who));
			ww = w > ww ? w : ww;
		}
	}
	fputs("\nProcesses:\n  ", f);
	put_cell(f, "process", wp + 1);
	fprintf(f, "%8s ", "pid");
	put_cell(f, "program", wg + 1);
	fprintf(f, "%7s %11s %29s %10s %8s %s\n", "threads", "lifetime",
		"in regions (sum over threads)", "events", "lost", "ended");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		char lt[32], ir[32], cell[512];
		fputs("  ", f);
		put_cell(f, rp_fmt_name(cell, sizeof(cell), p->name, COL_MAX), wp + 1);
		fprintf(f, "%8d ", p->pid);
		put_cell(f, rp_fmt_name(cell, sizeof(cell), p->program, COL_MAX), wg + 1);
		fprintf(f, "%7zu %11s %29s %10" PRIu64 " %8" PRIu64 " %s\n", p->nthreads,
			rp_fmt_ns(lt, sizeof(lt), (double)p->lifetime_ns, 0),
			rp_fmt_ns(ir, sizeof(ir), (double)p->in_regions_ns, 0), p->events, p->lost,
			p->ended ? "normally" : "killed or cut short");
	}
	size_t shown = 0, all = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		all += r->procs[i].nthreads;
	fputs("\nThreads:\n  ", f);
	put_cell(f, "thread", ww + 1);
	fprintf(f, "%8s %11s %11s %10s %8s %s\n", "tid", "lifetime", "in regions", "events", "lost",
		"name");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		for (size_t j = 0; j < p->nthreads && (!top || shown < top); j++, shown++) {
			const struct rp_thread *t = &p->threads[j];
			char who[512], lt[32], ir[32], cell[512], name[1024];
			snprintf(who, sizeof(who), "%s/%u", p->name, t->index);
			fputs("  ", f);
			put_cell(f, fmt_thread(cell, sizeof(cell), who), ww + 1);
			fprintf(f, "%8u %11s %11s %10" PRIu64 " %8" PRIu64 " %s\n", t->tid,
				rp_fmt_ns(lt, sizeof(lt), (double)t->lifetime_ns, 0),
				rp_fmt_ns(ir, sizeof(ir), (double)t->in_regions_ns, 0), t->events,
				t->lost, rp_fmt_name(name, sizeof(name), t->name, 0));
		}
	}
	if (shown < all)
		fprintf(f, "  ... and %zu more threads (--all for all)\n", all - shown);
	if (!r->totals.dropped_short && !r->totals.dropped_filter)
		return;
	fputs("\nCalls and regions not recorded on purpose (LIBTRACE_MIN_DURATION, "
	      "LIBTRACE_EXCLUDE/INCLUDE):\n  ",
	      f);
	put_cell(f, "thread", ww + 1);
	fprintf(f, "%12s %12s\n", "too short", "filtered");
	for (size_t i = 0; i < r->nprocs; i++) {
		const struct rp_process *p = &r->procs[i];
		for (size_t j = 0; j < p->nthreads; j++) {
			const struct rp_thread *t = &p->threads[j];
			if (!t->dropped_short && !t->dropped_filter)
				continue;
			char who[512], cell[512];
			snprintf(who, sizeof(who), "%s/%u", p->name, t->index);
			fputs("  ", f);
			put_cell(f, fmt_thread(cell, sizeof(cell), who), ww + 1);
			fprintf(f, "%12" PRIu64 " %12" PRIu64 "\n", t->dropped_short,
				t->dropped_filter);
		}
	}
}

/* Rows of samples under `title`, the first `top`: with totals, self and total (functions),
 * else the samples of what the column `what` names. */
static void write_rows(FILE *f, const char *title, const struct rp_sample_row *rows, size_t n,
		       size_t top, uint64_t count, int totals, const char *what)
{
	fprintf(f, "\n%s (top %zu of %zu):\n", title, n < top ? n : top, n);
	if (totals)
		fprintf(f, "  %8s %7s %8s %7s  %s\n", "self", "%", "total", "%", what);
	else
		fprintf(f, "  %8s %7s  %s\n", "samples", "%", what);
	for (size_t i = 0; i < n && i < top; i++) {
		const struct rp_sample_row *r = &rows[i];
		char name[4096];
		rp_fmt_name(name, sizeof(name), r->name, 0);
		if (totals)
			fprintf(f, "  %8" PRIu64 " %6.1f%% %8" PRIu64 " %6.1f%%  %s\n", r->self,
				100.0 * (double)r->self / (double)count, r->total,
				100.0 * (double)r->total / (double)count, name);
		else
			fprintf(f, "  %8" PRIu64 " %6.1f%%  %s\n", r->self,
				100.0 * (double)r->self / (double)count, name);
	}
}

/* The call tree of the sample paths (top-down): a node per path prefix. */
struct tnode {
	const char *name; /* into a path: up to " > " or the end */
	size_t len;
	uint64_t count;
	struct tnode *child, *next;
};

static struct tnode *tree_add(struct tnode **list, const char *name, size_t len, uint64_t n)
{
	for (struct tnode *t = *list; t; t = t->next)
		if (t->len == len && !strncmp(t->name, name, len)) {
			t->count += n;
			return t;
		}
	struct tnode *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	*t = (struct tnode){name, len, n, NULL, *list};
	*list = t;
	return t;
}

static void tree_print(FILE *f, struct tnode *list, int depth, uint64_t count, uint64_t min)
{
	while (list) { /* the heaviest first */
		struct tnode *best = NULL;
		for (struct tnode *t = list; t; t = t->next)
			if (t->count && (!best || t->count > best->count))
				best = t;
		if (!best || best->count < min)
			break;
		char name[4096];
		snprintf(name, sizeof(name), "%.*s", (int)best->len, best->name);
		char esc[4096];
		fprintf(f, "  %8" PRIu64 " %6.1f%%  %*s%s\n", best->count,
			100.0 * (double)best->count / (double)count, 2 * depth, "",
			rp_fmt_name(esc, sizeof(esc), name, 0));
		tree_print(f, best->child, depth + 1, count, min);
		best->count = 0; /* printed */
	}
}

static void tree_free(struct tnode *t)
{
	while (t) {
		struct tnode *next = t->next;
		tree_free(t->child);
		free(t);
		t = next;
	}
}

static void write_tree(FILE *f, const struct rp_samples *s)
{
	struct tnode *root = NULL;
	for (size_t i = 0; i < s->npaths; i++) {
		struct tnode **list = &root;
		for (const char *p = s->paths[i].name; list && *p;) {
			const char *end = strstr(p, " > ");
			size_t len = end ? (size_t)(end - p) : strlen(p);
			struct tnode *t = tree_add(list, p, len, s->paths[i].self);
			list = t ? &t->child : NULL;
			p += len + (end ? 3 : 0);
		}
	}
	fprintf(f, "\nCall tree of the samples (top-down, paths with 1%% of them or more):\n");
	tree_print(f, root, 0, s->count, (s->count + 99) / 100);
	tree_free(root);
}

/* Stack samples: by function (self: innermost; total: anywhere on the stack), by the region
 * they fell in, by whole call path, as a tree. */
static void write_samples(FILE *f, const struct rp_run *r, size_t top)
{
	const struct rp_samples *s = &r->samples;
	if (s->nblocked)
		fputc('\n', f);
	for (size_t i = 0; i < s->nblocked; i++)
		fprintf(f,
			"Warning: thread %s (tid %u) blocked the sampling signal: %" PRIu64
			" samples not taken\n",
			s->blocked[i].thread, s->blocked[i].tid, s->blocked[i].not_taken);
	if (!s->count)
		return;
	char cpu[32];
	fprintf(f, "\nStack samples: %" PRIu64 ", %s of CPU time\n", s->count,
		rp_fmt_ns(cpu, sizeof(cpu), (double)s->cpu_ns, 0));
	write_rows(f, "Functions by samples", s->functions, s->nfunctions, top, s->count, 1,
		   "function");
	write_rows(f, "The regions the samples fell in", s->regions, s->nregions, top, s->count, 0,
		   "region");
	write_rows(f, "Call paths by samples", s->paths, s->npaths, top < 10 ? top : 10, s->count,
		   0, "call path");
	write_tree(f, s);
}

void rp_write_table(FILE *f, const struct rp_run *runs, size_t nruns, size_t top)
{
	for (size_t i = 0; i < nruns; i++) {
		if (i)
			fputs("\n\n", f);
		write_meta(f, &runs[i]);
		write_regions(f, &runs[i], top);
		write_samples(f, &runs[i], top ? top : SIZE_MAX);
		rp_write_memory(f, &runs[i]);
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
