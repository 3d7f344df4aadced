// SPDX-License-Identifier: BSD-3-Clause
/*
 * sync.c - pthread calls and what they mean for locks: acquisitions and releases with an
 * order per lock, the locks a thread holds.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static struct lockent *lock_get(struct pstate *ps, uint64_t addr)
{
	if ((ps->nlocks + 1) * 2 > ps->locks_cap) {
		size_t cap = ps->locks_cap ? ps->locks_cap * 2 : 64;
		struct lockent *a = calloc(cap, sizeof(*a));
		if (!a)
			return NULL;
		for (size_t i = 0; i < ps->locks_cap; i++) {
			if (!ps->locks[i].addr)
				continue;
			size_t j =
			    (ps->locks[i].addr >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (cap - 1);
			while (a[j].addr)
				j = (j + 1) & (cap - 1);
			a[j] = ps->locks[i];
		}
		free(ps->locks);
		ps->locks = a;
		ps->locks_cap = cap;
	}
	size_t j = (addr >> 4) * 0x9e3779b97f4a7c15ull >> 20 & (ps->locks_cap - 1);
	while (ps->locks[j].addr && ps->locks[j].addr != addr)
		j = (j + 1) & (ps->locks_cap - 1);
	if (!ps->locks[j].addr) {
		/* Numbered in first-use order; a parallel conversion's ranks interleave theirs,
		 * which keeps them apart (each rank's are told by the lock ids alone). */
		uint32_t id = (*ps->next_lock_id)++;
		const struct cv_par *par = ps->cv->par;
		if (par)
			id = id * (uint32_t)par->size + (uint32_t)par->rank;
		ps->locks[j] = (struct lockent){addr, id, 0};
		ps->nlocks++;
	}
	return &ps->locks[j];
}

int cv_is_lock_fn(unsigned fn)
{
	switch (fn) {
	case LT_FN_pthread_mutex_lock:
	case LT_FN_pthread_mutex_trylock:
	case LT_FN_pthread_mutex_timedlock:
	case LT_FN_pthread_mutex_clocklock:
	case LT_FN_pthread_rwlock_rdlock:
	case LT_FN_pthread_rwlock_tryrdlock:
	case LT_FN_pthread_rwlock_timedrdlock:
	case LT_FN_pthread_rwlock_clockrdlock:
	case LT_FN_pthread_rwlock_wrlock:
	case LT_FN_pthread_rwlock_trywrlock:
	case LT_FN_pthread_rwlock_timedwrlock:
	case LT_FN_pthread_rwlock_clockwrlock:
		return 1;
	}
	return 0;
}

int cv_is_cond_wait(unsigned fn)
{
	return fn == LT_FN_pthread_cond_wait || fn == LT_FN_pthread_cond_timedwait ||
	       fn == LT_FN_pthread_cond_clockwait;
}

/*
 * Lock events.  An acquisition takes the lock's next order number; a release carries the
 * number of the acquisition it ends, which the releasing thread holds (the runtime stamps a
 * release before the next acquisition's return, but a clock read may still tie).
 * A release of a lock the thread does not hold (its acquisition lost) is left out.
 */
#define HELD_MAX 64 /* locks one thread holds at once; beyond, acquisitions are not shown */

void cv_lock_event(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns, int acquire,
		   uint64_t addr, enum cv_paradigm paradigm)
{
	struct lockent *e = addr ? lock_get(ps, addr) : NULL;
	if (!e)
		return;
	if (acquire) {
		if (t->nheld == HELD_MAX) {
			ps->cv->stats.anomalies++;
			return;
		}
		if (t->nheld == t->held_cap) {
			uint32_t cap = t->held_cap ? t->held_cap * 2 : 4;
			struct held *a = realloc(t->held, cap * sizeof(*a));
			if (!a)
				return;
			t->held = a;
			t->held_cap = cap;
		}
		t->held[t->nheld++] = (struct held){e->id, ++e->order, paradigm};
		CV_EMIT(ps->cv, lock, l, ns, paradigm, 1, e->id, e->order);
		return;
	}
	for (uint32_t i = t->nheld; i-- > 0;) {
		if (t->held[i].lock != e->id)
			continue;
		CV_EMIT(ps->cv, lock, l, ns, t->held[i].paradigm, 0, e->id, t->held[i].order);
		t->held[i] = t->held[--t->nheld];
		return;
	}
	if (!t->window)
		ps->cv->stats.anomalies++;
}

/* A thread that ends holding locks releases them as it ends (what Vampir needs to close
 * them; glibc leaves such a mutex locked, a robust one to the next owner). */
void cv_release_held(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns)
{
	while (t->nheld) {
		struct held *h = &t->held[--t->nheld];
		CV_EMIT(ps->cv, lock, l, ns, h->paradigm, 0, h->lock, h->order);
	}
}

/* An intercepted call (CALL_ENTER, CALL_LEAVE, CALL) and what it means for locks. */
void cv_call_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		    const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	switch (r->type) {
	case LT_REC_CALL_ENTER: {
		if (r->sub >= LT_FN_MAX) {
			cv->stats.anomalies++;
			break;
		}
		uint32_t reg = cv_fn_region(cv, r->sub);
		uint64_t obj = lt_rec_word(r, LT_W_CALL_OBJ), obj2 = lt_rec_word(r, LT_W_CALL_OBJ2);
		if (cv_push(cv, t, reg, r->sub, obj, obj2))
			break;
		CV_EMIT(cv, enter, l, ns, reg);
		if (cv_is_cond_wait(r->sub))
			cv_lock_event(ps, l, t, ns, 0, obj2,
				      CV_PARADIGM_PTHREAD); /* the wait releases the mutex */
		break;
	}
	case LT_REC_CALL_LEAVE: {
		struct frame *f = cv_pop_match(cv, l, t, ns, r->sub, 0);
		if (!f)
			break;
		int result = (int)r->arg;
		if (cv_is_lock_fn(r->sub) && result == 0)
			cv_lock_event(ps, l, t, ns, 1, f->obj, CV_PARADIGM_PTHREAD);
		else if (cv_is_cond_wait(r->sub) && (result == 0 || result == ETIMEDOUT))
			cv_lock_event(ps, l, t, ns, 1, f->obj2,
				      CV_PARADIGM_PTHREAD); /* the mutex is held again */
		CV_EMIT(cv, leave, l, ns, f->region, 0);
		break;
	}
	case LT_REC_CALL: {
		if (r->sub >= LT_FN_MAX) {
			cv->stats.anomalies++;
			break;
		}
		uint32_t reg = cv_fn_region(cv, r->sub);
		uint64_t obj = lt_rec_word(r, LT_W_CALL_OBJ);
		CV_EMIT(cv, enter, l, ns, reg);
		if (r->arg == 0 && cv_is_lock_fn(r->sub))
			cv_lock_event(ps, l, t, ns, 1, obj, CV_PARADIGM_PTHREAD);
		else if (r->arg == 0 && (r->sub == LT_FN_pthread_mutex_unlock ||
					 r->sub == LT_FN_pthread_rwlock_unlock))
			cv_lock_event(ps, l, t, ns, 0, obj, CV_PARADIGM_PTHREAD);
		CV_EMIT(cv, leave, l, ns, reg, 0);
		break;
	}
	default:
		break;
	}
}
