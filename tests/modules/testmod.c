// SPDX-License-Identifier: BSD-3-Clause
/*
 * testmod.c - a test-only module: the whole of what adding a module takes, this file plus
 * the line that adds it to a build (tests/CMakeLists.txt, trace_testmod).  It wraps
 * testmod_work() of libtestmod_work.so, records each call as a region "testmod_work" (as
 * annotations do: module user), marks each thread's start, and writes a meta line at the
 * process end, so that tests/e2e/module-plugin.sh sees its wrapper and two hooks ran.
 */
#include <stdint.h>

#include "../../src/core/module.h"
#include "../../src/common/modules.h"

extern const struct lt_module lt_module_testmod;

static int (*real_testmod_work)(int);
static uint64_t calls;

LT_EXPORT int testmod_work(int x)
{
	LT_RESOLVE(testmod_work, NULL);
	if (!real_testmod_work)
		return -1;
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return real_testmod_work(x);
	lt_emit0(t, LT_REC_REGION_ENTER, 0, lt_string_id(t, "testmod_work"));
	lt_finish(t);
	int ret = real_testmod_work(x);
	if (lt_resume(t)) {
		lt_emit0(t, LT_REC_REGION_LEAVE, 0, lt_string_id(t, "testmod_work"));
		/* Per-thread module storage: this thread's calls. */
		lt_local(t, &lt_module_testmod)->n++;
		lt_finish(t);
	}
	__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
	return ret;
}

static void testmod_thread_start(struct lt_thread *t)
{
	lt_emit0(t, LT_REC_MARKER, 0, lt_string_id(t, "testmod thread start"));
}

static void testmod_thread_end(struct lt_thread *t)
{
	lt_meta_line("testmod_thread %u %llu", t->index,
		     (unsigned long long)lt_local(t, &lt_module_testmod)->n);
}

static void testmod_end_flush(void)
{
	lt_meta_line("testmod_end %llu",
		     (unsigned long long)__atomic_load_n(&calls, __ATOMIC_RELAXED));
}

LT_MODULE(testmod) = {
    .name = "testmod",
    .order = 100,
    .thread_start = testmod_thread_start,
    .thread_end = testmod_thread_end,
    .end_flush = testmod_end_flush,
};
