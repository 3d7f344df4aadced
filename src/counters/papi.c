// SPDX-License-Identifier: BSD-3-Clause
/*
 * papi.c - per-thread PAPI counters (LIBTRACE_PAPI_EVENTS), read at the region enter and
 * leave records of the modules in LIBTRACE_PAPI_MODULES and written as COUNTERS records.
 *
 * libpapi is loaded with dlopen(RTLD_LOCAL) at init, and only when events were asked for:
 * the library's only link dependency stays libc.  Each event is checked once at init (its
 * name known, and countable on this machine); one that is not is named once on stderr and
 * left out, and the run goes on with the others.  A thread's event set is made at its first
 * reading and torn down at its end.  A forked child does not inherit counting (the parent's
 * event sets count the parent's threads): counters are off there, said once.
 *
 * A reading is a system call where counters are perf_event file descriptors (~0.8 us on
 * this VM): never on the records between region boundaries.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/module.h"

#define PAPI_OK		 0
#define PAPI_NULL	 (-1)
#define PAPI_VER_CURRENT 0x07000000 /* PAPI 7.0: PAPI_VERSION & 0xffff0000 (papi.h) */
#define LT_PAPI_MAX	 16	    /* COUNTERS' mask is 16 bits */

struct lt_papi {
	int set; /* PAPI event set, PAPI_NULL when the thread could not count */
};

extern const struct lt_module lt_module_papi;

static struct {
	int (*library_init)(int);
	int (*thread_init)(unsigned long (*)(void));
	int (*create_eventset)(int *);
	int (*add_event)(int, int);
	int (*event_name_to_code)(const char *, int *);
	int (*start)(int);
	int (*read)(int, long long *);
	int (*stop)(int, long long *);
	int (*cleanup_eventset)(int);
	int (*destroy_eventset)(int *);
	int (*unregister_thread)(void);
	char *(*strerror)(int);
} papi;

static int codes[LT_PAPI_MAX];
static unsigned nevents;
static int thread_failed; /* a thread could not start its event set: said once */

static unsigned long thread_id(void)
{
	return (unsigned long)pthread_self();
}

static const char *err(int rc)
{
	const char *s = papi.strerror ? papi.strerror(rc) : NULL;
	return s ? s : "unknown error";
}

static int load(void)
{
	static const char *const names[] = {"libpapi.so.7.0", "libpapi.so.7", "libpapi.so"};
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		lt_warn("PAPI: cannot load libpapi (%s); LIBTRACE_PAPI_EVENTS ignored", dlerror());
		return -1;
	}
#define SYM(field, name)                                                                       \
	do {                                                                                   \
		*(void **)&papi.field = dlsym(h, name);                                        \
		if (!papi.field) {                                                             \
			lt_warn("PAPI: libpapi lacks %s; LIBTRACE_PAPI_EVENTS ignored", name); \
			return -1;                                                             \
		}                                                                              \
	} while (0)
	SYM(strerror, "PAPI_strerror");
	SYM(library_init, "PAPI_library_init");
	SYM(thread_init, "PAPI_thread_init");
	SYM(create_eventset, "PAPI_create_eventset");
	SYM(add_event, "PAPI_add_event");
	SYM(event_name_to_code, "PAPI_event_name_to_code");
	SYM(start, "PAPI_start");
	SYM(read, "PAPI_read");
	SYM(stop, "PAPI_stop");
	SYM(cleanup_eventset, "PAPI_cleanup_eventset");
	SYM(destroy_eventset, "PAPI_destroy_eventset");
	SYM(unregister_thread, "PAPI_unregister_thread");
#undef SYM
	int rc = papi.library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		lt_warn("PAPI: PAPI_library_init failed (%s; libtrace speaks PAPI 7.0); "
			"LIBTRACE_PAPI_EVENTS ignored",
			rc > 0 ? "another version" : err(rc));
		return -1;
	}
	rc = papi.thread_init(thread_id);
	if (rc != PAPI_OK) {
		lt_warn("PAPI: PAPI_thread_init failed (%s); LIBTRACE_PAPI_EVENTS ignored",
			err(rc));
		return -1;
	}
	return 0;
}

static void destroy(int *set)
{
	long long v[LT_PAPI_MAX];
	papi.stop(*set, v);
	papi.cleanup_eventset(*set);
	papi.destroy_eventset(set);
	*set = PAPI_NULL;
}

static void papi_read(struct lt_thread *t);

/* At init, before any thread records: the events checked, lt_counter_modules set. */
static void papi_start(int forked)
{
	if (forked)
		return; /* papi_fork_child said it: counters are off there */
	const char *events = lt_setting_str("LIBTRACE_PAPI_EVENTS");
	unsigned modules = (unsigned)lt_setting("LIBTRACE_MODULES");
	unsigned papi_modules = (unsigned)lt_setting("LIBTRACE_PAPI_MODULES");
	char list[1024], names[LT_PAPI_MAX][256];
	if (!events[0] || !(papi_modules & modules) || strlen(events) >= sizeof(list))
		return;
	if (load())
		return;
	/* Every event on its own first, then together: a probe set in this thread. */
	int probe = PAPI_NULL;
	int rc = papi.create_eventset(&probe);
	if (rc != PAPI_OK) {
		lt_warn("PAPI: cannot create an event set (%s); LIBTRACE_PAPI_EVENTS ignored",
			err(rc));
		return;
	}
	strcpy(list, events);
	char *save = NULL;
	for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int code;
		if (nevents == LT_PAPI_MAX) {
			lt_warn("PAPI: more than %d events; %s and the ones after it left out",
				LT_PAPI_MAX, name);
			break;
		}
		rc = papi.event_name_to_code(name, &code);
		if (rc != PAPI_OK) {
			lt_warn("PAPI: event %s: unknown here (%s); left out, the run goes on",
				name, err(rc));
			continue;
		}
		rc = papi.add_event(probe, code);
		if (rc != PAPI_OK) {
			lt_warn("PAPI: event %s cannot be counted on this machine (%s); left out, "
				"the run goes on",
				name, err(rc));
			continue;
		}
		codes[nevents] = code;
		snprintf(names[nevents], sizeof(names[0]), "%s", name);
		nevents++;
	}
	if (nevents && (rc = papi.start(probe)) != PAPI_OK) {
		lt_warn("PAPI: the events %s cannot be counted together (%s); counters off", events,
			err(rc));
		nevents = 0;
	}
	destroy(&probe);
	if (!nevents) {
		lt_warn("PAPI: no event of LIBTRACE_PAPI_EVENTS=%s can be counted here; "
			"counters off",
			events);
		return;
	}
	for (unsigned i = 0; i < nevents; i++) {
		char idx[16];
		snprintf(idx, sizeof(idx), "%u", i);
		lt_meta_escaped2(LT_META_PAPI, idx, names[i]);
		lt_meta_line(LT_META_PAPI_CODE " %u %#x", i, (unsigned)codes[i]);
	}
	lt_counter_read = papi_read;
	lt_counter_modules = papi_modules & modules;
	char mods[128];
	size_t n = 0;
	for (size_t m = 0; lt_module_names[m] && n < sizeof(mods); m++)
		if (lt_counter_modules & (1u << m))
			n += (size_t)snprintf(mods + n, sizeof(mods) - n, "%s%s", n ? "," : "",
					      lt_module_names[m]);
	lt_meta_line(LT_META_PAPI_MODULES " %s", n ? mods : "none");
}

/* The thread's event set, made at its first reading. */
static struct lt_papi *thread_start(struct lt_thread *t)
{
	struct lt_papi *pp = malloc(sizeof(*pp));
	if (!pp)
		return NULL;
	pp->set = PAPI_NULL;
	int rc = papi.create_eventset(&pp->set);
	for (unsigned i = 0; rc == PAPI_OK && i < nevents; i++)
		rc = papi.add_event(pp->set, codes[i]);
	if (rc == PAPI_OK)
		rc = papi.start(pp->set);
	if (rc != PAPI_OK) {
		if (!__atomic_exchange_n(&thread_failed, 1, __ATOMIC_RELAXED))
			lt_warn("PAPI: thread %u cannot count its events (%s); it has no readings",
				t->index, err(rc));
		if (pp->set != PAPI_NULL) {
			papi.cleanup_eventset(pp->set);
			papi.destroy_eventset(&pp->set);
		}
		pp->set = PAPI_NULL;
	}
	lt_local(t, &lt_module_papi)->p = pp;
	return pp;
}

/* lt_counter_read: a COUNTERS record of t's events. */
static void papi_read(struct lt_thread *t)
{
	struct lt_papi *pp = lt_local(t, &lt_module_papi)->p;
	if (unlikely(!pp) && !(pp = thread_start(t)))
		return;
	long long v[LT_PAPI_MAX];
	if (pp->set == PAPI_NULL || papi.read(pp->set, v) != PAPI_OK)
		return;
	uint64_t *p = lt_reserve(t, 2 + nevents);
	lt_rec_put(p, lt_now(), LT_REC_COUNTERS, 2 + nevents, (1u << nevents) - 1, 0);
	for (unsigned i = 0; i < nevents; i++)
		p[2 + i] = (uint64_t)v[i];
	lt_commit(t);
}

static void papi_thread_end(struct lt_thread *t)
{
	struct lt_papi *pp = lt_local(t, &lt_module_papi)->p;
	if (!pp)
		return;
	lt_local(t, &lt_module_papi)->p = NULL;
	if (pp->set != PAPI_NULL) {
		destroy(&pp->set);
		papi.unregister_thread();
	}
	free(pp);
}

static void papi_fork_child(void)
{
	if (!lt_counter_modules)
		return;
	lt_counter_modules = 0;
	lt_warn("PAPI: counters are off in the forked child %d (the event sets count the "
		"parent's threads)",
		(int)getpid());
}

LT_MODULE(papi) = {
    .name = "papi",
    .order = 80,
    .start = papi_start,
    .fork_child = papi_fork_child,
    .thread_end = papi_thread_end,
};
