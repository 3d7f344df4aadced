// SPDX-License-Identifier: BSD-3-Clause
/*
 * module.c - the registered modules (the linker section lt_modules, see LT_MODULE) and the
 * calls of their hooks, plus the few facts modules share through the core: claims, the
 * try-lock flag, the thread-moved notice and the counters' hot-path hook.
 *
 * The table is read, never written, so it needs no constructor; its order is worked out
 * once, by the first caller (init, nearly always), and published with a release store.
 */
#include <sched.h>

#include "lt.h"

unsigned lt_claims;
__thread int lt_in_try LT_TLS;
__thread int lt_in_runtime LT_TLS;
int lt_track_moves;
unsigned lt_counter_modules;
void (*lt_counter_read)(struct lt_thread *t);

static const struct lt_module *sorted[LT_MODULES_MAX];
static size_t nsorted;
static int sort_state; /* 0: to do, 1: under way, 2: done */

/* The modules in hook order.  Returns their count; *list points at them. */
static size_t modules(const struct lt_module *const **list)
{
	*list = sorted;
	if (likely(__atomic_load_n(&sort_state, __ATOMIC_ACQUIRE) == 2))
		return nsorted;
	int expected = 0;
	if (!__atomic_compare_exchange_n(&sort_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&sort_state, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return nsorted;
	}
	size_t n = 0;
	const struct lt_module *m = __start_lt_modules;
	for (; m && m < __stop_lt_modules; m++) {
		if (n == LT_MODULES_MAX) {
			/* Their per-thread words would not fit: left out, said once. */
			lt_warn("more than %d modules: %s and the ones after it are off",
				LT_MODULES_MAX, m->name);
			break;
		}
		/* Insertion sort, stable: equal orders keep link order. */
		size_t i = n++;
		for (; i > 0 && sorted[i - 1]->order > m->order; i--)
			sorted[i] = sorted[i - 1];
		sorted[i] = m;
	}
	nsorted = n;
	__atomic_store_n(&sort_state, 2, __ATOMIC_RELEASE);
	return n;
}

/* Calls hook `h` of every module that has it, with the arguments that follow. */
#define EACH(h, ...)                                       \
	do {                                               \
		const struct lt_module *const *list_;      \
		size_t n_ = modules(&list_);               \
		for (size_t i_ = 0; i_ < n_; i_++)         \
			if (list_[i_]->h)                  \
				list_[i_]->h(__VA_ARGS__); \
	} while (0)

/* The preflight hooks of the modules LIBTRACE_MODULES has on (and of those without a bit). */
void lt_modules_preflight(void)
{
	const struct lt_module *const *list;
	size_t n = modules(&list);
	for (size_t i = 0; i < n; i++)
		if (list[i]->preflight && (!list[i]->bit || (lt_cfg.modules & list[i]->bit)))
			list[i]->preflight();
}

void lt_modules_constructor(void)
{
	EACH(constructor);
}

void lt_modules_meta(void)
{
	EACH(meta);
}

void lt_modules_start(int forked)
{
	EACH(start, forked);
}

void lt_modules_started(int forked)
{
	EACH(started, forked);
}

/* The process has had a second thread (0 again in the child of fork, which has one). */
static int threaded;

void lt_modules_fork_child(void)
{
	__atomic_store_n(&threaded, 0, __ATOMIC_RELEASE);
	EACH(fork_child);
}

void lt_process_threaded(void)
{
	if (__atomic_load_n(&threaded, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&threaded, 1, __ATOMIC_ACQ_REL))
		return;
	/* Before init is over, init calls the hooks once it is (a hook may run twice then). */
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	lt_tls_guard++;
	EACH(threaded);
	lt_tls_guard--;
}

void lt_modules_threaded_after_init(void)
{
	if (__atomic_load_n(&threaded, __ATOMIC_ACQUIRE))
		EACH(threaded);
}

void lt_dlopened(const char *name, void *handle)
{
	EACH(dlopened, name, handle);
}

void lt_modules_pause(void)
{
	EACH(pause);
}

void lt_modules_resume(void)
{
	EACH(resume);
}

void lt_modules_before_exec(void)
{
	EACH(before_exec);
}

void lt_modules_end_flush(void)
{
	EACH(end_flush);
}

void lt_modules_end_stop(int wait)
{
	EACH(end_stop, wait);
}

void lt_modules_thread_start(struct lt_thread *t)
{
	EACH(thread_start, t);
}

void lt_modules_thread_end(struct lt_thread *t)
{
	EACH(thread_end, t);
}

void lt_thread_moved(struct lt_thread *t)
{
	EACH(thread_moved, t);
}

int lt_modules_end_trace(void)
{
	const struct lt_module *const *list;
	size_t n = modules(&list);
	for (size_t i = 0; i < n; i++)
		if (list[i]->ends_trace && list[i]->ends_trace())
			return 1;
	return 0;
}

void lt_claim(unsigned mod, int on)
{
	if (on)
		__atomic_or_fetch(&lt_claims, mod, __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&lt_claims, ~mod, __ATOMIC_RELAXED);
}
