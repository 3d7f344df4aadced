// SPDX-License-Identifier: BSD-3-Clause
/*
 * init.c - start and end of tracing in a process: configuration, the trace directory, the
 * process meta data, fork handling, and the slow half of lt_begin().
 *
 * Init runs from the library constructor, or earlier from the first intercepted call made
 * by another library's constructor.  Whatever fails here turns tracing off for the process
 * (logged once); the program always runs on.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "lt.h"

int lt_state;
unsigned lt_active;
unsigned long (*lt_getauxval)(unsigned long) = getauxval; /* replaced by a unit test */

static LT_PAGE_ALIGNED char trace_dir[PATH_MAX];
static LT_PAGE_ALIGNED char proc_dir[PATH_MAX];
static int made_trace_dir; /* this process made trace_dir (not a parent directory of it) */
static pid_t traced_pid;
static int is_root;	 /* no traced parent: this process prints the exit line */
static int stderr_known; /* fd 2 was open at start ... */
static dev_t stderr_dev; /* ... and was this file */
static ino_t stderr_ino;

const char *lt_process_dir(void)
{
	return proc_dir;
}

void *lt_dlsym_next(const char *name, const char *version)
{
	void *p = version ? dlvsym(RTLD_NEXT, name, version) : NULL;
	if (!p)
		p = dlsym(RTLD_NEXT, name);
	return p;
}

void *lt_dlsym_runtime(const char *name, const char *const *libs)
{
	void *p = lt_dlsym_next(name, NULL);
	if (p)
		return p;
	static void *(*real_dlopen)(const char *, int); /* libc's: ours would record the call */
	if (!real_dlopen)
		real_dlopen = lt_dlsym_next("dlopen", NULL);
	for (size_t i = 0; real_dlopen && libs[i]; i++) {
		/* NOLOAD: only a runtime already in the process; the handle is kept, the
		 * runtime stays loaded as long as its user anyway. */
		void *h = real_dlopen(libs[i], RTLD_LAZY | RTLD_NOLOAD);
		if (h && (p = dlsym(h, name)))
			return p;
	}
	return NULL;
}

/* Replaces every byte outside [A-Za-z0-9._-] by '_'. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			*s = '_';
}

/*
 * The trace directory is resolved once, at start, one component at a time from "/": a
 * symbolic link is followed only when it is owned by us or by root (the reasoning of
 * fs.protected_symlinks: whoever planted a link in a shared directory must not choose where
 * our files go, and a link we or root made is the user's own choice), and its target is
 * walked by the same rule.  The directory itself must be a real directory owned by us.
 * A forked child walks the path again and accepts only the directory found at start (same
 * device and inode), so a component swapped meanwhile cannot redirect it.  No descriptor
 * is kept for this: programs close what they did not open.
 */
static dev_t trace_dev;
static ino_t trace_ino;

/* Symbolic links followed in one walk at most, as the kernel's MAXSYMLINKS. */
enum { WALK_MAX_LINKS = 40 };

static int dir_walk(int at, char *path, int create, int *links);

/* The symbolic link `c` in directory dfd, owned by us or by root: walks its target.  A
 * function of its own, so that the target's buffer is on the stack only where there is a
 * link (each new page of the start's stack is a page fault). */
static __attribute__((noinline)) int walk_link(int dfd, const char *c, int create, int *links)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dfd, c, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	return dir_walk(dfd, target, create, links);
}

/*
 * Opens `path` (relative to `at` unless absolute) as an O_PATH directory, component by
 * component, under the rule above; with `create`, missing components are made 0700.
 * `path` is cut into its components here.  Returns a descriptor, or -errno with a warning
 * naming trace_dir.
 */
static int dir_walk(int at, char *path, int create, int *links)
{
	char *save = NULL;
	int dfd = path[0] == '/' ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
				 : fcntl(at, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		return -errno;
	for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next = -1, err = 0;
		if (!strcmp(c, "."))
			continue;
		if (fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			err = -errno;
			if (err == -ENOENT && create &&
			    (mkdirat(dfd, c, 0700) == 0 || errno == EEXIST))
				err = fstatat(dfd, c, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
		}
		if (err) {
			lt_warn("cannot %s trace directory %s: %s: %s; not tracing",
				create ? "create" : "open", trace_dir, c, strerror(-err));
		} else if (S_ISLNK(st.st_mode)) {
			if (st.st_uid != geteuid() && st.st_uid != 0) {
				lt_warn(
				    "refusing trace directory %s: its component %s is a symbolic "
				    "link owned by uid %u, neither us nor root; not tracing",
				    trace_dir, c, (unsigned)st.st_uid);
				err = -EPERM;
			} else if (++*links > WALK_MAX_LINKS) {
				lt_warn("refusing trace directory %s: too many symbolic links; "
					"not tracing",
					trace_dir);
				err = -ELOOP;
			} else {
				next = walk_link(dfd, c, create, links);
				err = next < 0 ? next : 0;
			}
		} else if (!S_ISDIR(st.st_mode)) {
			lt_warn("refusing trace directory %s: %s is not a directory; not tracing",
				trace_dir, c);
			err = -ENOTDIR;
		} else {
			/* O_NOFOLLOW: a directory swapped for a link since the stat fails here. */
			next = openat(dfd, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0) {
				err = -errno;
				lt_warn("cannot open trace directory %s: %s: %s; not tracing",
					trace_dir, c, strerror(-err));
			}
		}
		close(dfd);
		if (err)
			return err;
		dfd = next;
	}
	return dfd;
}

/*
 * Opens trace_dir (absolute) as an O_PATH descriptor: its parents walked by dir_walk, the
 * directory itself a real directory (not a symlink) owned by us.  With `create`, what is
 * missing is made 0700.  Returns the descriptor, or -errno with a warning.
 */
static int trace_dir_open(int create)
{
	char parent[PATH_MAX];
	lt_snprintf(parent, sizeof(parent), "%s", trace_dir);
	size_t len = strlen(parent);
	while (len > 1 && parent[len - 1] == '/')
		parent[--len] = '\0';
	char *slash = strrchr(parent, '/'), root[] = "/", *walk = root;
	const char *name = slash[1] ? slash + 1 : ".";
	if (slash != parent) { /* "/a/b" -> "/a"; "/b" -> "/", and the name stays "b" */
		*slash = '\0';
		walk = parent;
	}
	int links = 0;
	int pfd = dir_walk(AT_FDCWD, walk, create, &links);
	if (pfd < 0)
		return pfd;
	struct stat st;
	int fd = -1, err = 0;
	made_trace_dir = create && mkdirat(pfd, name, 0700) == 0;
	if (create && !made_trace_dir && errno != EEXIST) {
		err = -errno;
		lt_warn("cannot create trace directory %s: %s; not tracing", trace_dir,
			strerror(-err));
	} else if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		err = -errno;
		lt_warn("cannot open trace directory %s: %s; not tracing", trace_dir,
			strerror(-err));
	} else if (S_ISLNK(st.st_mode)) {
		lt_warn("refusing trace directory %s: it is a symbolic link; not tracing",
			trace_dir);
		err = -ELOOP;
	} else if (!S_ISDIR(st.st_mode)) {
		lt_warn("refusing trace directory %s: not a directory; not tracing", trace_dir);
		err = -ENOTDIR;
	} else if ((fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
		   fstat(fd, &st) != 0) {
		err = -errno;
		lt_warn("cannot open trace directory %s: %s; not tracing", trace_dir,
			strerror(-err));
	} else if (st.st_uid != geteuid()) {
		/* Checked on the descriptor: the directory we would really write into. */
		lt_warn("refusing trace directory %s: owned by uid %u, not by us; not tracing",
			trace_dir, (unsigned)st.st_uid);
		err = -EPERM;
	}
	close(pfd);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	return fd;
}

/* trace_dir for a relative LIBTRACE_OUTPUT, or for none (the default name), in the current
 * directory.  A function of its own: its buffers are not on the stack during the walk. */
static __attribute__((noinline)) int relative_trace_dir(void)
{
	char cwd[PATH_MAX - 128];
	if (!getcwd(cwd, sizeof(cwd))) {
		int err = errno;
		lt_warn("cannot get the current directory: %s; not tracing", strerror(err));
		return -err;
	}
	int len;
	if (lt_cfg.output[0]) {
		len = lt_snprintf(trace_dir, sizeof(trace_dir), "%s/%s", cwd, lt_cfg.output);
	} else {
		char prog[64], date[32];
		lt_snprintf(prog, sizeof(prog), "%s", program_invocation_short_name);
		sanitize(prog);
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y%m%d-%H%M%S", &tm);
		len = lt_snprintf(trace_dir, sizeof(trace_dir), "%s/libtrace-%s-%s-%d", cwd, prog,
				  date, (int)getpid());
	}
	if (len < 0 || len >= (int)sizeof(trace_dir) - 64 || (size_t)len >= sizeof(lt_cfg.output)) {
		lt_warn("trace directory path too long: %s/%s; not tracing", cwd, lt_cfg.output);
		return -ENAMETOOLONG;
	}
	/*
	 * Processes this one starts trace into the same place: a forked child uses
	 * trace_dir, and an exec'd image (exec, system, spawn) reads LIBTRACE_OUTPUT
	 * again, after the program may have chdir()ed, so it must be absolute.  Done
	 * once, here, while the constructor runs before the program's own threads.
	 */
	lt_snprintf(lt_cfg.output, sizeof(lt_cfg.output), "%s", trace_dir);
	setenv("LIBTRACE_OUTPUT", trace_dir, 1);
	return 0;
}

/* Resolves trace_dir and creates it.  Returns an O_PATH descriptor of it, or -errno. */
static int make_trace_dir(void)
{
	if (lt_cfg.output[0] == '/') {
		lt_snprintf(trace_dir, sizeof(trace_dir), "%s", lt_cfg.output);
	} else {
		int err = relative_trace_dir();
		if (err)
			return err;
	}
	int fd = trace_dir_open(1);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) != 0) {
		close(fd);
		return -EBADF;
	}
	if (fd >= 0) {
		trace_dev = st.st_dev;
		trace_ino = st.st_ino;
	}
	return fd;
}

/* In a forked child: trace_dir again, only if it is still the directory found at start. */
static int reopen_trace_dir(void)
{
	int fd = trace_dir_open(0);
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_dev != trace_dev || st.st_ino != trace_ino) {
		lt_warn("trace directory %s is no longer the directory found at start; "
			"not tracing this process",
			trace_dir);
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * Creates <trace>/<host>.<pid>, or .<pid>.N when an earlier image of this pid (exec) has one,
 * in the directory `at` (trace_dir's descriptor), and checks that its path, which the
 * tracer's files are opened by, names what was created.
 */
static int make_process_dir(int at)
{
	char host[256], name[300];
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	sanitize(host);
	if (strlen(trace_dir) + strlen(host) + 40 > sizeof(proc_dir)) {
		lt_warn("trace directory path too long: %s; not tracing", trace_dir);
		return -ENAMETOOLONG;
	}
	struct stat st, made;
	lt_snprintf(name, sizeof(name), "%s.%d", host, (int)getppid());
	is_root = fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) != 0;
	for (int n = 0; n < 1000; n++) {
		if (n == 0)
			lt_snprintf(name, sizeof(name), "%s.%d", host, (int)getpid());
		else
			lt_snprintf(name, sizeof(name), "%s.%d.%d", host, (int)getpid(), n);
		if (lt_snprintf(proc_dir, sizeof(proc_dir), "%s/%s", trace_dir, name) >=
		    (int)sizeof(proc_dir))
			return -ENAMETOOLONG; /* not reached: the length was checked above */
		if (mkdirat(at, name, 0700) == 0) {
			if (fstatat(at, name, &made, AT_SYMLINK_NOFOLLOW) != 0 ||
			    lstat(proc_dir, &st) != 0 || st.st_dev != made.st_dev ||
			    st.st_ino != made.st_ino) {
				lt_warn("%s does not name the directory made for it (a component "
					"changed since start); not tracing",
					proc_dir);
				return -ESTALE;
			}
			return 0;
		}
		if (errno != EEXIST)
			break;
		is_root = 0; /* we are an exec'd image of a traced process */
	}
	lt_warn("cannot create %s: %s; not tracing", proc_dir, strerror(errno));
	return -errno;
}

/* Not tracing after all: the process directory and what was made in it go again, so that a
 * process that could not be traced (`ulimit -n 5`) leaves nothing behind. */
static void discard_process_dir(void)
{
	lt_meta_discard();
	lt_buffer_discard();
	static const char *const made[] = {LT_META_FILE, "ring", LT_EVENTS_FILE};
	char path[sizeof(proc_dir) + 32];
	for (size_t i = 0; i < sizeof(made) / sizeof(made[0]); i++) {
		lt_snprintf(path, sizeof(path), "%s/%s", proc_dir, made[i]);
		unlink(path);
	}
	rmdir(proc_dir);
}

/* The arguments glibc gives the constructor (NULL: not known, or not from glibc). */
static char **start_argv;
static int start_argc;

/* The length of the arguments as proc/self/cmdline has them, straight from argv: the kernel
 * lays their strings one after the other, and a first read of that file cost 50 us on the VM
 * measured.  0 when they are not one block (a program or a runtime moved them before we
 * looked). */
static size_t argv_block(void)
{
	if (!start_argv || start_argc <= 0 || !start_argv[0] || start_argv[start_argc])
		return 0;
	const char *end = start_argv[0];
	for (int i = 0; i < start_argc; i++) {
		if (start_argv[i] != end)
			return 0;
		end += strlen(end) + 1;
	}
	return (size_t)(end - start_argv[0]);
}

const char *lt_cmdline(size_t *len)
{
	static char *args;
	static size_t args_len;
	size_t block = args ? 0 : argv_block();
	if (block && (args = malloc(block)) != NULL) {
		/* A copy: a program may write over its argv area (a process title) before
		 * it forks, and the child's meta file has the arguments again. */
		memcpy(args, start_argv[0], block);
		args_len = block;
	}
	if (!args) {
		int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			*len = 0;
			return NULL;
		}
		size_t cap = 4096, n = 0;
		char *buf = malloc(cap + 1);
		ssize_t r;
		while (buf && (r = read(fd, buf + n, cap - n)) > 0) {
			n += (size_t)r;
			if (n == cap) {
				char *more = realloc(buf, (cap *= 2) + 1);
				if (!more)
					free(buf);
				buf = more;
			}
		}
		close(fd);
		if (buf && n && buf[n - 1] != '\0')
			buf[n++] = '\0'; /* cut by a read error: the last argument still ends */
		args_len = buf ? n : 0;
		args = buf;
	}
	*len = args_len;
	return args;
}

static void write_arguments(void)
{
	size_t n;
	const char *args = lt_cmdline(&n);
	for (const char *p = args; p && p < args + n; p += strlen(p) + 1)
		lt_meta_escaped(LT_META_ARG, p);
}

/* The host and the executable.  This and write_config are functions of their own, so that
 * their path buffers are not all on the stack at once (write_meta goes on to read the maps):
 * each new page of the start's stack is a page fault. */
static __attribute__((noinline)) void write_identity(void)
{
	char host[256], exe[PATH_MAX];
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		lt_meta_escaped(LT_META_HOST, host);
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		lt_meta_escaped(LT_META_EXE, exe);
	}
}

static __attribute__((noinline)) void write_config(void)
{
	char buf[PATH_MAX + 64];
	for (size_t i = 0; lt_options[i].name; i++) {
		lt_config_format(i, buf, sizeof(buf));
		lt_meta_escaped(LT_META_CONFIG, buf);
	}
}

static void write_meta(pid_t parent_pid, uint32_t parent_thread)
{
	lt_meta_line("%s %d.%d", LT_META_MAGIC, LT_FORMAT_MAJOR, LT_FORMAT_MINOR);
	lt_meta_line(LT_META_PID " %d", (int)getpid());
	lt_meta_line(LT_META_PPID " %d", (int)getppid());
	lt_modules_meta();
	write_identity();
	write_arguments();
	if (lt_cfg.mode == LT_MODE_FLIGHT)
		lt_meta_line(LT_META_MODE " flight %llu", (unsigned long long)lt_cfg.buffer_size);
	write_config();
	if (parent_pid)
		lt_meta_line(LT_META_PARENT " %d %u", (int)parent_pid, parent_thread);
	lt_meta_maps();
	/* Last: the work above is most of the clock calibration's window. */
	lt_clock_calibrate();
	lt_meta_line(LT_META_CLOCK " %s", lt_clock_kind == LT_CLOCK_TSC ? "tsc" : "monotonic");
	lt_meta_line(LT_META_CLOCK_HZ " %.3f", lt_clock_hz());
	lt_meta_sync();
}

static void before_fork(void);
static void after_fork_child(void);

void lt_init(void)
{
	int expected = LT_STATE_UNINIT;
	if (!__atomic_compare_exchange_n(&lt_state, &expected, LT_STATE_INITIALIZING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	lt_tls_guard++;
	int state = LT_STATE_OFF;
	if (lt_getauxval(AT_SECURE)) {
		/* setuid/setgid: never trace, say nothing (the program's stderr is not ours). */
		goto out;
	}
	lt_config_load(NULL);
	if (!lt_cfg.modules)
		goto out;
	lt_modules_preflight();
	lt_clock_init(lt_cfg.clock);
	int dfd = make_trace_dir();
	if (dfd < 0)
		goto out;
	int err = make_process_dir(dfd);
	close(dfd);
	if (err)
		goto out;
	err = lt_meta_open(proc_dir);
	if (err) {
		lt_warn("cannot create %s/%s: %s; not tracing", proc_dir, LT_META_FILE,
			strerror(-err));
		discard_process_dir();
		if (made_trace_dir)
			rmdir(trace_dir); /* only if empty: nothing else was traced there */
		goto out;
	}
	lt_meta_hold(1); /* up to the first thread's start */
	write_meta(0, 0);
	if (lt_buffer_open(proc_dir, 0)) {
		discard_process_dir();
		if (made_trace_dir)
			rmdir(trace_dir); /* only if empty: nothing else was traced there */
		goto out;
	}
	struct stat st;
	if (fstat(STDERR_FILENO, &st) == 0) {
		stderr_known = 1;
		stderr_dev = st.st_dev;
		stderr_ino = st.st_ino;
	}
	traced_pid = getpid();
	lt_thread_init();
	pthread_atfork(before_fork, NULL, after_fork_child);
	lt_buffer_flight_signal();
	lt_callsite_init(lt_cfg.callsite_depth);
	lt_meta_line(LT_META_CALLSITE_DEPTH " %d", lt_callsite_depth);
	lt_filter_init();
	lt_modules_start(0);
	lt_meta_hold(0);
	lt_active = lt_recording_mask() | LT_ACTIVE_INIT;
	state = LT_STATE_ON;
	/* The thread that initialises is thread 0 (the main thread, nearly always). */
	lt_filter_started(lt_thread_register(lt_thread_new_index(), LT_NO_THREAD, 0));
	lt_modules_started(0);
	lt_info("tracing into %s", proc_dir);
out:
	lt_meta_hold(0);
	if (state != LT_STATE_ON)
		lt_active = 0;
	lt_active |= LT_ACTIVE_INIT;
	__atomic_store_n(&lt_state, state, __ATOMIC_RELEASE);
	if (state == LT_STATE_ON)
		lt_modules_threaded_after_init(); /* a second thread came while init ran */
	lt_tls_guard--;
}

__thread pid_t lt_vfork_pid LT_TLS;
static __thread struct {
	int tls_guard, guard; /* the thread's guards before the vfork */
} vforking LT_TLS;

void lt_vfork_begin(void)
{
	if (lt_vfork_pid) {
		/* In a vfork child that vforks again, nothing to raise; in the parent, vforking
		 * again before it settled, the guards saved are still the ones to restore. */
		return;
	}
	/* The thread-wide guard first: a signal handler from here on registers no thread (one
	 * would find no lt_self below and keep its guard up for good).  The pid last: a handler
	 * before it settles nothing.  One that comes after it and before the system call
	 * lowers the guards early (nanoseconds; the child then records into this stream). */
	vforking.tls_guard = lt_tls_guard;
	lt_tls_guard++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	struct lt_thread *t = lt_self;
	vforking.guard = t ? t->guard : 0;
	if (t)
		lt_guard_take(t);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	lt_vfork_pid = getpid();
}

int lt_vfork_settle_slow(void)
{
	if (getpid() != lt_vfork_pid)
		return 1; /* the child */
	lt_tls_guard = vforking.tls_guard;
	if (lt_self)
		lt_self->guard = vforking.guard;
	lt_vfork_pid = 0;
	return 0;
}

struct lt_thread *lt_begin_slow(unsigned mod)
{
	if (lt_vfork_settle())
		return NULL;
	if (lt_tls_guard)
		return NULL;
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_UNINIT)
		lt_init();
	if (!(lt_active & mod))
		return NULL;
	struct lt_thread *t = lt_self;
	if (!t) {
		/* A thread we did not see start (created before init, or by raw clone). */
		lt_tls_guard++;
		t = lt_thread_register(lt_thread_new_index(), LT_NO_THREAD, 0);
		lt_tls_guard--;
		if (!t)
			return NULL;
	}
	if (t->guard)
		return NULL;
	lt_guard_take(t);
	return t;
}

/*
 * What the child of fork needs of the forking thread's state, taken just before the fork:
 * in the child the state itself is zero pages (MADV_WIPEONFORK, thread.c).
 */
static __thread struct {
	uint32_t index;
	int in_wrapper;
} forking LT_TLS;

static void before_fork(void)
{
	lt_vfork_settle(); /* a vfork's guards, still up, must not pass into the child */
	struct lt_thread *t = lt_self;
	forking.index = t ? t->index : LT_NO_THREAD;
	forking.in_wrapper = t && t->in_fork;
}

/*
 * In the child of fork: a new process directory, new files, a new ring, and the forking
 * thread as thread 0.  The parent's buffered events stay the parent's.  When fork was
 * called through our wrapper, its CALL_ENTER is repeated in the child's stream so that the
 * child's fork call is balanced too.
 */
static void after_fork_child(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON)
		return;
	int in_wrapper = forking.in_wrapper;
	uint32_t parent_thread = forking.index;
	lt_tls_guard++;
	lt_self = NULL;
	lt_active = LT_ACTIVE_INIT;
	lt_thread_after_fork_child();
	lt_thread_map_after_fork_child();
	lt_strings_after_fork_child();
	lt_filter_after_fork_child();
	lt_modules_fork_child();
	pid_t parent = traced_pid;
	int dfd = reopen_trace_dir();
	int err = dfd < 0 ? dfd : make_process_dir(dfd);
	if (dfd >= 0)
		close(dfd);
	if (err || lt_meta_open(proc_dir) != 0) {
		if (!err)
			discard_process_dir();
		__atomic_store_n(&lt_state, LT_STATE_OFF, __ATOMIC_RELEASE);
		lt_tls_guard--;
		return;
	}
	is_root = 0;
	traced_pid = getpid();
	lt_meta_hold(1);
	write_meta(parent, parent_thread);
	lt_meta_hold(0);
	if (lt_buffer_open(proc_dir, 1)) {
		discard_process_dir();
		__atomic_store_n(&lt_state, LT_STATE_OFF, __ATOMIC_RELEASE);
		lt_tls_guard--;
		return;
	}
	lt_active = lt_recording_mask() | LT_ACTIVE_INIT;
	lt_modules_start(1);
	struct lt_thread *t = lt_thread_register(lt_thread_new_index(), parent_thread, 0);
	lt_filter_started(t);
	lt_modules_started(1); /* the parent's helper threads did not come along */
	if (t && in_wrapper) {
		lt_guard_take(t);
		lt_call_enter0(t, LT_FN_fork);
		lt_finish(t);
	}
	lt_tls_guard--;
}

void lt_helpers_pause(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON || !lt_is_traced_process())
		return;
	lt_modules_pause();
	lt_writer_pause();
	/* The writer, joined, may have started a module's helper before it saw the pause (the
	 * threaded hook, first thing on a new writer): that one steps aside too. */
	lt_modules_pause();
}

int lt_helpers_pause_for_program(void)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON || !lt_is_traced_process())
		return 0;
	lt_helpers_pause();
	return 1;
}

int lt_is_traced_process(void)
{
	return getpid() == traced_pid;
}

/* Before exec: everything committed goes to the events file; the new image starts anew. */
void lt_before_exec(void)
{
	if (getpid() != traced_pid)
		return; /* a vfork child shares our memory: leave the parent's state alone */
	uint64_t ending = lt_now();
	lt_modules_before_exec();
	lt_buffer_flush_all(1);
	lt_buffer_cut();
	lt_thread_counts_flush();
	lt_thread_dropped_flush();
	lt_meta_sync();
	lt_meta_line(LT_META_ENDING " %llu", (unsigned long long)ending);
	lt_meta_line(LT_META_EXEC " %llu", (unsigned long long)lt_now());
}

void lt_catch_signal(int sig, void (*fn)(int, siginfo_t *, void *), const char *setting)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) != 0)
		lt_warn("cannot catch signal %d for %s: %s", sig, setting, strerror(errno));
}

/* glibc calls an ELF constructor with the program's arguments (other C libraries do not). */
__attribute__((constructor)) static void lt_constructor(int argc, char **argv, char **envp)
{
	(void)envp;
#ifdef __GLIBC__
	start_argc = argc;
	start_argv = argv;
#else
	(void)argc;
	(void)argv;
#endif
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) == LT_STATE_UNINIT)
		lt_init();
	lt_modules_constructor();
}

/* The process is leaving (exit, return from main, _exit): make the trace whole, say where. */
void lt_process_end(const char *how)
{
	if (__atomic_load_n(&lt_state, __ATOMIC_ACQUIRE) != LT_STATE_ON || getpid() != traced_pid)
		return;
	uint64_t ending = lt_now(); /* the program's time ends here; the tracer's follows */
	lt_vfork_settle();	    /* a vfork's child is gone: the guards it left up come down */
	/* From a signal handler that interrupted the tracer on this thread, copying could
	 * deadlock on the tracer's own lock: the ring file holds everything anyway. */
	int reentered = lt_tls_guard || (lt_self && lt_self->guard);
	if (!reentered) {
		lt_meta_hold(1);	/* the end's lines in a few writes, up to "end" */
		lt_modules_end_flush(); /* after _exit, whose atexit flushes did not run */
	}
	lt_tls_guard++;
	lt_modules_end_stop(!reentered); /* their last records, then the flush below takes them */
	if (!reentered) {
		lt_buffer_flush_all(1);
		lt_buffer_trim();
		lt_thread_counts_flush(); /* its lock might be the interrupted code's otherwise */
		lt_thread_dropped_flush();
	}
	lt_buffer_unseen_flush();
	lt_meta_sync();
	lt_meta_line(LT_META_WRITER_CPU " %llu", (unsigned long long)lt_writer_cpu_ns());
	lt_meta_line(LT_META_ENDING " %llu", (unsigned long long)ending);
	lt_meta_line(LT_META_END " %llu %s", (unsigned long long)lt_now(), how);
	if (!reentered)
		lt_meta_hold(0);
	struct stat st;
	if (!lt_cfg.quiet && is_root && stderr_known && fstat(STDERR_FILENO, &st) == 0 &&
	    st.st_dev == stderr_dev && st.st_ino == stderr_ino) {
		char line[PATH_MAX + 64];
		int n =
		    lt_snprintf(line, sizeof(line), "libtrace: trace written to %s\n", trace_dir);
		if (n > 0) {
			ssize_t w = write(STDERR_FILENO, line, (size_t)n);
			(void)w;
		}
	}
	is_root = 0; /* say it once */
	lt_tls_guard--;
}

__attribute__((destructor)) static void lt_destructor(void)
{
	if (lt_modules_end_trace())
		return; /* a module ends the trace, after its runtime's threads' ends */
	lt_process_end("exit");
}
