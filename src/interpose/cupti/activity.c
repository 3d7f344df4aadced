// SPDX-License-Identifier: BSD-3-Clause
/*
 * activity.c - module cupti's activity records: the buffers CUPTI fills with what the
 * device did (kernels, copies, sets, synchronisation), and device times put on the host's
 * clock (cupti.c says how, under "Device times").
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "private.h"

/* The device clock's mapping (private.h says what it is). */
struct lt_cupti_sync_map lt_cupti_sync_map = {.lock = LT_LOCK_INIT};

/* Context id -> device, learnt from kernel, copy and set records (synchronisation records
 * carry no device). */
#define CONTEXTS_MAX 64u
static uint64_t context_device[CONTEXTS_MAX]; /* context << 32 | device, 0: free */

uint64_t CUPTIAPI lt_cupti_host_clock(void)
{
	return lt_clock_mono_ns();
}

/* A reading pair: the tightest of 5 brackets of cuptiGetTimestamp by our clock (a thread
 * preempted inside one would shift every device time by as much). */
void lt_cupti_sync_point(int first)
{
	uint64_t best = UINT64_MAX, host = 0, dev = 0;
	for (int i = 0; i < 5; i++) {
		uint64_t d = 0, a = lt_clock_mono_ns();
		if (lt_cupti.cuptiGetTimestamp(&d) != CUPTI_SUCCESS)
			return;
		uint64_t b = lt_clock_mono_ns();
		if (b - a < best) {
			best = b - a;
			host = a + (b - a) / 2;
			dev = d;
		}
	}
	lt_lock(&lt_cupti_sync_map.lock);
	if (first) {
		lt_cupti_sync_map.host0 = host;
		lt_cupti_sync_map.dev0 = dev;
	}
	lt_cupti_sync_map.host1 = host;
	lt_cupti_sync_map.dev1 = dev;
	lt_unlock(&lt_cupti_sync_map.lock);
}

static uint64_t to_host(uint64_t dev)
{
	if (!lt_cupti_sync_map.on || !dev)
		return dev;
	lt_lock(&lt_cupti_sync_map.lock);
	double slope = 1.0;
	/* a millisecond apart at least */
	if (lt_cupti_sync_map.dev1 > lt_cupti_sync_map.dev0 + 1000000)
		slope = (double)(lt_cupti_sync_map.host1 - lt_cupti_sync_map.host0) /
			(double)(lt_cupti_sync_map.dev1 - lt_cupti_sync_map.dev0);
	int64_t d = (int64_t)(dev - lt_cupti_sync_map.dev0);
	uint64_t host0 = lt_cupti_sync_map.host0;
	lt_unlock(&lt_cupti_sync_map.lock);
	int64_t h = (int64_t)host0 + (int64_t)((double)d * slope);
	return h < 0 ? 0 : (uint64_t)h;
}

#define BUFFER_SIZE (1u << 20)

void CUPTIAPI lt_cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0; /* as many as fit */
}

static uint32_t runtime_corr(uint32_t corr)
{
	uint64_t a =
	    __atomic_load_n(&lt_cupti_corr_alias[corr & (ALIAS_SIZE - 1)], __ATOMIC_RELAXED);
	return a >> 32 == corr ? (uint32_t)a : corr;
}

static uint32_t device_of(uint32_t context, uint32_t device, int known)
{
	for (unsigned i = 0; i < CONTEXTS_MAX; i++) {
		uint64_t e = __atomic_load_n(&context_device[i], __ATOMIC_RELAXED);
		if (e >> 32 == context && e)
			return (uint32_t)e;
		if (!e) {
			if (!known)
				return 0;
			uint64_t v = (uint64_t)context << 32 | device;
			if (__atomic_compare_exchange_n(&context_device[i], &e, v, 0,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
			    e == v)
				return device;
		}
	}
	return known ? device : 0;
}

static unsigned copy_kind(uint8_t kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
		return LT_GPU_COPY_HTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
		return LT_GPU_COPY_DTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
		return LT_GPU_COPY_DTOD;
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
		return LT_GPU_COPY_HTOH;
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
		return LT_GPU_COPY_PEER;
	default:
		return LT_GPU_COPY_UNKNOWN;
	}
}

static void put_activity(struct lt_thread *t, unsigned kind, uint32_t arg, uint64_t start,
			 uint64_t end, uint32_t device, uint32_t context, uint32_t stream,
			 uint32_t corr, unsigned n, const uint64_t *extra)
{
	unsigned w = 7 + n;
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, lt_now(), LT_REC_GPU_ACTIVITY, w, kind, arg);
	p[2] = to_host(start);
	p[3] = to_host(end);
	p[4] = (uint64_t)device << 32 | context;
	p[5] = stream;
	p[6] = runtime_corr(corr);
	for (unsigned i = 0; i < n; i++)
		p[7 + i] = extra[i];
	lt_commit(t);
}

/* The call was made while recording was paused: its device work is not written. */
static int paused_call(uint32_t corr)
{
	return corr && __atomic_load_n(&lt_cupti_paused_corr[corr & (ALIAS_SIZE - 1)],
				       __ATOMIC_RELAXED) == corr;
}

static void activity(struct lt_thread *t, const CUpti_Activity *a)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		if (paused_call(k->correlationId))
			break;
		uint32_t name = k->name ? lt_string_id(t, k->name) : 0;
		if (name && lt_str_skip(name))
			break; /* a kernel the name filters leave out: its launch was counted */
		uint64_t dims[3];
		struct lt_dim3 g = {(unsigned)k->gridX, (unsigned)k->gridY, (unsigned)k->gridZ};
		struct lt_dim3 b = {(unsigned)k->blockX, (unsigned)k->blockY, (unsigned)k->blockZ};
		lt_gpu_dims(dims, g, b);
		put_activity(t, LT_GPU_ACT_KERNEL, name, k->start, k->end,
			     device_of(k->contextId, k->deviceId, 1), k->contextId, k->streamId,
			     k->correlationId, 3, dims);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		if (paused_call(m->correlationId) || paused_call(m->runtimeCorrelationId))
			break;
		uint64_t bytes = m->bytes;
		put_activity(t, LT_GPU_ACT_COPY, copy_kind(m->copyKind), m->start, m->end,
			     device_of(m->contextId, m->deviceId, 1), m->contextId, m->streamId,
			     m->runtimeCorrelationId ? m->runtimeCorrelationId : m->correlationId,
			     1, &bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		if (paused_call(m->correlationId))
			break;
		uint64_t bytes = m->bytes;
		put_activity(t, LT_GPU_ACT_SET, 0, m->start, m->end,
			     device_of(m->contextId, m->deviceId, 1), m->contextId, m->streamId,
			     m->correlationId, 1, &bytes);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)a;
		if (paused_call(s->correlationId))
			break;
		put_activity(t, LT_GPU_ACT_SYNC, (uint32_t)s->type, s->start, s->end,
			     device_of(s->contextId, 0, 0), s->contextId, s->streamId,
			     s->correlationId, 0, NULL);
		break;
	}
	default:
		break;
	}
}

/*
 * The thread CUPTI hands a buffer to writes its records.  Inside a recorded call, or in
 * our own flush, the guard is ours already.  A thread of the runtime's (started inside a
 * call or while CUPTI started: its TLS guard is up for good) is registered for this, as
 * the records are the device's, and keeps its guard taken afterwards, so that nothing
 * else it does is recorded.  Without a thread state (tracing over) the records are
 * dropped: there is no stream left to count them in.
 */
void CUPTIAPI lt_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid)
{
	(void)size;
	struct lt_thread *t = NULL;
	int took = 0, quiet = 0;
	if (lt_cupti_cs.n) {
		t = lt_cupti_cs.t; /* inside a recorded call: the guard is ours */
	} else if (lt_cupti_cs.flushing && lt_self && lt_self->guard) {
		t = lt_self; /* our own flush, the tracer's guard up (exec) */
	} else if (lt_tls_guard && lt_self && lt_self->guard) {
		t = lt_self; /* a runtime's thread, registered by an earlier buffer */
	} else {
		int saved = lt_tls_guard;
		lt_tls_guard = 0;
		t = lt_begin(LT_MOD_CUDA);
		if (!t && lt_recording_paused(LT_MOD_CUDA) && lt_self && !lt_self->guard) {
			/* Paused: the device work of the calls made before the pause is written. */
			t = lt_self;
			lt_guard_take(t);
		}
		lt_tls_guard = saved;
		took = t != NULL;
		quiet = saved != 0;
	}
	if (t) {
		if (lt_cupti_sync_map.on)
			lt_cupti_sync_point(0);
		CUpti_Activity *a = NULL;
		while (valid &&
		       lt_cupti.cuptiActivityGetNextRecord(buffer, valid, &a) == CUPTI_SUCCESS)
			activity(t, a);
		size_t dropped = 0;
		if (lt_cupti.cuptiActivityGetNumDroppedRecords &&
		    lt_cupti.cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) ==
			CUPTI_SUCCESS &&
		    dropped)
			lt_emit1(t, LT_REC_LOST, LT_LOST_BUFFER, 0, dropped);
		if (took && !quiet)
			lt_finish(
			    t); /* a runtime's thread keeps the guard: its own calls stay out */
	}
	free(buffer);
}
