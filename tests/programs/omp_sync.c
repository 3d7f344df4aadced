// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_sync - mutual exclusion, each construct a known number of times in total, whatever
 * the team size (the work is split by hand, thread t taking items t, t + nth, ...):
 * CRIT unnamed and CRIT named critical entries, ATOM atomic updates of a long double (gcc
 * calls GOMP_atomic_start/end for those), an ordered loop of ORD iterations, and the lock
 * API: LOCKS omp_set_lock/omp_unset_lock pairs, LOCKS omp_test_lock that succeed on a free
 * lock, one omp_test_lock failing on a held lock per thread but the holder, and LOCKS nest
 * lock rounds (set, set again, test: depth 3, then three unsets).  The tests/e2e/omp.sh
 * expectations count them: keep the two in step.
 *
 * Every printed line is the same for any team size, so that the traced and untraced
 * outputs can be compared.
 */
#include <omp.h>
#include <stdio.h>

#define CRIT  40 /* divisible by 1, 2, 4 and 8: the same count on every team member */
#define ATOM  24
#define ORD   50
#define LOCKS 16

static int check(const char *what, long got, long want)
{
	printf("%s: %ld%s\n", what, got, got == want ? "" : " (WRONG)");
	return got != want;
}

int main(void)
{
	int bad = 0;
	long crit = 0, named = 0, locked = 0, tested = 0, nested = 0;
	long fails = 0, fails_want = 0, depth_bad = 0;
	long double ld = 0;
	long order[ORD], next = 0;
	omp_lock_t lock, held;
	omp_nest_lock_t nest;
	omp_init_lock(&lock);
	omp_init_lock(&held);
	omp_init_nest_lock(&nest);

#pragma omp parallel
	{
		int me = omp_get_thread_num(), nth = omp_get_num_threads();
		for (long i = me; i < CRIT; i += nth) {
#pragma omp critical
			crit += i;
		}
		for (long i = me; i < CRIT; i += nth) {
#pragma omp critical(named)
			named += 2 * i;
		}
		for (long i = me; i < ATOM; i += nth) {
#pragma omp atomic
			ld += 0.5L;
		}

#pragma omp for ordered schedule(dynamic)
		for (long i = 0; i < ORD; i++) {
#pragma omp ordered
			order[next++] = i;
		}

		for (long i = me; i < LOCKS; i += nth) {
			omp_set_lock(&lock);
			locked += i;
			omp_unset_lock(&lock);
		}
		/* omp_test_lock on a free lock: nobody else takes `lock` between these barriers */
#pragma omp barrier
		for (long i = me; i < LOCKS; i += nth) {
#pragma omp critical(tests)
			{
				if (omp_test_lock(&lock)) {
					tested++;
					omp_unset_lock(&lock);
				}
			}
		}
		/* omp_test_lock on a lock thread 0 holds: fails for every other thread */
		if (me == 0) {
			omp_set_lock(&held);
			fails_want = nth - 1;
		}
#pragma omp barrier
		if (me != 0 && !omp_test_lock(&held)) {
#pragma omp atomic
			fails++;
		}
#pragma omp barrier
		if (me == 0)
			omp_unset_lock(&held);

		for (long i = me; i < LOCKS; i += nth) {
			omp_set_nest_lock(&nest);
			omp_set_nest_lock(&nest);
			if (omp_test_nest_lock(&nest) != 3) {
#pragma omp atomic
				depth_bad++;
			}
			nested += i;
			omp_unset_nest_lock(&nest);
			omp_unset_nest_lock(&nest);
			omp_unset_nest_lock(&nest);
		}
	}

	bad |= check("critical", crit, (long)CRIT * (CRIT - 1) / 2);
	bad |= check("critical(named)", named, (long)CRIT * (CRIT - 1));
	bad |= check("atomic long double x2", (long)(2 * ld), ATOM);
	long in_order = 0;
	for (long i = 0; i < ORD; i++)
		in_order += order[i] == i;
	bad |= check("ordered", in_order, ORD);
	bad |= check("omp_set_lock", locked, (long)LOCKS * (LOCKS - 1) / 2);
	bad |= check("omp_test_lock free", tested, LOCKS);
	bad |= check("omp_test_lock held, failures as expected", fails == fails_want, 1);
	bad |= check("omp_set_nest_lock", nested, (long)LOCKS * (LOCKS - 1) / 2);
	bad |= check("omp_test_nest_lock depth 3", depth_bad, 0);
	omp_destroy_lock(&lock);
	omp_destroy_lock(&held);
	omp_destroy_nest_lock(&nest);
	return bad;
}
