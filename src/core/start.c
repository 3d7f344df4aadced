// SPDX-License-Identifier: BSD-3-Clause
/*
 * start.c - the program's main as the C library starts it.  __libc_start_main, which a
 * dynamically linked program's entry point calls once the libraries' constructors (the
 * tracer's among them) have run, gets main through a wrapper that records when main begins
 * and returns (LT_REC_MAIN).  The converter's "main" region is then the program's own time,
 * without the tracer's start-up before it and its last flush after it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>

#include "lt.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_fn)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void),
			void *);

static main_fn program_main;

/* Records main's begin or return on this thread, which the tracer's start registered (it
 * starts nothing itself: not traced, or off, records nothing); false when nothing is. */
static int main_record(unsigned begins)
{
	lt_vfork_settle(); /* main vforked and made no traced call since */
	struct lt_thread *t = lt_self;
	if (!t || t->guard)
		return 0;
	lt_guard_take(t);
	lt_emit0(t, LT_REC_MAIN, begins, 0);
	lt_finish(t);
	return 1;
}

static int traced_main(int argc, char **argv, char **envp)
{
	if (main_record(1)) /* the converter takes main from these records, not the thread's life */
		lt_meta_line(LT_META_MAIN " 1");
	int rc = program_main(argc, argv, envp);
	main_record(0);
	return rc;
}

LT_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	start_fn real = (start_fn)dlsym(RTLD_NEXT, "__libc_start_main");
	if (!real)
		abort(); /* no C library below us: nothing could start the program */
	program_main = main;
	return real(traced_main, argc, argv, init, fini, rtld_fini, stack_end);
}
