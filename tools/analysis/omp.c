// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp.c - OpenMP: constructs as regions, teams, fork/join, tasks and their dependences.
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

static enum cv_role omp_role(unsigned c)
{
	switch (c) {
	case LT_OMP_parallel:
	case LT_OMP_teams:
		return CV_ROLE_PARALLEL;
	case LT_OMP_loop:
	case LT_OMP_taskloop:
		return CV_ROLE_LOOP;
	case LT_OMP_sections:
		return CV_ROLE_SECTIONS;
	case LT_OMP_single:
		return CV_ROLE_SINGLE;
	case LT_OMP_barrier:
		return CV_ROLE_BARRIER;
	case LT_OMP_implicit_barrier:
		return CV_ROLE_IMPLICIT_BARRIER;
	case LT_OMP_taskwait:
	case LT_OMP_taskgroup:
		return CV_ROLE_TASK_WAIT;
	case LT_OMP_critical:
		return CV_ROLE_CRITICAL;
	case LT_OMP_atomic:
		return CV_ROLE_ATOMIC;
	case LT_OMP_ordered:
		return CV_ROLE_ORDERED;
	case LT_OMP_task_create:
		return CV_ROLE_TASK_CREATE;
	case LT_OMP_task:
		return CV_ROLE_TASK;
	case LT_OMP_masked:
		return CV_ROLE_MASTER;
	case LT_OMP_workshare:
		return CV_ROLE_WORKSHARE;
	}
	return CV_ROLE_WRAPPER; /* the lock API, taskyield, cancel */
}

/*
 * The region of OpenMP construct c.  Parallel regions and tasks are named after their code
 * as Score-P does: "!$omp parallel @file.c:42" (the outlined function's line, or the call
 * site's for an OMPT return address), "!$omp parallel <function>" without line numbers.
 * An outlined function that no symbol names (a stripped library keeps only its exported
 * functions) is named after the code that handed it to the runtime, its parent: "!$omp
 * parallel @file.c:42" at that call's line, or "!$omp parallel <parent> (outlined)", with
 * "module+0xOFFSET" of the outlined code as the region's description.
 */
static uint32_t omp_region(struct pstate *ps, unsigned c, uint64_t addr, int return_address)
{
	struct cv *cv = ps->cv;
	const char *what = rd_omp_name(c);
	struct cv_region r = {0, 0, CV_NO_STRING, 0, omp_role(c), CV_PARADIGM_OPENMP, 0};
	if (!addr) {
		r.name = r.canonical = cv_string(cv, what);
		return cv_region_id(cv, 'O', what, &r);
	}
	struct sym_result s;
	cv_resolve_code(cv, ps->p, return_address ? addr - 1 : addr, &s);
	int outlined = 0;
	uint64_t *caller = return_address ? NULL : cv_idmap_get(&ps->outliners, addr, 0);
	if (!s.symbol && !(s.file && s.line) && caller && *caller) {
		struct sym_result by;
		cv_resolve_code(cv, ps->p, *caller - 1, &by);
		if ((by.file && by.line) || by.symbol) {
			/* Its own code address stays the description, and keeps two such
			 * regions of one parent apart. */
			r.desc = cv_string(cv, s.function) + 1;
			s = by;
			outlined = !(by.file && by.line);
		}
	}
	char name[2048];
	if (s.file && s.line) {
		const char *base = strrchr(s.file, '/');
		snprintf(name, sizeof(name), "%s @%s:%u", what, base ? base + 1 : s.file, s.line);
	} else {
		snprintf(name, sizeof(name), "%s %s%s", what, s.function,
			 outlined ? " (outlined)" : "");
	}
	r.name = cv_string(cv, name);
	if (outlined) { /* not the parent itself: a name of its own */
		char canonical[2048];
		snprintf(canonical, sizeof(canonical), "%s (outlined)", s.symbol);
		r.canonical = cv_string(cv, canonical);
	} else {
		r.canonical = cv_string(cv, s.symbol ? s.symbol : s.function);
	}
	if (s.file && s.line) { /* a file without a line is no source location */
		r.file = cv_string(cv, s.file);
		r.line = s.line;
	}
	if (r.desc) {
		char key[4200];
		snprintf(key, sizeof(key), "%s\t%s", name, cv->strings[r.desc - 1]);
		return cv_region_id(cv, 'O', key, &r);
	}
	return cv_region_id(cv, 'O', name, &r);
}

/* An outlined function fn, handed to the runtime by the call that returns to ra: its
 * parent, which names it where nothing else does (omp_region). */
static void note_outliner(struct pstate *ps, uint64_t fn, uint64_t ra)
{
	uint64_t *a = fn && ra ? cv_idmap_get(&ps->outliners, fn, 1) : NULL;
	if (a && !*a)
		*a = ra;
}

/* The team thread `forker` of process `process` forks at nesting level `level` with `size`
 * threads; loc joins it as thread number `num`.  Members are kept in the order of their
 * numbers, as Score-P lists a team (the master first): a rank in the team's group is the
 * thread's number, whatever order the threads arrived in. */
static uint32_t team_of(struct cv *cv, uint32_t process, uint32_t forker, uint32_t level,
			uint32_t size, uint32_t loc, uint32_t num)
{
	char key[80];
	snprintf(key, sizeof(key), "%u:%u:%u:%u", process, forker, level, size);
	if (!cv->team_map && !(cv->team_map = calloc(1, sizeof(*cv->team_map))))
		return 0;
	uint32_t id = cv->nteams;
	uint32_t *v = cv_strmap_get(cv->team_map, key, &id);
	if (!v)
		return 0;
	if (*v == id && id == cv->nteams) {
		if (cv->nteams == cv->teams_cap) {
			struct cv_team *a = cv_grow(cv->teams, &cv->teams_cap, sizeof(*a));
			if (!a)
				return 0;
			cv->teams = a;
		}
		cv->teams[cv->nteams++] =
		    (struct cv_team){process, forker, size, NULL, 0, 0, cv->ncomm_refs++, NULL};
	}
	struct cv_team *tm = &cv->teams[*v];
	for (uint32_t i = 0; i < tm->nmembers; i++)
		if (tm->members[i] == loc)
			return *v;
	if (tm->nmembers == tm->cap) {
		uint32_t cap = tm->cap;
		uint32_t *a = cv_grow(tm->members, &cap, sizeof(*a));
		if (a)
			tm->members = a;
		uint32_t ncap = tm->cap;
		uint32_t *b = a ? cv_grow(tm->nums, &ncap, sizeof(*b)) : NULL;
		if (!b)
			return *v;
		tm->nums = b;
		tm->cap = cap;
	}
	uint32_t at = tm->nmembers++;
	for (; at > 0 && tm->nums[at - 1] > num; at--) {
		tm->members[at] = tm->members[at - 1];
		tm->nums[at] = tm->nums[at - 1];
	}
	tm->members[at] = loc;
	tm->nums[at] = num;
	return *v;
}

static int omp_lock_kind(unsigned c)
{
	return c == LT_OMP_set_lock || c == LT_OMP_set_nest_lock;
}

/* Enters OpenMP region `reg` (construct c) on t; for tasks with the task's attributes. */
static int omp_enter(struct pstate *ps, struct cv_loc *l, struct tstate *t, uint64_t ns,
		     uint32_t reg, unsigned c, uint64_t obj, uint64_t obj2)
{
	struct cv *cv = ps->cv;
	if (cv_push(cv, t, reg, FN_OMP(c), obj, obj2))
		return -1;
	if ((c == LT_OMP_task || c == LT_OMP_task_create) && obj) {
		uint64_t *dep = cv_idmap_get(&ps->depends, obj, 0);
		struct cv_attr a[] = {{CV_ATTR_TASK_ID, obj},
				      {CV_ATTR_TASK_DEPENDS, dep && *dep ? *dep - 1 : 0}};
		cv_enter_attrs(cv, l, ns, reg, a, dep && *dep ? 2 : 1);
	} else {
		CV_EMIT(cv, enter, l, ns, reg);
	}
	return 0;
}

/* A task's dependence on address addr: it waits for the address's last writer. */
static void omp_dependence(struct pstate *ps, uint64_t task, uint64_t addr, unsigned kind)
{
	uint64_t *w = cv_idmap_get(&ps->writers, addr, kind != LT_OMP_DEP_IN);
	uint64_t pred = w ? *w : 0;
	if (kind != LT_OMP_DEP_IN && w)
		*w = task;
	if (!pred || pred == task)
		return;
	uint64_t *d = cv_idmap_get(&ps->depends, task, 1);
	if (!d)
		return;
	char list[1024];
	const char *old = *d ? ps->cv->strings[*d - 1] : NULL;
	if (old && strlen(old) > sizeof(list) - 32)
		return; /* a long list: the first edges are kept */
	snprintf(list, sizeof(list), "%s%s%" PRIu64, old ? old : "", old ? "," : "", pred);
	*d = cv_string(ps->cv, list) + 1;
}

/*
 * The join of parallel region `par` at ns: each thread of its team leaves the barrier that
 * ended its part (entered at its ThreadTeamEnd: libgomp's threads run the tasks left in
 * that barrier before the join) and then the parallel region, so that the tasks run there are
 * inside the region.  A thread whose clock reads later than ns leaves at its last record.
 */
static void close_teams(struct pstate *ps, uint64_t par, uint64_t ns)
{
	struct cv *cv = ps->cv;
	for (size_t k = 0; k < ps->nts; k++) {
		struct tstate *o = &ps->ts[k];
		uint32_t i = o->depth;
		while (i-- > 0 && !(o->stack[i].fn == FN_TEAM_BARRIER && o->stack[i].obj == par))
			;
		if (i == UINT32_MAX || o->loc == SIZE_MAX || i == 0)
			continue;
		struct cv_loc *ol = &cv->locs[o->loc];
		uint64_t at = ns > o->last_ns ? ns : o->last_ns;
		cv_unwind(cv, ol, o, at, i + 1, CLOSE_LEAVE);
		CV_EMIT(cv, leave, ol, at, o->stack[i].region, 0);
		struct frame *f = &o->stack[i - 1];
		o->depth = i - 1;
		if (f->fn == FN_OMP(LT_OMP_parallel)) {
			CV_EMIT(cv, leave, ol, at, f->region, 0);
			CV_EMIT(cv, team_end, ol, at, (uint32_t)f->obj2);
		} else {
			o->depth = i; /* not on a parallel region: damage, left to cv_pop_match */
		}
		o->last_ns = at;
	}
}

/* Is addr, a thread's start routine, an OpenMP runtime's (a thread of its pool)? */
int cv_omp_pool_start(const struct rd_process *p, uint64_t addr)
{
	const struct rd_map *m = rd_map_at(p, addr);
	if (!m)
		return 0;
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	return !strncmp(base, "libgomp.", 8) || !strncmp(base, "libomp.", 7) ||
	       !strncmp(base, "libiomp5.", 9);
}

/* Does t wait in the barrier of a team whose join is still to come (close_teams)? */
int cv_omp_team_pending(const struct tstate *t)
{
	for (uint32_t i = 0; i < t->depth; i++)
		if (t->stack[i].fn == FN_TEAM_BARRIER)
			return 1;
	return 0;
}

/* The stack index of task `task`'s frame on t, t->depth if it has none. */
static uint32_t task_frame(const struct tstate *t, uint64_t task)
{
	for (uint32_t i = t->depth; i-- > 0;)
		if (t->stack[i].fn == FN_OMP(LT_OMP_task) && t->stack[i].obj == task)
			return i;
	return t->depth;
}

/* Pops frame i of t (what is above it closes first, as cv_pop_match does). */
static struct frame *pop_from(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns,
			      uint32_t i)
{
	cv_unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
	t->depth = i;
	return &t->stack[i];
}

/* The frames of t from stack index i up leave at ns: they are suspended tasks (each with what
 * it has open above it), kept by task to enter again where each goes on (task_resumed). */
static void park_from(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      uint32_t i)
{
	while (t->depth > i) {
		uint32_t j = t->depth; /* the group of the topmost task frame */
		while (j-- > i && t->stack[j].fn != FN_OMP(LT_OMP_task))
			;
		if (j == UINT32_MAX || j < i)
			j = i;
		struct parked *pk = NULL;
		if (t->stack[j].fn == FN_OMP(LT_OMP_task) && ps->nparked == ps->parked_cap) {
			size_t cap = ps->parked_cap ? 2 * ps->parked_cap : 16;
			struct parked *a = realloc(ps->parked, cap * sizeof(*a));
			if (a) {
				ps->parked = a;
				ps->parked_cap = cap;
			}
		}
		if (t->stack[j].fn == FN_OMP(LT_OMP_task) && ps->nparked < ps->parked_cap) {
			pk = &ps->parked[ps->nparked++];
			pk->task = t->stack[j].obj;
			pk->switched = 0;
			pk->n = t->depth - j < 8 ? t->depth - j : 8;
			memcpy(pk->f, &t->stack[j], pk->n * sizeof(*pk->f));
		}
		while (t->depth > j)
			CV_EMIT(ps->cv, leave, l, ns, t->stack[--t->depth].region, 0);
	}
}

/* A task goes on on t at ns: its frames f[0..n) (f[0] the task's, with its TaskId) enter
 * again. */
static void enter_again(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
			const struct frame *f, uint32_t n)
{
	if (!n || omp_enter(ps, l, t, ns, f[0].region, LT_OMP_task, f[0].obj, 0))
		return;
	for (uint32_t j = 1; j < n; j++)
		if (!cv_push(ps->cv, t, f[j].region, f[j].fn, f[j].obj, f[j].obj2))
			CV_EMIT(ps->cv, enter, l, ns, f[j].region);
}

/* Before frame i of t goes on or ends: the suspended tasks above it, which will go on
 * elsewhere or later, leave (park_from). */
static void park_above(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		       uint32_t i)
{
	for (uint32_t j = i + 1; j < t->depth; j++)
		if (t->stack[j].fn == FN_OMP(LT_OMP_task) && t->stack[j].aux) {
			park_from(ps, t, l, ns, j);
			return;
		}
}

/* An untied task's identity for cv_ops.task_event: team (20 bits), its creator's index in it
 * (12 bits), generation (32 bits); a task frame keeps it in obj2 (0: a tied task). */
static uint64_t untied_id(uint32_t team, uint32_t creator, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint64_t)creator << 20 | team;
}

static void task_event(struct cv *cv, struct cv_loc *l, uint64_t ns, enum cv_task_event what,
		       uint64_t id)
{
	CV_EMIT(cv, task_event, l, ns, what, (uint32_t)(id & 0xfffff), (uint32_t)(id >> 20) & 0xfff,
		(uint32_t)(id >> 32));
}

/* The team of t's innermost parallel region below stack index `below`, and t's index in it
 * (its implicit task there); 0 when it has none. */
static int team_place(struct cv *cv, const struct cv_loc *l, const struct tstate *t, uint32_t below,
		      uint32_t *team, uint32_t *idx)
{
	for (uint32_t i = below; i-- > 0;) {
		if (t->stack[i].fn != FN_OMP(LT_OMP_parallel))
			continue;
		const struct cv_team *tm = &cv->teams[(uint32_t)t->stack[i].obj2];
		for (uint32_t k = 0; k < tm->nmembers; k++)
			if (tm->members[k] == (uint32_t)(l - cv->locs)) {
				*team = (uint32_t)t->stack[i].obj2;
				*idx = k; /* its rank: members are in thread-number order */
				return *team < 1u << 20 && k < 1u << 12;
			}
		return 0;
	}
	return 0;
}

/* An untied task that had frame i of t no longer runs there (suspended, or complete): t goes
 * on with the nearest untied task below it, or its implicit task. */
static void switch_back(struct cv *cv, struct cv_loc *l, struct tstate *t, uint64_t ns, uint32_t i)
{
	for (uint32_t j = i; j-- > 0;)
		if (t->stack[j].fn == FN_OMP(LT_OMP_task) && t->stack[j].obj2) {
			task_event(cv, l, ns, CV_TASK_SWITCH, t->stack[j].obj2);
			return;
		}
	uint32_t team, idx;
	if (team_place(cv, l, t, i, &team, &idx))
		task_event(cv, l, ns, CV_TASK_SWITCH, untied_id(team, idx, 0));
}

/* Untied task `task`, frame i of t, is suspended: its frames leave t's stack without a Leave
 * (they stay open on the task's own stack) and t switches back (switch_back). */
static void suspend_untied(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
			   uint32_t i, uint64_t task)
{
	park_above(ps, t, l, ns, i);
	if (ps->nparked == ps->parked_cap) {
		size_t cap = ps->parked_cap ? 2 * ps->parked_cap : 16;
		struct parked *a = realloc(ps->parked, cap * sizeof(*a));
		if (!a)
			return; /* it stays on t: its thread's next frames nest in it */
		ps->parked = a;
		ps->parked_cap = cap;
	}
	uint32_t max = sizeof(ps->parked->f) / sizeof(ps->parked->f[0]);
	while (t->depth > i + max) /* what does not fit leaves now */
		CV_EMIT(ps->cv, leave, l, ns, t->stack[--t->depth].region, 0);
	struct parked *pk = &ps->parked[ps->nparked++];
	pk->task = task;
	pk->switched = 1;
	pk->n = t->depth - i;
	memcpy(pk->f, &t->stack[i], pk->n * sizeof(*pk->f));
	t->depth = i;
	switch_back(ps->cv, l, t, ns, i);
}

/*
 * OMPT reports a task switch as the end of the suspended task and the begin of the next one,
 * and the suspended one's begin again when it goes on.  A task's region lasts from its first
 * begin to its completion however often it was suspended when what its thread runs meanwhile
 * nests in it (a task in its taskwait or taskgroup), the usual case for tied tasks.  A
 * suspended task (its frame's aux set) stays open until its thread goes on with or ends
 * something below it: then it leaves, and enters again where it goes on (park_above).  Returns
 * whether `task` beginning on t goes on where it was suspended.  An untied task has its own
 * stack where the backend has task events (suspend_untied): its frames wait, open, for the
 * switch to it on whatever thread it goes on.  Without task events, an untied task that goes
 * on on another thread moves there with what it had open (its taskwait): it leaves the thread
 * it left at that thread's last record and enters this one again (a resumption, with its
 * TaskId), unless that thread runs another task inside it meanwhile (then it stays there,
 * and the converter closes it).
 */
static int task_resumed(struct pstate *ps, struct tstate *t, uint64_t task, struct cv_loc *l,
			uint64_t ns)
{
	struct cv *cv = ps->cv;
	if (!task)
		return 0;
	uint32_t i = task_frame(t, task);
	if (i < t->depth) { /* what is suspended above it leaves at its next record */
		t->stack[i].aux = 0;
		t->omp_park = 1;
		return 1;
	}
	for (size_t k = 0; k < ps->nparked; k++) {
		if (ps->parked[k].task != task)
			continue;
		struct parked pk = ps->parked[k];
		ps->parked[k] = ps->parked[--ps->nparked];
		if (!pk.switched) {
			enter_again(ps, t, l, ns, pk.f, pk.n);
			return 1;
		}
		task_event(cv, l, ns, CV_TASK_SWITCH, pk.f[0].obj2); /* its frames are open */
		for (uint32_t j = 0; j < pk.n; j++)
			if (cv_push(cv, t, pk.f[j].region, pk.f[j].fn, pk.f[j].obj, pk.f[j].obj2))
				break;
		return 1;
	}
	for (size_t k = 0; k < ps->nts; k++) {
		struct tstate *o = &ps->ts[k];
		uint32_t at = o == t || o->loc == SIZE_MAX ? 0 : task_frame(o, task);
		if (o == t || o->loc == SIZE_MAX || at == o->depth)
			continue;
		uint32_t end = at + 1; /* its frames: up to another task's */
		while (end < o->depth && o->stack[end].fn != FN_OMP(LT_OMP_task))
			end++;
		struct frame moved[16];
		uint32_t n = end - at < 16 ? end - at : 16;
		memcpy(moved, &o->stack[at], n * sizeof(*moved));
		if (end == o->depth) {
			struct cv_loc *ol = &cv->locs[o->loc];
			for (uint32_t j = o->depth; j-- > at;)
				CV_EMIT(cv, leave, ol, o->last_ns, o->stack[j].region, 0);
			o->depth = at;
		} else { /* under the task running there: they leave when it ends (TASK_END) */
			for (uint32_t j = at; j < end; j++)
				o->stack[j].fn = FN_MOVED;
		}
		enter_again(ps, t, l, ns, moved, n);
		return 1;
	}
	return 0;
}

void cv_omp_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		   const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	unsigned c = r->sub;
	/* p0: the id, object or task; p1: the code address, size, address or bound (LT_W_OMP_*) */
	uint64_t p0 = lt_rec_word(r, LT_W_OMP_OBJ), p1 = lt_rec_word(r, LT_W_OMP_CODE);
	if (c >= LT_OMP_MAX && r->type != LT_REC_OMP_TASK_BEGIN && r->type != LT_REC_OMP_TASK_END &&
	    r->type != LT_REC_OMP_TASK_DEP) {
		cv->stats.anomalies++;
		return;
	}
	int ompt = 0; /* code addresses from OMPT are return addresses */
	if (t->omp_park && r->type != LT_REC_OMP_TASK_BEGIN &&
	    !(r->type == LT_REC_OMP_TASK_END && (r->arg & LT_OMP_F_SWITCH))) {
		t->omp_park = 0; /* the running task does something: see task_resumed */
		for (uint32_t i = t->depth; i-- > 0;)
			if (t->stack[i].fn == FN_OMP(LT_OMP_task) && !t->stack[i].aux) {
				park_above(ps, t, l, ns, i);
				break;
			}
	}
	switch (r->type) {
	case LT_REC_OMP_FORK: {
		uint64_t *a = cv_idmap_get(&ps->pars, p0, 1);
		if (a)
			*a = p1;
		if (!ps->p->ompt)
			note_outliner(ps, p1, t->cur.callsite);
		uint64_t level = 1; /* teams forked inside teams are teams of their own */
		for (uint32_t i = 0; i < t->depth; i++)
			level += t->stack[i].fn == FN_OMP(LT_OMP_parallel);
		uint64_t *lv = cv_idmap_get(&ps->levels, p0, 1);
		if (lv)
			*lv = level;
		CV_EMIT(cv, thread_fork, l, ns, r->arg);
		break;
	}
	case LT_REC_OMP_JOIN:
		close_teams(ps, p0, ns);
		cv_idmap_del(&ps->pars, p0);
		cv_idmap_del(&ps->levels, p0);
		CV_EMIT(cv, thread_join, l, ns);
		break;
	case LT_REC_OMP_TEAM_BEGIN: {
		if (t->depth && t->stack[t->depth - 1].fn == FN_TEAM_BARRIER)
			close_teams(ps, t->stack[t->depth - 1].obj, ns); /* its join was not seen */
		uint64_t *a = cv_idmap_get(&ps->pars, p0, 0);
		uint64_t addr = a ? *a : 0;
		/* A GOMP fork names the outlined function; OMPT gives the call site. */
		ompt = ps->p->ompt;
		uint64_t *lv = cv_idmap_get(&ps->levels, p0, 0);
		uint32_t team = team_of(cv, ps->pidx, (uint32_t)(p0 >> 40), lv ? (uint32_t)*lv : 0,
					(uint32_t)p1, (uint32_t)(l - cv->locs), r->arg);
		CV_EMIT(cv, team_begin, l, ns, team);
		uint32_t reg = omp_region(ps, LT_OMP_parallel, addr, ompt);
		if (omp_enter(ps, l, t, ns, reg, LT_OMP_parallel, p0, team))
			CV_EMIT(cv, team_end, l, ns, team);
		break;
	}
	case LT_REC_OMP_TEAM_END: {
		/* libgomp: the outlined function returned; the team's barrier follows, where
		 * the thread may run tasks, until the join (close_teams). */
		uint32_t reg = omp_region(ps, LT_OMP_implicit_barrier, 0, 0);
		for (uint32_t i = t->depth; i-- > 0;)
			if (t->stack[i].fn == FN_OMP(LT_OMP_parallel)) {
				park_above(ps, t, l, ns, i);
				break;
			}
		if (!ps->p->ompt && cv_idmap_get(&ps->pars, p0, 0) && t->depth &&
		    t->stack[t->depth - 1].fn == FN_OMP(LT_OMP_parallel) &&
		    !cv_push(cv, t, reg, FN_TEAM_BARRIER, p0, 0)) {
			CV_EMIT(cv, enter, l, ns, reg);
			break;
		}
		struct frame *f = cv_pop_match(cv, l, t, ns, FN_OMP(LT_OMP_parallel), 0);
		if (f) {
			CV_EMIT(cv, leave, l, ns, f->region, 0);
			CV_EMIT(cv, team_end, l, ns, (uint32_t)f->obj2);
		}
		break;
	}
	case LT_REC_OMP_ENTER: {
		uint64_t addr = c == LT_OMP_task_create ? p1 : 0;
		uint64_t untied = 0;
		if (c == LT_OMP_task_create && p0) {
			uint64_t *a = cv_idmap_get(&ps->tasks, p0, 1);
			if (a)
				*a = p1;
			if (!ps->p->ompt)
				note_outliner(ps, p1, t->cur.callsite);
			uint32_t team, idx;
			uint64_t *u = NULL;
			if ((r->arg & LT_OMP_F_UNTIED) && cv->ops->task_event &&
			    team_place(cv, l, t, t->depth, &team, &idx) &&
			    (u = cv_idmap_get(&ps->untied, p0, 1)))
				*u = untied = untied_id(team, idx, ++t->task_gen ? t->task_gen : 1);
		}
		uint32_t reg = omp_region(ps, c, addr, ps->p->ompt);
		omp_enter(ps, l, t, ns, reg, c, p0, 0);
		if (untied)
			task_event(cv, l, ns, CV_TASK_CREATE, untied);
		break;
	}
	case LT_REC_OMP_ACQUIRED:
		if (p0)
			cv_lock_event(ps, l, t, ns, 1, p0, CV_PARADIGM_OPENMP);
		if (omp_lock_kind(c)) { /* the set call returns holding the lock */
			struct frame *f = t->depth ? &t->stack[t->depth - 1] : NULL;
			if (f && f->fn == FN_OMP(c)) {
				t->depth--;
				CV_EMIT(cv, leave, l, ns, f->region, 0);
			}
		}
		break;
	case LT_REC_OMP_LEAVE: {
		if (c == LT_OMP_unset_lock || c == LT_OMP_unset_nest_lock) {
			uint32_t reg = omp_region(ps, c, 0, 0);
			CV_EMIT(cv, enter, l, ns, reg);
			if (p0)
				cv_lock_event(ps, l, t, ns, 0, p0, CV_PARADIGM_OPENMP);
			CV_EMIT(cv, leave, l, ns, reg, 0);
			break;
		}
		if (p0 && (c == LT_OMP_critical || c == LT_OMP_atomic || c == LT_OMP_ordered))
			cv_lock_event(ps, l, t, ns, 0, p0, CV_PARADIGM_OPENMP);
		for (uint32_t i = t->depth; i-- > 0;)
			if (t->stack[i].fn == FN_OMP(c)) {
				park_above(ps, t, l, ns, i);
				break;
			}
		struct frame *f = cv_pop_match(cv, l, t, ns, FN_OMP(c), 0);
		if (f)
			CV_EMIT(cv, leave, l, ns, f->region, 0);
		break;
	}
	case LT_REC_OMP_TASK_BEGIN: {
		if (task_resumed(ps, t, p0, l, ns))
			break; /* a suspended task goes on: its region never ended */
		uint64_t addr = p1;
		ompt = 0;
		if (!addr) { /* OMPT: the creation's call site */
			uint64_t *a = cv_idmap_get(&ps->tasks, p0, 0);
			addr = a ? *a : 0;
			ompt = 1;
		}
		uint32_t reg = omp_region(ps, LT_OMP_task, addr, ompt);
		uint64_t *u = cv_idmap_get(&ps->untied, p0, 0);
		if (u && *u)
			task_event(cv, l, ns, CV_TASK_SWITCH, *u);
		omp_enter(ps, l, t, ns, reg, LT_OMP_task, p0, u ? *u : 0);
		break;
	}
	case LT_REC_OMP_TASK_END: {
		uint32_t i = task_frame(t, p0);
		if (r->arg & LT_OMP_F_SWITCH) { /* suspended (OMPT): see task_resumed */
			if (i < t->depth && t->stack[i].obj2)
				suspend_untied(ps, t, l, ns, i, p0);
			else if (i < t->depth)
				t->stack[i].aux = 1;
			break;
		}
		if (i < t->depth)
			park_above(ps, t, l, ns, i);
		struct frame *f = i < t->depth ? pop_from(cv, l, t, ns, i)
					       : cv_pop_match(cv, l, t, ns, FN_OMP(LT_OMP_task), 0);
		if (f)
			CV_EMIT(cv, leave, l, ns, f->region, 0);
		if (f && f->fn == FN_OMP(LT_OMP_task) && f->obj2) {
			task_event(cv, l, ns, CV_TASK_COMPLETE, f->obj2);
			switch_back(cv, l, t, ns, t->depth);
		}
		while (t->depth && t->stack[t->depth - 1].fn == FN_MOVED) /* see task_resumed */
			CV_EMIT(cv, leave, l, ns, t->stack[--t->depth].region, 0);
		cv_idmap_del(&ps->tasks, p0);
		cv_idmap_del(&ps->depends, p0);
		cv_idmap_del(&ps->untied, p0);
		break;
	}
	case LT_REC_OMP_TASK_DEP:
		omp_dependence(ps, p0, p1, r->arg);
		break;
	case LT_REC_OMP_CHUNK:
		break; /* chunks are in the trace (trace-dump); no OTF2 record fits them */
	}
}
