// SPDX-License-Identifier: BSD-3-Clause
/*
 * cupti.c - module "cuda" through CUPTI: every CUDA runtime and driver call on the host,
 * and what the device did (kernels, copies, sets, synchronisation), joined by CUPTI's
 * correlation ids.  CUPTI is the primary layer because nvcc links cudart statically by
 * default (symbol wrappers see nothing there); device times are put on the host's
 * CLOCK_MONOTONIC (see "Device times" below and the README's CUDA section).
 *
 * This file: loading and starting CUPTI, the flushes; api.c: the API callbacks; activity.c:
 * the activity buffers and the device clock (private.h is what they share).
 *
 * Loading.  libcupti is opened with dlopen (LIBTRACE_CUPTI_LIB, else the one beside the
 * program's libcudart or in that toolkit's extras/CUPTI/lib64, else libcupti.so.13, .12,
 * unversioned on the loader's path, else in /usr/local/cuda's extras/CUPTI/lib64 or lib64)
 * and bound with dlsym: no link dependency, and a program without CUDA never loads it.  It is
 * started when the process has CUDA: libcudart or libcuda loaded at start (cupti_init, from the
 * constructor), or dlopened later (a static cudart, nvcc's default, opens libcuda.so.1 inside its
 * first call).  Any failure (no driver: cuptiSubscribe says 999; another tool subscribed already:
 * 39) is written to the meta file once (`gpu_off cupti ...`) and CUDA stays with the cudart
 * wrappers (cuda.c).  While CUPTI records, those pass calls through.
 *
 * API callbacks arrive on the calling thread at the call's ENTER and EXIT.  Runtime calls
 * are recorded (GPU_ENTER/LEAVE, LT_GPU_CUPTI_RUNTIME); a driver call is recorded only
 * when no runtime call is open on the thread (a program or library using the driver API):
 * the driver calls cudart makes inside a runtime call are its implementation.  Their
 * correlation ids are noted (lt_cupti_corr_alias) because CUPTI gives some activity records (sets,
 * copies without a runtime id) the driver call's id.  The guard stays taken from the
 * outermost ENTER to its EXIT, as across a wrapped call: what the runtime does inside is
 * not the program's.
 *
 * Activity records arrive in buffers we lend CUPTI, handed back full, at a flush, or at
 * exit (cuptiActivityFlushAll), on whichever thread CUPTI chooses: that thread writes them
 * as GPU_ACTIVITY records; the converter puts them on their streams.  Device times: CUPTI
 * stamps records with our CLOCK_MONOTONIC when it takes a timestamp callback (registered
 * before any activity kind is enabled, as CUPTI requires); otherwise its own clock
 * (CLOCK_REALTIME on Linux) is mapped linearly between paired readings (host, CUPTI) taken
 * at start and at every buffer (Score-P's scheme), and a stream's times never go
 * backwards (the converter clamps).  Records CUPTI dropped become LOST records.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "private.h"

/* CUPTI records CUDA for this process (the cuda claim says so to the cudart wrappers). */
static int active;

static void set_active(int on)
{
	active = on;
	lt_claim(LT_MOD_CUDA, on);
}

/* The CUPTI functions we use, bound with dlsym. */
struct lt_cupti_functions lt_cupti;

static int tried; /* start_once ran (once per process) */
int lt_cupti_ended;
int lt_cupti_forked;

static void cupti_flush(void);
static void *lib;
static CUpti_SubscriberHandle subscriber;

static const char *result_string(CUptiResult r)
{
	const char *s = NULL;
	if (lt_cupti.cuptiGetResultString)
		lt_cupti.cuptiGetResultString(r, &s);
	return s ? s : "unknown error";
}

/* ---- start ---- */

static void off(const char *why)
{
	lt_meta_escaped(LT_META_GPU_OFF " cupti", why);
	lt_info("CUDA device activity not recorded: %s", why);
}

static int has_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name, *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (!strncmp(base, "libcudart.so", 12) || !strncmp(base, "libcuda.so", 10)) {
		if (!strncmp(base, "libcudart.so", 12) && base > name)
			snprintf(data, PATH_MAX, "%.*s", (int)(base - name), name);
		else if (!*(char *)data)
			strcpy(data, "-");
	}
	return 0;
}

static void *open_cupti(char *tried_list, size_t len)
{
	void *h = NULL;
	const char *lib_setting = lt_setting_str("LIBTRACE_CUPTI_LIB");
	if (lib_setting[0]) {
		snprintf(tried_list, len, "%s", lib_setting);
		return dlopen(lib_setting, RTLD_NOW | RTLD_LOCAL);
	}
	char dir[PATH_MAX] = "";
	dl_iterate_phdr(has_lib, dir);
	/* Beside the program's libcudart and in that toolkit's extras (where a toolkit keeps
	 * CUPTI), on the loader's path (""), then in the toolkit's default place. */
	char extras[PATH_MAX + 32];
	const char *dirs[5];
	size_t nd = 0;
	if (dir[0] && dir[0] != '-') {
		snprintf(extras, sizeof(extras), "%s../extras/CUPTI/lib64/", dir);
		dirs[nd++] = dir;
		dirs[nd++] = extras;
	}
	dirs[nd++] = "";
	dirs[nd++] = "/usr/local/cuda/extras/CUPTI/lib64/";
	dirs[nd++] = "/usr/local/cuda/lib64/";
	static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
	char path[2 * PATH_MAX];
	size_t used = 0;
	for (size_t d = 0; d < nd && !h; d++) {
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !h; i++) {
			snprintf(path, sizeof(path), "%s%s", dirs[d], names[i]);
			int n =
			    snprintf(tried_list + used, len - used, "%s%s", used ? ", " : "", path);
			if (n > 0 && (size_t)n < len - used)
				used += (size_t)n;
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
	}
	return h;
}

void lt_cupti_flush_at_exit(void)
{
	cupti_flush();
	lt_cupti_ended = 1; /* CUPTI may be gone after this; its callbacks, if any, still record */
}

/* CUDA does not work in the child of a fork (CUPTI's threads stayed in the parent, its
 * locks may be held there): nothing is asked of CUPTI, the cudart wrappers record again. */
static void after_fork_child(void)
{
	lt_cupti_forked = 1;
	set_active(0);
}

static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
					   CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET,
					   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};

static void start(void)
{
	char names[2048] = "";
	lib = open_cupti(names, sizeof(names));
	if (!lib) {
		char why[2200];
		snprintf(why, sizeof(why), "cannot load CUPTI (tried %s)", names);
		off(why);
		return;
	}
#define CUPTI_BIND(name, params) lt_cupti.name = dlsym(lib, #name);
	CUPTI_FUNCTIONS(CUPTI_BIND)
#undef CUPTI_BIND
	(void)dlerror();
	if (!lt_cupti.cuptiGetVersion || !lt_cupti.cuptiSubscribe || !lt_cupti.cuptiEnableDomain ||
	    !lt_cupti.cuptiActivityRegisterCallbacks || !lt_cupti.cuptiActivityEnable ||
	    !lt_cupti.cuptiActivityFlushAll || !lt_cupti.cuptiActivityGetNextRecord ||
	    !lt_cupti.cuptiGetTimestamp || !lt_cupti.cuptiUnsubscribe) {
		off("the CUPTI library lacks functions we need");
		return;
	}
	size_t alias_bytes = ALIAS_SIZE * (sizeof(uint64_t) + sizeof(uint32_t));
	void *alias =
	    mmap(NULL, alias_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alias == MAP_FAILED) {
		off("no memory for the correlation tables");
		return;
	}
	lt_cupti_corr_alias = alias;
	lt_cupti_paused_corr = (uint32_t *)(lt_cupti_corr_alias + ALIAS_SIZE);
	uint32_t version = 0;
	lt_cupti.cuptiGetVersion(&version);
	/* Before any activity kind is enabled, as CUPTI requires. */
	CUptiResult r = lt_cupti.cuptiActivityRegisterTimestampCallback
			    ? lt_cupti.cuptiActivityRegisterTimestampCallback(lt_cupti_host_clock)
			    : CUPTI_ERROR_NOT_SUPPORTED;
	if (r != CUPTI_SUCCESS) {
		lt_cupti_sync_map.on = 1;
		lt_cupti_sync_point(1);
	}
	r = lt_cupti.cuptiSubscribe(&subscriber, lt_cupti_on_callback, NULL);
	if (r != CUPTI_SUCCESS) {
		char why[256];
		snprintf(why, sizeof(why), "cuptiSubscribe: %d %s", (int)r, result_string(r));
		off(why);
		return;
	}
	set_active(1); /* from here on CUPTI sees the calls: the wrappers step aside */
	const char *failed = NULL;
	if ((r = lt_cupti.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API)) ||
	    (r = lt_cupti.cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API)))
		failed = "cuptiEnableDomain";
	else if ((r = lt_cupti.cuptiActivityRegisterCallbacks(lt_cupti_buffer_requested,
							      lt_cupti_buffer_completed)))
		failed = "cuptiActivityRegisterCallbacks";
	for (size_t i = 0; !failed && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if ((r = lt_cupti.cuptiActivityEnable(kinds[i])))
			failed = "cuptiActivityEnable";
	if (failed) {
		lt_cupti.cuptiUnsubscribe(subscriber);
		set_active(0);
		char why[256];
		snprintf(why, sizeof(why), "%s: %d %s", failed, (int)r, result_string(r));
		off(why);
		return;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	lt_meta_line(LT_META_GPU " cupti %u", version);
	lt_meta_line(LT_META_GPU_CLOCK " %s", lt_cupti_sync_map.on ? "sync" : "callback");
	lt_info("CUDA recorded through CUPTI %u", version);
}

static void start_once(void)
{
	if (__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL))
		return;
	if (lt_setting("LIBTRACE_CUPTI") == 1 /* off */ ||
	    (!(lt_active & LT_MOD_CUDA) && !lt_recording_paused(LT_MOD_CUDA)))
		return; /* (started paused, CUPTI must be there when recording resumes) */
	/* Loading CUPTI is the tracer's doing, not the program's: nothing it does is traced. */
	struct lt_thread *t = lt_self;
	long guard = t ? t->guard : 0;
	if (t)
		lt_guard_take(t);
	lt_tls_guard++;
	int in_runtime = lt_in_runtime;
	lt_in_runtime = 1; /* the threads CUPTI starts are its own */
	start();
	lt_in_runtime = in_runtime;
	lt_tls_guard--;
	if (t)
		t->guard = guard;
}

static void cupti_init(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	char dir[PATH_MAX] = "";
	dl_iterate_phdr(has_lib, dir);
	if (dir[0])
		start_once();
}

static void cupti_dlopened(const char *name, void *handle)
{
	if (!name || tried || __atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	int cudart = !strncmp(base, "libcudart.so", 12), driver = !strncmp(base, "libcuda.so", 10);
	if (handle && (cudart || driver)) {
		start_once();
	} else if (driver && !__atomic_exchange_n(&tried, 1, __ATOMIC_ACQ_REL)) {
		/* A CUDA runtime looked for the driver and found none: calls of a static cudart
		 * (nvcc's default) are invisible without it, those of a shared one are wrapped. */
		off("no CUDA driver (libcuda.so.1 not found): only calls to a shared libcudart "
		    "are recorded");
	}
}

static void cupti_flush(void)
{
	if (!active || lt_cupti_ended || lt_cupti_forked || lt_cupti_cs.flushing)
		return;
	struct lt_thread *t = lt_self;
	long guard = t ? t->guard : 0;
	if (t)
		lt_guard_take(t);
	lt_tls_guard++;
	lt_cupti_cs.flushing = 1;
	lt_cupti.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	lt_cupti_cs.flushing = 0;
	lt_tls_guard--;
	if (t)
		t->guard = guard;
}

/*
 * The program's own CUPTI subscriber (a profiler it runs: PyTorch's, a tool of its own).
 * CUPTI takes one subscriber per process, and the program comes first: libtrace.so exports
 * cuptiSubscribe, and a call of the program's that reaches it while CUPTI records for us
 * hands CUPTI over.  New calls are no longer recorded through CUPTI, the ones under way end
 * (100 ms at most), our device records are flushed, our activity kinds disabled, and we
 * unsubscribe; from then on the cudart wrappers record (a shared cudart), and the meta file
 * says when.  Then the program's call goes on to its libcupti.
 */
static void hand_over(void)
{
	if (!active || lt_cupti_forked || lt_cupti_ended)
		return;
	__atomic_store_n(&lt_cupti_handing_over, 1, __ATOMIC_SEQ_CST);
	int mine = lt_cupti_cs.n != 0; /* (this thread's own call, if it is in one) */
	uint64_t until = lt_clock_mono_ns() + 100000000;
	while (__atomic_load_n(&lt_cupti_in_calls, __ATOMIC_SEQ_CST) > mine &&
	       lt_clock_mono_ns() < until) {
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
	}
	cupti_flush();
	for (size_t i = 0; lt_cupti.cuptiActivityDisable && i < sizeof(kinds) / sizeof(kinds[0]);
	     i++)
		lt_cupti.cuptiActivityDisable(kinds[i]);
	lt_cupti.cuptiUnsubscribe(subscriber);
	set_active(0);
	off("handed over to the program's own CUPTI subscriber: from here on the program's");
}

LT_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber_out,
					      CUpti_CallbackFunc callback, void *userdata)
{
	static CUptiResult(CUPTIAPI * real)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	if (!real)
		real = lt_dlsym_next("cuptiSubscribe", NULL);
	if (!real)
		real =
		    lt_cupti.cuptiSubscribe; /* found through our symbol: the library we loaded */
	if (!real)
		return CUPTI_ERROR_NOT_INITIALIZED;
	hand_over();
	return real(subscriber_out, callback, userdata);
}

LT_MODULE(cupti) = {
    .name = "cupti",
    .bit = LT_MOD_CUDA,
    .order = 61,
    .constructor = cupti_init,
    .dlopened = cupti_dlopened,
    .before_exec = cupti_flush,
    .end_flush = cupti_flush,
};
