// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_buffer - the runtime core linked into a test program (no preloading): several
 * threads record numbered events through tiny rings, so chunks fill, get sealed, drained
 * by the writer and by the producers themselves; then the reader must give back, per
 * thread, exactly the numbers recorded, in order, and every string by its name.
 *
 *   test_buffer block   every event kept (default policy)
 *   test_buffer drop    recorded + LOST counts == events, recorded ones in order
 *
 * The environment (set by CTest) points LIBTRACE_OUTPUT at a fresh directory and
 * LIBTRACE_BUFFER_SIZE at 64K.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "libtrace/annotate.h"
#include "lt.h"
#include "reader.h"
#include "test.h"

#define THREADS 4
#define EVENTS	200000

static void *producer(void *arg)
{
	long id = (long)arg;
	char name[32];
	for (long i = 0; i < EVENTS; i++) {
		if (i % 1000 == 0) {
			/* A stack buffer reused with new contents: must intern by content. */
			snprintf(name, sizeof(name), "phase-%ld-%ld", id, i / 1000);
			ltr_marker(name);
		}
		ltr_counter("seq", i);
	}
	return NULL;
}

struct expect {
	long next[64];
	long lost[64];
	long markers[64];
	long counters[64];
	int begun[64], ended[64];
	int bad;
};

static int check_record(void *ctx, const struct rd_process *p, const struct rd_thread *th,
			const struct lt_rec *r)
{
	struct expect *e = ctx;
	unsigned t = th->index;
	if (t >= 64)
		return 0;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	switch (r->type) {
	case LT_REC_THREAD_BEGIN:
		e->begun[t]++;
		break;
	case LT_REC_THREAD_END:
		e->ended[t]++;
		break;
	case LT_REC_COUNTER: {
		const char *n = rd_string(p, r->arg);
		if (!n || strcmp(n, "seq")) {
			e->bad++;
			break;
		}
		long v = (long)pl[0];
		if (v < e->next[t] || (v != e->next[t] && e->lost[t] == 0)) {
			if (e->bad++ < 5)
				fprintf(stderr, "thread %u: value %ld, expected %ld\n", t, v,
					e->next[t]);
		}
		e->next[t] = v + 1;
		e->counters[t]++;
		break;
	}
	case LT_REC_MARKER: {
		const char *n = rd_string(p, r->arg);
		char want[32];
		/* The marker precedes value next[t], a multiple of 1000 unless events were lost. */
		long id;
		if (!n || sscanf(n, "phase-%ld-", &id) != 1) {
			e->bad++;
			break;
		}
		snprintf(want, sizeof(want), "phase-%ld-%ld", id, e->next[t] / 1000);
		if (e->lost[t] == 0 && strcmp(n, want)) {
			if (e->bad++ < 5)
				fprintf(stderr, "thread %u: marker %s, expected %s\n", t, n, want);
		}
		e->markers[t]++;
		break;
	}
	case LT_REC_LOST:
		e->lost[t] += (long)pl[0];
		break;
	}
	return 0;
}

static void warn(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "reader: %s\n", msg);
	test_failures++;
}

int main(int argc, char **argv)
{
	int drop = argc > 1 && !strcmp(argv[1], "drop");
	CHECK_EQ(lt_state, LT_STATE_ON);
	if (lt_state != LT_STATE_ON)
		TEST_DONE();
	CHECK_EQ(lt_cfg.overflow, drop ? LT_OVERFLOW_DROP : LT_OVERFLOW_BLOCK);
	pthread_t th[THREADS];
	for (long i = 0; i < THREADS; i++)
		CHECK_EQ(pthread_create(&th[i], NULL, producer, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	producer((void *)(long)THREADS); /* the main thread too, still live at the end */
	lt_buffer_flush_all(1);

	struct rd_process p;
	char err[512];
	CHECK_EQ(rd_process_open(&p, lt_process_dir(), warn, NULL, err, sizeof(err)), 0);
	CHECK_EQ(p.nthreads, THREADS + 1);
	struct expect e;
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < p.nthreads; i++)
		rd_thread_records(&p, &p.threads[i], check_record, &e, warn, NULL);
	long total_lost = 0;
	for (size_t i = 0; i < p.nthreads; i++) {
		unsigned t = p.threads[i].index;
		CHECK_EQ(e.begun[t], 1);
		/* Worker threads end (key destructor); the main thread is still running. */
		CHECK_EQ(e.ended[t], t == 0 ? 0 : 1);
		if (!drop) {
			CHECK_EQ(e.next[t], EVENTS);
			CHECK_EQ(e.lost[t], 0);
			CHECK_EQ(e.markers[t], EVENTS / 1000);
			CHECK_EQ(e.counters[t], EVENTS);
		} else {
			/* Exact accounting: every event is either recorded or counted as lost. */
			CHECK_EQ(e.counters[t] + e.markers[t] + e.lost[t], EVENTS + EVENTS / 1000);
			total_lost += e.lost[t];
		}
	}
	CHECK_EQ(e.bad, 0);
	if (drop)
		printf("drop policy: %ld events counted as lost\n", total_lost);
	rd_process_close(&p);
	TEST_DONE();
}
