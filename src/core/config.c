// SPDX-License-Identifier: BSD-3-Clause
/*
 * config.c - the LIBTRACE_* table and its parser.  Every variable the runtime reads is one
 * row here; docs/settings.md and libtrace(7) document each row (tests keep them in sync).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../common/modules.h"
#include "config.h"
#include "lt.h"

LT_PAGE_ALIGNED struct lt_config lt_cfg;

#define MODULE_WORD(id, word) word,
const char *const lt_module_names[] = {LT_MODULE_WORDS(MODULE_WORD) NULL};
#undef MODULE_WORD

const char *const lt_sampler_names[] = {"energy", "temperature", "memory", "cpu", NULL};

const struct lt_option lt_options[] = {
    {"LIBTRACE_OUTPUT", LT_OPT_STRING, "", NULL,
     "Trace directory. Default: a new libtrace-<program>-<date>-<pid> in the current "
     "directory. Every process writes its own <host>.<pid> sub-directory in it."},
    {"LIBTRACE_MODULES", LT_OPT_MODULES, "all", NULL,
     "Comma-separated modules to record: pthread, proc, user, omp, kokkos, mpi, cuda, hip; or "
     "all, none."},
    {"LIBTRACE_BUFFER_SIZE", LT_OPT_SIZE, "8M", NULL,
     "Ring buffer per live thread (64K to 1G), in 8 chunks. The tracer's memory is about "
     "this much per live thread."},
    {"LIBTRACE_OVERFLOW", LT_OPT_CHOICE, "block", "block|drop",
     "When a thread's ring is full: block has the thread copy its own chunks out (no "
     "loss); drop counts the events as lost."},
    {"LIBTRACE_MODE", LT_OPT_CHOICE, "stream", "stream|flight",
     "stream: the writer thread copies every full chunk to the events file (the whole "
     "run is kept). flight: a flight recorder, each thread keeps only its last "
     "LIBTRACE_BUFFER_SIZE of records, reusing its oldest chunk, and they are written out "
     "at the end (or on LIBTRACE_FLIGHT_SIGNAL); the events file does not grow meanwhile."},
    {"LIBTRACE_FLIGHT_SIGNAL", LT_OPT_STRING, "none", NULL,
     "Flight mode: a signal (e.g. SIGUSR1, USR2, SIGRTMIN+3, or its number) on which every "
     "thread's current records are written out while the program goes on; none: no such "
     "signal. A handler the program installs for it replaces the tracer's."},
    {"LIBTRACE_CLOCK", LT_OPT_CHOICE, "auto", "auto|tsc|monotonic",
     "Timestamp source: tsc where the TSC is invariant (auto), or CLOCK_MONOTONIC."},
    {"LIBTRACE_KOKKOS_FENCE", LT_OPT_CHOICE, "auto", "auto|on|off",
     "Whether Kokkos fences before each callback (its requires_global_fencing): on, so that "
     "kernel times of asynchronous (GPU) backends are their real times; off, no fence; auto, "
     "on when a GPU runtime (CUDA, HIP, SYCL, OpenMP offload) is loaded or a Kokkos tool loaded "
     "behind the library asks for it, else off."},
    {"LIBTRACE_SAMPLE_PERIOD", LT_OPT_DURATION, "10ms", NULL,
     "Period of the sampler thread (energy, temperature, memory, CPU placement): 100us to "
     "60s, with a unit ns, us, ms or s; 0 turns the sampler thread off."},
    {"LIBTRACE_STACK_SAMPLING", LT_OPT_DURATION, "0", NULL,
     "Samples each thread's call stack every this much of its CPU time (100us to 60s, a "
     "unit ns, us, ms or s; 0: off), unwound with libunwind, through a timer per thread "
     "that sends signal SIGRTMAX-7 (SIGPROF and the program's own timers stay the "
     "program's)."},
    {"LIBTRACE_SAMPLERS", LT_OPT_SAMPLERS, "all", NULL,
     "Comma-separated samplers: energy (RAPL), temperature (hwmon, thermal zones), memory "
     "(resident set, memory per NUMA node), cpu (each thread's CPU and NUMA node); or all, "
     "none. A sampler whose source is missing says so once and stays off."},
    {"LIBTRACE_SAMPLER_START", LT_OPT_CHOICE, "auto", "auto|threaded|now",
     "When the sampler thread starts: threaded, once the process has a second thread (its "
     "first pthread_create, or the writer's when the trace fills a chunk), so that a "
     "single-threaded process that records little stays single-threaded, without samples; "
     "now, with the process; auto, now when LIBTRACE_SAMPLE_PERIOD or LIBTRACE_SAMPLERS is "
     "set (samples were asked for), threaded otherwise."},
    {"LIBTRACE_SYSFS_ROOT", LT_OPT_STRING, "", NULL,
     "Directory that stands for / when the samplers read their sources (/sys, /proc): a "
     "fake tree for tests. The runtime's own reads never move."},
    {"LIBTRACE_PAPI_EVENTS", LT_OPT_STRING, "", NULL,
     "Comma-separated PAPI events (presets or native names, e.g. "
     "PAPI_TOT_INS,perf::TASK-CLOCK) read per thread at region enter and leave; empty: "
     "none."},
    {"LIBTRACE_PAPI_MODULES", LT_OPT_MODULES, "all", NULL,
     "Modules whose regions carry the PAPI readings: pthread, proc, user, omp, kokkos; or "
     "all, none."},
    {"LIBTRACE_CALLSITE_DEPTH", LT_OPT_INT, "1", NULL,
     "Call-site frames recorded with each traced call (0 to 32; 0: none; 1: the line that "
     "made the call)."},
    {"LIBTRACE_QUIET", LT_OPT_BOOL, "0", NULL,
     "1: do not print the trace directory at exit, nor the Kokkos tool loaded behind the library."},
    {"LIBTRACE_DEBUG", LT_OPT_INT, "0", NULL,
     "Log verbosity on stderr: 0 warnings only, 1 information, 2 debug (values up to 100 are "
     "accepted; above 2 is as 2)."},
    {"LIBTRACE_CUPTI", LT_OPT_CHOICE, "auto", "auto|off",
     "CUDA through CUPTI (device activity: kernels, copies; every CUDA call, static "
     "runtime and NVIDIA's libraries included) where CUPTI loads and a GPU answers (auto), "
     "or only the wrappers of the shared CUDA runtime (off)."},
    {"LIBTRACE_CUPTI_LIB", LT_OPT_STRING, "", NULL,
     "The CUPTI library to load. Default: the one beside the program's libcudart or in "
     "that toolkit's extras/CUPTI/lib64, else libcupti.so.13, libcupti.so.12, libcupti.so "
     "on the loader's path, else in /usr/local/cuda's extras/CUPTI/lib64 or lib64."},
    {"LIBTRACE_TEST_CLOCK_SKEW", LT_OPT_DURATION, "0", NULL,
     "Tests only: a signed duration (e.g. -5ms) added to every clock reading of the "
     "process, to stand for another node's clock (MPI clock alignment tests)."},
    {"LIBTRACE_EXCLUDE", LT_OPT_STRING, "", NULL,
     "Comma-separated globs (*, ?, [...]) over the names of calls (pthread_mutex_lock), "
     "annotated regions, Kokkos kernels and regions, MPI functions, CUDA and HIP calls and "
     "GPU kernels (a launch goes by its kernel's name) that are not recorded; "
     "or the path of a Score-P filter file (REGION_NAMES blocks of EXCLUDE and INCLUDE "
     "rules, the last matching rule wins). Empty: none."},
    {"LIBTRACE_INCLUDE", LT_OPT_STRING, "", NULL,
     "Comma-separated globs, or a Score-P filter file: what matches is recorded even where "
     "LIBTRACE_EXCLUDE matches too; with globs here, names that match neither are not "
     "recorded. Empty: everything not excluded."},
    {"LIBTRACE_MIN_DURATION", LT_OPT_DURATION, "0", NULL,
     "Regions and blocking calls shorter than this leave no records (a unit ns, us, ms or "
     "s; 0: keep all); each thread's count of them is kept and trace-report shows it."},
    {"LIBTRACE_START_PAUSED", LT_OPT_BOOL, "0", NULL,
     "1: record nothing until ltr_trace_resume() or the toggle signal."},
    {"LIBTRACE_TOGGLE_SIGNAL", LT_OPT_STRING, "", NULL,
     "A signal (SIGUSR2, USR2, a number, SIGRTMIN+N) that pauses and resumes recording each "
     "time it arrives. Empty: none."},
    {NULL, 0, NULL, NULL, NULL},
};

enum {
	OPT_OUTPUT,
	OPT_MODULES,
	OPT_BUFFER_SIZE,
	OPT_OVERFLOW,
	OPT_MODE,
	OPT_FLIGHT_SIGNAL,
	OPT_CLOCK,
	OPT_KOKKOS_FENCE,
	OPT_SAMPLE_PERIOD,
	OPT_STACK_SAMPLING,
	OPT_SAMPLERS,
	OPT_SAMPLER_START,
	OPT_SYSFS_ROOT,
	OPT_PAPI_EVENTS,
	OPT_PAPI_MODULES,
	OPT_CALLSITE_DEPTH,
	OPT_QUIET,
	OPT_DEBUG,
	OPT_CUPTI,
	OPT_CUPTI_LIB,
	OPT_TEST_CLOCK_SKEW,
	OPT_EXCLUDE,
	OPT_INCLUDE,
	OPT_MIN_DURATION,
	OPT_START_PAUSED,
	OPT_TOGGLE_SIGNAL,
	OPT_COUNT
};

/*
 * The modules' settings (lt_setting), by option index: the core keeps its own in lt_cfg.
 * Strings are copied into a pool that a load starts afresh, with room for every option to
 * take the longest string and its default twice: what a load touches is a few hundred
 * bytes, not a page per option (each page a process touches first costs a fault).
 */
#define SETTING_STR_MAX 1024
static struct {
	uint64_t num;
	const char *str; /* in str_pool; NULL: "" */
	int given;	 /* set, validly, in the environment */
} setting[OPT_COUNT];
#define SET(i) setting[i]
static LT_PAGE_ALIGNED char str_pool[OPT_COUNT * (SETTING_STR_MAX + 2 * 64)];
static size_t str_pool_used;

/* Keeps v as option i's string; -1 when it is too long. */
static int keep_str(size_t i, const char *v)
{
	size_t n = strlen(v);
	if (n >= SETTING_STR_MAX || str_pool_used + n + 1 > sizeof(str_pool))
		return -1;
	SET(i).str = memcpy(str_pool + str_pool_used, v, n + 1);
	str_pool_used += n + 1;
	return 0;
}

/* The decimal number at s, after blanks and a '+' as strtoull takes them: its end, the value
 * in *v; NULL when no digit comes or the number does not fit in 64 bits.  (The C library's
 * strtoull is two page faults of code and tables at start: see print.c.) */
static const char *parse_u64(const char *s, uint64_t *v)
{
	while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
		s++;
	if (*s == '+')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	uint64_t x = 0;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (x > (UINT64_MAX - d) / 10)
			return NULL;
		x = x * 10 + d;
	}
	*v = x;
	return s;
}

static int parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	const char *end = parse_u64(s, &v);
	if (!end)
		return -1;
	uint64_t mul = 1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1ull << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1ull << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1ull << 30;
		end++;
		break;
	default:
		break;
	}
	if (*end == 'i' && mul > 1)
		end++;
	if ((*end == 'B' || *end == 'b') && end[1] == '\0')
		end++;
	if (*end != '\0' || v > UINT64_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* A duration: a number with a unit ns, us, ms or s ("500us", "10ms", "1s"); a bare 0. */
static int parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		uint64_t ns;
	} units[] = {{"ns", 1}, {"us", 1000}, {"ms", 1000000}, {"s", 1000000000}};
	uint64_t v;
	const char *end = parse_u64(s, &v);
	if (!end)
		return -1;
	if (*end == '\0') {
		if (v != 0)
			return -1; /* a bare number is ambiguous: only 0 needs no unit */
		*out = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v > UINT64_MAX / units[i].ns)
			return -1;
		*out = v * units[i].ns;
		return 0;
	}
	return -1;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = 0;
			return 0;
		}
	}
	return -1;
}

static int parse_int(const char *s, int *out)
{
	uint64_t v;
	const char *end = parse_u64(s, &v);
	if (!end || *end != '\0' || v > 100)
		return -1;
	*out = (int)v;
	return 0;
}

/* Index of `s` among the '|'-separated words of `choices`, or -1. */
static int parse_choice(const char *s, const char *choices)
{
	size_t len = strlen(s);
	int i = 0;
	for (const char *w = choices; *w; i++) {
		const char *bar = strchr(w, '|');
		size_t wl = bar ? (size_t)(bar - w) : strlen(w);
		if (wl == len && !strncasecmp(w, s, len))
			return i;
		if (!bar)
			break;
		w = bar + 1;
	}
	return -1;
}

/* Comma-separated words of `names` (a NULL-terminated list), "all" or "none", as a mask. */
static int parse_words(const char *s, const char *const *names, unsigned *out)
{
	unsigned all = 0, mask = 0;
	for (size_t i = 0; names[i]; i++)
		all |= 1u << i;
	while (*s) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		if (len == 3 && !strncasecmp(s, "all", 3)) {
			mask = all;
		} else if (len == 4 && !strncasecmp(s, "none", 4)) {
			mask = 0;
		} else if (len > 0) {
			size_t i;
			for (i = 0; names[i]; i++)
				if (strlen(names[i]) == len && !strncasecmp(names[i], s, len))
					break;
			if (!names[i])
				return -1;
			mask |= 1u << i;
		}
		if (!comma)
			break;
		s = comma + 1;
	}
	*out = mask;
	return 0;
}

/* parse_words into the module setting of option i. */
static int parse_mask(const char *s, const char *const *names, size_t i)
{
	unsigned mask;
	if (parse_words(s, names, &mask))
		return -1;
	SET(i).num = mask;
	return 0;
}

/* Signals LIBTRACE_FLIGHT_SIGNAL and LIBTRACE_TOGGLE_SIGNAL may name: not those that stop or kill
 * the process, nor the synchronous faults, whose handlers belong to the program. */
static const struct {
	const char *name;
	int sig;
} flight_signals[] = {{"HUP", SIGHUP},	    {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
		      {"USR2", SIGUSR2},    {"ALRM", SIGALRM}, {"TERM", SIGTERM}, {"URG", SIGURG},
		      {"WINCH", SIGWINCH},  {"PWR", SIGPWR},   {"IO", SIGIO},	  {"PROF", SIGPROF},
		      {"VTALRM", SIGVTALRM}};

static int flight_signal_ok(int sig)
{
	if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		return 1;
	for (size_t i = 0; i < sizeof(flight_signals) / sizeof(flight_signals[0]); i++)
		if (flight_signals[i].sig == sig)
			return 1;
	return 0;
}

/* "none", a name with or without SIG (USR1, SIGRTMIN+2, RTMAX-1) or a number: 0 for none,
 * the signal, or -1. */
static int parse_signal(const char *s)
{
	if (!strcasecmp(s, "none") || !strcmp(s, "") || !strcmp(s, "0"))
		return 0;
	uint64_t v;
	const char *end = parse_u64(s, &v);
	if (end && *end == '\0')
		return v > 0 && v <= (uint64_t)SIGRTMAX && flight_signal_ok((int)v) ? (int)v : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(flight_signals) / sizeof(flight_signals[0]); i++)
		if (!strcasecmp(s, flight_signals[i].name))
			return flight_signals[i].sig;
	int base = !strncasecmp(s, "RTMIN", 5)	 ? SIGRTMIN
		   : !strncasecmp(s, "RTMAX", 5) ? SIGRTMAX
						 : 0;
	if (!base)
		return -1;
	s += 5;
	if (*s == '\0')
		return base;
	if (*s != '+' && *s != '-')
		return -1;
	end = parse_u64(s + 1, &v);
	if (!end || *end != '\0' || v > (uint64_t)(SIGRTMAX - SIGRTMIN))
		return -1;
	int sig = *s == '+' ? base + (int)v : base - (int)v;
	return flight_signal_ok(sig) ? sig : -1;
}

/* Applies the textual value of option i; returns -1 when it does not parse. */
static int apply(size_t i, const char *v)
{
	const struct lt_option *o = &lt_options[i];
	switch (i) {
	case OPT_OUTPUT:
		if (strlen(v) >= sizeof(lt_cfg.output))
			return -1;
		strcpy(lt_cfg.output, v);
		return 0;
	case OPT_MODULES:
		if (parse_words(v, lt_module_names, &lt_cfg.modules))
			return -1;
		SET(i).num = lt_cfg.modules; /* modules read it too */
		return 0;
	case OPT_BUFFER_SIZE: {
		uint64_t sz;
		if (parse_size(v, &sz) || sz < (64u << 10) || sz > (1ull << 30))
			return -1;
		lt_cfg.buffer_size = sz;
		return 0;
	}
	case OPT_OVERFLOW: {
		int c = parse_choice(v, o->choices);
		if (c < 0)
			return -1;
		lt_cfg.overflow = c;
		return 0;
	}
	case OPT_MODE: {
		int c = parse_choice(v, o->choices);
		if (c < 0)
			return -1;
		lt_cfg.mode = c;
		return 0;
	}
	case OPT_FLIGHT_SIGNAL: {
		int sig = parse_signal(v);
		if (sig < 0)
			return -1;
		lt_cfg.flight_signal = sig;
		return 0;
	}
	case OPT_CLOCK: {
		int c = parse_choice(v, o->choices);
		if (c < 0)
			return -1;
		lt_cfg.clock = c - 1; /* auto -1, tsc 0, monotonic 1: enum lt_clock_kind */
		return 0;
	}
	case OPT_KOKKOS_FENCE:
	case OPT_SAMPLER_START: {
		int c = parse_choice(v, o->choices);
		if (c < 0)
			return -1;
		SET(i).num = (unsigned)c; /* its choices' index */
		return 0;
	}
	case OPT_SAMPLE_PERIOD:
	case OPT_STACK_SAMPLING: {
		uint64_t ns;
		if (parse_duration(v, &ns) || (ns && (ns < 100000 || ns > 60000000000ull)))
			return -1;
		SET(i).num = ns;
		return 0;
	}
	case OPT_MIN_DURATION: {
		uint64_t ns;
		if (parse_duration(v, &ns) || ns > 3600000000000ull)
			return -1;
		SET(i).num = ns;
		return 0;
	}
	case OPT_START_PAUSED: {
		int b;
		if (parse_bool(v, &b))
			return -1;
		SET(i).num = (unsigned)b;
		return 0;
	}
	case OPT_TOGGLE_SIGNAL: {
		int sig = parse_signal(v);
		if (sig < 0 || keep_str(i, v))
			return -1;
		SET(i).num = (unsigned)sig;
		return 0;
	}
	case OPT_SAMPLERS:
		return parse_mask(v, lt_sampler_names, i);
	case OPT_SYSFS_ROOT:
	case OPT_PAPI_EVENTS:
	case OPT_CUPTI_LIB:
	case OPT_EXCLUDE:
	case OPT_INCLUDE:
		return keep_str(i, v);
	case OPT_PAPI_MODULES:
		return parse_mask(v, lt_module_names, i);
	case OPT_CALLSITE_DEPTH:
		if (parse_int(v, &lt_cfg.callsite_depth) || lt_cfg.callsite_depth > LT_CALLSITE_MAX)
			return -1;
		return 0;
	case OPT_QUIET:
		if (parse_bool(v, &lt_cfg.quiet))
			return -1;
		SET(i).num = (unsigned)lt_cfg.quiet; /* the kokkos module reads it too */
		return 0;
	case OPT_DEBUG:
		return parse_int(v, &lt_cfg.debug);
	case OPT_CUPTI: {
		int c = parse_choice(v, o->choices);
		if (c < 0)
			return -1;
		SET(i).num = (unsigned)c; /* auto, off */
		return 0;
	}
	case OPT_TEST_CLOCK_SKEW: {
		uint64_t ns;
		int neg = *v == '-';
		if (parse_duration(v + neg, &ns) || ns > 86400000000000ull)
			return -1;
		lt_cfg.clock_skew_ns = neg ? -(int64_t)ns : (int64_t)ns;
		return 0;
	}
	}
	return -1;
}

static const char *lookup(char *const *env, const char *name)
{
	if (!env)
		return getenv(name);
	size_t len = strlen(name);
	for (; *env; env++)
		if (!strncmp(*env, name, len) && (*env)[len] == '=')
			return *env + len + 1;
	return NULL;
}

int lt_config_load(char *const *env)
{
	int bad = 0;
	static int loaded;
	if (loaded) { /* a first load finds them zero: their pages are not touched for nothing */
		memset(&lt_cfg, 0, sizeof(lt_cfg));
		memset(setting, 0, sizeof(setting));
	}
	loaded = 1;
	str_pool_used = 0;
	for (size_t i = 0; lt_options[i].name; i++) {
		if (apply(i, lt_options[i].def) != 0)
			return -1; /* a broken default is a bug, caught by the unit test */
	}
	/* LIBTRACE_DEBUG first, so that the warnings below honour it. */
	for (size_t pass = 0; pass < 2; pass++) {
		for (size_t i = 0; lt_options[i].name; i++) {
			if ((i == OPT_DEBUG) != (pass == 0))
				continue;
			const char *v = lookup(env, lt_options[i].name);
			if (!v)
				continue;
			if (apply(i, v) != 0) {
				lt_warn("%s=\"%s\" is not valid; using the default \"%s\"",
					lt_options[i].name, v, lt_options[i].def);
				apply(i, lt_options[i].def);
				bad++;
			} else {
				SET(i).given = 1;
				if (i == OPT_BUFFER_SIZE)
					lt_cfg.buffer_size_given = 1;
			}
		}
	}
	return bad;
}

/* "NAME=word,word" of the set bits of mask, or "NAME=none". */
static void format_words(char *buf, size_t len, const char *name, const char *const *names,
			 unsigned mask)
{
	size_t n = (size_t)lt_snprintf(buf, len, "%s=", name);
	int first = 1;
	for (size_t m = 0; names[m] && n < len; m++) {
		if (!(mask & (1u << m)))
			continue;
		n += (size_t)lt_snprintf(buf + n, len - n, "%s%s", first ? "" : ",", names[m]);
		first = 0;
	}
	if (first && n < len)
		lt_snprintf(buf + n, len - n, "none");
}

char *lt_config_format(size_t i, char *buf, size_t len)
{
	const struct lt_option *o = &lt_options[i];
	switch (i) {
	case OPT_OUTPUT:
		lt_snprintf(buf, len, "%s=%s", o->name, lt_cfg.output);
		break;
	case OPT_MODULES:
		format_words(buf, len, o->name, lt_module_names, lt_cfg.modules);
		break;
	case OPT_SAMPLERS:
		format_words(buf, len, o->name, lt_sampler_names, (unsigned)SET(i).num);
		break;
	case OPT_PAPI_MODULES:
		format_words(buf, len, o->name, lt_module_names, (unsigned)SET(i).num);
		break;
	case OPT_SAMPLE_PERIOD:
	case OPT_STACK_SAMPLING:
	case OPT_MIN_DURATION:
		lt_snprintf(buf, len, "%s=%lluns", o->name, (unsigned long long)SET(i).num);
		break;
	case OPT_START_PAUSED:
		lt_snprintf(buf, len, "%s=%d", o->name, (int)SET(i).num);
		break;
	case OPT_SYSFS_ROOT:
	case OPT_PAPI_EVENTS:
	case OPT_CUPTI_LIB:
	case OPT_EXCLUDE:
	case OPT_INCLUDE:
	case OPT_TOGGLE_SIGNAL:
		lt_snprintf(buf, len, "%s=%s", o->name, SET(i).str ? SET(i).str : "");
		break;
	case OPT_CALLSITE_DEPTH:
		lt_snprintf(buf, len, "%s=%d", o->name, lt_cfg.callsite_depth);
		break;
	case OPT_BUFFER_SIZE:
		lt_snprintf(buf, len, "%s=%llu", o->name, (unsigned long long)lt_cfg.buffer_size);
		break;
	case OPT_OVERFLOW:
		lt_snprintf(buf, len, "%s=%s", o->name, lt_cfg.overflow ? "drop" : "block");
		break;
	case OPT_MODE:
		lt_snprintf(buf, len, "%s=%s", o->name,
			    lt_cfg.mode == LT_MODE_FLIGHT ? "flight" : "stream");
		break;
	case OPT_FLIGHT_SIGNAL: {
		int sig = lt_cfg.flight_signal;
		const char *name = NULL;
		for (size_t k = 0; k < sizeof(flight_signals) / sizeof(flight_signals[0]); k++)
			if (flight_signals[k].sig == sig)
				name = flight_signals[k].name;
		if (!sig)
			lt_snprintf(buf, len, "%s=none", o->name);
		else if (name)
			lt_snprintf(buf, len, "%s=SIG%s", o->name, name);
		else
			lt_snprintf(buf, len, "%s=SIGRTMIN+%d", o->name, sig - SIGRTMIN);
		break;
	}
	case OPT_CLOCK:
		lt_snprintf(buf, len, "%s=%s", o->name,
			    lt_cfg.clock < 0	? "auto"
			    : lt_cfg.clock == 0 ? "tsc"
						: "monotonic");
		break;
	case OPT_KOKKOS_FENCE: {
		static const char *const names[] = {"auto", "on", "off"};
		lt_snprintf(buf, len, "%s=%s", o->name, names[SET(i).num % 3]);
		break;
	}
	case OPT_SAMPLER_START: {
		static const char *const names[] = {"auto", "threaded", "now"};
		lt_snprintf(buf, len, "%s=%s", o->name, names[SET(i).num % 3]);
		break;
	}
	case OPT_QUIET:
		lt_snprintf(buf, len, "%s=%d", o->name, lt_cfg.quiet);
		break;
	case OPT_DEBUG:
		lt_snprintf(buf, len, "%s=%d", o->name, lt_cfg.debug);
		break;
	case OPT_CUPTI:
		lt_snprintf(buf, len, "%s=%s", o->name, SET(i).num ? "off" : "auto");
		break;
	case OPT_TEST_CLOCK_SKEW:
		lt_snprintf(buf, len, "%s=%lldns", o->name, (long long)lt_cfg.clock_skew_ns);
		break;
	default:
		lt_snprintf(buf, len, "?");
	}
	return buf;
}

const char *lt_foreign_env(const char *name)
{
	static const char *const known[] = {
	    "KOKKOS_TOOLS_LIBS", "KOKKOS_PROFILE_LIBRARY",
	    /* the MPI rank as launchers tell it, before MPI_Init */
	    "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
	    /* what the loader preloaded: the MPI companion's check */
	    "LD_PRELOAD", NULL};
	for (int i = 0; known[i]; i++) {
		if (strcmp(name, known[i]))
			continue;
		const char *v = getenv(name);
		return v && *v ? v : NULL;
	}
	return NULL;
}

static size_t setting_index(const char *name)
{
	for (size_t i = 0; lt_options[i].name; i++)
		if (!strcmp(lt_options[i].name, name))
			return i;
	return (size_t)-1;
}

uint64_t lt_setting(const char *name)
{
	size_t i = setting_index(name);
	return i < sizeof(setting) / sizeof(setting[0]) ? setting[i].num : 0;
}

int lt_setting_given(const char *name)
{
	size_t i = setting_index(name);
	return i < sizeof(setting) / sizeof(setting[0]) && setting[i].given;
}

const char *lt_setting_str(const char *name)
{
	size_t i = setting_index(name);
	return i < sizeof(setting) / sizeof(setting[0]) && setting[i].str ? setting[i].str : "";
}
