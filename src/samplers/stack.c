// SPDX-License-Identifier: BSD-3-Clause
/*
 * stack.c - call-stack sampling (LIBTRACE_STACK_SAMPLING=<period>).  Each thread has a POSIX
 * timer on its own CPU-time clock (CLOCK_THREAD_CPUTIME_ID) that sends LT_STACK_SIGNAL to
 * that thread (SIGEV_THREAD_ID): a thread is sampled for the CPU time it uses, a blocked one
 * not at all.  The handler unwinds the interrupted context through DWARF with libunwind
 * (local unwinding: its fast path, which caches each address's frame kind) and records the
 * return addresses in the thread's own buffer (LT_REC_STACK), as any event.
 *
 * libunwind is loaded privately (dlopen RTLD_LOCAL, when sampling is asked for): never a
 * load-time dependency of libtrace.so, and its _Unwind_* functions are not in the global
 * scope, so the program's C++ exceptions keep libgcc's unwinder.
 *
 * Safety.  The signal is a real-time one the program is unlikely to use, not SIGPROF: a
 * program's own ITIMER_PROF and SIGPROF handler keep working.  The handler records nothing
 * while the tracer runs on the thread (its guard: the record being written is whole) or the
 * thread is inside dlopen or dlclose (libunwind walks the loader's lists, which are being
 * changed then), keeps errno, and ignores the signal when someone else sent it.  A thread that
 * blocks the signal is not sampled: the kernel keeps the signal pending, and what its timer
 * reached meanwhile is told when the thread ends, or at exit for the threads still alive
 * (stack_blocked meta lines: the periods of CPU time the thread used that no signal came for).
 * The frames of this library itself (wrappers, trampolines) are left out of the samples: the
 * program's and its libraries' frames are kept.  Timers are per thread and not inherited: a forked
 * child's thread gets its own when it registers; before exec the calling thread's timer goes and a
 * pending sample is taken out of the way (exec keeps pending signals, and the new program would die
 * of it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../core/module.h"

#if __has_include(<libunwind.h>) && defined(__x86_64__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define HAVE_UNWIND 1
#else
#define HAVE_UNWIND 0
#endif

#define LT_STACK_SIGNAL (SIGRTMAX - 7)

static uint64_t period; /* ns of CPU time; 0: off */
/* The module's per-thread word: the thread's timer id + 1 in the low 32 bits (0: none), the
 * periods its signals stood for in the high 32 (taken, or dropped while the tracer ran). */
#define TIMER_MASK 0xffffffffull
static int ready;	     /* the handler is installed and libunwind loaded */
static volatile int stopped; /* the process ends: the tracer's own exit is not the program */

extern const struct lt_module lt_module_stack;

#if HAVE_UNWIND
static struct {
	int (*init_local2)(unw_cursor_t *, unw_context_t *, int);
	int (*step)(unw_cursor_t *);
	int (*get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
	int (*set_caching_policy)(unw_addr_space_t, unw_caching_policy_t);
	unw_addr_space_t *local_as;
	int (*backtrace)(void **, int);
	int (*getcontext)(unw_context_t *);
} unw;

static int load_unwind(void)
{
	static const char *const names[] = {"libunwind.so.8", "libunwind.so"};
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		lt_warn("stack sampling: cannot load libunwind (%s); LIBTRACE_STACK_SAMPLING "
			"ignored",
			dlerror());
		return -1;
	}
#define SYM(field, name)                                                                       \
	do {                                                                                   \
		*(void **)&unw.field = dlsym(h, name);                                         \
		if (!unw.field) {                                                              \
			lt_warn("stack sampling: libunwind lacks %s; LIBTRACE_STACK_SAMPLING " \
				"ignored",                                                     \
				name);                                                         \
			return -1;                                                             \
		}                                                                              \
	} while (0)
	SYM(init_local2, "_ULx86_64_init_local2");
	SYM(step, "_ULx86_64_step");
	SYM(get_reg, "_ULx86_64_get_reg");
	SYM(set_caching_policy, "_ULx86_64_set_caching_policy");
	SYM(local_as, "_ULx86_64_local_addr_space");
	SYM(backtrace, "unw_backtrace");
	SYM(getcontext, "_Ux86_64_getcontext");
#undef SYM
	unw.set_caching_policy(*unw.local_as, UNW_CACHE_PER_THREAD);
	return 0;
}

/*
 * The return addresses of the interrupted context uc into ips (at most LT_STACK_MAX),
 * innermost first; their number.  libunwind's fast path (unw_backtrace: each address's frame
 * kind cached) walks from the handler through the signal frame, about 10 ns a frame; the
 * interrupted instruction is where the sample begins.  Should the fast path not find it, the
 * general one (a cursor on the signal context, DWARF each step: microseconds a frame), which
 * says in *early whether it stopped at an unreadable frame.
 */
static unsigned unwind(void *uc, uint64_t *ips, int *early)
{
	void *fast[LT_STACK_MAX + 16];
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	int got = unw.backtrace(fast, (int)(sizeof(fast) / sizeof(fast[0])));
	for (int k = 0; k < got; k++) {
		if ((uintptr_t)fast[k] != pc)
			continue;
		unsigned n = 0;
		for (int i = k; i < got && n < LT_STACK_MAX; i++)
			ips[n++] = (uintptr_t)fast[i];
		return n;
	}
	unw_cursor_t cur;
	unsigned n = 0;
	int r = unw.init_local2(&cur, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME);
	if (r < 0)
		return 0;
	do {
		unw_word_t ip;
		if (unw.get_reg(&cur, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		ips[n++] = ip;
	} while (n < LT_STACK_MAX && (r = unw.step(&cur)) > 0);
	*early = r < 0;
	return n;
}

/* Unwinds the interrupted context uc and records it on t (guard held): a sample that stands
 * for `overrun` + 1 periods (the kernel checks CPU-time timers at its tick, so a period
 * shorter than the tick is reached several times at once). */
static void sample(struct lt_thread *t, void *uc, int overrun)
{
	uint64_t ips[LT_STACK_MAX];
	int early = 0;
	unsigned got = unwind(uc, ips, &early), n = 0;
	for (unsigned i = 0; i < got; i++)
		if (!lt_self_code((uintptr_t)ips[i]))
			ips[n++] = ips[i];
	if (!n)
		return;
	unsigned words = 2 + n;
	uint64_t *p = lt_reserve(t, words);
	uint64_t ns = period * (uint64_t)(overrun > 0 ? overrun + 1 : 1);
	uint32_t arg = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	lt_rec_put(p, lt_now(), LT_REC_STACK, words, (unsigned)early, arg);
	memcpy(p + 2, ips, n * sizeof(*ips));
	lt_commit(t);
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (si->si_code != SI_TIMER)
		return; /* not our timer's */
	int saved = errno;
	struct lt_thread *t = lt_self;
	if (t) {
		union lt_local *w = lt_local(t, &lt_module_stack);
		uint64_t had =
		    (w->n >> 32) + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0) + 1;
		if (had > UINT32_MAX)
			had = UINT32_MAX;
		__atomic_store_n(&w->n, (w->n & TIMER_MASK) | had << 32, __ATOMIC_RELAXED);
	}
	if (t && !t->guard && !stopped && !lt_in_loader && lt_state == LT_STATE_ON) {
		lt_guard_take(t);
		sample(t, uc, si->si_overrun);
		lt_finish(t);
	}
	errno = saved;
}
#endif

static void start(int forked)
{
	if (forked)
		return; /* the handler and libunwind came with the parent's memory */
	period = lt_setting("LIBTRACE_STACK_SAMPLING");
	if (!period)
		return;
#if HAVE_UNWIND
	if (load_unwind())
		return;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(LT_STACK_SIGNAL, &sa, NULL)) {
		lt_warn("stack sampling: cannot handle signal SIGRTMAX-7: %s", strerror(errno));
		return;
	}
	ready = 1;
	lt_meta_line(LT_META_STACK " %llu", (unsigned long long)period);
#else
	lt_warn("stack sampling: this libtrace was built without libunwind; "
		"LIBTRACE_STACK_SAMPLING ignored");
#endif
}

/* The thread's timer: its id + 1 in the module's per-thread word (0: none). */
static void thread_start(struct lt_thread *t)
{
	if (!ready || lt_helper_thread)
		return; /* the tracer's own threads (the sampler) are not the program's */
#if HAVE_UNWIND
	/* libunwind keeps per-thread state in thread-local storage, which a library loaded
	 * with dlopen allocates (malloc) on the thread's first use: that first use happens
	 * here, not in a signal handler that may have interrupted malloc. */
	void *warm[4];
	unw.backtrace(warm, 4);
	unw_context_t uc;
	unw_cursor_t cur;
	if (unw.getcontext(&uc) == 0 && unw.init_local2(&cur, &uc, 0) == 0)
		unw.step(&cur);
#endif
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = LT_STACK_SIGNAL;
	sev._sigev_un._tid = (pid_t)t->tid;
	timer_t timer;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer))
		return;
	struct itimerspec its;
	its.it_interval.tv_sec = (time_t)(period / 1000000000u);
	its.it_interval.tv_nsec = (long)(period % 1000000000u);
	its.it_value = its.it_interval;
	if (timer_settime(timer, 0, &its, NULL)) {
		timer_delete(timer);
		return;
	}
	lt_local(t, &lt_module_stack)->n = ((uint64_t)(uintptr_t)timer & TIMER_MASK) + 1;
}

/* The samples a thread that blocks the signal did not give: the periods of CPU time it used
 * (cpu_ns) that no signal stood for (word: its per-thread word). */
static uint64_t not_taken(uint64_t word, uint64_t cpu_ns)
{
	uint64_t due = cpu_ns / period, had = word >> 32;
	return due > had ? due - had : 1; /* pending: one at least */
}

static void say_blocked(uint32_t index, uint32_t tid, uint64_t count)
{
	lt_meta_line(LT_META_STACK_BLOCKED " %u %u %llu", index, tid, (unsigned long long)count);
}

/* On the thread t itself: a pending sample means the signal is blocked here. */
static void check_self(struct lt_thread *t, uint64_t word)
{
	sigset_t pending, mask;
	struct timespec cpu;
	/* (both: one that is pending and not blocked comes as the system call returns) */
	if (pthread_sigmask(SIG_BLOCK, NULL, &mask) || !sigismember(&mask, LT_STACK_SIGNAL) ||
	    sigpending(&pending) || !sigismember(&pending, LT_STACK_SIGNAL) ||
	    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu))
		return;
	say_blocked(t->index, t->tid,
		    not_taken(word, (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec));
}

static void thread_end(struct lt_thread *t)
{
	union lt_local *w = lt_local(t, &lt_module_stack);
	if (w->n & TIMER_MASK) {
		if (t == lt_self && !stopped)
			check_self(t, w->n);
		timer_delete((timer_t)(uintptr_t)((w->n & TIMER_MASK) - 1));
		w->n = 0;
	}
}

static void before_exec(void)
{
	struct lt_thread *t = lt_self;
	if (!ready || !t)
		return;
	thread_end(t);
	/* A sample already sent and still pending would outlive exec: take it now. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, LT_STACK_SIGNAL);
	if (pthread_sigmask(SIG_BLOCK, &set, &old) == 0) {
		struct timespec zero = {0, 0};
		while (sigtimedwait(&set, NULL, &zero) == LT_STACK_SIGNAL)
			;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
}

/* The threads alive at exit, as end_flush found them. */
#define LIVE_MAX 1024
static struct live {
	uint32_t index, tid;
	uint64_t word;
} live[LIVE_MAX];
static size_t nlive;

static void note_live(struct lt_thread *t, void *arg)
{
	(void)arg;
	uint64_t w = __atomic_load_n(&lt_local(t, &lt_module_stack)->n, __ATOMIC_RELAXED);
	if ((w & TIMER_MASK) && nlive < LIVE_MAX)
		live[nlive++] = (struct live){t->index, t->tid, w};
}

/* Whether the signal is in the mask of a status file's line `key` (hexadecimal, bit n - 1 for
 * signal n). */
static int has_signal(const char *status, const char *key)
{
	const char *p = strstr(status, key);
	return p && (strtoull(p + strlen(key), NULL, 16) >> (LT_STACK_SIGNAL - 1) & 1);
}

/* Whether thread tid blocks the signal and holds it pending (/proc/self/task/TID/status). */
static int pending_on(uint32_t tid)
{
	char path[64] = "/proc/self/task/", digits[12], buf[4096];
	size_t at = strlen(path), k = 0;
	do
		digits[k++] = (char)('0' + tid % 10);
	while ((tid /= 10) && k < sizeof(digits));
	while (k)
		path[at++] = digits[--k];
	memcpy(path + at, "/status", sizeof("/status"));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	return has_signal(buf, "\nSigPnd:") && has_signal(buf, "\nSigBlk:");
}

/* The end: the tracer's own exit is not the program; the threads still alive that block
 * the signal are said. */
static void end_flush(void)
{
	stopped = 1;
	if (!ready)
		return;
	nlive = 0;
	lt_thread_each(note_live, NULL);
	for (size_t i = 0; i < nlive; i++) {
		const struct live *l = &live[i];
		struct lt_thread *me = lt_self;
		if (me && me->index == l->index) {
			check_self(me, l->word);
			continue;
		}
		/* Another thread's CPU-time clock, as glibc's pthread_getcpuclockid makes it. */
		clockid_t clock = (clockid_t)(~l->tid << 3 | 6);
		struct timespec cpu;
		if (!pending_on(l->tid) || clock_gettime(clock, &cpu))
			continue;
		say_blocked(
		    l->index, l->tid,
		    not_taken(l->word, (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec));
	}
}

LT_MODULE(stack) = {
    .name = "stack",
    .order = 40,
    .start = start,
    .thread_start = thread_start,
    .thread_end = thread_end,
    .before_exec = before_exec,
    .end_flush = end_flush,
};
