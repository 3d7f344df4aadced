/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * private.h - what the files of module cupti share: cupti.c (loading CUPTI, starting it,
 * flushes), api.c (the API callbacks: the calls' records), activity.c (the activity buffers
 * and the device clock).  No other file includes it.
 */
#ifndef LIBTRACE_INTERPOSE_CUPTI_PRIVATE_H
#define LIBTRACE_INTERPOSE_CUPTI_PRIVATE_H

#include <stdint.h>

#include <cupti.h>

#include "../../common/gpu.h"
#include "../../core/lock.h"

/* The CUPTI functions we use, bound with dlsym. */
#define CUPTI_FUNCTIONS(X)                                                             \
	X(cuptiGetVersion, (uint32_t *))                                               \
	X(cuptiGetResultString, (CUptiResult, const char **))                          \
	X(cuptiSubscribe, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))      \
	X(cuptiUnsubscribe, (CUpti_SubscriberHandle))                                  \
	X(cuptiEnableDomain, (uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain)) \
	X(cuptiActivityRegisterCallbacks,                                              \
	  (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))       \
	X(cuptiActivityRegisterTimestampCallback, (CUpti_TimestampCallbackFunc))       \
	X(cuptiActivityEnable, (CUpti_ActivityKind))                                   \
	X(cuptiActivityDisable, (CUpti_ActivityKind))                                  \
	X(cuptiActivityFlushAll, (uint32_t))                                           \
	X(cuptiActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))          \
	X(cuptiActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))          \
	X(cuptiGetTimestamp, (uint64_t *))

struct lt_cupti_functions {
#define CUPTI_FIELD(name, params) CUptiResult(CUPTIAPI *name) params;
	CUPTI_FUNCTIONS(CUPTI_FIELD)
#undef CUPTI_FIELD
};
extern LT_HIDDEN struct lt_cupti_functions lt_cupti; /* cupti.c binds them */

/* cupti.c.  Ended: the exit flush ran, CUPTI may be going away, ask nothing more.  Forked:
 * a child of fork, CUPTI's threads and locks stayed in the parent. */
extern LT_HIDDEN int lt_cupti_ended;
extern LT_HIDDEN int lt_cupti_forked;
/* The flush at exit, registered by api.c after the first call. */
LT_HIDDEN void lt_cupti_flush_at_exit(void);

/* Outermost API calls under way in the process (api.c), and the hand-over of CUPTI to the
 * program's own subscriber under way (cupti.c): no new call is recorded then. */
extern LT_HIDDEN int lt_cupti_in_calls;
extern LT_HIDDEN int lt_cupti_handing_over;

/* The calls open on this thread, outermost first. */
#define OPEN_MAX 8
struct lt_cupti_calls {
	struct lt_thread *t; /* its guard is ours while n > 0 */
	unsigned n;
	unsigned hidden;   /* driver calls open inside a runtime call, not recorded */
	unsigned internal; /* internal runtime calls open (see internal() in api.c), not recorded */
	int flushing;
	struct {
		uint32_t cbid, corr;
		uint8_t domain, op;
		uint8_t out; /* left out by the name filters: no records */
	} open[OPEN_MAX];
};
extern LT_HIDDEN __thread struct lt_cupti_calls lt_cupti_cs LT_TLS; /* api.c */

/* Driver correlation id -> the runtime call's id it served (see the top of cupti.c).  A
 * slot is overwritten 65536 driver calls later: an older record then keeps its own id. */
#define ALIAS_SIZE 65536u
extern LT_HIDDEN uint64_t *lt_cupti_corr_alias; /* api.c; mapped by start, before cuptiSubscribe */

/* The correlation ids of the calls made while recording was paused (ltr_trace_pause,
 * LIBTRACE_START_PAUSED, LIBTRACE_TOGGLE_SIGNAL), runtime and driver alike: what the device
 * did for them is not written either, whenever CUPTI hands it over.  Slot corr % size. */
extern LT_HIDDEN uint32_t *lt_cupti_paused_corr; /* api.c; as lt_cupti_corr_alias */

/* api.c: CUPTI's callback for the API calls (cuptiSubscribe). */
LT_HIDDEN void CUPTIAPI lt_cupti_on_callback(void *userdata, CUpti_CallbackDomain domain,
					     CUpti_CallbackId cbid, const void *data);

/* Device times when CUPTI takes no timestamp callback: linear between the first reading
 * pair and the latest (host = CLOCK_MONOTONIC ns, dev = cuptiGetTimestamp). */
struct lt_cupti_sync_map {
	int on;
	struct lt_lock lock;
	uint64_t host0, dev0, host1, dev1;
};
extern LT_HIDDEN struct lt_cupti_sync_map lt_cupti_sync_map; /* activity.c */

/* activity.c: CUPTI's timestamp callback (our clock), a reading pair (first: the start of the
 * mapping), and the activity buffer callbacks (cuptiActivityRegisterCallbacks). */
LT_HIDDEN uint64_t CUPTIAPI lt_cupti_host_clock(void);
LT_HIDDEN void lt_cupti_sync_point(int first);
LT_HIDDEN void CUPTIAPI lt_cupti_buffer_requested(uint8_t **buffer, size_t *size,
						  size_t *max_records);
LT_HIDDEN void CUPTIAPI lt_cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
						  size_t size, size_t valid);

#endif /* LIBTRACE_INTERPOSE_CUPTI_PRIVATE_H */
