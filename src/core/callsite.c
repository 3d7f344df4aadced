// SPDX-License-Identifier: BSD-3-Clause
/*
 * callsite.c - the outer frames of a call site (LIBTRACE_CALLSITE_DEPTH > 1): a walk of the
 * caller's frame-pointer chain, bounded by the thread's stack.
 *
 * Frame 1 (the line that made the traced call) is the wrapper's return address and costs
 * nothing here (lt.h).  The frames beyond it come from the chain of saved frame pointers
 * that code built with frame pointers keeps: [fp] is the caller's fp, [fp + 8] the return
 * address into it.  Code built without them uses the register for anything, so every step
 * is checked before it is read: below the top of the thread's stack (noted at registration), above
 * the walker's own frame, 8-byte aligned, and strictly increasing.  A bad step ends the
 * walk: it can give fewer frames, never a fault.
 *
 * libunwind is deliberately not used: as a link dependency it takes over C++ exception
 * unwinding in the traced program (a throw costs 25x more), and glibc's backtrace() costs
 * 2 us a call here.  Runs with the thread's guard held: no locks, no allocation.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "lt.h"

int lt_callsite_depth;

/* This library's code: frames in it (the trampolines that run a thread's start routine or
 * a parallel runtime's outlined function) are the tracer's, not the program's, and are passed over.
 */
uintptr_t lt_self_lo, lt_self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && me >= lo &&
		    me < lo + ph->p_memsz) {
			__atomic_store_n(&lt_self_lo, lo, __ATOMIC_RELAXED);
			__atomic_store_n(&lt_self_hi, lo + ph->p_memsz, __ATOMIC_RELAXED);
			return 1;
		}
	}
	return 0;
}

void lt_callsite_init(int depth)
{
	lt_callsite_depth = depth;
	dl_iterate_phdr(find_self, (void *)(uintptr_t)lt_callsite_deep);
}

/* Where the walk must stop: the top of the thread's stack.  Found without the C library's
 * pthread_getattr_np, which allocates (the thread may be registering in a signal handler
 * that interrupted malloc): glibc puts a thread's descriptor, pthread_self(), at the top
 * of its stack block, above every frame, and the main thread's frames lie below the
 * program's file name, which the kernel put at the top of its stack (AT_EXECFN). */
void lt_callsite_thread(struct lt_thread *t)
{
	t->stack_lo = t->stack_hi = 0;
	if (lt_callsite_depth < 2)
		return;
	if ((pid_t)t->tid == getpid())
		t->stack_hi = (uintptr_t)getauxval(AT_EXECFN);
	else
		t->stack_hi = (uintptr_t)pthread_self();
}

void lt_callsite_deep(struct lt_thread *t, uint64_t ts)
{
	uint64_t frames[LT_CALLSITE_MAX];
	unsigned n = 0, want = (unsigned)lt_callsite_depth - 1;
	/* The caller's frames lie above this function's own (the stack grows down). */
	uintptr_t lo = (uintptr_t)frames, hi = t->stack_hi;
	uintptr_t fp = t->cs_fp;
	uintptr_t self0 = __atomic_load_n(&lt_self_lo, __ATOMIC_RELAXED);
	uintptr_t self1 = __atomic_load_n(&lt_self_hi, __ATOMIC_RELAXED);
	if (lo < t->stack_lo)
		lo = t->stack_lo;
	while (n < want && hi) {
		if (fp < lo || fp > hi - 16 || (fp & 7))
			break;
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t next = f[0], ra = f[1];
		if (ra < 4096)
			break;
		/* (a wrapper with a frame of its own gives frame 1 again first) */
		if ((ra < self0 || ra >= self1) && (n || ra != t->cs_ra || fp != t->cs_fp))
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
