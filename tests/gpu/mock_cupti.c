// SPDX-License-Identifier: BSD-3-Clause
/*
 * mock_cupti.c - a stand-in for NVIDIA's libcupti.so (libmock_cupti.so), for the tests of
 * libtrace's CUPTI layer on machines without a GPU.  Built only in the test tree, never
 * installed.  libtrace loads it in place of the real library (LIBTRACE_CUPTI_LIB) and drives
 * it exactly as it drives CUPTI; a test program then makes it report, through the same API,
 * what CUPTI reports for a small CUDA program.
 *
 * It is compiled against the real cupti.h: every function has the prototype the header
 * declares and every record the layout of CUDA 13's structs, so what works here works
 * against the ABI of the real library.  Behaviour follows the headers' documentation:
 *  - one subscriber at a time (a second cuptiSubscribe gets
 *    CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED); callbacks per domain and per callback
 *    id, RUNTIME_API and DRIVER_API only (the other domains are accepted and never fire);
 *    CUpti_CallbackData as CUPTI fills it: functionReturnValue valid at EXIT only, context
 *    NULL at the ENTER of the call that creates it, symbolName for launches only, fresh
 *    process-wide correlation ids, one correlationData word shared by ENTER and EXIT;
 *  - activity records only for kinds enabled when the device work is submitted, written
 *    into buffers from bufferRequested (its size and maxNumRecords respected, a declined,
 *    too small or misaligned buffer drops records, counted by
 *    cuptiActivityGetNumDroppedRecords), each record 8-byte aligned and packed as CUPTI packs
 *    them; records become visible only when a buffer fills or at cuptiActivityFlushAll;
 *    FlushAll(0) hands over the buffers whose records are all complete (the device is past
 *    their end), FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) every non-empty one;
 *    cuptiActivityGetNextRecord walks a buffer and ends with CUPTI_ERROR_MAX_LIMIT_REACHED;
 *  - timestamps from the callback registered with cuptiActivityRegisterTimestampCallback,
 *    otherwise CLOCK_REALTIME nanoseconds, as CUPTI's default on Linux; records keep the
 *    clock they were made with (a callback registered late does not change older records).
 *  - results and the failures of a machine without a driver as measured with the real
 *    libcupti.so.13 on a machine without a driver: the handle of a failed cuptiSubscribe is left
 *    untouched, cuptiGetResultString of an unknown code gives "<unknown>" and
 *    CUPTI_ERROR_INVALID_PARAMETER.
 *
 * Test hooks (exported; not part of CUPTI):
 *   int mock_cupti_play(const char *scenario, int thread_no)
 *       Plays, on the calling thread, the CUDA API calls of a program as CUPTI reports them
 *       to the subscriber (ENTER and EXIT callbacks with the *_params structs of
 *       generated_cuda_runtime_api_meta.h and generated_cuda_meta.h, return values, the
 *       driver calls cudart makes inside its own calls), and queues the activity records the
 *       device would produce, with the same correlation ids, on device 0, context 1, stream
 *       thread_no + 7, with device times inside the host calls that wait for them.  The
 *       host waits as the program would (cudaDeviceSynchronize returns after the kernel
 *       ends).  Works with or without a subscriber.  Returns 0, or -1 for an unknown
 *       scenario.  Scenarios:
 *         "vector_add"  cudaMalloc x2 (each with a nested cuMemAlloc_v2), cudaMemcpy
 *                       host to device 4096 bytes, a CUDA 13 <<<>>> launch (callback id
 *                       __cudaLaunchKernel_v13000, kernel _Z3addPfPKfi, grid 4x1x1, block
 *                       256x1x1, stream cudaStreamPerThread), cudaDeviceSynchronize,
 *                       cudaMemcpy device to host 4096 bytes, cudaMemset 4096 bytes,
 *                       cudaFree of the first allocation (nested cuMemFree_v2; the second
 *                       one leaks on purpose), then a driver API launch cuLaunchKernel of
 *                       _Z5scalePfi (grid 8x1x1, block 128x1x1) made by the program itself.
 *       Device addresses are 0x7f4a00000000 + thread_no << 28 + (allocation index) << 21.
 *
 * Environment (read once, at the first call):
 *   MOCK_CUPTI_SUBSCRIBE_RESULT=N  cuptiSubscribe fails with N (e.g. 39,
 *                                  CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, as under
 *                                  Nsight).  999 (CUPTI_ERROR_UNKNOWN) plays a machine
 *                                  without a driver: the activity calls that fail there
 *                                  (timestamp callback, enable, flush) fail with 999 too.
 *   MOCK_CUPTI_NO_TS_CALLBACK=1    cuptiActivityRegisterTimestampCallback answers
 *                                  CUPTI_ERROR_NOT_SUPPORTED: times stay CLOCK_REALTIME.
 *   MOCK_CUPTI_WORKER=1            buffers are handed to bufferCompleted by a worker thread
 *                                  of the mock, as real CUPTI does (a full buffer as soon as
 *                                  its records are complete; FlushAll waits for the worker);
 *                                  otherwise by the thread that filled the buffer or that
 *                                  called cuptiActivityFlushAll.
 *   MOCK_CUPTI_MAX_RECORDS=N       at most N records per buffer (as if bufferRequested had
 *                                  said so): buffers fill, and are handed over, while the
 *                                  program runs.
 *
 * Not modelled: the RESOURCE, SYNCHRONIZE and NVTX domains, activity kinds other than
 * kernels, copies, sets and synchronisation (enabling them succeeds, they produce nothing),
 * per-context enabling, the deprecated blocking enqueue/dequeue API.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

/* ---- configuration ---- */

static struct {
	CUptiResult subscribe_result; /* CUPTI_SUCCESS: subscribing works */
	int no_driver;		      /* subscribe_result is CUPTI_ERROR_UNKNOWN */
	int no_ts_callback;
	int worker;
	size_t max_records;
} cfg;

static long env_long(const char *name)
{
	const char *v = getenv(name);
	return v ? strtol(v, NULL, 0) : 0;
}

static void read_env(void)
{
	cfg.subscribe_result = (CUptiResult)env_long("MOCK_CUPTI_SUBSCRIBE_RESULT");
	cfg.no_driver = cfg.subscribe_result == CUPTI_ERROR_UNKNOWN;
	cfg.no_ts_callback = env_long("MOCK_CUPTI_NO_TS_CALLBACK") != 0;
	cfg.worker = env_long("MOCK_CUPTI_WORKER") != 0;
	long n = env_long("MOCK_CUPTI_MAX_RECORDS");
	cfg.max_records = n > 0 ? (size_t)n : 0;
}

static void init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, read_env);
}

/* ---- results ---- */

/* The name of a result, NULL for a code CUPTI does not have. */
#define RESULT(r) \
	case r:   \
		return #r
static const char *result_name(CUptiResult result)
{
	switch (result) {
		RESULT(CUPTI_SUCCESS);
		RESULT(CUPTI_ERROR_INVALID_PARAMETER);
		RESULT(CUPTI_ERROR_INVALID_DEVICE);
		RESULT(CUPTI_ERROR_INVALID_CONTEXT);
		RESULT(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID);
		RESULT(CUPTI_ERROR_INVALID_EVENT_ID);
		RESULT(CUPTI_ERROR_INVALID_EVENT_NAME);
		RESULT(CUPTI_ERROR_INVALID_OPERATION);
		RESULT(CUPTI_ERROR_OUT_OF_MEMORY);
		RESULT(CUPTI_ERROR_HARDWARE);
		RESULT(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
		RESULT(CUPTI_ERROR_API_NOT_IMPLEMENTED);
		RESULT(CUPTI_ERROR_MAX_LIMIT_REACHED);
		RESULT(CUPTI_ERROR_NOT_READY);
		RESULT(CUPTI_ERROR_NOT_COMPATIBLE);
		RESULT(CUPTI_ERROR_NOT_INITIALIZED);
		RESULT(CUPTI_ERROR_INVALID_METRIC_ID);
		RESULT(CUPTI_ERROR_INVALID_METRIC_NAME);
		RESULT(CUPTI_ERROR_QUEUE_EMPTY);
		RESULT(CUPTI_ERROR_INVALID_HANDLE);
		RESULT(CUPTI_ERROR_INVALID_STREAM);
		RESULT(CUPTI_ERROR_INVALID_KIND);
		RESULT(CUPTI_ERROR_INVALID_EVENT_VALUE);
		RESULT(CUPTI_ERROR_DISABLED);
		RESULT(CUPTI_ERROR_INVALID_MODULE);
		RESULT(CUPTI_ERROR_INVALID_METRIC_VALUE);
		RESULT(CUPTI_ERROR_HARDWARE_BUSY);
		RESULT(CUPTI_ERROR_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE);
		RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES);
		RESULT(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS);
		RESULT(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE);
		RESULT(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
		RESULT(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED);
		RESULT(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE);
		RESULT(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES);
		RESULT(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED);
		RESULT(CUPTI_ERROR_INVALID_CHIP_NAME);
		RESULT(CUPTI_ERROR_UNKNOWN);
	default:
		return NULL;
	}
}

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*str = result_name(result);
	if (*str)
		return CUPTI_SUCCESS;
	*str = "<unknown>"; /* what libcupti.so.13 answers */
	return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

/* ---- the clock of activity records and cuptiGetTimestamp ---- */

static CUpti_TimestampCallbackFunc ts_callback;

static uint64_t cupti_clock(void)
{
	CUpti_TimestampCallbackFunc f = __atomic_load_n(&ts_callback, __ATOMIC_ACQUIRE);
	if (f)
		return f();
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
	if (!timestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*timestamp = cupti_clock();
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp)
{
	init();
	if (cfg.no_driver)
		return CUPTI_ERROR_UNKNOWN;
	if (cfg.no_ts_callback)
		return CUPTI_ERROR_NOT_SUPPORTED;
	if (!funcTimestamp)
		return CUPTI_ERROR_INVALID_PARAMETER;
	__atomic_store_n(&ts_callback, funcTimestamp, __ATOMIC_RELEASE);
	return CUPTI_SUCCESS;
}

/* ---- the callback API ---- */

struct CUpti_Subscriber_st {
	CUpti_CallbackFunc callback;
	void *userdata;
	uint8_t runtime[CUPTI_RUNTIME_TRACE_CBID_SIZE]; /* enabled callback ids */
	uint8_t driver[CUPTI_DRIVER_TRACE_CBID_SIZE];
};

static struct CUpti_Subscriber_st the_subscriber;
static CUpti_SubscriberHandle subscribed; /* &the_subscriber while subscribed */
static pthread_mutex_t subscribe_lock = PTHREAD_MUTEX_INITIALIZER;

CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
			   void *userdata)
{
	init();
	if (!subscriber)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (cfg.subscribe_result != CUPTI_SUCCESS)
		return cfg.subscribe_result; /* *subscriber untouched, as the real library does */
	pthread_mutex_lock(&subscribe_lock);
	if (subscribed) {
		pthread_mutex_unlock(&subscribe_lock);
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	memset(&the_subscriber, 0, sizeof(the_subscriber));
	the_subscriber.callback = callback;
	the_subscriber.userdata = userdata;
	__atomic_store_n(&subscribed, &the_subscriber, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&subscribe_lock);
	*subscriber = &the_subscriber;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
	pthread_mutex_lock(&subscribe_lock);
	CUptiResult r = CUPTI_ERROR_INVALID_PARAMETER;
	if (subscriber && subscriber == subscribed) {
		__atomic_store_n(&subscribed, NULL, __ATOMIC_RELEASE);
		r = CUPTI_SUCCESS;
	}
	pthread_mutex_unlock(&subscribe_lock);
	return r;
}

/* The enable flags of a domain (NULL for a domain that has none here) and their count. */
static uint8_t *domain_flags(CUpti_SubscriberHandle s, CUpti_CallbackDomain domain, size_t *n)
{
	switch (domain) {
	case CUPTI_CB_DOMAIN_RUNTIME_API:
		*n = sizeof(s->runtime);
		return s->runtime;
	case CUPTI_CB_DOMAIN_DRIVER_API:
		*n = sizeof(s->driver);
		return s->driver;
	default:
		*n = 0;
		return NULL;
	}
}

static int valid_domain(CUpti_CallbackDomain domain)
{
	return domain > CUPTI_CB_DOMAIN_INVALID && domain < CUPTI_CB_DOMAIN_SIZE;
}

/* Flags are read by the threads that play calls while the subscriber may change them: the
 * header asks the subscriber to serialise its own enable calls, not to stop the program. */
static void set_flags(uint8_t *flags, size_t n, uint32_t enable)
{
	for (size_t i = 1; i < n; i++) /* id 0 is each domain's INVALID */
		__atomic_store_n(&flags[i], enable != 0, __ATOMIC_RELAXED);
}

CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
			      CUpti_CallbackDomain domain)
{
	if (!subscriber || subscriber != subscribed || !valid_domain(domain))
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t n;
	uint8_t *flags = domain_flags(subscriber, domain, &n);
	if (flags)
		set_flags(flags, n, enable);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
				CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (!subscriber || subscriber != subscribed || !valid_domain(domain))
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t n;
	uint8_t *flags = domain_flags(subscriber, domain, &n);
	if (!flags)
		return CUPTI_SUCCESS;
	if (cbid == 0 || cbid >= n)
		return CUPTI_ERROR_INVALID_PARAMETER;
	__atomic_store_n(&flags[cbid], enable != 0, __ATOMIC_RELAXED);
	return CUPTI_SUCCESS;
}

/* The subscriber that wants callbacks for (domain, cbid), or NULL. */
static CUpti_SubscriberHandle listener(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	CUpti_SubscriberHandle s = __atomic_load_n(&subscribed, __ATOMIC_ACQUIRE);
	if (!s || !s->callback)
		return NULL;
	size_t n;
	uint8_t *flags = domain_flags(s, domain, &n);
	return flags && cbid < n && __atomic_load_n(&flags[cbid], __ATOMIC_RELAXED) ? s : NULL;
}

/* ---- the activity API ----
 *
 * One lock guards the buffers.  Records go into `cur`; a full buffer moves to the ready list,
 * from which buffers are handed to bufferCompleted.  bufferRequested and bufferCompleted are
 * never called with the lock held: they may call back into CUPTI (cuptiActivityGetNextRecord,
 * cuptiActivityFlushAll...); the timestamp callback may be (it reads a clock).  A buffer
 * obtained while another thread installed one waits as a spare.  With the worker, it alone
 * delivers; a flush asks it and waits for its answer (flush_asked/flush_done tickets).
 */

struct abuf {
	struct abuf *next;
	uint8_t *data;
	size_t size;	    /* as the client gave it */
	size_t max_records; /* 0: as many as fit */
	size_t used;	    /* valid bytes */
	size_t records;
	uint64_t done_at; /* the latest end of its records: complete once the clock is past it */
};

/* Records as CUPTI packs them (PACKED_ALIGNMENT: packed, 8-byte aligned). */
#define RECORD_MAX sizeof(CUpti_ActivityKernel10)
_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0 && sizeof(CUpti_ActivityMemcpy6) % 8 == 0 &&
		   sizeof(CUpti_ActivityMemset4) % 8 == 0 &&
		   sizeof(CUpti_ActivitySynchronization2) % 8 == 0,
	       "CUPTI records are multiples of 8 bytes");
_Static_assert(sizeof(CUpti_ActivityKernel10) >= sizeof(CUpti_ActivityMemcpy6) &&
		   sizeof(CUpti_ActivityKernel10) >= sizeof(CUpti_ActivityMemset4) &&
		   sizeof(CUpti_ActivityKernel10) >= sizeof(CUpti_ActivitySynchronization2),
	       "RECORD_MAX is the largest record");

static struct {
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* to the worker: something to deliver, a flush, a stop */
	pthread_cond_t flushed; /* from the worker: flush_done moved */
	CUpti_BuffersCallbackRequestFunc requested;
	CUpti_BuffersCallbackCompleteFunc completed;
	uint8_t enabled[CUPTI_ACTIVITY_KIND_COUNT];
	struct abuf *cur;
	struct abuf *ready; /* full or sealed, oldest first */
	struct abuf *spare;
	size_t dropped;
	int worker_running, worker_stop;
	pthread_t worker;
	uint64_t flush_asked, flush_done;
	int flush_forced;
} act = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .wake = PTHREAD_COND_INITIALIZER,
    .flushed = PTHREAD_COND_INITIALIZER,
};

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return sizeof(CUpti_ActivitySynchronization2);
	default:
		return 0;
	}
}

static int kind_enabled(CUpti_ActivityKind kind)
{
	return __atomic_load_n(&act.enabled[kind], __ATOMIC_RELAXED);
}

static int fits(const struct abuf *b, size_t len)
{
	return (!b->max_records || b->records < b->max_records) && b->size - b->used >= len;
}

static void append(struct abuf **list, struct abuf *b)
{
	while (*list)
		list = &(*list)->next;
	b->next = NULL;
	*list = b;
}

/* Moves the current buffer to the ready list; under the lock. */
static void seal_current(void)
{
	if (act.cur && act.cur->records)
		append(&act.ready, act.cur);
	else if (act.cur)
		append(&act.spare, act.cur);
	act.cur = NULL;
}

/* Takes the ready buffers that may be handed over (all, or the complete ones); under the
 * lock.  Returns them as a list, oldest first. */
static struct abuf *take_ready(int forced)
{
	uint64_t now = cupti_clock();
	struct abuf *out = NULL, **keep = &act.ready;
	while (*keep) {
		struct abuf *b = *keep;
		if (forced || b->done_at <= now) {
			*keep = b->next;
			append(&out, b);
		} else {
			keep = &b->next;
		}
	}
	return out;
}

/* What a flush hands over; under the lock.  The current buffer goes too when it has
 * records and, for a default flush, they are all complete. */
static struct abuf *take_flush(int forced)
{
	if (act.cur && act.cur->records && (forced || act.cur->done_at <= cupti_clock()))
		seal_current();
	return take_ready(forced);
}

/* Hands buffers to bufferCompleted; without the lock. */
static void deliver(struct abuf *list, CUpti_BuffersCallbackCompleteFunc completed)
{
	while (list) {
		struct abuf *b = list;
		list = b->next;
		if (completed)
			completed(NULL, 0, b->data, b->size, b->used);
		free(b);
	}
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&act.lock);
	while (!act.worker_stop) {
		if (act.flush_done < act.flush_asked) {
			uint64_t ticket = act.flush_asked;
			struct abuf *list = take_flush(act.flush_forced);
			CUpti_BuffersCallbackCompleteFunc completed = act.completed;
			act.flush_forced = 0;
			pthread_mutex_unlock(&act.lock);
			deliver(list, completed);
			pthread_mutex_lock(&act.lock);
			act.flush_done = ticket;
			pthread_cond_broadcast(&act.flushed);
			continue;
		}
		struct abuf *list = take_ready(0);
		if (list) {
			CUpti_BuffersCallbackCompleteFunc completed = act.completed;
			pthread_mutex_unlock(&act.lock);
			deliver(list, completed);
			pthread_mutex_lock(&act.lock);
			continue;
		}
		if (act.ready) { /* full buffers whose work is still running: look again soon */
			struct timespec t;
			clock_gettime(CLOCK_REALTIME, &t);
			t.tv_nsec += 1000000;
			if (t.tv_nsec >= 1000000000) {
				t.tv_sec++;
				t.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&act.wake, &act.lock, &t);
		} else {
			pthread_cond_wait(&act.wake, &act.lock);
		}
	}
	act.worker_running = 0;
	pthread_cond_broadcast(&act.flushed);
	pthread_mutex_unlock(&act.lock);
	return NULL;
}

/* Under the lock. */
static void start_worker(void)
{
	if (!cfg.worker || act.worker_running)
		return;
	act.worker_stop = 0;
	if (pthread_create(&act.worker, NULL, worker_main, NULL) == 0) {
		pthread_detach(act.worker);
		act.worker_running = 1;
	}
}

static int on_worker(void)
{
	return act.worker_running && pthread_equal(pthread_self(), act.worker);
}

/* Asks the client for a buffer; without the lock.  NULL: declined or unusable. */
static struct abuf *request_buffer(CUpti_BuffersCallbackRequestFunc requested)
{
	uint8_t *data = NULL;
	size_t size = 0, max_records = 0;
	requested(&data, &size, &max_records);
	if (!data || size < RECORD_MAX || (uintptr_t)data % 8)
		return NULL;
	struct abuf *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (cfg.max_records && (!max_records || max_records > cfg.max_records))
		max_records = cfg.max_records;
	b->data = data;
	b->size = size;
	b->max_records = max_records;
	return b;
}

/* Stores a record the device completes at `done_at` (CUPTI clock). */
static void put_record(const void *rec, size_t len, uint64_t done_at)
{
	pthread_mutex_lock(&act.lock);
	while (act.completed && !(act.cur && fits(act.cur, len))) {
		seal_current();
		if (act.spare) {
			act.cur = act.spare;
			act.spare = act.cur->next;
			continue;
		}
		CUpti_BuffersCallbackRequestFunc requested = act.requested;
		pthread_mutex_unlock(&act.lock);
		struct abuf *b = request_buffer(requested);
		pthread_mutex_lock(&act.lock);
		if (!b)
			break;
		append(&act.spare, b);
	}
	if (!act.completed || !act.cur || !fits(act.cur, len)) {
		act.dropped++;
		pthread_mutex_unlock(&act.lock);
		return;
	}
	struct abuf *b = act.cur;
	memcpy(b->data + b->used, rec, len);
	b->used += len;
	b->records++;
	if (done_at > b->done_at)
		b->done_at = done_at;
	if (!fits(b, RECORD_MAX))
		seal_current(); /* full: CUPTI hands it over without waiting for a flush */
	struct abuf *list = NULL;
	CUpti_BuffersCallbackCompleteFunc completed = act.completed;
	if (act.ready && act.worker_running)
		pthread_cond_signal(&act.wake);
	else if (act.ready)
		list = take_ready(0);
	pthread_mutex_unlock(&act.lock);
	deliver(list, completed);
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
					   CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
	init();
	if (!funcBufferRequested || !funcBufferCompleted)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&act.lock);
	act.requested = funcBufferRequested;
	act.completed = funcBufferCompleted;
	pthread_mutex_unlock(&act.lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	init();
	if (cfg.no_driver)
		return CUPTI_ERROR_UNKNOWN;
	if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	pthread_mutex_lock(&act.lock);
	__atomic_store_n(&act.enabled[kind], 1, __ATOMIC_RELAXED);
	start_worker();
	pthread_mutex_unlock(&act.lock);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	init();
	if (kind <= CUPTI_ACTIVITY_KIND_INVALID || kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	__atomic_store_n(&act.enabled[kind], 0, __ATOMIC_RELAXED);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	init();
	if (cfg.no_driver)
		return CUPTI_ERROR_UNKNOWN;
	int forced = (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0;
	pthread_mutex_lock(&act.lock);
	if (!act.completed) {
		pthread_mutex_unlock(&act.lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	if (act.worker_running && !on_worker()) {
		uint64_t ticket = ++act.flush_asked;
		act.flush_forced |= forced;
		pthread_cond_signal(&act.wake);
		while (act.worker_running && act.flush_done < ticket)
			pthread_cond_wait(&act.flushed, &act.lock);
		pthread_mutex_unlock(&act.lock);
		return CUPTI_SUCCESS;
	}
	struct abuf *list = take_flush(forced);
	CUpti_BuffersCallbackCompleteFunc completed = act.completed;
	pthread_mutex_unlock(&act.lock);
	deliver(list, completed);
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes,
				       CUpti_Activity **record)
{
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	size_t off = 0;
	if (*record) {
		size_t len = record_size((*record)->kind);
		if (!len)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*record - buffer) + len;
	}
	if (off >= validBufferSizeBytes)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	if (validBufferSizeBytes - off < sizeof(CUpti_Activity))
		return CUPTI_ERROR_INVALID_KIND;
	CUpti_Activity *r = (CUpti_Activity *)(buffer + off);
	size_t len = record_size(r->kind);
	if (!len || validBufferSizeBytes - off < len)
		return CUPTI_ERROR_INVALID_KIND; /* incomplete or unknown */
	*record = r;
	return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
	(void)context;
	(void)streamId;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&act.lock);
	*dropped = act.dropped;
	act.dropped = 0;
	pthread_mutex_unlock(&act.lock);
	return CUPTI_SUCCESS;
}

/* Detaches: what was not flushed is lost, as the header warns. */
CUptiResult cuptiFinalize(void)
{
	pthread_mutex_lock(&subscribe_lock);
	__atomic_store_n(&subscribed, NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&subscribe_lock);
	__atomic_store_n(&ts_callback, NULL, __ATOMIC_RELEASE);
	pthread_mutex_lock(&act.lock);
	for (size_t k = 0; k < CUPTI_ACTIVITY_KIND_COUNT; k++)
		__atomic_store_n(&act.enabled[k], 0, __ATOMIC_RELAXED);
	seal_current();
	for (struct abuf *b = act.ready; b; b = b->next)
		act.dropped += b->records;
	struct abuf *lost = act.ready, *spare = act.spare;
	act.ready = act.spare = NULL;
	act.requested = NULL;
	act.completed = NULL;
	act.worker_stop = 1;
	pthread_cond_broadcast(&act.wake);
	pthread_mutex_unlock(&act.lock);
	deliver(lost, NULL);
	deliver(spare, NULL);
	return CUPTI_SUCCESS;
}

/* ---- the player: a CUDA program as CUPTI reports it ---- */

/* Device times of the mock's GPU (ns). */
#define LAUNCH_LATENCY_NS 5000u /* from submission to the start on the device */
#define WAKEUP_NS	  5000u /* from the end on the device to the waiting host's return */
#define KERNEL_NS	  50000u
#define COPY_NS_PER_KB	  1000u
#define SET_NS		  2000u

static uint32_t correlation_ids;
static int64_t grid_ids;
static int context_made;
static char the_context; /* CUcontext handles are opaque: any distinct address */
static uint64_t device_busy_until;

struct player {
	int thread_no;
	uint32_t stream_id;
	uint64_t busy_until; /* when the thread's stream is done with what it was given */
	unsigned allocations;
};

/* One API call in flight. */
struct api {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	CUpti_CallbackData data;
	uint64_t correlation_data;
	int result; /* cudaError_t or CUresult */
};

static void api_site(struct api *a, CUpti_ApiCallbackSite site)
{
	CUpti_SubscriberHandle s = listener(a->domain, a->cbid);
	a->data.callbackSite = site;
	if (s)
		s->callback(s->userdata, a->domain, a->cbid, &a->data);
}

/* The first runtime call of the process creates the context: it has none at its ENTER. */
static void api_context(struct api *a)
{
	int made = __atomic_load_n(&context_made, __ATOMIC_ACQUIRE);
	a->data.context = made ? (CUcontext)(void *)&the_context : NULL;
	a->data.contextUid = made ? 1 : 0;
}

static void api_enter(struct api *a, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
		      const char *name, const void *params, const char *symbol)
{
	memset(a, 0, sizeof(*a));
	a->domain = domain;
	a->cbid = cbid;
	a->result = -1; /* functionReturnValue is only valid at EXIT */
	a->data.functionName = name;
	a->data.functionParams = params;
	a->data.functionReturnValue = &a->result;
	a->data.symbolName = symbol;
	a->data.correlationData = &a->correlation_data;
	a->data.correlationId = __atomic_add_fetch(&correlation_ids, 1, __ATOMIC_RELAXED);
	api_context(a);
	api_site(a, CUPTI_API_ENTER);
}

static void api_exit(struct api *a, int result)
{
	if (a->domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		__atomic_store_n(&context_made, 1, __ATOMIC_RELEASE);
	api_context(a);
	a->result = result;
	api_site(a, CUPTI_API_EXIT);
}

static void wait_until(uint64_t t)
{
	for (uint64_t now; (now = cupti_clock()) < t;) {
		uint64_t ns = t - now < 1000000 ? t - now : 1000000;
		struct timespec d = {0, (long)ns};
		while (nanosleep(&d, &d) && errno == EINTR)
			;
	}
}

/* Submits `ns` of work to the thread's stream: it starts once the stream is free, a launch
 * latency after now at the earliest.  Returns its start; its end is p->busy_until. */
static uint64_t stream_run(struct player *p, uint64_t ns)
{
	uint64_t start = cupti_clock() + LAUNCH_LATENCY_NS;
	if (start < p->busy_until)
		start = p->busy_until;
	p->busy_until = start + ns;
	uint64_t seen = __atomic_load_n(&device_busy_until, __ATOMIC_RELAXED);
	while (seen < p->busy_until &&
	       !__atomic_compare_exchange_n(&device_busy_until, &seen, p->busy_until, 1,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	return start;
}

/* The host waits for its stream, or for the whole device (every thread's streams). */
static void stream_wait(const struct player *p)
{
	wait_until(p->busy_until + WAKEUP_NS);
}

static void device_wait(void)
{
	wait_until(__atomic_load_n(&device_busy_until, __ATOMIC_RELAXED) + WAKEUP_NS);
}

static void put_kernel(const struct player *p, const struct api *a, const char *name,
		       const unsigned dims[6], uint64_t start)
{
	CUpti_ActivityKind kind = kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
				      ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
				      : CUPTI_ACTIVITY_KIND_KERNEL;
	if (!kind_enabled(kind))
		return;
	CUpti_ActivityKernel10 r;
	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.registersPerThread = 16;
	r.start = start;
	r.end = p->busy_until;
	r.completed = r.end;
	r.deviceId = 0;
	r.contextId = 1;
	r.streamId = p->stream_id;
	r.gridX = (int32_t)dims[0];
	r.gridY = (int32_t)dims[1];
	r.gridZ = (int32_t)dims[2];
	r.blockX = (int32_t)dims[3];
	r.blockY = (int32_t)dims[4];
	r.blockZ = (int32_t)dims[5];
	r.correlationId = a->data.correlationId;
	r.gridId = __atomic_add_fetch(&grid_ids, 1, __ATOMIC_RELAXED);
	/* The name is shared by all records of the kernel, as CUPTI's; queued and submitted
	 * times are not collected by default. */
	r.name = name;
	r.queued = CUPTI_TIMESTAMP_UNKNOWN;
	r.submitted = CUPTI_TIMESTAMP_UNKNOWN;
	r.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
	r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	put_record(&r, sizeof(r), r.end);
}

static void put_memcpy(const struct player *p, const struct api *a, enum cudaMemcpyKind dir,
		       size_t bytes, uint64_t start)
{
	if (!kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY))
		return;
	int htod = dir == cudaMemcpyHostToDevice;
	CUpti_ActivityMemcpy6 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	r.copyKind = htod ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	r.srcKind = htod ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.dstKind = htod ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	r.bytes = bytes;
	r.start = start;
	r.end = p->busy_until;
	r.deviceId = 0;
	r.contextId = 1;
	r.streamId = p->stream_id;
	/* The documentation ties correlationId to the driver call and runtimeCorrelationId to
	 * the runtime call; cudart's copies here make no driver call, so both name it. */
	r.correlationId = a->data.correlationId;
	r.runtimeCorrelationId = a->data.correlationId;
	r.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
	r.copyCount = 1;
	put_record(&r, sizeof(r), r.end);
}

static void put_memset(const struct player *p, const struct api *a, int value, size_t bytes,
		       uint64_t start)
{
	if (!kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET))
		return;
	CUpti_ActivityMemset4 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	r.value = (uint32_t)value;
	r.bytes = bytes;
	r.start = start;
	r.end = p->busy_until;
	r.deviceId = 0;
	r.contextId = 1;
	r.streamId = p->stream_id;
	r.correlationId = a->data.correlationId;
	r.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	put_record(&r, sizeof(r), r.end);
}

/* A context synchronisation: no stream, no event (CUPTI_SYNCHRONIZATION_INVALID_VALUE). */
static void put_context_sync(const struct api *a, uint64_t start, uint64_t end)
{
	if (!kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION))
		return;
	CUpti_ActivitySynchronization2 r;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	r.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	r.start = start;
	r.end = end;
	r.correlationId = a->data.correlationId;
	r.contextId = 1;
	r.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	r.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	r.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	r.returnValue = CUDA_SUCCESS;
	put_record(&r, sizeof(r), r.end);
}

static void *cuda_malloc(struct player *p, size_t bytes)
{
	void *ptr = NULL;
	cudaMalloc_v3020_params rt = {&ptr, bytes};
	struct api a, d;
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
		  "cudaMalloc", &rt, NULL);
	CUdeviceptr dptr = 0;
	cuMemAlloc_v2_params drv = {&dptr, bytes};
	api_enter(&d, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
		  "cuMemAlloc_v2", &drv, NULL);
	dptr = 0x7f4a00000000ull + ((CUdeviceptr)p->thread_no << 28) +
	       ((CUdeviceptr)p->allocations++ << 21);
	api_exit(&d, CUDA_SUCCESS);
	ptr = (void *)(uintptr_t)dptr;
	api_exit(&a, cudaSuccess);
	return ptr;
}

static void cuda_free(void *ptr)
{
	cudaFree_v3020_params rt = {ptr};
	cuMemFree_v2_params drv = {(CUdeviceptr)(uintptr_t)ptr};
	struct api a, d;
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
		  "cudaFree", &rt, NULL);
	device_wait(); /* cudaFree synchronises the device */
	api_enter(&d, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
		  "cuMemFree_v2", &drv, NULL);
	api_exit(&d, CUDA_SUCCESS);
	api_exit(&a, cudaSuccess);
}

static void cuda_memcpy(struct player *p, void *dst, const void *src, size_t bytes,
			enum cudaMemcpyKind dir)
{
	cudaMemcpy_v3020_params rt = {dst, src, bytes, dir};
	struct api a;
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
		  "cudaMemcpy", &rt, NULL);
	uint64_t start = stream_run(p, (bytes + 1023) / 1024 * COPY_NS_PER_KB);
	put_memcpy(p, &a, dir, bytes, start);
	stream_wait(p); /* returns once the copy is done (pageable host memory) */
	api_exit(&a, cudaSuccess);
}

static void cuda_memset(struct player *p, void *ptr, int value, size_t bytes)
{
	cudaMemset_v3020_params rt = {ptr, value, bytes};
	struct api a;
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
		  "cudaMemset", &rt, NULL);
	put_memset(p, &a, value, bytes, stream_run(p, SET_NS)); /* asynchronous to the host */
	api_exit(&a, cudaSuccess);
}

static void cuda_device_synchronize(void)
{
	struct api a;
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, "cudaDeviceSynchronize",
		  NULL, NULL); /* no parameters: no params struct */
	uint64_t start = cupti_clock();
	device_wait();
	put_context_sync(&a, start, cupti_clock());
	api_exit(&a, cudaSuccess);
}

/* A <<<>>> launch as CUDA 13's stubs make it (__cudaLaunchKernel, its parameters laid out
 * as cudaLaunchKernel's) on the per-thread default stream. */
static void cuda_launch(struct player *p, const void *kernel, const char *name, dim3 grid,
			dim3 block, void **args)
{
	cudaLaunchKernel_v7000_params rt = {kernel, grid, block, args, 0, cudaStreamPerThread};
	struct api a, conf;
	/* CUDA 13 reports the stub's own entry points as runtime calls too (cbids 502, 503):
	 * the launch site pushes the configuration, the stub pops it, then launches. */
	api_enter(&conf, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID___cudaPushCallConfiguration_v13000,
		  "__cudaPushCallConfiguration", NULL, NULL);
	api_exit(&conf, cudaSuccess);
	api_enter(&conf, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID___cudaPopCallConfiguration_v13000,
		  "__cudaPopCallConfiguration", NULL, NULL);
	api_exit(&conf, cudaSuccess);
	api_enter(&a, CUPTI_CB_DOMAIN_RUNTIME_API,
		  CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000, "__cudaLaunchKernel", &rt,
		  name);
	const unsigned dims[6] = {grid.x, grid.y, grid.z, block.x, block.y, block.z};
	put_kernel(p, &a, name, dims, stream_run(p, KERNEL_NS));
	api_exit(&a, cudaSuccess);
}

static void cu_launch_kernel(struct player *p, CUfunction f, const char *name,
			     const unsigned dims[6], void **args)
{
	cuLaunchKernel_params drv = {.f = f,
				     .gridDimX = dims[0],
				     .gridDimY = dims[1],
				     .gridDimZ = dims[2],
				     .blockDimX = dims[3],
				     .blockDimY = dims[4],
				     .blockDimZ = dims[5],
				     .hStream = CU_STREAM_PER_THREAD,
				     .kernelParams = args};
	struct api a;
	api_enter(&a, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
		  "cuLaunchKernel", &drv, name);
	put_kernel(p, &a, name, dims, stream_run(p, KERNEL_NS / 2));
	api_exit(&a, CUDA_SUCCESS);
}

/* Kernel handles, as __cudaGetKernel and cuModuleGetFunction would give them. */
static const char add_kernel = 0, scale_function = 0;

#define VECTOR_BYTES 4096

static void vector_add(struct player *p)
{
	float host[VECTOR_BYTES / sizeof(float)] = {0};
	int n = VECTOR_BYTES / sizeof(float);
	float factor = 2;
	void *a = cuda_malloc(p, VECTOR_BYTES);
	void *b = cuda_malloc(p, VECTOR_BYTES);
	cuda_memcpy(p, a, host, VECTOR_BYTES, cudaMemcpyHostToDevice);
	void *add_args[] = {&b, &a, &n};
	cuda_launch(p, &add_kernel, "_Z3addPfPKfi", (dim3){4, 1, 1}, (dim3){256, 1, 1}, add_args);
	cuda_device_synchronize();
	cuda_memcpy(p, host, b, VECTOR_BYTES, cudaMemcpyDeviceToHost);
	cuda_memset(p, a, 0, VECTOR_BYTES);
	cuda_free(a); /* b is never freed: the leak the tests look for */
	void *scale_args[] = {&b, &factor, &n};
	const unsigned scale_dims[6] = {8, 1, 1, 128, 1, 1};
	cu_launch_kernel(p, (CUfunction)(void *)&scale_function, "_Z5scalePfi", scale_dims,
			 scale_args);
}

static const struct {
	const char *name;
	void (*play)(struct player *p);
} scenarios[] = {
    {"vector_add", vector_add},
};

/*
 * Two entry points of a shared cudart, for a program that calls them through libtrace's
 * wrappers (the mock preloaded after libtrace.so, cupti_app's CUPTI_APP_CUDART): each plays
 * its call as CUPTI reports it, as player 255.
 */
static struct player through_cudart = {255, 255 + 7, 0, 0};

cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t bytes)
{
	init();
	*ptr = cuda_malloc(&through_cudart, bytes);
	return cudaSuccess;
}

cudaError_t CUDARTAPI cudaFree(void *ptr)
{
	init();
	cuda_free(ptr);
	return cudaSuccess;
}

int mock_cupti_play(const char *scenario, int thread_no)
{
	init();
	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (scenario && strcmp(scenario, scenarios[i].name) == 0) {
			struct player p = {thread_no, (uint32_t)thread_no + 7, 0, 0};
			scenarios[i].play(&p);
			return 0;
		}
	return -1;
}
