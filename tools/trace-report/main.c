// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace-report - the profile of traced runs (a table, JSON or CSV), and the comparison of a
 * baseline's runs with a candidate's for CI (--compare): options, inputs, exit statuses.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compare.h"
#include "profile.h"

static const char usage[] =
    "usage: trace-report [options] RUN...\n"
    "       trace-report --compare [options] BASELINE CANDIDATE\n"
    "\n"
    "The profile of each RUN: a trace directory (or one process directory <host>.<pid> in\n"
    "it), an OTF2 archive trace2otf2 made of one (its traces.otf2, or the directory holding\n"
    "it), or a profile saved with --json.  Per region: calls, inclusive and exclusive time,\n"
    "min/mean/max per call, the imbalance between the threads; per process and thread:\n"
    "lifetime, time in regions, events, lost events; the run's program, arguments, host,\n"
    "date, threads.\n"
    "\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "      --json           the runs as JSON (schema libtrace-profile/1; a baseline to\n"
    "                       --compare against: several RUNs make one file)\n"
    "      --csv            one line per region and run, times in ns\n"
    "      --html           one self-contained HTML page instead (no network: opens\n"
    "                       offline, a CI artifact): warnings, the threads and cores\n"
    "                       over time (zoomable), the sortable profile, the call tree,\n"
    "                       memory over time and its high-water marks, the samplers'\n"
    "                       series, the MPI message matrix\n"
    "      --tree           the call tree instead: top-down (each region under the\n"
    "                       path that called it, over all threads) and bottom-up (each\n"
    "                       region by exclusive time, its callers below); nodes of 0.5%\n"
    "                       of the time or more, --all for every node\n"
    "      --top N          the table shows the N regions with most exclusive time\n"
    "                       (default 20) and N threads\n"
    "      --all            the table shows every region and thread\n"
    "      --no-git         do not look up the git revision of the program's directory\n"
    "      --debug-dir DIR  where separate debug files live (default /usr/lib/debug)\n"
    "  -q, --quiet          no warnings about damaged traces\n"
    "  -h, --help           this text\n"
    "      --version        the version of libtrace, then exit\n"
    "\n"
    "--compare BASELINE CANDIDATE: each a comma-separated list of trace directories, OTF2\n"
    "archives, saved profiles (a profile may hold several runs) and directories of these\n"
    "(a suite).  Runs of several programs make a suite: runs are paired by program and\n"
    "arguments, each pair compared, with one verdict.  Per region, the median over each\n"
    "side's runs of the metric; a region regressed when the candidate's median is above\n"
    "the baseline's by more than the threshold and by more than the minimum difference,\n"
    "and, with 3 runs or more on each side, when its runs are slower than the baseline's\n"
    "in a one-sided Mann-Whitney test, Holm-corrected over all regions tested so that\n"
    "identical programs are flagged with a chance of at most alpha.  Improvements are the\n"
    "mirror image; regions on one side only are listed as appeared or vanished, those too\n"
    "short or too rare to measure as such.  Each change has its confidence interval.\n"
    "\n"
    "      --metric M       inclusive (default), exclusive: time per run; calls: calls\n"
    "                       per run\n"
    "      --threshold P    relative change that counts, in percent (default 5%)\n"
    "      --min-diff D     absolute change that counts (default 1ms: shorter changes\n"
    "                       are noise on a shared machine; a unit ns, us, ms or s, or\n"
    "                       none for ns; calls: a number, default 0)\n"
    "      --alpha A        the noise test's level (default 0.05)\n"
    "      --force          compare runs of different programs\n"
    "      --json           the comparison as JSON (schema libtrace-compare/1; a suite:\n"
    "                       libtrace-compare-suite/1)\n"
    "      --junit FILE     also write JUnit XML (a failing test case per region that\n"
    "                       regressed) to FILE\n"
    "      --markdown FILE  also write a Markdown summary (a pull request's comment)\n"
    "      --all            list the unchanged regions too\n"
    "\n"
    "Exit status:\n"
    "  0  profiles written; --compare: no region regressed\n"
    "  1  --compare: a region regressed\n"
    "  2  --compare: not comparable (the runs are of different programs)\n"
    "  3  error: bad option, unreadable trace or archive, broken profile, write error\n";

struct warnings {
	unsigned shown, dropped;
	int quiet;
};

#define WARN_MAX 30

static void warn_stderr(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	if (w->quiet)
		return;
	if (w->shown < WARN_MAX) {
		w->shown++;
		fprintf(stderr, "trace-report: %s\n", msg);
	} else {
		w->dropped++;
	}
}

struct inputs {
	struct rp_run *runs;
	size_t n;
};

static int add_input(struct inputs *in, const char *path, const struct rp_options *opt);

/* Whether dir/name is a directory holding a file named `file`. */
static int holds(const char *dir, const char *name, const char *file)
{
	char p[PATH_MAX];
	struct stat st;
	int n = snprintf(p, sizeof(p), "%s/%s/%s", dir, name, file);
	return n > 0 && (size_t)n < sizeof(p) && stat(p, &st) == 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A suite directory: not an archive, not a trace directory (whose entries are process
 * directories holding "meta"), but a directory of runs: trace directories, archives and saved
 * profiles (*.json), read in name order.  Returns 1 after adding them, 0 when path is no
 * suite, -1 on an error.
 */
static int add_suite(struct inputs *in, const char *path, const struct rp_options *opt)
{
	DIR *d = opendir(path);
	if (!d)
		return 0;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int trace = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (holds(path, de->d_name, "meta"))
			trace = 1;
		size_t len = strlen(de->d_name);
		char anchor[PATH_MAX + 16], p[2 * PATH_MAX + 64];
		if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, de->d_name) >= PATH_MAX)
			continue;
		struct stat st;
		int run = (len > 5 && !strcmp(de->d_name + len - 5, ".json")) ||
			  rp_is_otf2(p, anchor, sizeof(anchor));
		if (!run && stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *sub = opendir(p); /* a trace directory: a process directory in it */
			struct dirent *se;
			while (sub && !run && (se = readdir(sub)))
				run = se->d_name[0] != '.' && holds(p, se->d_name, "meta");
			if (sub)
				closedir(sub);
		}
		if (!run)
			continue;
		if (n == cap) {
			char **a = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof(*a));
			if (!a)
				break;
			names = a;
		}
		if (!(names[n] = strdup(p)))
			break;
		n++;
	}
	closedir(d);
	int rc = 0;
	if (!trace && n) {
		qsort(names, n, sizeof(*names), by_name);
		rc = 1;
		for (size_t i = 0; i < n && rc == 1; i++)
			if (add_input(in, names[i], opt))
				rc = -1;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Adds the runs of one input: a trace directory, an OTF2 archive, a saved profile or a
 * suite directory of these.  Returns 0, or -1. */
static int add_input(struct inputs *in, const char *path, const struct rp_options *opt)
{
	char err[PATH_MAX + 512];
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "trace-report: %s: %s\n", path, strerror(errno));
		return -1;
	}
	char anchor[PATH_MAX + 16];
	int archive = rp_is_otf2(path, anchor, sizeof(anchor));
	if (!archive && S_ISDIR(st.st_mode)) {
		int rc = add_suite(in, path, opt);
		if (rc)
			return rc < 0 ? -1 : 0;
	}
	if (archive || S_ISDIR(st.st_mode)) {
		struct rp_run run;
		struct warnings *w = opt->wctx;
		w->shown = w->dropped = 0;
		if (archive ? rp_profile_otf2(anchor, opt, &run, err, sizeof(err))
			    : rp_profile_trace(path, opt, &run, err, sizeof(err))) {
			fprintf(stderr, "trace-report: %s\n", err);
			return -1;
		}
		if (w->dropped)
			fprintf(stderr, "trace-report: %s: ... and %u more problems\n", path,
				w->dropped);
		struct rp_run *a = realloc(in->runs, (in->n + 1) * sizeof(*a));
		if (!a) {
			rp_run_free(&run);
			fprintf(stderr, "trace-report: out of memory\n");
			return -1;
		}
		in->runs = a;
		in->runs[in->n++] = run;
		return 0;
	}
	if (rp_read_json(path, &in->runs, &in->n, err, sizeof(err))) {
		fprintf(stderr, "trace-report: %s\n", err);
		return -1;
	}
	return 0;
}

/* A comma-separated list of inputs (a name that exists as it is is one input). */
static int add_list(struct inputs *in, const char *list, const struct rp_options *opt)
{
	struct stat st;
	if (stat(list, &st) == 0 || !strchr(list, ','))
		return add_input(in, list, opt);
	/* An empty element ("a,", "a,,b") is a mistake, never skipped: say which. */
	size_t k = 1;
	for (const char *p = list;; p++, k++) {
		const char *comma = strchr(p, ',');
		if (comma == p || !*p) {
			fprintf(stderr, "trace-report: \"%s\": element %zu of the list is empty\n",
				list, k);
			return -1;
		}
		if (!comma)
			break;
		p = comma;
	}
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		return -1;
	int rc = 0;
	for (char *item = strtok_r(copy, ",", &save); item && !rc;
	     item = strtok_r(NULL, ",", &save))
		rc = add_input(in, item, opt);
	free(copy);
	return rc;
}

/* A usage error: one line said before, then where the whole text is. */
static int usage_error(void)
{
	fputs("try 'trace-report --help'\n", stderr);
	return RP_EXIT_ERROR;
}

static void free_inputs(struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		rp_run_free(&in->runs[i]);
	free(in->runs);
	in->runs = NULL;
	in->n = 0;
}

/* "5%", "5", "2.5%": a percentage, as a fraction. */
static int parse_percent(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	if (*end == '%')
		end++;
	if (*end)
		return -1;
	*out = v / 100;
	return 0;
}

/* "100us", "2ms", "500": ns (has_unit: a unit was given). */
static int parse_duration(const char *s, double *out, int *has_unit)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !isfinite(v) || v < 0)
		return -1;
	*has_unit = 0;
	if (*end) {
		size_t i;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].unit))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		v *= units[i].scale;
		*has_unit = 1;
	}
	*out = v;
	return 0;
}

static void lost_warnings(const struct inputs *in)
{
	for (size_t i = 0; i < in->n; i++)
		if (in->runs[i].totals.lost)
			fprintf(stderr,
				"trace-report: WARNING: %s: %" PRIu64
				" events were lost while tracing: its counts and times are short\n",
				in->runs[i].trace, in->runs[i].totals.lost);
}

enum {
	OPT_JSON = 256,
	OPT_CSV,
	OPT_TOP,
	OPT_ALL,
	OPT_COMPARE,
	OPT_THRESHOLD,
	OPT_MIN_DIFF,
	OPT_METRIC,
	OPT_ALPHA,
	OPT_FORCE,
	OPT_NO_GIT,
	OPT_DEBUG_DIR,
	OPT_JUNIT,
	OPT_MARKDOWN,
	OPT_TREE,
	OPT_HTML,
	OPT_VERSION,
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"csv", no_argument, NULL, OPT_CSV},
	    {"top", required_argument, NULL, OPT_TOP},
	    {"all", no_argument, NULL, OPT_ALL},
	    {"compare", no_argument, NULL, OPT_COMPARE},
	    {"threshold", required_argument, NULL, OPT_THRESHOLD},
	    {"min-diff", required_argument, NULL, OPT_MIN_DIFF},
	    {"metric", required_argument, NULL, OPT_METRIC},
	    {"alpha", required_argument, NULL, OPT_ALPHA},
	    {"force", no_argument, NULL, OPT_FORCE},
	    {"no-git", no_argument, NULL, OPT_NO_GIT},
	    {"debug-dir", required_argument, NULL, OPT_DEBUG_DIR},
	    {"junit", required_argument, NULL, OPT_JUNIT},
	    {"markdown", required_argument, NULL, OPT_MARKDOWN},
	    {"tree", no_argument, NULL, OPT_TREE},
	    {"html", no_argument, NULL, OPT_HTML},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, OPT_VERSION},
	    {NULL, 0, NULL, 0},
	};
	/* The profiles hold what the traces hold (the program's arguments): as private. */
	umask(077);
	/* Past a file size limit (ulimit -f) a write fails with EFBIG, which is reported,
	 * rather than SIGXFSZ ending the tool without a word. */
	signal(SIGXFSZ, SIG_IGN);
	const char *out_path = NULL, *min_diff_arg = NULL;
	int json = 0, csv = 0, all = 0, compare = 0, tree = 0, html = 0, c;
	long top = 20;
	struct rp_cmp_opts co = {RP_METRIC_INCLUSIVE, 0.05, 1e6, 0.05, 0, 0, 0, NULL, NULL};
	struct warnings w = {0};
	struct rp_options ro = {"/usr/lib/debug", 0, warn_stderr, &w};
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'o':
			out_path = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_CSV:
			csv = 1;
			break;
		case OPT_TREE:
			tree = 1;
			break;
		case OPT_HTML:
			html = 1;
			break;
		case OPT_TOP:
			errno = 0;
			top = strtol(optarg, &end, 10);
			if (end == optarg || *end || errno || top < 1) {
				fprintf(stderr, "trace-report: --top %s: not a positive number\n",
					optarg);
				return usage_error();
			}
			break;
		case OPT_ALL:
			all = 1;
			break;
		case OPT_COMPARE:
			compare = 1;
			break;
		case OPT_JUNIT:
			co.junit = optarg;
			break;
		case OPT_MARKDOWN:
			co.markdown = optarg;
			break;
		case OPT_THRESHOLD:
			if (parse_percent(optarg, &co.threshold)) {
				fprintf(
				    stderr,
				    "trace-report: --threshold %s: expected a percentage such as "
				    "5%%\n",
				    optarg);
				return usage_error();
			}
			break;
		case OPT_MIN_DIFF:
			min_diff_arg = optarg;
			break;
		case OPT_METRIC:
			if (!strcmp(optarg, "inclusive"))
				co.metric = RP_METRIC_INCLUSIVE;
			else if (!strcmp(optarg, "exclusive"))
				co.metric = RP_METRIC_EXCLUSIVE;
			else if (!strcmp(optarg, "calls"))
				co.metric = RP_METRIC_CALLS;
			else {
				fprintf(
				    stderr,
				    "trace-report: --metric %s: expected inclusive, exclusive or "
				    "calls\n",
				    optarg);
				return usage_error();
			}
			break;
		case OPT_ALPHA:
			errno = 0;
			co.alpha = strtod(optarg, &end);
			if (end == optarg || *end || errno || !(co.alpha > 0 && co.alpha < 1)) {
				fprintf(stderr,
					"trace-report: --alpha %s: expected a number in (0, 1)\n",
					optarg);
				return usage_error();
			}
			break;
		case OPT_FORCE:
			co.force = 1;
			break;
		case OPT_NO_GIT:
			ro.no_git = 1;
			break;
		case OPT_DEBUG_DIR:
			ro.debug_dir = optarg;
			break;
		case 'q':
			w.quiet = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return RP_EXIT_OK;
		case OPT_VERSION:
			printf("trace-report (libtrace) %s\n", LIBTRACE_VERSION);
			return RP_EXIT_OK;
		default: /* getopt said what is wrong */
			return usage_error();
		}
	}
	if (json + csv + tree + html > 1) {
		fprintf(stderr, "trace-report: --json, --csv, --tree and --html: choose one\n");
		return usage_error();
	}
	if ((tree || html) && compare) {
		fprintf(stderr, "trace-report: --tree and --html show runs, not a --compare\n");
		return usage_error();
	}
	if (compare) {
		if (argc - optind != 2) {
			fprintf(stderr, "trace-report: --compare takes BASELINE and CANDIDATE\n");
			return usage_error();
		}
		if (csv) {
			fprintf(stderr, "trace-report: --compare writes text or --json, not CSV\n");
			return usage_error();
		}
		if (co.metric == RP_METRIC_CALLS)
			co.min_diff = 0;
		if (min_diff_arg) {
			int has_unit;
			if (parse_duration(min_diff_arg, &co.min_diff, &has_unit) ||
			    (has_unit && co.metric == RP_METRIC_CALLS)) {
				fprintf(stderr, "trace-report: --min-diff %s: expected %s\n",
					min_diff_arg,
					co.metric == RP_METRIC_CALLS
					    ? "a number of calls"
					    : "a duration such as 1ms (ns, us, ms, s)");
				return usage_error();
			}
		}
		co.json = json;
		co.all = all;
	} else if (optind == argc) {
		fprintf(stderr, "trace-report: no RUN named\n");
		return usage_error();
	} else if (min_diff_arg || co.force || co.junit || co.markdown) {
		fprintf(stderr, "trace-report: --min-diff, --force, --junit and --markdown go with "
				"--compare\n");
		return usage_error();
	}

	struct inputs base = {0}, cand = {0};
	int status = RP_EXIT_OK;
	if (compare) {
		if (add_list(&base, argv[optind], &ro) || add_list(&cand, argv[optind + 1], &ro)) {
			status = RP_EXIT_ERROR;
			goto out;
		}
		lost_warnings(&base);
		lost_warnings(&cand);
	} else {
		for (int i = optind; i < argc; i++)
			if (add_input(&base, argv[i], &ro)) {
				status = RP_EXIT_ERROR;
				goto out;
			}
		lost_warnings(&base);
	}

	FILE *f = stdout;
	struct rp_out out;
	if (out_path && !(f = rp_out_open(&out, out_path))) {
		status = RP_EXIT_ERROR;
		goto out;
	}
	if (compare)
		status = rp_compare(f, base.runs, base.n, cand.runs, cand.n, &co);
	else if (json)
		rp_write_json(f, base.runs, base.n);
	else if (csv)
		rp_write_csv(f, base.runs, base.n);
	else if (html)
		status = rp_write_html(f, base.runs, base.n) ? RP_EXIT_ERROR : RP_EXIT_OK;
	else if (tree)
		for (size_t i = 0; i < base.n; i++) {
			if (i)
				fputs("\n\n", f);
			rp_write_tree(f, &base.runs[i], all ? 0 : 0.005);
		}
	else
		rp_write_table(f, base.runs, base.n, all ? 0 : (size_t)top);
	if (out_path) {
		/* A report that failed (and said why) is not put in place. */
		if (rp_out_close(&out, status != RP_EXIT_ERROR))
			status = RP_EXIT_ERROR;
	} else if (fflush(f) != 0 || ferror(f)) {
		fprintf(stderr, "trace-report: standard output: write error: %s\n",
			strerror(errno));
		status = RP_EXIT_ERROR;
	}
out:
	free_inputs(&base);
	free_inputs(&cand);
	return status;
}
