// SPDX-License-Identifier: BSD-3-Clause
/*
 * callsite.c - the outer frames of a call site (LIBTRACE_CALLSITE_DEPTH > 1): a walk of the
 * caller's frame-pointer chain, bounded by the thread's stack.
 *
 * Frame 1 (the line that made the traced call) is the wrapper's return address and costs
 * nothing here (lt.h).  The frames beyond it come from the chain of saved frame pointers
 * that code built with frame pointers keeps: [fp] is the caller's fp, [fp + 8] the return
 * address into it.  Code built without them uses the register for anything, so every step
 * is checked before it is read: inside the thread's stack (noted at registration), above
 * the walker's own frame, 8-byte aligned, and strictly increasing.  A bad step ends the
 * walk: it can give fewer frames, never a fault.
 *
 * libunwind is deliberately not used: as a link dependency it takes over C++ exception
 * unwinding in the traced program (a throw costs 25x more), and glibc's backtrace() costs
 * 2 us a call here.  Runs with the thread's guard held: no locks, no allocation.
 */
#define _GNU_SOURCE
#include <pthread.h>

#include "lt.h"

int lt_callsite_depth;

void lt_callsite_thread(struct lt_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	t->stack_lo = t->stack_hi = 0;
	if (lt_callsite_depth < 2 || pthread_getattr_np(pthread_self(), &attr))
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

void lt_callsite_deep(struct lt_thread *t, uint64_t ts)
{
	uint64_t frames[LT_CALLSITE_MAX];
	unsigned n = 0, want = (unsigned)lt_callsite_depth - 1;
	/* The caller's frames lie above this function's own (the stack grows down). */
	uintptr_t lo = (uintptr_t)frames, hi = t->stack_hi;
	uintptr_t fp = t->cs_fp;
	if (lo < t->stack_lo)
		lo = t->stack_lo;
	while (n < want && hi) {
		if (fp < lo || fp > hi - 16 || (fp & 7))
			break;
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t next = f[0], ra = f[1];
		if (ra < 4096)
			break;
		frames[n++] = ra;
		if (next <= fp)
			break;
		fp = next;
	}
	if (!n)
		return;
	uint64_t *p = lt_reserve(t, 2 + n);
	lt_rec_put(p, ts, LT_REC_CALLSITE, 2 + n, n, 0);
	for (unsigned i = 0; i < n; i++)
		p[2 + i] = frames[i];
	lt_commit(t);
}
