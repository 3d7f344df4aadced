// SPDX-License-Identifier: BSD-3-Clause
/*
 * filter.c - recording only what is asked for: name filters (LIBTRACE_EXCLUDE,
 * LIBTRACE_INCLUDE), a minimum duration (LIBTRACE_MIN_DURATION), and pausing
 * (ltr_trace_pause, LIBTRACE_START_PAUSED, LIBTRACE_TOGGLE_SIGNAL).
 *
 * Names are decided once: a call's when the settings are read (lt_fn_off), any other name's
 * when it is interned (lt_str_off, by string id), so the hot path tests a bit.  The rules
 * are globs in order, the last one that matches decides; LIBTRACE_EXCLUDE's come first, then
 * LIBTRACE_INCLUDE's, and a Score-P filter file brings its own EXCLUDE and INCLUDE lines in
 * its own order.  A name no rule matches is recorded, unless LIBTRACE_INCLUDE lists globs:
 * then it is a list of what to record.
 *
 * Pausing takes every module's bit out of lt_active, so a wrapper costs what it costs with
 * its module off; calls already under way finish their records.  The thread that pauses or
 * resumes records a marker saying so (a signal handler only when the thread it interrupted
 * is not inside the tracer, with names interned beforehand: no malloc there).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lt.h"

uint64_t lt_min_ticks;
unsigned char lt_filter_fns;
unsigned char lt_filter_strs;
unsigned char lt_fn_off[LT_FN_MAX];
LT_PAGE_ALIGNED unsigned char lt_str_off[65536 / 8];

#define RULES_MAX 512
#define POOL_SIZE 16384

/* The small fields first: a process without rules touches one page of this. */
static struct {
	unsigned nrules;
	int default_out; /* a name no rule matches is not recorded */
	size_t used;
	int paused;
	int toggle_signal;
	uint32_t pause_id, resume_id; /* the markers' strings, interned beforehand */
	struct {
		const char *glob;
		int include;
	} rule[RULES_MAX];
	char pool[POOL_SIZE];
} F LT_PAGE_ALIGNED;

static const char *const fn_names[] = {
#define LT_FN_NAME(name, module, object) #name,
    LT_FN_LIST(LT_FN_NAME)
#undef LT_FN_NAME
};

static void add_rule(const char *glob, size_t len, int include)
{
	if (!len)
		return;
	if (F.nrules == RULES_MAX || F.used + len + 1 > POOL_SIZE) {
		lt_warn("too many filter rules: \"%.*s\" and later ones are ignored", (int)len,
			glob);
		return;
	}
	char *s = F.pool + F.used;
	memcpy(s, glob, len);
	s[len] = '\0';
	F.used += len + 1;
	F.rule[F.nrules].glob = s;
	F.rule[F.nrules++].include = include;
}

/* The lines of a Score-P filter file: REGION_NAMES blocks of EXCLUDE and INCLUDE rules
 * (patterns separated by blanks, a rule may go on over the next lines; MANGLED is taken as
 * plain), '#' to the end of a line is a comment, FILE_NAMES blocks name source files, which
 * the runtime does not know: they are skipped.  0, or -1 when the file is not one. */
static int read_filter_file(const char *path)
{
	static LT_PAGE_ALIGNED char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, sizeof(buf) - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	enum { OUTSIDE, REGIONS, FILES } where = OUTSIDE;
	int include = -1, found = 0;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		for (char *w = strtok(line, " \t\r"); w; w = strtok(NULL, " \t\r")) {
			if (!strcmp(w, "SCOREP_REGION_NAMES_BEGIN")) {
				where = REGIONS, include = -1, found = 1;
			} else if (!strcmp(w, "SCOREP_FILE_NAMES_BEGIN")) {
				where = FILES, found = 1;
				lt_info("%s: file name rules are not used (the runtime knows no "
					"source files)",
					path);
			} else if (!strcmp(w, "SCOREP_REGION_NAMES_END") ||
				   !strcmp(w, "SCOREP_FILE_NAMES_END")) {
				where = OUTSIDE;
			} else if (where != REGIONS) {
				continue;
			} else if (!strcmp(w, "EXCLUDE")) {
				include = 0;
			} else if (!strcmp(w, "INCLUDE")) {
				include = 1;
			} else if (strcmp(w, "MANGLED") && include >= 0) {
				add_rule(w, strlen(w), include);
			}
		}
	}
	return found ? 0 : -1;
}

/* One setting's rules: a filter file's path, or comma-separated globs.  Whether it listed
 * globs. */
static int add_setting(const char *name, int include)
{
	const char *v = lt_setting_str(name);
	if (!*v)
		return 0;
	if (strchr(v, '/') && access(v, R_OK) == 0) {
		if (read_filter_file(v) != 0)
			lt_warn("%s=%s: not a Score-P filter file (no SCOREP_REGION_NAMES_BEGIN)",
				name, v);
		return 0;
	}
	for (const char *p = v; *p;) {
		size_t len = strcspn(p, ",");
		while (len && (*p == ' ' || *p == '\t'))
			p++, len--;
		size_t trim = len;
		while (trim && (p[trim - 1] == ' ' || p[trim - 1] == '\t'))
			trim--;
		add_rule(p, trim, include);
		p += len;
		if (*p == ',')
			p++;
	}
	return 1;
}

/* Whether `name` is left out. */
static int filtered(const char *name)
{
	int out = F.default_out;
	for (unsigned i = 0; i < F.nrules; i++)
		if (fnmatch(F.rule[i].glob, name, 0) == 0)
			out = !F.rule[i].include;
	return out;
}

void lt_filter_string(uint32_t id, const char *s)
{
	if (!lt_filter_strs || id >= 65536)
		return;
	if (filtered(s))
		lt_str_off[id >> 3] |= (unsigned char)(1u << (id & 7));
	else
		lt_str_off[id >> 3] &= (unsigned char)~(1u << (id & 7));
}

static void toggle_handler(int sig, siginfo_t *si, void *uc);

void lt_filter_init(void)
{
	add_setting("LIBTRACE_EXCLUDE", 0);
	F.default_out = add_setting("LIBTRACE_INCLUDE", 1);
	if (F.nrules || F.default_out) {
		lt_filter_strs = 1;
		for (unsigned fn = 0; fn < LT_FN_MAX; fn++) {
			lt_fn_off[fn] = (unsigned char)filtered(fn_names[fn]);
			lt_filter_fns |= lt_fn_off[fn];
		}
	}
	uint64_t ns = lt_setting("LIBTRACE_MIN_DURATION");
	if (ns) {
		double ticks = (double)ns * lt_clock_hz() / 1e9;
		lt_min_ticks = ticks < 1 ? 1 : (uint64_t)ticks;
	}
	F.paused = lt_setting("LIBTRACE_START_PAUSED") != 0;
	if (F.paused)
		lt_meta_line(LT_META_PAUSED " 1");
	F.toggle_signal = (int)lt_setting("LIBTRACE_TOGGLE_SIGNAL");
	if (F.toggle_signal && lt_cfg.mode == LT_MODE_FLIGHT &&
	    F.toggle_signal == lt_cfg.flight_signal)
		lt_warn("LIBTRACE_TOGGLE_SIGNAL and LIBTRACE_FLIGHT_SIGNAL name the same signal: "
			"it toggles recording only");
	if (F.toggle_signal)
		lt_catch_signal(F.toggle_signal, toggle_handler, "LIBTRACE_TOGGLE_SIGNAL");
}

void lt_filter_started(struct lt_thread *t)
{
	if (t && F.toggle_signal) {
		F.pause_id = lt_string_id(t, LT_PAUSE_TEXT);
		F.resume_id = lt_string_id(t, LT_RESUME_TEXT);
	}
}

void lt_filter_after_fork_child(void)
{
	memset(lt_str_off, 0, sizeof(lt_str_off)); /* the child's strings are new */
	F.pause_id = F.resume_id = 0;
}

unsigned lt_recording_mask(void)
{
	return F.paused ? 0 : lt_cfg.modules;
}

int lt_recording_paused(unsigned mod)
{
	return F.paused && (lt_cfg.modules & mod) &&
	       __atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON;
}

static void marker(struct lt_thread *t, uint32_t id)
{
	if (t && id)
		lt_emit0(t, LT_REC_MARKER, 0, id);
}

void lt_recording_pause(struct lt_thread *t)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON || F.paused)
		return;
	marker(t, t ? lt_string_id(t, LT_PAUSE_TEXT) : 0);
	F.paused = 1;
	__atomic_store_n(&lt_active, LT_ACTIVE_INIT, __ATOMIC_RELEASE);
}

void lt_recording_resume(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON || !F.paused)
		return;
	F.paused = 0;
	__atomic_store_n(&lt_active, lt_cfg.modules | LT_ACTIVE_INIT, __ATOMIC_RELEASE);
}

static void toggle_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	int saved = errno;
	struct lt_thread *t = lt_self;
	int mine = t && !t->guard && !lt_tls_guard;
	if (mine)
		lt_guard_take(t);
	if (F.paused) {
		lt_recording_resume();
		if (mine)
			marker(t, F.resume_id);
	} else if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_ON) {
		if (mine)
			marker(t, F.pause_id);
		F.paused = 1;
		__atomic_store_n(&lt_active, LT_ACTIVE_INIT, __ATOMIC_RELEASE);
	}
	if (mine)
		lt_finish(t);
	errno = saved;
}

/* Takes back the COUNTERS record written just before a record that is not written after all. */
void lt_filter_drop(struct lt_thread *t)
{
	if (t->cnt_at && t->cnt_end == t->pos && t->cnt_seq == t->seq && t->cnt_at >= t->data &&
	    t->cnt_at < t->pos) {
		t->pos = t->cnt_at;
		lt_commit(t);
	}
}

int lt_fn_skip_slow(struct lt_thread *t, unsigned fn, int count)
{
	if (fn >= LT_FN_MAX || !lt_fn_off[fn])
		return 0;
	lt_filter_drop(t);
	if (count)
		t->dropped[LT_DROP_FILTER]++;
	return 1;
}

void lt_short_push(struct lt_thread *t, uint64_t *at)
{
	if (t->cnt_end == at && t->cnt_seq == t->seq && t->cnt_at)
		at = t->cnt_at; /* the enter's counter reading goes with it */
	unsigned d = t->short_depth++;
	if (d >= LT_SHORT_DEPTH)
		return;
	if (at < t->data || at >= t->pos || t->dropping)
		at = NULL; /* the enter began in the chunk before: it stays */
	t->short_open[d].at = at;
	t->short_open[d].seq = t->seq;
}

static unsigned rec_type(const uint64_t *p)
{
	return (unsigned)(p[1] & 0xff) & ~LT_REC_F_CALLSITE;
}

/* Past the records of types `a` or `b` from p (not beyond end). */
static uint64_t *skip(uint64_t *p, const uint64_t *end, unsigned a, unsigned b)
{
	while (p + 2 <= end && (rec_type(p) == a || rec_type(p) == b)) {
		unsigned words = (unsigned)(p[1] >> 8 & 0xff);
		if (words < 2)
			return (uint64_t *)end + 1;
		p += words;
	}
	return p;
}

int lt_short_pop(struct lt_thread *t)
{
	if (!t->short_depth)
		return 0;
	unsigned d = --t->short_depth;
	if (d >= LT_SHORT_DEPTH)
		return 0;
	uint64_t *at = t->short_open[d].at, *end = t->pos;
	if (!at || t->short_open[d].seq != t->seq || t->dropping || at < t->data || at >= end)
		return 0;
	/* The enter's records, and nothing else: its counter reading and outer call-site frames,
	 * the enter, and the leave's reading. */
	uint64_t *p = skip(at, end, LT_REC_COUNTERS, LT_REC_CALLSITE);
	if (p + 2 > end || !lt_rec_opens(rec_type(p)))
		return 0;
	uint64_t ts = p[0];
	unsigned words = (unsigned)(p[1] >> 8 & 0xff);
	if (words < 2)
		return 0;
	p = skip(p + words, end, LT_REC_COUNTERS, LT_REC_COUNTERS);
	if (p != end || lt_now() - ts >= lt_min_ticks)
		return 0;
	t->pos = at;
	lt_commit(t);
	t->dropped[LT_DROP_SHORT]++;
	return 1;
}

void lt_filter_thread_counts(struct lt_thread *t)
{
	for (unsigned c = 0; c < LT_DROP_CAUSES; c++) {
		uint64_t n = __atomic_exchange_n(&t->dropped[c], 0, __ATOMIC_RELAXED);
		if (n)
			lt_meta_line(LT_META_DROPPED " %u %u %llu", t->index, c,
				     (unsigned long long)n);
	}
}
