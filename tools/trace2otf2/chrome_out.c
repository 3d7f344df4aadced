// SPDX-License-Identifier: BSD-3-Clause
/*
 * chrome_out.c - the Trace Event Format (JSON) that Perfetto UI, speedscope and
 * chrome://tracing open: OUT.json, one object {"traceEvents": [...]}.
 *
 * A traced process is a pid (its index in the trace + 1, named by process_name metadata: the
 * program and its pid, or "MPI Rank N"), a location a tid (its index among the trace's
 * locations + 1, named by thread_name metadata): the program's threads, the sampler's
 * metrics and each GPU stream.  Times are microseconds on the trace's monotonic clock,
 * written with three decimals (nanoseconds, exact).
 *
 * - Regions and calls are begin and end events ("B", "E"), both written once the region
 *   ends (per thread the ends go forward in time; a region's begin after those of the
 *   regions around it, an end before a begin at one time): the begin has the name and the
 *   category only, the end the attributes in args (bytes, the View, the kernel, the call
 *   site, an MPI call's peer, tag and bytes), so that speedscope, which names a frame by its
 *   begin's name and args, draws one frame per region, and compares times exactly (the end
 *   of a complete event "X" is ts + dur in floating point: one that ends with its parent
 *   may end after it, and the regions after it nest in the parent left open).  A region of
 *   no duration is an instant event with its args.
 * - Flows ("s", "f"): a thread's creation to its start, an OpenMP fork to each team member's
 *   begin, an MPI send to its receive (the n-th message of a sender to a receiver with one
 *   communicator and tag is the n-th such receive: MPI's order, so both ends compute the id
 *   without meeting), a GPU call to what the device did for it.
 * - Markers are instant events ("i", thread scope); metrics counter events ("C"): a
 *   thread's own are named after it, as a counter belongs to the process in this format.
 *
 * The window (cv.from_ns, cv.to_ns: times since the trace's first event) and the shortest
 * region kept (cv.min_duration_ns) thin the output; what they leave out is counted in
 * otherData.  Memory: per location, its open regions; per process, the message counters.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert.h"
#include "json.h"

#define ATTRS_MAX 8

struct ch_frame {
	uint64_t start;
	uint32_t region, scl;
	unsigned nattrs;
	struct cv_attr attrs[ATTRS_MAX];
	/* An MPI call's message or collective (mpi: 1 point-to-point, 2 collective). */
	int mpi;
	uint32_t peer, tag, root;
	uint64_t bytes, received;
	int written; /* its begin ("B") is in the file */
};

struct ch_loc {
	struct ch_frame *st;
	uint32_t depth, cap;
};

/* A process's numbers by key (open addressing): message counts per (direction,
 * communicator, sender, receiver, tag); each thread creation's and each thread's last fork's
 * time + 1 and location + 1. */
struct ch_count {
	uint64_t key, n;
};

struct chrome {
	FILE *f;
	char *path;
	int err;
	unsigned long long events;
	int have_origin;
	uint64_t origin; /* the first event's time: the window's zero */
	uint64_t left_out, short_left_out;
	uint32_t counts_proc; /* the process the message counts are of */
	struct ch_count *counts;
	size_t ncounts, counts_cap;
	unsigned char *named; /* processes whose metadata is written */
	size_t nnamed;
};

#define CH(cv) ((struct chrome *)(cv)->out)

static const struct {
	const char *key;
	int string, is_signed;
} attr_keys[CV_ATTR_COUNT] = {
    [CV_ATTR_TASK_ID] = {"task_id", 0, 0},
    [CV_ATTR_TASK_DEPENDS] = {"depends_on", 1, 0},
    [CV_ATTR_KOKKOS_DEVICE] = {"device", 1, 0},
    [CV_ATTR_KOKKOS_BYTES] = {"bytes", 0, 0},
    [CV_ATTR_KOKKOS_LABEL] = {"view", 1, 0},
    [CV_ATTR_KOKKOS_SRC] = {"src_view", 1, 0},
    [CV_ATTR_KOKKOS_DST] = {"dst_view", 1, 0},
    [CV_ATTR_KOKKOS_ADDRESS] = {"address", 0, 0},
    [CV_ATTR_GPU_CORRELATION] = {"correlation", 0, 0},
    [CV_ATTR_GPU_BYTES] = {"bytes", 0, 0},
    [CV_ATTR_GPU_COPY_KIND] = {"copy", 1, 0},
    [CV_ATTR_GPU_DST] = {"dst", 0, 0},
    [CV_ATTR_GPU_SRC] = {"src", 0, 0},
    [CV_ATTR_GPU_STREAM] = {"stream", 0, 0},
    [CV_ATTR_GPU_KERNEL] = {"kernel", 1, 0},
    [CV_ATTR_GPU_GRID] = {"grid", 1, 0},
    [CV_ATTR_GPU_BLOCK] = {"block", 1, 0},
    [CV_ATTR_GPU_MEMORY] = {"memory", 1, 0},
    [CV_ATTR_GPU_RESULT] = {"result", 0, 1},
    [CV_ATTR_ALLOCATION_SIZE] = {"allocated", 0, 0},
    [CV_ATTR_DEALLOCATION_SIZE] = {"freed", 0, 0},
    [CV_ATTR_ARGUMENT_ADDRESS] = {"address", 0, 0},
    [CV_ATTR_RESULT_ADDRESS] = {"result_address", 0, 0},
};

/* Microseconds with three decimals: the nanoseconds exactly. */
static void put_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static uint32_t pid_of(const struct cv_loc *l)
{
	return l->process + 1;
}

static uint32_t tid_of(const struct cv *cv, const struct cv_loc *l)
{
	return (uint32_t)(l - cv->locs) + 1;
}

/* Starts an event: the comma before it, its phase, process, thread and time. */
static void begin_event(struct cv *cv, const struct cv_loc *l, char ph, uint64_t t)
{
	struct chrome *c = CH(cv);
	cv->stats.events++;
	fprintf(c->f, "%s{\"ph\":\"%c\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":",
		c->events++ ? ",\n" : "\n", ph, pid_of(l), tid_of(cv, l));
	put_us(c->f, t);
}

/* The window's zero: the trace's first event, the first time an event is handed over (the
 * core has noted what it wrote before, such as a program's begin). */
static void note_time(struct cv *cv, uint64_t t)
{
	struct chrome *c = CH(cv);
	if (!c->have_origin) {
		c->have_origin = 1;
		c->origin = cv->stats.first_ns < t ? cv->stats.first_ns : t;
	}
}

/* Whether [from, to] (ns) meets the window. */
static int in_window(struct cv *cv, uint64_t from, uint64_t to)
{
	struct chrome *c = CH(cv);
	note_time(cv, from);
	uint64_t o = c->origin;
	if (cv->from_ns && (to < o || to - o < cv->from_ns))
		return 0;
	if (cv->to_ns && from > o && from - o > cv->to_ns)
		return 0;
	return 1;
}

static void put_name_meta(struct cv *cv, const struct cv_loc *l, const char *what, const char *name,
			  uint64_t sort)
{
	struct chrome *c = CH(cv);
	fprintf(c->f,
		"%s{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"name\":\"%s_name\",",
		c->events++ ? ",\n" : "\n", pid_of(l), tid_of(cv, l), what);
	fputs("\"args\":{\"name\":", c->f);
	json_write_string(c->f, name);
	fprintf(c->f,
		"}},\n{\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"name\":\"%s_sort_index\",\"args\":{\"sort_index\":%" PRIu64 "}}",
		pid_of(l), tid_of(cv, l), what, sort);
	c->events++;
}

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	struct chrome *c = CH(cv);
	if (l->kind == CV_LOC_CORE)
		return 0;
	if (!(l->out = calloc(1, sizeof(struct ch_loc)))) {
		c->err = ENOMEM;
		return -1;
	}
	if (l->process >= c->nnamed) {
		size_t n = l->process + 64;
		unsigned char *a = realloc(c->named, n);
		if (!a) {
			c->err = ENOMEM;
			return -1;
		}
		memset(a + c->nnamed, 0, n - c->nnamed);
		c->named = a;
		c->nnamed = n;
	}
	if (!c->named[l->process]) {
		c->named[l->process] = 1;
		put_name_meta(cv, l, "process", cv->strings[cv->procs[l->process].name],
			      l->process);
	}
	return ferror(c->f) ? -1 : 0;
}

static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct ch_loc *s = l->out;
	if (!s)
		return 0;
	/* Named now: a thread may have renamed itself while it ran. */
	put_name_meta(cv, l, "thread", cv->strings[l->name], tid_of(cv, l));
	free(s->st);
	free(s);
	l->out = NULL;
	return ferror(CH(cv)->f) ? -1 : 0;
}

static struct ch_frame *push(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	struct ch_loc *s = l->out;
	note_time(cv, t);
	if (!s)
		return NULL;
	if (s->depth == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 16;
		struct ch_frame *n = realloc(s->st, cap * sizeof(*n));
		if (!n) {
			CH(cv)->err = ENOMEM;
			return NULL;
		}
		s->st = n;
		s->cap = cap;
	}
	struct ch_frame *f = &s->st[s->depth++];
	memset(f, 0, sizeof(*f));
	f->start = t;
	f->region = region;
	f->scl = cv->cur_scl;
	return f;
}

static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned nattrs)
{
	struct ch_frame *f = push(cv, l, t, region);
	if (!f)
		return;
	for (unsigned i = 0; i < nattrs && f->nattrs < ATTRS_MAX; i++)
		f->attrs[f->nattrs++] = attrs[i];
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	enter_attrs(cv, l, t, region, NULL, 0);
}

static void put_attr(struct cv *cv, const struct cv_attr *a)
{
	FILE *f = CH(cv)->f;
	if (a->id >= CV_ATTR_COUNT || !attr_keys[a->id].key)
		return;
	fprintf(f, ",\"%s\":", attr_keys[a->id].key);
	if (attr_keys[a->id].string)
		json_write_string(f, a->value < cv->nstrings ? cv->strings[a->value] : "");
	else if (attr_keys[a->id].is_signed)
		fprintf(f, "%" PRId64, (int64_t)a->value);
	else
		fprintf(f, "%" PRIu64, a->value);
}

/* A region's category: its paradigm, as the profile names it. */
static const char *category(const struct cv_region *r)
{
	return cv_paradigm_name(r->paradigm, r->role);
}

/* A region's begin ("B"): its name and category only, as speedscope names a frame by the
 * name and the arguments of the event that opens it, so one region is one frame there. */
static void put_begin(struct cv *cv, struct cv_loc *l, struct ch_frame *fr)
{
	struct chrome *c = CH(cv);
	const struct cv_region *r = &cv->regions[fr->region];
	uint64_t start = fr->start, o = c->origin;
	if (cv->from_ns && (start < o || start - o < cv->from_ns))
		start = o + cv->from_ns;
	begin_event(cv, l, 'B', start);
	fputs(",\"name\":", c->f);
	json_write_string(c->f, cv->strings[r->name]);
	fprintf(c->f, ",\"cat\":\"%s\"}", category(r));
	fr->written = 1;
	l->nevents++;
}

/* A region's arguments: ,"args":{...}} closes its event. */
static void put_args(struct cv *cv, const struct ch_frame *fr, const struct cv_attr *more,
		     unsigned nmore, int closed)
{
	struct chrome *c = CH(cv);
	const struct cv_region *r = &cv->regions[fr->region];
	fprintf(c->f, ",\"args\":{\"role\":\"%s\"", cv_role_name(r->role));
	for (unsigned i = 0; i < fr->nattrs; i++)
		put_attr(cv, &fr->attrs[i]);
	for (unsigned i = 0; i < nmore; i++)
		put_attr(cv, &more[i]);
	if (fr->scl) {
		char site[600];
		cv_scl_text(cv, fr->scl, site, sizeof(site));
		fputs(",\"site\":", c->f);
		json_write_string(c->f, site);
	}
	if (fr->mpi == 1)
		fprintf(c->f, ",\"peer\":%" PRIu32 ",\"tag\":%" PRIu32 ",\"bytes\":%" PRIu64,
			fr->peer, fr->tag, fr->bytes);
	else if (fr->mpi == 2)
		fprintf(c->f, ",\"sent\":%" PRIu64 ",\"received\":%" PRIu64, fr->bytes,
			fr->received);
	if (fr->mpi == 2 && fr->root != LT_MPI_NO_RANK)
		fprintf(c->f, ",\"root\":%" PRIu32, fr->root);
	if (closed)
		fputs(",\"closed_by_converter\":true", c->f);
	fputs("}}", c->f);
}

/* A region ends at end: its end ("E", with its arguments, which viewers add to the slice),
 * once its begin is written.  Whether it is kept is known now (the window, the shortest);
 * a kept region's enclosing regions are kept too (they hold it), so their begins go out
 * first, outermost first, as they are still open in outer[0..nouter).  Per thread the begins
 * and ends then nest like the regions, an end before the next begin at one time.  A region
 * of no duration is an instant event ("i", its category the region's): speedscope puts the
 * end before the begin at one time, which would leave it open. */
static void put_region(struct cv *cv, struct cv_loc *l, struct ch_frame *fr, struct ch_frame *outer,
		       uint32_t nouter, uint64_t end, const struct cv_attr *more, unsigned nmore,
		       int closed)
{
	struct chrome *c = CH(cv);
	const struct cv_region *r = &cv->regions[fr->region];
	uint64_t o; /* the window's zero, once in_window has seen the region */
	if (!fr->written) {
		if (!in_window(cv, fr->start, end)) {
			c->left_out++;
			return;
		}
		if (end - fr->start < cv->min_duration_ns) {
			c->short_left_out++;
			return;
		}
		o = c->origin;
		uint64_t from = fr->start, to = end;
		if (cv->from_ns && (from < o || from - o < cv->from_ns))
			from = o + cv->from_ns;
		if (cv->to_ns && to > o && to - o > cv->to_ns)
			to = o + cv->to_ns;
		if (to == from) {
			begin_event(cv, l, 'i', to);
			fputs(",\"s\":\"t\",\"name\":", c->f);
			json_write_string(c->f, cv->strings[r->name]);
			fprintf(c->f, ",\"cat\":\"%s\"", category(r));
			put_args(cv, fr, more, nmore, closed);
			l->nevents++;
			return;
		}
		for (uint32_t i = 0; i < nouter; i++)
			if (!outer[i].written)
				put_begin(cv, l, &outer[i]);
		put_begin(cv, l, fr);
	}
	o = c->origin;
	if (cv->to_ns && end > o && end - o > cv->to_ns)
		end = o + cv->to_ns;
	begin_event(cv, l, 'E', end);
	fputs(",\"name\":", c->f);
	json_write_string(c->f, cv->strings[r->name]);
	put_args(cv, fr, more, nmore, closed);
	l->nevents++;
}

static void leave_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned nattrs)
{
	struct ch_loc *s = l->out;
	(void)region;
	if (!s || !s->depth)
		return;
	struct ch_frame fr = s->st[--s->depth];
	put_region(cv, l, &fr, s->st, s->depth, t, attrs, nattrs, 0);
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	struct ch_loc *s = l->out;
	(void)region;
	if (!s || !s->depth)
		return;
	struct ch_frame fr = s->st[--s->depth];
	put_region(cv, l, &fr, s->st, s->depth, t, NULL, 0, closed);
}

/* A flow's end ("s" or "f") at t on l; bind "e": to the slice around it. */
static void put_flow(struct cv *cv, struct cv_loc *l, char ph, uint64_t t, const char *cat,
		     uint64_t id)
{
	struct chrome *c = CH(cv);
	if (!in_window(cv, t, t))
		return;
	begin_event(cv, l, ph, t);
	fprintf(c->f, ",\"cat\":\"%s\",\"name\":\"%s\",\"id\":%" PRIu64 "%s}", cat, cat,
		id & ((UINT64_C(1) << 52) - 1), ph == 'f' ? ",\"bp\":\"e\"" : "");
	l->nevents++;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

/* The value of key in the current process's table (0 when new); NULL when out of memory. */
static uint64_t *slot(struct cv *cv, uint32_t process, uint64_t key)
{
	struct chrome *c = CH(cv);
	if (c->counts_proc != process) { /* a new process: its own table */
		if (c->counts)
			memset(c->counts, 0, c->counts_cap * sizeof(*c->counts));
		c->ncounts = 0;
		c->counts_proc = process;
	}
	key |= 1; /* 0 marks an empty slot */
	if ((c->ncounts + 1) * 2 > c->counts_cap) {
		size_t cap = c->counts_cap ? c->counts_cap * 2 : 64;
		struct ch_count *n = calloc(cap, sizeof(*n));
		if (!n) {
			c->err = ENOMEM;
			return NULL;
		}
		for (size_t i = 0; i < c->counts_cap; i++) {
			if (!c->counts[i].key)
				continue;
			size_t j = c->counts[i].key & (cap - 1);
			while (n[j].key)
				j = (j + 1) & (cap - 1);
			n[j] = c->counts[i];
		}
		free(c->counts);
		c->counts = n;
		c->counts_cap = cap;
	}
	size_t j = key & (c->counts_cap - 1);
	while (c->counts[j].key && c->counts[j].key != key)
		j = (j + 1) & (c->counts_cap - 1);
	if (!c->counts[j].key) {
		c->counts[j].key = key;
		c->ncounts++;
	}
	return &c->counts[j].n;
}

/* A thread's creation to its begin, written at its begin (both ends, or neither). */
static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	uint64_t *when = slot(cv, l->process, mix(1, seq));
	uint64_t *where = when ? slot(cv, l->process, mix(6, seq)) : NULL;
	if (where) {
		when = slot(cv, l->process, mix(1, seq)); /* the table may have grown */
		*when = t + 1;
		*where = (uint64_t)(l - cv->locs) + 1;
	}
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	uint64_t *p = slot(cv, l->process, mix(1, seq));
	uint64_t when = p ? *p : 0;
	p = slot(cv, l->process, mix(6, seq));
	uint64_t where = p ? *p : 0;
	(void)tid;
	if (!when || !where || where > cv->nlocs || !in_window(cv, when - 1, when - 1) ||
	    !in_window(cv, t, t))
		return;
	uint64_t id = mix(mix(1, l->process), seq);
	put_flow(cv, &cv->locs[where - 1], 's', when - 1, "thread", id);
	put_flow(cv, l, 'f', t, "thread", id);
}

/* A thread's last OpenMP fork: its time + 1 and its location + 1, by its index in the
 * process (a team names its forker so). */
static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	uint64_t *p = slot(cv, l->process, mix(7, l->index));
	(void)requested;
	if (p)
		*p = t + 1;
	if ((p = slot(cv, l->process, mix(8, l->index))))
		*p = (uint64_t)(l - cv->locs) + 1;
}

/* A team member begins: a flow from its forker's fork (the forker itself needs none). */
static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	const struct cv_team *tm = &cv->teams[team];
	if (l->index == tm->forker || tm->process != l->process)
		return;
	uint64_t *p = slot(cv, l->process, mix(7, tm->forker));
	uint64_t when = p ? *p : 0;
	p = slot(cv, l->process, mix(8, tm->forker));
	uint64_t where = p ? *p : 0;
	if (!when || !where || where > cv->nlocs || !in_window(cv, when - 1, when - 1) ||
	    !in_window(cv, t, t))
		return;
	uint64_t id = mix(mix(mix(mix(2, l->process), tm->forker), when), l->index);
	put_flow(cv, &cv->locs[where - 1], 's', when - 1, "fork", id);
	put_flow(cv, l, 'f', t, "fork", id);
}

static void mpi_p2p(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
		    uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request)
{
	struct ch_loc *s = l->out;
	(void)request;
	int send = kind == LT_MPI_SEND || kind == LT_MPI_ISEND;
	if (!send && kind != LT_MPI_RECV && kind != LT_MPI_IRECV_DONE)
		return;
	uint64_t at = t;
	if (s && s->depth) {
		struct ch_frame *f = &s->st[s->depth - 1];
		if (send) /* the message leaves while the call runs: from its start */
			at = f->start;
		f->mpi = 1;
		f->peer = peer;
		f->tag = tag;
		f->bytes = bytes;
	}
	int self = cv->procs[l->process].mpi_rank;
	uint32_t other = cv_world_rank(cv, comm, peer, (uint32_t)self);
	if (self < 0 || other == LT_MPI_NO_RANK)
		return;
	uint64_t src = send ? (uint32_t)self : other, dst = send ? other : (uint32_t)self;
	uint64_t key = mix(mix(mix(mix(3, cv->comms[comm].id), src), dst), tag);
	uint64_t *n = slot(cv, l->process, mix(key, (uint64_t)send));
	if (n)
		put_flow(cv, l, send ? 's' : 'f', at, "message", mix(key, (*n)++));
}

static void mpi_coll_end(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned op, uint32_t comm,
			 uint32_t root, uint64_t sent, uint64_t received)
{
	struct ch_loc *s = l->out;
	(void)cv, (void)t, (void)op, (void)comm;
	if (!s || !s->depth)
		return;
	struct ch_frame *f = &s->st[s->depth - 1];
	f->mpi = 2;
	f->root = root;
	f->bytes = sent;
	f->received = received;
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	struct chrome *c = CH(cv);
	const struct cv_metric *d = &cv->metrics[m];
	if (!in_window(cv, t, t)) {
		c->left_out++;
		return;
	}
	char name[600];
	if (l->kind == CV_LOC_THREAD)
		snprintf(name, sizeof(name), "%s (%s)", cv->strings[d->name], cv->strings[l->name]);
	else
		snprintf(name, sizeof(name), "%s", cv->strings[d->name]);
	begin_event(cv, l, 'C', t);
	fputs(",\"name\":", c->f);
	json_write_string(c->f, name);
	fputs(",\"args\":{", c->f);
	json_write_string(c->f, cv->strings[d->unit][0] ? cv->strings[d->unit] : "value");
	if (d->is_double) {
		double v;
		memcpy(&v, &raw, sizeof(v));
		if (v != v || v - v != 0) /* NaN, infinite: not JSON */
			v = 0;
		fprintf(c->f, ":%.17g}}", v);
	} else {
		fprintf(c->f, ":%" PRId64 "}}", (int64_t)raw);
	}
	l->nevents++;
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	struct chrome *c = CH(cv);
	if (!in_window(cv, t, t)) { /* a marker may come after its location ended: no state */
		c->left_out++;
		return;
	}
	begin_event(cv, l, 'i', t);
	fputs(",\"s\":\"t\",\"name\":", c->f);
	json_write_string(c->f, kind == CV_MARK_USER ? text : cv_mark_category(kind));
	fputs(",\"cat\":\"marker\",\"args\":{\"category\":", c->f);
	json_write_string(c->f, cv_mark_category(kind));
	fputs(",\"text\":", c->f);
	json_write_string(c->f, text);
	fputs("}}", c->f);
	l->nevents++;
}

/* A device operation on its stream, and the flow from the call that asked for it. */
static void gpu_activity(struct cv *cv, struct cv_loc *l, const struct cv_gpu_op *op)
{
	struct ch_frame fr = {.start = op->start, .region = op->region};
	for (unsigned i = 0; i < op->nattrs && fr.nattrs < ATTRS_MAX; i++)
		fr.attrs[fr.nattrs++] = op->attrs[i];
	uint64_t before = l->nevents;
	put_region(cv, l, &fr, NULL, 0, op->end, NULL, 0, 0);
	if (l->nevents == before || op->host_loc >= cv->nlocs)
		return;
	uint64_t id = mix(mix(4, l->process), op->corr ? op->corr : op->start);
	if (!in_window(cv, op->host_ns, op->host_ns))
		return;
	put_flow(cv, &cv->locs[op->host_loc], 's', op->host_ns, "gpu", id);
	put_flow(cv, l, 'f', op->start, "gpu", id);
}

static int finish(struct cv *cv)
{
	struct chrome *c = CH(cv);
	fprintf(c->f,
		"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"trace2otf2\","
		"\"left_out_of_window\":%" PRIu64 ",\"left_out_short\":%" PRIu64 "}}\n",
		c->left_out, c->short_left_out);
	if (fflush(c->f) != 0 || ferror(c->f)) {
		if (!c->err)
			c->err = errno ? errno : EIO;
		return -1;
	}
	return c->err ? -1 : 0;
}

static const struct cv_ops chrome_ops = {
    .name = "chrome",
    .location_begin = location_begin,
    .location_end = location_end,
    .enter = enter,
    .enter_attrs = enter_attrs,
    .leave = leave,
    .leave_attrs = leave_attrs,
    .thread_create = thread_create,
    .thread_begin = thread_begin,
    .thread_fork = thread_fork,
    .team_begin = team_begin,
    .metric = metric,
    .marker = marker,
    .mpi_p2p = mpi_p2p,
    .mpi_coll_end = mpi_coll_end,
    .gpu_activity = gpu_activity,
    .finish = finish,
};

static const char *const chrome_exts[] = {".json", NULL};

static int chrome_open(struct cv *cv, const char *name, char *err, size_t errlen)
{
	struct chrome *c = calloc(1, sizeof(*c));
	if (!c || !(c->path = malloc(strlen(name) + sizeof(".json")))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	sprintf(c->path, "%s.json", name);
	c->counts_proc = UINT32_MAX;
	if (!(c->f = fopen(c->path, "w"))) {
		snprintf(err, errlen, "%s: %s", c->path, strerror(errno));
		free(c->path);
		free(c);
		return -1;
	}
	setvbuf(c->f, NULL, _IOFBF, 1 << 20);
	fputs("{\"traceEvents\":[", c->f);
	cv->out = c;
	return 0;
}

static const char *chrome_error(struct cv *cv)
{
	struct chrome *c = CH(cv);
	return c && c->err ? strerror(c->err) : NULL;
}

static void chrome_free(struct cv *cv)
{
	struct chrome *c = CH(cv);
	if (c) {
		if (c->f && fclose(c->f) != 0 && !c->err)
			c->err = errno;
		free(c->counts);
		free(c->named);
		free(c->path);
	}
	free(c);
	cv->out = NULL;
}

const struct cv_backend cv_chrome_backend = {
    .name = "chrome",
    .description = "Trace Event JSON for Perfetto UI, speedscope, chrome://tracing: OUT.json",
    .output = CV_OUTPUT_FILES,
    .exts = chrome_exts,
    .written = ".json",
    .what = "JSON trace",
    .needs = CV_NEEDS_SOURCE_LINES | CV_NEEDS_WINDOW,
    .ops = &chrome_ops,
    .open = chrome_open,
    .error = chrome_error,
    .free = chrome_free,
};
