// SPDX-License-Identifier: BSD-3-Clause
/*
 * proc.c - the proc module: fork, the exec family, posix_spawn, dlopen and dlclose.
 *
 * fork: the child's state is rebuilt by the atfork handler (init.c) before fork returns.
 * exec: everything committed is copied to the events file first; the new image, still
 * preloaded, starts a new process directory in the same trace.  dlopen: the new mappings
 * go to the meta file so that the tools can resolve addresses in the library.  prctl:
 * the settings under which the tracer could no longer work on the thread.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../core/module.h"
#include "../common/modules.h"

static __typeof__(&fork) real_fork;

LT_EXPORT pid_t fork(void)
{
	LT_RESOLVE(fork, NULL);
	/* A program with one thread forks with one thread: no helper of ours runs then, nor
	 * after fork returns (Python warns about forking a process with threads).  The
	 * helpers come back when next needed: not for the records of the call itself, nor
	 * for the first chunk filled after it (writer.c). */
	struct lt_thread *held = lt_self;
	if (held)
		held->hold_writer = LT_HOLD_FORK;
	lt_helpers_pause();
	struct lt_thread *t = lt_begin(LT_MOD_PROC);
	if (!t) {
		pid_t pid = real_fork();
		if (held && pid != 0)
			held->hold_writer = LT_HOLD_NEXT;
		return pid;
	}
	LT_NOTE_CALLER(t);
	lt_counters(t, LT_MOD_PROC);
	lt_call_enter_n(t, LT_FN_fork, 0, 0, 0);
	t->in_fork = 1;
	lt_finish(t);
	pid_t pid = real_fork();
	int saved = errno;
	if (pid == 0)
		t = lt_self; /* the child's fresh state (NULL when tracing stopped there) */
	else
		t->in_fork = 0;
	if (t && lt_resume(t)) {
		lt_counters(t, LT_MOD_PROC); /* off in the child (papi.c) */
		lt_call_leave(t, LT_FN_fork, pid < 0 ? -saved : pid);
		lt_finish(t);
	}
	if (held && pid != 0)
		held->hold_writer = LT_HOLD_NEXT;
	errno = saved;
	return pid;
}

/*
 * unshare and setns of a user namespace (and unshare of the address space or the signal
 * handlers) refuse a process with several threads: the helpers step aside first, as for
 * fork.  Not traced calls.
 */
static __typeof__(&unshare) real_unshare;
static __typeof__(&setns) real_setns;

#define NEEDS_ONE_THREAD (CLONE_NEWUSER | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)

LT_EXPORT int unshare(int flags)
{
	LT_RESOLVE(unshare, NULL);
	if (flags & NEEDS_ONE_THREAD)
		lt_helpers_pause();
	return real_unshare(flags);
}

LT_EXPORT int setns(int fd, int nstype)
{
	LT_RESOLVE(setns, NULL);
	if (nstype == 0 || (nstype & CLONE_NEWUSER))
		lt_helpers_pause(); /* 0: any kind, a user namespace among them */
	return real_setns(fd, nstype);
}

/*
 * prctl turning the TSC off for the thread (PR_SET_TSC, PR_TSC_SIGSEGV): the clock goes over
 * to the clock_gettime system call first (clock.c), since rdtsc and the vDSO would raise
 * SIGSEGV.  Seccomp's strict mode (PR_SET_SECCOMP, SECCOMP_MODE_STRICT) allows read, write,
 * exit and sigreturn only (and turns the TSC off): the thread ends its part of the trace
 * first (its THREAD_END) and is not traced after it; should the call fail, it is traced
 * again, as a new thread.  The arguments are passed on as glibc's prctl reads them.
 */
static __typeof__(&prctl) real_prctl;

LT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	LT_RESOLVE(prctl, NULL);
	int strict = option == PR_SET_SECCOMP && a2 == 1; /* SECCOMP_MODE_STRICT */
	if (option == PR_SET_TSC && a2 == PR_TSC_SIGSEGV)
		lt_clock_tsc_off();
	if (strict)
		lt_thread_seal();
	int ret = real_prctl(option, a2, a3, a4, a5);
	if (strict && ret != 0) {
		int saved = errno;
		lt_thread_unseal();
		errno = saved;
	}
	return ret;
}

/* mlockall(MCL_CURRENT) refused only because of the tracer's mappings (an unprivileged
 * program under RLIMIT_MEMLOCK): the program's own are locked instead (buffer.c). */
static __typeof__(&mlockall) real_mlockall;

LT_EXPORT int mlockall(int flags)
{
	LT_RESOLVE(mlockall, NULL);
	int ret = real_mlockall(flags);
	if (ret == 0 || errno != ENOMEM || !(flags & MCL_CURRENT) ||
	    __atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return ret;
	int saved = errno;
	if (lt_buffer_mlock_program(flags) == 0)
		return 0;
	errno = saved;
	return -1;
}

/* _exit skips the destructors: end the trace here (no event, the process is gone). */
static __typeof__(&_exit) real__exit;
static __typeof__(&_Exit) real__Exit;

LT_EXPORT void _exit(int status)
{
	LT_RESOLVE(_exit, NULL);
	lt_process_end("_exit");
	real__exit(status);
}

LT_EXPORT void _Exit(int status)
{
	LT_RESOLVE(_Exit, NULL);
	lt_process_end("_exit");
	real__Exit(status);
}

/*
 * vfork.  The child borrows the calling thread's stack until it execs or exits, so the
 * wrapper is a jump, not a call: it raises the thread's guards (lt_vfork_begin) and goes on
 * into the real vfork as if called from the program.  The child then records nothing into
 * the parent's stream; the image it execs is traced as a process of its own (a child that
 * _exits unexec'd leaves no trace: between vfork and exec, POSIX allows only exec and
 * _exit).  x86-64 only: elsewhere vfork is not wrapped, and the child's calls land in the
 * parent's stream, as they did before.
 */
#if defined(__x86_64__)
static __typeof__(&vfork) real_vfork;

LT_HIDDEN void *lt_vfork_prepare(void);
void *lt_vfork_prepare(void)
{
	LT_RESOLVE(vfork, NULL);
	if (real_vfork)
		lt_vfork_begin();
	return (void *)real_vfork;
}

/* No real vfork found (not reached with glibc): the call fails as an unsupported one. */
LT_HIDDEN pid_t lt_vfork_none(void);
pid_t lt_vfork_none(void)
{
	errno = ENOSYS;
	return -1;
}

__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	endbr64\n"
	"	subq $8, %rsp\n" /* the call below with the stack aligned */
	"	.cfi_adjust_cfa_offset 8\n"
	"	call lt_vfork_prepare\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n" /* the real vfork returns to our caller */
	"1:	jmp lt_vfork_none\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif

/*
 * exec: CALL_ENTER(path), flush, the real call; CALL_LEAVE only when it failed.  In the
 * child of vfork (which shares the parent's memory, its thread state included) nothing is
 * recorded: those records would land in the parent's stream.
 */
static struct lt_thread *exec_begin(const char *path, struct lt_caller caller)
{
	struct lt_thread *t = lt_begin(LT_MOD_PROC);
	if (!t)
		return NULL;
	if (!lt_is_traced_process()) {
		lt_finish(t);
		return NULL;
	}
	lt_note_caller(t, caller);
	lt_counters(t, LT_MOD_PROC);
	lt_call_enter_n(t, LT_FN_execve, 1, lt_string_id(t, path), 0);
	lt_before_exec();
	lt_finish(t);
	return t;
}

static int exec_end(struct lt_thread *t, int ret)
{
	int saved = errno;
	if (t && lt_resume(t)) {
		lt_counters(t, LT_MOD_PROC);
		lt_call_leave(t, LT_FN_execve, -saved);
		lt_finish(t);
	}
	errno = saved;
	return ret;
}

static __typeof__(&execve) real_execve;
static __typeof__(&execv) real_execv;
static __typeof__(&execvp) real_execvp;
static __typeof__(&execvpe) real_execvpe;

LT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	LT_RESOLVE(execve, NULL);
	struct lt_thread *t = exec_begin(path, LT_CALLER());
	return exec_end(t, real_execve(path, argv, envp));
}

LT_EXPORT int execv(const char *path, char *const argv[])
{
	LT_RESOLVE(execv, NULL);
	struct lt_thread *t = exec_begin(path, LT_CALLER());
	return exec_end(t, real_execv(path, argv));
}

LT_EXPORT int execvp(const char *file, char *const argv[])
{
	LT_RESOLVE(execvp, NULL);
	struct lt_thread *t = exec_begin(file, LT_CALLER());
	return exec_end(t, real_execvp(file, argv));
}

LT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	LT_RESOLVE(execvpe, NULL);
	struct lt_thread *t = exec_begin(file, LT_CALLER());
	return exec_end(t, real_execvpe(file, argv, envp));
}

/* The execl family, as glibc does it: collect the arguments, then the v form. */
#define COLLECT_ARGS(first, argv, ap, envp_out) \
	size_t argc_ = 1;                       \
	va_start(ap, first);                    \
	while (va_arg(ap, const char *))        \
		argc_++;                        \
	va_end(ap);                             \
	char *argv[argc_ + 1];                  \
	argv[0] = (char *)first;                \
	va_start(ap, first);                    \
	for (size_t i_ = 1; i_ <= argc_; i_++)  \
		argv[i_] = va_arg(ap, char *);  \
	envp_out;                               \
	va_end(ap)

LT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, argv, ap, (void)0);
	return execv(path, argv);
}

LT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	COLLECT_ARGS(arg, argv, ap, (void)0);
	return execvp(file, argv);
}

LT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char *const *envp;
	COLLECT_ARGS(arg, argv, ap, envp = va_arg(ap, char *const *));
	return execve(path, argv, envp);
}

static __typeof__(&posix_spawn) real_posix_spawn;
static __typeof__(&posix_spawnp) real_posix_spawnp;

#define WRAP_SPAWN(name)                                                                       \
	LT_EXPORT int name(pid_t *restrict pid, const char *restrict path,                     \
			   const posix_spawn_file_actions_t *actions,                          \
			   const posix_spawnattr_t *restrict attr, char *const argv[restrict], \
			   char *const envp[restrict])                                         \
	{                                                                                      \
		LT_RESOLVE(name, NULL);                                                        \
		struct lt_thread *t = lt_begin(LT_MOD_PROC);                                   \
		if (!t)                                                                        \
			return real_##name(pid, path, actions, attr, argv, envp);              \
		LT_NOTE_CALLER(t);                                                             \
		lt_counters(t, LT_MOD_PROC);                                                   \
		lt_call_enter_n(t, LT_FN_posix_spawn, 1, lt_string_id(t, path), 0);            \
		lt_finish(t);                                                                  \
		pid_t child = 0;                                                               \
		int ret = real_##name(&child, path, actions, attr, argv, envp);                \
		if (pid)                                                                       \
			*pid = child;                                                          \
		if (lt_resume(t)) {                                                            \
			lt_counters(t, LT_MOD_PROC);                                           \
			lt_call_leave(t, LT_FN_posix_spawn, ret == 0 ? child : -ret);          \
			lt_finish(t);                                                          \
		}                                                                              \
		return ret;                                                                    \
	}

WRAP_SPAWN(posix_spawn)
WRAP_SPAWN(posix_spawnp)

/*
 * dlopen looks at its caller to apply the caller's DT_RPATH/DT_RUNPATH to a bare name.
 * Called from here, the caller would be libtrace.so.  So for a bare name, we ask ld.so for
 * the search list it would use for the real caller (dlinfo RTLD_DI_SERINFO: RPATH,
 * LD_LIBRARY_PATH as ld.so read it at start, RUNPATH; $ORIGIN expanded), take the first
 * directory that holds the name, and hand dlopen that path.  The system directories and the
 * ld.so cache are left to dlopen itself, which searches them the same way for any caller.
 */
static __typeof__(&dlopen) real_dlopen;
static __typeof__(&dlclose) real_dlclose;

static void *dlopen_as(const char *name, int mode, const void *caller)
{
	struct link_map *lm = NULL;
	Dl_info info;
	if (!name || strchr(name, '/') || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) ||
	    !lm)
		return real_dlopen(name, mode);
	void *h = real_dlopen(name, mode | RTLD_NOLOAD); /* already loaded under that name */
	if (h)
		return h;
	Dl_serinfo size;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &size) != 0 || size.dls_size > 65536)
		return real_dlopen(name, mode);
	union {
		Dl_serinfo si;
		char bytes[65536];
	} *buf = malloc(sizeof(*buf));
	if (!buf)
		return real_dlopen(name, mode);
	buf->si.dls_size = size.dls_size;
	buf->si.dls_cnt = size.dls_cnt;
	char path[PATH_MAX];
	int found = 0;
	if (dlinfo(lm, RTLD_DI_SERINFOSIZE, &buf->si) == 0 &&
	    dlinfo(lm, RTLD_DI_SERINFO, &buf->si) == 0) {
		for (unsigned i = 0; i < buf->si.dls_cnt && !found; i++) {
			const Dl_serpath *p = &buf->si.dls_serpath[i];
			if (p->dls_flags & LA_SER_DEFAULT)
				break; /* from here on dlopen searches exactly as ld.so would */
			if (snprintf(path, sizeof(path), "%s/%s", p->dls_name, name) <
				(int)sizeof(path) &&
			    access(path, F_OK) == 0)
				found = 1;
		}
	}
	free(buf);
	return real_dlopen(found ? path : name, mode);
}

/* dlopen_as inside the loader mark (lt_in_loader). */
static void *loader_dlopen(const char *name, int mode, const void *caller)
{
	lt_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	void *h = dlopen_as(name, mode, caller);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lt_in_loader--;
	return h;
}

static int loader_dlclose(void *h)
{
	lt_in_loader++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	int ret = real_dlclose(h);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lt_in_loader--;
	return ret;
}

LT_EXPORT void *dlopen(const char *name, int mode)
{
	LT_RESOLVE(dlopen, NULL);
	const void *caller = __builtin_return_address(0);
	struct lt_thread *t = lt_begin(LT_MOD_PROC);
	if (!t) {
		void *h = loader_dlopen(name, mode, caller);
		lt_dlopened(name, h);
		return h;
	}
	LT_NOTE_CALLER(t);
	lt_counters(t, LT_MOD_PROC);
	lt_call_enter_n(t, LT_FN_dlopen, 1, lt_string_id(t, name ? name : ""), 0);
	lt_finish(t);
	void *h = loader_dlopen(name, mode, caller);
	lt_dlopened(name, h);
	if (lt_resume(t)) {
		if (h && name) {
			/* dlerror() state is the program's: nothing below touches it. */
			lt_meta_escaped(LT_META_DLOPEN, name);
			lt_meta_maps();
		}
		lt_counters(t, LT_MOD_PROC);
		lt_call_leave(t, LT_FN_dlopen, h != NULL);
		lt_finish(t);
	}
	return h;
}

LT_EXPORT int dlclose(void *h)
{
	LT_RESOLVE(dlclose, NULL);
	struct lt_thread *t = lt_begin(LT_MOD_PROC);
	if (!t)
		return loader_dlclose(h);
	LT_NOTE_CALLER(t);
	lt_counters(t, LT_MOD_PROC);
	lt_call_enter_cs(t, LT_FN_dlclose, h);
	lt_finish(t);
	int ret = loader_dlclose(h);
	if (lt_resume(t)) {
		lt_counters(t, LT_MOD_PROC);
		lt_call_leave(t, LT_FN_dlclose, ret);
		lt_finish(t);
	}
	return ret;
}

LT_MODULE(proc) = {.name = "proc", .bit = LT_MOD_PROC, .order = 20};
