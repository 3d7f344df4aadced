// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_prv.c - NAME.prv: records sorted in runs spilled to a scratch file, merged in time
 * order and written in Paraver's text format, with the MPI messages matched at the end.
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

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->loc != b->loc)
		return a->loc < b->loc ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

void prv_spill(struct out *o)
{
	if (!o->nrun)
		return;
	qsort(o->run, o->nrun, sizeof(*o->run), rec_cmp);
	if (fwrite(o->run, sizeof(*o->run), o->nrun, o->scratch) != o->nrun)
		prv_fail(o, "writing the scratch file", errno ? errno : ENOSPC);
	o->records += o->nrun;
	if (o->nruns == o->ends_cap) {
		size_t cap = o->ends_cap ? 2 * o->ends_cap : 16;
		uint64_t *a = realloc(o->ends, cap * sizeof(*a));
		if (!a) {
			prv_fail(o, "out of memory", ENOMEM);
			return;
		}
		o->ends = a;
		o->ends_cap = cap;
	}
	o->ends[o->nruns++] = o->records;
	o->nrun = 0;
}

static void put(struct out *o, struct rec r)
{
	if (o->nrun == RUN_RECORDS)
		prv_spill(o);
	r.seq = o->seq++;
	o->run[o->nrun++] = r;
	uint64_t last = r.kind == REC_EVENT ? r.time : r.a;
	if (last > o->end)
		o->end = last;
}

/* An event of `type` and `value` of location loc at `time`, on loc's CPU now. */
void prv_put_event(struct out *o, uint32_t loc, uint64_t time, uint32_t type, uint64_t value)
{
	uint32_t cpu = loc < o->nlocs ? o->locs[loc].cpu : 0;
	put(o, (struct rec){
		   .time = time, .a = value, .loc = loc, .b = type, .kind = REC_EVENT, .cpu = cpu});
}

void prv_put_state(struct out *o, uint32_t loc, uint64_t begin, uint64_t end, uint32_t state,
		   uint32_t cpu)
{
	put(o, (struct rec){
		   .time = begin, .a = end, .loc = loc, .b = state, .kind = REC_STATE, .cpu = cpu});
}

/* A communication of `size` bytes with `tag`, sent from (from, cpu) at `sent`, posted at
 * `posted` and received no earlier than it was sent at (to, cpu_r). */
void prv_put_comm_cpus(struct out *o, uint32_t from, uint32_t cpu, uint64_t sent, uint32_t to,
		       uint32_t cpu_r, uint64_t posted, uint64_t received, uint64_t size,
		       uint32_t tag)
{
	put(o, (struct rec){.time = sent,
			    .a = received < sent ? sent : received,
			    .size = size,
			    .loc = from,
			    .b = to,
			    .kind = REC_COMM,
			    .c = tag,
			    .cpu = cpu,
			    .cpu_r = cpu_r,
			    .posted = posted});
}

/* The same on the CPUs the two locations are on now. */
void prv_put_comm(struct out *o, uint32_t from, uint64_t sent, uint32_t to, uint64_t posted,
		  uint64_t received, uint64_t size, uint32_t tag)
{
	prv_put_comm_cpus(o, from, from < o->nlocs ? o->locs[from].cpu : 0, sent, to,
			  to < o->nlocs ? o->locs[to].cpu : 0, posted, received, size, tag);
}

/* One sorted run of a scratch file being merged. */
struct cursor {
	int fd;		    /* the scratch file */
	uint64_t next, end; /* record indices in it */
	struct rec *buf;
	size_t n, at;
};

static int cursor_fill(struct out *o, struct cursor *c, size_t cap)
{
	c->at = 0;
	c->n = c->end - c->next < cap ? (size_t)(c->end - c->next) : cap;
	if (!c->n)
		return 0;
	ssize_t got =
	    pread(c->fd, c->buf, c->n * sizeof(struct rec), (off_t)(c->next * sizeof(struct rec)));
	if (got != (ssize_t)(c->n * sizeof(struct rec))) {
		prv_fail(o, "reading the scratch file", got < 0 ? errno : EIO);
		c->n = 0;
		return -1;
	}
	c->next += c->n;
	return 0;
}

/* Decimal digits of v at p; returns the end.  (fprintf is most of the time otherwise.) */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v >= 0)
		return put_u64(p, (uint64_t)v);
	*p++ = '-';
	return put_u64(p, -(uint64_t)v);
}

/* ":" then the object fields of location li on CPU `cpu` of its node (+ 1; 0: unknown): the
 * CPU's number among all, application, task, thread. */
static char *object(const struct writer *w, char *p, uint32_t li, uint32_t cpu)
{
	const struct cv_loc *l = &w->cv->locs[li];
	const struct cv_process *pr = &w->cv->procs[l->process];
	*p++ = ':';
	p = put_u64(p, cpu ? w->n->cpu_base[pr->host] + cpu : 0);
	memcpy(p, ":1:", 3);
	p = put_u64(p + 3, w->n->task[l->process]);
	*p++ = ':';
	return put_u64(p, w->n->thread[li]);
}

static char *field(char *p, uint64_t v)
{
	*p++ = ':';
	return put_u64(p, v);
}

static void write_rec(struct writer *w, const struct rec *r)
{
	char line[256], *p = line;
	/* Events of one time and thread share a record, unless a type would appear twice
	 * (a leave and an enter of the same type): then a second record follows. */
	int join = w->open_event && r->kind == REC_EVENT && r->time == w->ev_time &&
		   r->loc == w->ev_loc && w->ntypes < sizeof(w->types) / sizeof(w->types[0]);
	for (unsigned i = 0; join && i < w->ntypes; i++)
		join = w->types[i] != r->b;
	if (w->open_event && !join) {
		*p++ = '\n';
		w->open_event = 0;
	}
	switch (r->kind) {
	case REC_STATE:
		*p++ = '1';
		p = object(w, p, r->loc, r->cpu);
		p = field(p, r->time - w->t0);
		p = field(p, r->a - w->t0);
		p = field(p, r->b);
		*p++ = '\n';
		break;
	case REC_EVENT:
		if (!w->open_event) {
			*p++ = '2';
			p = object(w, p, r->loc, r->cpu);
			p = field(p, r->time - w->t0);
			w->open_event = 1;
			w->ev_time = r->time;
			w->ev_loc = r->loc;
			w->ntypes = 0;
		}
		w->types[w->ntypes++] = r->b;
		p = field(p, r->b);
		*p++ = ':';
		p = put_i64(p, (int64_t)r->a);
		break;
	case REC_COMM:
		/* logical and physical send: the sending call's start; logical receive: when
		 * the receive was posted; physical: when it completed */
		*p++ = '3';
		p = object(w, p, r->loc, r->cpu);
		p = field(p, r->time - w->t0);
		p = field(p, r->time - w->t0);
		p = object(w, p, r->b, r->cpu_r);
		p = field(p, (r->posted < r->a ? r->posted : r->a) - w->t0);
		p = field(p, r->a - w->t0);
		p = field(p, r->size);
		p = field(p, r->c);
		*p++ = '\n';
		break;
	}
	fwrite_unlocked(line, 1, (size_t)(p - line), w->f);
}

static int heap_less(const struct cursor *a, const struct cursor *b)
{
	return rec_cmp(&a->buf[a->at], &b->buf[b->at]) < 0;
}

static void heap_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && heap_less(h[l], h[m]))
			m = l;
		if (r < n && heap_less(h[r], h[m]))
			m = r;
		if (m == i)
			return;
		struct cursor *x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* Merges the sorted runs of the scratch file into the body of the .prv. */
int prv_write_body(struct out *o, struct writer *w, const uint64_t *run_end)
{
	struct prv_source src = {fileno(o->scratch), o->nruns, run_end};
	return prv_write_sources(o, w, &src, 1);
}

int prv_write_sources(struct out *o, struct writer *w, const struct prv_source *src, size_t nsrc)
{
	size_t k = 0;
	for (size_t s = 0; s < nsrc; s++)
		k += src[s].nruns;
	if (!k)
		return 0;
	size_t cap = (64u << 20) / sizeof(struct rec) / k;
	cap = cap < 256 ? 256 : cap > READ_RECORDS ? READ_RECORDS : cap;
	struct cursor *c = calloc(k, sizeof(*c));
	struct cursor **h = calloc(k, sizeof(*h));
	int rc = c && h ? 0 : -1;
	size_t nh = 0;
	for (size_t s = 0, i = 0; rc == 0 && s < nsrc; s++)
		for (size_t j = 0; j < src[s].nruns; j++, i++) {
			c[i].fd = src[s].fd;
			c[i].next = j ? src[s].run_end[j - 1] : 0;
			c[i].end = src[s].run_end[j];
		}
	for (size_t i = 0; rc == 0 && i < k; i++) {
		if (!(c[i].buf = malloc(cap * sizeof(struct rec))) || cursor_fill(o, &c[i], cap))
			rc = -1;
		else if (c[i].n)
			h[nh++] = &c[i];
	}
	for (size_t i = nh / 2; rc == 0 && i-- > 0;)
		heap_down(h, nh, i);
	while (rc == 0 && nh) {
		struct cursor *top = h[0];
		write_rec(w, &top->buf[top->at]);
		if (++top->at == top->n && cursor_fill(o, top, cap))
			rc = -1;
		if (!top->n)
			h[0] = h[--nh];
		heap_down(h, nh, 0);
	}
	if (w->open_event)
		fputc('\n', w->f);
	for (size_t i = 0; c && i < k; i++)
		free(c[i].buf);
	free(c);
	free(h);
	if (rc && !o->error[0])
		prv_fail(o, "merging the records", ENOMEM);
	return rc;
}

FILE *prv_open_output(struct out *o, const char *ext)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s", o->name, ext);
	FILE *f = fopen(path, "w");
	if (!f)
		prv_fail(o, path, errno);
	return f;
}

int prv_close_output(struct out *o, FILE *f, const char *ext)
{
	if (!f)
		return -1;
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		char path[4096];
		snprintf(path, sizeof(path), "%s%s", o->name, ext);
		prv_fail(o, path, errno ? errno : EIO);
		return -1;
	}
	return 0;
}

/* The end of the trace: its last event, or a call that ended 1 ns after it (at()). */
uint64_t prv_end(const struct cv *cv)
{
	const struct out *o = cv->out;
	return o->end > cv->stats.last_ns ? o->end : cv->stats.last_ns;
}

/* Closes every thread's life: Not created before its first and after its last event. */
void prv_close_states(struct cv *cv)
{
	struct out *o = cv->out;
	uint64_t t0 = cv->stats.first_ns, t1 = prv_end(cv);
	for (size_t i = 0; i < o->nlocs && i < cv->nlocs; i++) {
		struct ploc *p = &o->locs[i];
		if (cv->locs[i].kind == CV_LOC_METRIC && !p->kept)
			continue; /* not a thread */
		if (!p->begun) {
			prv_put_state(o, (uint32_t)i, t0, t1 > t0 ? t1 : t0 + 1, ST_NOT_CREATED, 0);
			continue;
		}
		if (!p->ended) {
			p->depth = 0;
			p->base = ST_NOT_CREATED;
			prv_restate(o, (uint32_t)i, p, p->last);
		}
		if (p->first > t0)
			prv_put_state(o, (uint32_t)i, t0, p->first, ST_NOT_CREATED, 0);
		if (t1 > p->since)
			prv_put_state(o, (uint32_t)i, p->since, t1, ST_NOT_CREATED, p->since_cpu);
	}
}

static int msg_cmp(const void *x, const void *y)
{
	const struct msg *a = x, *b = y;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	if (a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

static int same_channel(const struct msg *a, const struct msg *b)
{
	return a->comm == b->comm && a->from == b->from && a->to == b->to && a->tag == b->tag;
}

#define CLOCK_PRECISION_NS 1000u

/* The k-th send of a channel (communicator, ranks, tag) is the k-th receive posted on it. */
void prv_match_messages(struct out *o)
{
	if (o->nsends)
		qsort(o->sends, o->nsends, sizeof(*o->sends), msg_cmp);
	if (o->nrecvs)
		qsort(o->recvs, o->nrecvs, sizeof(*o->recvs), msg_cmp);
	for (size_t i = 0, j = 0; i < o->nsends && j < o->nrecvs;) {
		const struct msg *s = &o->sends[i], *r = &o->recvs[j];
		if (s->comm == UINT64_MAX)
			break; /* cancelled sends sort last */
		if (!same_channel(s, r)) {
			if (msg_cmp(s, r) < 0)
				i++;
			else
				j++;
			continue;
		}
		/* Clocks read on two CPUs agree to about 100 ns (less on bare metal): a receive
		 * that seems to end that little before its send began did not; more stays
		 * visible (a clock that alignment could not fix). */
		uint64_t recv = r->time;
		if (recv < s->time && s->time - recv <= CLOCK_PRECISION_NS)
			recv = s->time;
		prv_put_comm_cpus(o, s->loc, s->cpu, s->time, r->loc, r->cpu, r->order, recv,
				  s->size, s->tag);
		i++;
		j++;
	}
}
