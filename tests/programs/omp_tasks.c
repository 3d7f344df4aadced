// SPDX-License-Identifier: BSD-3-Clause
/*
 * omp_tasks - explicit tasks, each kind a known number of times, all created by one thread
 * (inside single) and run by any member of the team: NTASK independent tasks and a
 * taskwait; a chain of DEPS tasks linked by depend(out/inout/in) on one variable, whose
 * result is right only when they ran in order; a taskgroup of GROUP tasks; a taskloop of
 * LOOPN iterations with grainsize GRAIN (LOOPN / GRAIN tasks); nested tasks (fib(FIB): every
 * call with n >= 2 creates two tasks and waits for them); then, in a second region of two
 * threads, a task with detach whose event a later task fulfils (3 tasks, one taskwait).
 * The tests/e2e/omp.sh expectations count them: keep the two in step.
 *
 * Every printed line is the same for any team size and schedule, so that the traced and
 * untraced outputs can be compared.
 */
#include <omp.h>
#include <stdio.h>

#define NTASK 20
#define DEPS  6 /* out, then inout x (DEPS - 2), then in */
#define GROUP 4
#define LOOPN 100
#define GRAIN 10
#define FIB   8

static long work(long i)
{
	return (i * 7919) % 1013;
}

static long fib(int n)
{
	if (n < 2)
		return n;
	long a, b;
#pragma omp task shared(a)
	a = fib(n - 1);
#pragma omp task shared(b)
	b = fib(n - 2);
#pragma omp taskwait
	return a + b;
}

static int check(const char *what, long got, long want)
{
	printf("%s: %ld%s\n", what, got, got == want ? "" : " (WRONG)");
	return got != want;
}

int main(void)
{
	int bad = 0;
	long res[NTASK] = {0}, x = 0, y = 0, detached = 0, after = 0, group[GROUP] = {0};
	long loop[LOOPN] = {0}, f = 0;

#pragma omp parallel
#pragma omp single
	{
		for (int i = 0; i < NTASK; i++) {
#pragma omp task firstprivate(i) shared(res)
			res[i] = work(i);
		}
#pragma omp taskwait

		/* x = ((1 * 3 + 1) * 3 + 1) ... : right only in creation order */
#pragma omp task depend(out : x) shared(x)
		x = 1;
		for (int k = 0; k < DEPS - 2; k++) {
#pragma omp task depend(inout : x) shared(x)
			x = x * 3 + 1;
		}
#pragma omp task depend(in : x) shared(x, y)
		y = x;
#pragma omp taskwait

#pragma omp taskgroup
		{
			for (int i = 0; i < GROUP; i++) {
#pragma omp task firstprivate(i) shared(group)
				group[i] = i + 1;
			}
		}

#pragma omp taskloop grainsize(GRAIN) shared(loop)
		for (int i = 0; i < LOOPN; i++)
			loop[i] = work(i);

		f = fib(FIB);
	}

	/* The detached task completes when its event is fulfilled, by the task after it: the
	 * last task runs after both.  In a team of its own, always of two: libomp up to LLVM 18
	 * fails an assertion when a detached task runs in a serialized team (llvm-project
	 * issues 50602, 66654, fixed by pull request 86859). */
#pragma omp parallel num_threads(2)
#pragma omp single
	{
		omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out : detached) shared(detached)
		detached = 1;
#pragma omp task firstprivate(ev)
		omp_fulfill_event(ev);
#pragma omp task depend(in : detached) shared(detached, after)
		after = detached + 1;
#pragma omp taskwait
	}

	long s = 0, want = 0;
	for (int i = 0; i < NTASK; i++) {
		s += res[i];
		want += work(i);
	}
	bad |= check("tasks", s, want);
	long xw = 1;
	for (int k = 0; k < DEPS - 2; k++)
		xw = xw * 3 + 1;
	bad |= check("depend chain", y, xw);
	bad |= check("detach", after, 2);
	s = 0;
	for (int i = 0; i < GROUP; i++)
		s += group[i];
	bad |= check("taskgroup", s, GROUP * (GROUP + 1) / 2);
	s = want = 0;
	for (int i = 0; i < LOOPN; i++) {
		s += loop[i];
		want += work(i);
	}
	bad |= check("taskloop", s, want);
	bad |= check("fib", f, 21);
	return bad;
}
