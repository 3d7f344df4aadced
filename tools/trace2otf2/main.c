// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace2otf2 - converts a libtrace trace directory into an OTF2 archive for Vampir, or into
 * a Paraver trace (.prv, .pcf, .row).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends.h"
#include "parallel.h"

enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,
	EXIT_UNREADABLE = 2,
	EXIT_DAMAGED = 3,
	EXIT_OUTPUT = 4,
};

static const char usage_tail[] =
    "  -j, --jobs N         convert in N processes of this machine (at most one per\n"
    "                       traced process), the same output as in one\n"
    "  -q, --quiet          no progress bar, no summary; problems are still printed\n"
    "      --progress       draw the progress bar even when stderr is not a terminal\n"
    "      --debug-dir DIR  where separate debug files live (default /usr/lib/debug)\n"
    "      --core-view      otf2: add one location per CPU core (group \"CPUs of HOST\")\n"
    "                       on which each thread that ran there is a region, from\n"
    "                       the CPU records of LIBTRACE_SAMPLERS=cpu (which thread\n"
    "                       ran on which core when, as SnuMAP shows it)\n"
    "      --from T, --to T chrome: only what happens between T and T after the trace's\n"
    "                       first event (a duration: 1.5s, 200ms, 10us, 0); a region\n"
    "                       across a bound is cut there\n"
    "      --min-duration D chrome: leave out regions and calls shorter than D\n"
    "      --no-clock-align keep each MPI rank on its own clock (by default ranks are\n"
    "                       moved onto rank 0's clock with the offsets measured at\n"
    "                       MPI_Init and MPI_Finalize, interpolated linearly)\n"
    "  -h, --help           this text\n"
    "      --version        the version of libtrace, then exit\n"
    "\n"
    "Code addresses (thread start routines) are named through each process's memory\n"
    "map: function, and source file and line where debug information exists"
#ifndef LIBTRACE_HAVE_BFD
    " (this build\n"
    "has no libbfd: names from ELF symbol tables only, no file and line)"
#endif
    ";\n"
    "an address no symbol covers is named module+0xOFFSET.\n"
    "\n"
    "Under an MPI launcher (mpirun -np N trace2otf2 TRACE_DIR, or srun), or with -j N, the\n"
    "N converters share the trace's processes and write one output together, the same as a\n"
    "serial conversion's (MPI: libtrace-convert-mpi-*.so).\n"
    "\n"
    "Exit status:\n"
    "  0  converted; processes that were killed or whose files were cut short are\n"
    "     converted up to their end, which a \"Truncated trace\" marker shows\n"
    "  1  bad arguments\n"
    "  2  nothing to convert: not a trace directory, unknown format version, no\n"
    "     readable process (no archive is written)\n"
    "  3  the trace is damaged: the archive holds every valid record; the problems are\n"
    "     printed with file and offset\n"
    "  4  the output could not be written (exists, not writable, disk full)\n";

/* The text of --help; the formats come from the backend table. */
static void usage(FILE *f)
{
	char names[256];
	const struct cv_backend *const *b = cv_backend_list();
	cv_backend_names(names, sizeof(names));
	fputs("usage: trace2otf2 [options] TRACE_DIR\n"
	      "\n"
	      "Converts a libtrace trace directory (or one process directory <host>.<pid> in it)\n"
	      "into one of these formats (--format):\n",
	      f);
	for (size_t i = 0; b[i]; i++)
		fprintf(f, "  %-9s%s%s\n", b[i]->name, b[i]->description, i ? "" : " (default)");
	fprintf(f,
		"\n"
		"  -f, --format FORMAT  %s\n"
		"  -o, --output OUT     a directory format: the directory to create (default:\n"
		"                       TRACE_DIR.EXT), which must not exist yet; a format of\n"
		"                       files: the name of the files (default: TRACE_DIR; a\n"
		"                       trailing first extension is dropped), none of which may\n"
		"                       exist yet\n",
		names);
	fputs(usage_tail, f);
}

struct warnings {
	unsigned shown, dropped;
};

/* A duration with a unit, decimals allowed ("1.5s", "200ms", "10us", "500ns"); a bare 0.
 * 0, or -1 when it is not one. */
static int parse_time(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || *s == '-' || *s == '+')
		return -1;
	if (*end == '\0') {
		*out = 0;
		return v == 0 ? 0 : -1; /* a bare number is ambiguous */
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		double ns = v * units[i].ns + 0.5;
		if (ns >= 1.8e19)
			return -1;
		*out = (uint64_t)ns;
		return 0;
	}
	return -1;
}

#define WARN_MAX 30

static void warn_stderr(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	if (w->shown < WARN_MAX) {
		w->shown++;
		fprintf(stderr, "trace2otf2: %s\n", msg);
	} else {
		w->dropped++;
	}
}

static void free_list(char **dirs, int n)
{
	for (int i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);
}

struct start {
	uint64_t real_ns; /* the process's first clock reading */
	char *dir;
};

static int start_cmp(const void *a, const void *b)
{
	const struct start *x = a, *y = b;
	if (x->real_ns != y->real_ns)
		return x->real_ns < y->real_ns ? -1 : 1;
	return strcmp(x->dir, y->dir);
}

static int is_process_dir(const char *dir)
{
	char path[PATH_MAX + 16];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, LT_META_FILE);
	/* Any file, even one that is not regular: the reader then says what it is. */
	return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* The archive's directory, created empty. */
static int create_directory(const char *out)
{
	if (mkdir(out, 0700) != 0) {
		if (errno == EEXIST)
			fprintf(
			    stderr,
			    "trace2otf2: %s: exists; remove it or name another directory with -o\n",
			    out);
		else
			fprintf(stderr, "trace2otf2: %s: cannot create it: %s\n", out,
				strerror(errno));
		return -1;
	}
	if (access(out, W_OK) != 0) { /* root ignores the mode; others learn it here */
		fprintf(stderr, "trace2otf2: %s: not writable\n", out);
		rmdir(out);
		return -1;
	}
	return 0;
}

/* NAME + each of exts, none of which may exist; created empty (O_EXCL). */
static int create_files(const char *name, const char *const *exts)
{
	char path[PATH_MAX + 16];
	for (int i = 0; exts[i]; i++) {
		snprintf(path, sizeof(path), "%s%s", name, exts[i]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			int e = errno;
			if (e == EEXIST)
				fprintf(stderr,
					"trace2otf2: %s: exists; remove it or name another output "
					"with -o\n",
					path);
			else
				fprintf(stderr, "trace2otf2: %s: cannot create it: %s\n", path,
					strerror(e));
			for (int j = 0; j < i; j++) {
				snprintf(path, sizeof(path), "%s%s", name, exts[j]);
				unlink(path);
			}
			return -1;
		}
		close(fd);
	}
	return 0;
}

static void on_xfsz(int sig)
{
	(void)sig;
	static const char msg[] = "trace2otf2: the output reached the file size limit (ulimit -f); "
				  "what was written of it is not usable\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)w;
	_exit(4);
}

static void remove_output(const char *out, const struct cv_backend *be)
{
	if (be->output == CV_OUTPUT_DIRECTORY) {
		rmdir(out);
		return;
	}
	char path[PATH_MAX + 16];
	for (int i = 0; be->exts[i]; i++) {
		snprintf(path, sizeof(path), "%s%s", out, be->exts[i]);
		unlink(path);
	}
}

/* Memory never freed: Kokkos's leaks, then what Kokkos itself kept; GPU API calls' device
 * memory (with the call site of the allocation). */
static void print_leaks(const struct cv *cv)
{
	static const struct {
		int kind;
		const char *head;
	} kinds[4] = {
	    {CV_MARK_KOKKOS_LEAK, "Kokkos allocations never freed (leaks)"},
	    {CV_MARK_KOKKOS_UNFINALIZED,
	     "Kokkos allocations still allocated when the process ended without Kokkos::finalize"},
	    {CV_MARK_KOKKOS_KEPT, "Kokkos allocations kept by Kokkos itself past finalize "
				  "(runtime-internal, not leaks)"},
	    {CV_MARK_GPU_LEAK, "device memory never freed"},
	};
	for (int j = 0; j < 4; j++) {
		int kind = kinds[j].kind;
		size_t n = 0;
		uint64_t bytes = 0;
		for (size_t i = 0; i < cv->nleaks; i++) {
			const struct cv_leak *k = &cv->leaks[i];
			if (k->kind == kind)
				n++, bytes += k->bytes;
		}
		if (!n)
			continue;
		fprintf(stderr, "trace2otf2: %s: %zu%s, %llu bytes\n", kinds[j].head, n,
			kind != CV_MARK_GPU_LEAK ? ""
			: n == 1		 ? " allocation"
						 : " allocations",
			(unsigned long long)bytes);
		for (size_t i = 0; i < cv->nleaks; i++) {
			const struct cv_leak *k = &cv->leaks[i];
			const char *proc = cv->strings[cv->procs[k->process].name];
			char where[600];
			if (k->kind != kind)
				continue;
			if (kind != CV_MARK_GPU_LEAK) {
				fprintf(stderr,
					"trace2otf2:   \"%s\" %llu bytes in %s at 0x%llx (%s)\n",
					cv->strings[k->label], (unsigned long long)k->bytes,
					cv->strings[k->space], (unsigned long long)k->addr, proc);
				continue;
			}
			cv_scl_text(cv, k->scl, where, sizeof(where));
			fprintf(stderr,
				"trace2otf2:   %llu bytes of %s at 0x%llx, by %s at %s (%s)\n",
				(unsigned long long)k->bytes, cv->strings[k->space],
				(unsigned long long)k->addr, cv->strings[k->label], where, proc);
		}
	}
	if (cv->stats.kokkos_unseen_frees)
		fprintf(stderr,
			"trace2otf2: Kokkos deallocations of memory allocated before Kokkos loaded "
			"the tool (left out of the memory metric): %llu, %llu bytes\n",
			(unsigned long long)cv->stats.kokkos_unseen_frees,
			(unsigned long long)cv->stats.kokkos_unseen_bytes);
}

/* A parallel conversion: whether rank 0 succeeded in `ok`, told to every rank. */
static int all_agree(struct conv_mpi *mpi, int ok)
{
	if (!mpi)
		return ok;
	char c = (char)ok, *b = &c;
	size_t len = 1;
	if (mpi->par.bcast(&mpi->par, (void **)&b, &len) || len != 1)
		mpi->abort(mpi, EXIT_OUTPUT);
	ok = *b;
	if (b != &c)
		free(b);
	return ok;
}

static int convert_main(int argc, char **argv, struct conv_mpi **mpip)
{
	struct conv_mpi *mpi = *mpip;
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"format", required_argument, NULL, 'f'},
	    {"progress", no_argument, NULL, 'P'},
	    {"debug-dir", required_argument, NULL, 'D'},
	    {"core-view", no_argument, NULL, 'C'},
	    {"no-clock-align", no_argument, NULL, 'A'},
	    {"jobs", required_argument, NULL, 'j'},
	    {"from", required_argument, NULL, 'F'},
	    {"to", required_argument, NULL, 'T'},
	    {"min-duration", required_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {NULL, 0, NULL, 0},
	};
	/* The outputs hold what the trace holds (the program's arguments, its environment's
	 * traces): as private as the trace, whatever the libraries under us create. */
	umask(077);
	/* Past a file size limit (ulimit -f): said, rather than SIGXFSZ ending the tool
	 * without a word (ignored, the write fails, and OTF2 crashes on the short write). */
	signal(SIGXFSZ, on_xfsz);
	const char *out = NULL, *debug_dir = "/usr/lib/debug";
	int quiet = 0, progress = isatty(2), core_view = 0, no_clock_align = 0, c;
	const struct cv_backend *be = cv_backend_list()[0];
	int jobs = 1;
	uint64_t window[3] = {0, 0, 0}; /* --from, --to, --min-duration */
	const char *window_arg = NULL;
	while ((c = getopt_long(argc, argv, "o:f:j:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 256) {
				fprintf(stderr, "trace2otf2: --jobs %s: a number from 1 to 256\n",
					optarg);
				return EXIT_USAGE;
			}
			jobs = (int)n;
			break;
		}
		case 'f':
			if (!(be = cv_backend_find(optarg))) {
				char names[256];
				cv_backend_names(names, sizeof(names));
				fprintf(stderr, "trace2otf2: --format %s: unknown format (%s)\n",
					optarg, names);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'P':
			progress = 1;
			break;
		case 'D':
			debug_dir = optarg;
			break;
		case 'C':
			core_view = 1;
			break;
		case 'A':
			no_clock_align = 1;
			break;
		case 'F':
		case 'T':
		case 'M': {
			int i = c == 'F' ? 0 : c == 'T' ? 1 : 2;
			if (parse_time(optarg, &window[i])) {
				fprintf(stderr,
					"trace2otf2: --%s %s: expected a duration such as 1.5s, "
					"200ms, 10us (ns, us, ms, s)\n",
					i == 0	 ? "from"
					: i == 1 ? "to"
						 : "min-duration",
					optarg);
				return EXIT_USAGE;
			}
			window_arg = i == 0 ? "--from" : i == 1 ? "--to" : "--min-duration";
			break;
		}
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("trace2otf2 (libtrace) %s\n", LIBTRACE_VERSION);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	char in[PATH_MAX];
	snprintf(in, sizeof(in), "%s", argv[optind]);
	for (size_t n = strlen(in); n > 1 && in[n - 1] == '/'; n--)
		in[n - 1] = '\0';

	struct warnings w = {0};
	char err[PATH_MAX + 256];
	char **dirs = NULL;
	int ndirs;
	struct stat st;
	if (stat(in, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "trace2otf2: %s: %s\n", in,
			errno && stat(in, &st) != 0 ? strerror(errno) : "not a directory");
		return EXIT_UNREADABLE;
	}
	if (is_process_dir(in)) {
		dirs = malloc(sizeof(*dirs));
		dirs[0] = strdup(in);
		ndirs = 1;
	} else if ((ndirs = rd_trace_list(in, &dirs, err, sizeof(err))) < 0) {
		fprintf(stderr, "trace2otf2: %s\n", err);
		return EXIT_UNREADABLE;
	}

	/* Unreadable processes (no meta, another format version) are told now, and left out;
	 * when none is readable, nothing is written. */
	int readable = 0, unreadable = 0;
	struct start *starts = calloc((size_t)ndirs, sizeof(*starts));
	if (!starts) {
		fprintf(stderr, "trace2otf2: out of memory\n");
		free_list(dirs, ndirs);
		return EXIT_OUTPUT;
	}
	for (int i = 0; i < ndirs; i++) {
		struct rd_process p;
		if (rd_process_open(&p, dirs[i], NULL, NULL, err, sizeof(err)) == 0) {
			starts[readable] = (struct start){p.syncs[0].real_ns, dirs[i]};
			rd_process_close(&p);
			dirs[readable++] = dirs[i];
		} else {
			if (!mpi || mpi->par.rank == 0)
				fprintf(stderr, "trace2otf2: %s\n", err);
			free(dirs[i]);
			unreadable++;
		}
	}
	ndirs = readable;
	if (readable == 0) {
		fprintf(stderr, "trace2otf2: %s: no process of the trace can be read\n", in);
		free(starts);
		free(dirs);
		return EXIT_UNREADABLE;
	}
	/* In order of their start: a process's creator comes before it. */
	qsort(starts, (size_t)ndirs, sizeof(*starts), start_cmp);
	for (int i = 0; i < ndirs; i++)
		dirs[i] = starts[i].dir;
	free(starts);

	char outbuf[PATH_MAX + 8];
	int files = be->output == CV_OUTPUT_FILES;
	if (core_view && !(be->needs & CV_NEEDS_CORE_VIEW)) {
		fprintf(stderr, "trace2otf2: --core-view is for OTF2 archives (Vampir)\n");
		free_list(dirs, ndirs);
		return EXIT_USAGE;
	}
	if (window_arg && !(be->needs & CV_NEEDS_WINDOW)) {
		fprintf(stderr, "trace2otf2: %s is for --format=chrome\n", window_arg);
		free_list(dirs, ndirs);
		return EXIT_USAGE;
	}
	if (window[1] && window[1] <= window[0]) {
		fprintf(stderr, "trace2otf2: --to must come after --from\n");
		free_list(dirs, ndirs);
		return EXIT_USAGE;
	}
	int rank = mpi ? mpi->par.rank : 0;
	if (mpi && core_view) {
		if (rank == 0)
			fprintf(stderr,
				"trace2otf2: --core-view needs every process's CPU "
				"records in one converter: run it without the MPI launcher\n");
		free_list(dirs, ndirs);
		return EXIT_USAGE;
	}
	/* A format that cannot be written in parallel is converted by rank 0 alone. */
	struct cv_par *par = mpi && be->parallel ? &mpi->par : NULL;
	if (mpi && !par && rank != 0) {
		free_list(dirs, ndirs);
		return EXIT_OK;
	}
	if (mpi && !par && !quiet)
		fprintf(stderr,
			"trace2otf2: the %s format is written by one converter: rank 0 converts "
			"alone while the other %d ranks wait\n",
			be->name, mpi->par.size - 1);
	if (!out) {
		snprintf(outbuf, sizeof(outbuf), "%s%s", in, files ? "" : be->exts[0]);
		out = outbuf;
	} else if (files) {
		size_t n = strlen(out), e = strlen(be->exts[0]);
		snprintf(outbuf, sizeof(outbuf), "%.*s",
			 (int)(n > e && !strcmp(out + n - e, be->exts[0]) ? n - e : n), out);
		out = outbuf;
	}
	int created = rank != 0 || !(files ? create_files(out, be->exts) : create_directory(out));
	if (!(par ? all_agree(mpi, created) : created)) {
		free_list(dirs, ndirs);
		return EXIT_OUTPUT;
	}
	/* -j N: this process and N - 1 forked from it share the processes, as under MPI. */
	if (jobs > 1 && !mpi && (!be->parallel || core_view)) {
		if (!quiet)
			fprintf(stderr, "trace2otf2: --jobs: %s converts in one process\n",
				core_view ? "--core-view" : be->name);
	} else if (jobs > 1 && !mpi && ndirs > 1) { /* at most a process each */
		if (conv_local_start(jobs < ndirs ? jobs : ndirs, mpip, err, sizeof(err))) {
			fprintf(stderr, "trace2otf2: --jobs: %s\n", err);
			remove_output(out, be);
			free_list(dirs, ndirs);
			return EXIT_OUTPUT;
		}
		mpi = *mpip;
		par = &mpi->par;
		rank = par->rank;
	}

	struct cv cv = {0};
	cv.ops = be->ops;
	cv.par = par;
	cv.progress = progress && !quiet && rank == 0;
	cv.core_view = core_view;
	cv.no_clock_align = no_clock_align;
	cv.from_ns = window[0];
	cv.to_ns = window[1];
	cv.min_duration_ns = window[2];
	const struct sym_line_ops *lines = NULL;
#ifdef LIBTRACE_HAVE_BFD
	if (be->needs & CV_NEEDS_SOURCE_LINES)
		lines = &sym_bfd_ops;
#endif
	cv.syms = sym_table_new(lines, debug_dir);
	if (!cv.syms || be->open(&cv, out, err, sizeof(err))) {
		fprintf(stderr, "trace2otf2: %s\n", cv.syms ? err : "out of memory");
		if (par) /* the others wait for it in a collective */
			mpi->abort(mpi, EXIT_OUTPUT);
		remove_output(out, be);
		sym_table_free(cv.syms);
		free_list(dirs, ndirs);
		return EXIT_OUTPUT;
	}
	int rc = cv_convert(&cv, dirs, ndirs, warn_stderr, &w);
	if (w.dropped)
		fprintf(stderr, "trace2otf2: ... and %u more problems\n", w.dropped);
	int status = EXIT_OK;
	if (rank != 0) { /* rank 0 tells what came of it */
		be->free(&cv);
		cv_free(&cv);
		sym_table_free(cv.syms);
		free_list(dirs, ndirs);
		return rc ? EXIT_OUTPUT : EXIT_OK;
	}
	/* What a parallel conversion did, all ranks together, is rank 0's global view. */
	const struct cv *res = cv.global ? cv.global : &cv;
	if (rc != 0) {
		const char *why = be->error(&cv);
		fprintf(stderr, "trace2otf2: %s: writing the %s failed%s%s\n", out, be->what,
			why ? ": " : "", why ? why : "");
		status = EXIT_OUTPUT;
	} else if (res->stats.processes == 0) {
		fprintf(stderr, "trace2otf2: %s: no process of the trace could be read\n", in);
		status = EXIT_UNREADABLE;
		if (files) /* a Paraver trace of nothing is not one */
			remove_output(out, be);
	} else if (res->stats.damaged || res->stats.unreadable || unreadable) {
		status = EXIT_DAMAGED;
	}
	if (!quiet && rc == 0) {
		double span = (double)(res->stats.last_ns - res->stats.first_ns) / 1e9;
		fprintf(stderr,
			"trace2otf2: %llu process%s, %llu thread%s, %llu events from %llu records, "
			"%.6f s, written to %s%s",
			(unsigned long long)res->stats.processes,
			res->stats.processes == 1 ? "" : "es",
			(unsigned long long)res->stats.threads, res->stats.threads == 1 ? "" : "s",
			(unsigned long long)res->stats.events,
			(unsigned long long)res->stats.records, span, out, be->written);
		if (res->stats.lost)
			fprintf(stderr, "; %llu events were lost while tracing (see the markers)",
				(unsigned long long)res->stats.lost);
		if (res->stats.cut_processes)
			fprintf(stderr, "; %llu process%s ended abruptly or left files cut short",
				(unsigned long long)res->stats.cut_processes,
				res->stats.cut_processes == 1 ? "" : "es");
		if (res->stats.unclosed)
			fprintf(stderr, "; %llu regions left open were closed by the converter",
				(unsigned long long)res->stats.unclosed);
		if (res->stats.too_deep)
			fprintf(stderr, "; %llu regions nested too deep were left out",
				(unsigned long long)res->stats.too_deep);
		if (res->mpi_aligned)
			fprintf(stderr, "; %llu MPI rank%s put on rank 0's clock",
				(unsigned long long)res->mpi_aligned,
				res->mpi_aligned == 1 ? "" : "s");
		if (res->stats.gpu_ops)
			fprintf(stderr,
				"; %llu GPU operations (%llu moved to keep their stream in order)",
				(unsigned long long)res->stats.gpu_ops,
				(unsigned long long)res->stats.gpu_clamped);
		if (status == EXIT_DAMAGED)
			fprintf(stderr, "; the trace is damaged: what was valid is converted");
		fputs(".\n", stderr);
		for (size_t i = 0; i < res->nnotes; i++)
			fprintf(stderr, "trace2otf2: %s\n", res->notes[i]);
		print_leaks(res);
	}
	be->free(&cv);
	cv_free(&cv);
	sym_table_free(cv.syms);
	free_list(dirs, ndirs);
	return status;
}

/*
 * Under a launcher: whether every rank was given rank 0's arguments (a job script that
 * names another output per rank would have the ranks write different archives together).
 */
static int same_arguments(struct conv_mpi *mpi, int argc, char **argv)
{
	size_t len = 1;
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *mine = calloc(1, len), *p = mine;
	if (!mine)
		mpi->abort(mpi, EXIT_OUTPUT);
	for (int i = 1; i < argc; i++)
		p = stpcpy(p, argv[i]) + 1;
	void *theirs = mine;
	size_t n = len;
	if (mpi->par.bcast(&mpi->par, &theirs, &n))
		mpi->abort(mpi, EXIT_OUTPUT);
	char ok = n == len && !memcmp(theirs, mine, len);
	if (theirs != mine)
		free(theirs);
	free(mine);
	void **all = NULL;
	size_t *lens = NULL;
	if (mpi->par.gather(&mpi->par, &ok, 1, &all, &lens))
		mpi->abort(mpi, EXIT_OUTPUT);
	int bad = -1;
	for (int r = 0; all && r < mpi->par.size; r++) {
		if (bad < 0 && (lens[r] != 1 || !*(char *)all[r]))
			bad = r;
		free(all[r]);
	}
	free(all);
	free(lens);
	if (mpi->par.rank == 0 && bad >= 0)
		fprintf(stderr,
			"trace2otf2: rank %d of the converters was given other arguments than "
			"rank 0: every rank must be the same command (one output, one trace)\n",
			bad);
	return all_agree(mpi, bad < 0);
}

int main(int argc, char **argv)
{
	enum conv_mpi_abi abi;
	int size = conv_launcher_size(&abi);
	struct conv_mpi *mpi = NULL;
	char err[PATH_MAX + 256];
	if (size > 1 && conv_mpi_start(&argc, &argv, size, abi, &mpi, err, sizeof(err))) {
		fprintf(stderr, "trace2otf2: %s\n", err);
		return EXIT_USAGE;
	}
	if (mpi && !same_arguments(mpi, argc, argv)) {
		mpi->finalize(mpi);
		return EXIT_USAGE;
	}
	int status = convert_main(argc, argv, &mpi);
	if (!mpi) /* serial (or -j 1) */
		return status;
	/* Every rank ends with rank 0's status (its own failures are printed already). */
	char c = (char)status, *b = &c;
	size_t len = 1;
	if (mpi->par.bcast(&mpi->par, (void **)&b, &len) == 0 && len == 1) {
		if (status == EXIT_OK || mpi->par.rank == 0)
			status = *b;
	}
	if (b != &c)
		free(b);
	mpi->finalize(mpi);
	return status;
}
