// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos.c - the kokkos module: the Kokkos profiling interface (KokkosP).
 *
 * Kokkos calls a tool through the kokkosp_* functions it looks up with dlsym on the library
 * named in KOKKOS_TOOLS_LIBS (Kokkos 3.7 and later) or KOKKOS_PROFILE_LIBRARY (earlier); it
 * never looks at a library that is only preloaded.  kokkos_register(), called from the
 * constructor, names this library's own file there when the user named no tool: Kokkos's
 * dlopen of that path then returns this very copy, already initialised.  A tool the user
 * named in one of those variables goes behind this one: the variable becomes "libtrace.so
 * path;theirs" (Kokkos loads the first entry only), and the setup callbacks dlopen theirs
 * and look up every callback it defines, which each of ours then forwards to.
 *
 * Every callback arrives on the host thread that called Kokkos.  Kernel and fence ids are
 * that thread's own count (no lock, nothing shared); section ids are process-wide, from an
 * atomic count at creation, which is rare.  The signatures are those of Kokkos 3.4 to 4.x
 * (interface versions 20210225 to 20240906), unchanged since 3.4.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/module.h"
#include "../common/modules.h"

extern const struct lt_module lt_module_kokkos;

/* The C types of Kokkos_Profiling_C_Interface.h, by layout. */
struct kp_device_info {
	size_t device_id;
};
struct kp_space {
	char name[64]; /* passed by value */
};
struct kp_tool_settings {
	bool requires_global_fencing;
	bool padding[255];
};
struct kp_tool_interface {
	void (*fence)(uint32_t device);
	void (*padding[31])(void);
};

/* Kokkos::initialize(InitializationSettings const&) exists from 3.7 on, the release that
 * reads KOKKOS_TOOLS_LIBS; Kokkos::initialize(InitArguments) is all earlier ones have. */
#define KOKKOS_INIT_37	"_ZN6Kokkos10initializeERKNS_22InitializationSettingsE"
#define KOKKOS_INIT_OLD "_ZN6Kokkos10initializeENS_13InitArgumentsE"

/* The same two, as weak references the loader resolves with the library (NULL when nothing
 * loaded by then defines them): what dlsym(RTLD_DEFAULT) would find from the constructor,
 * without the failed lookups, whose error message costs the C library a malloc and a
 * formatted string. */
extern char kokkos_init_37[] __asm__(KOKKOS_INIT_37) __attribute__((weak));
extern char kokkos_init_old[] __asm__(KOKKOS_INIT_OLD) __attribute__((weak));

static LT_PAGE_ALIGNED char self_path[PATH_MAX];
static int set_tools_libs; /* we set KOKKOS_TOOLS_LIBS, and not yet KOKKOS_PROFILE_LIBRARY */

/* The user's tool, loaded behind this one: its path ("" when none) and the callbacks it
 * defines (NULL for the others), all of Kokkos 3.4 to 4.x's but the tuning ones, which
 * this library does not define, so Kokkos calls none of them.  Set once, by the first
 * setup callback (Kokkos::initialize, one thread), before any kernel callback reads them. */
static char user_path[PATH_MAX];
#define KP_FORWARDED(X)                                                                   \
	X(init_library, (int, uint64_t, uint32_t, struct kp_device_info *))               \
	X(finalize_library, (void))                                                       \
	X(begin_parallel_for, (const char *, uint32_t, uint64_t *))                       \
	X(end_parallel_for, (uint64_t))                                                   \
	X(begin_parallel_reduce, (const char *, uint32_t, uint64_t *))                    \
	X(end_parallel_reduce, (uint64_t))                                                \
	X(begin_parallel_scan, (const char *, uint32_t, uint64_t *))                      \
	X(end_parallel_scan, (uint64_t))                                                  \
	X(begin_fence, (const char *, uint32_t, uint64_t *))                              \
	X(end_fence, (uint64_t))                                                          \
	X(push_profile_region, (const char *))                                            \
	X(pop_profile_region, (void))                                                     \
	X(create_profile_section, (const char *, uint32_t *))                             \
	X(start_profile_section, (uint32_t))                                              \
	X(stop_profile_section, (uint32_t))                                               \
	X(destroy_profile_section, (uint32_t))                                            \
	X(profile_event, (const char *))                                                  \
	X(allocate_data, (struct kp_space, const char *, const void *, uint64_t))         \
	X(deallocate_data, (struct kp_space, const char *, const void *, uint64_t))       \
	X(begin_deep_copy, (struct kp_space, const char *, const void *, struct kp_space, \
			    const char *, const void *, uint64_t))                        \
	X(end_deep_copy, (void))                                                          \
	X(dual_view_sync, (const char *, const void *, bool))                             \
	X(dual_view_modify, (const char *, const void *, bool))                           \
	X(declare_metadata, (const char *, const char *))                                 \
	X(request_tool_settings, (uint32_t, struct kp_tool_settings *))                   \
	X(provide_tool_programming_interface, (uint32_t, struct kp_tool_interface))       \
	X(parse_args, (int, char **))                                                     \
	X(print_help, (char *))
#define KP_FIELD(name, args) void(*name) args;
static struct {
	KP_FORWARDED(KP_FIELD)
} tool;

/*
 * The ids a tool gives Kokkos at a kernel's or fence's begin come back at its end, and
 * each tool wants its own.  Ours are 32 bits (and SKIPPED).  A kernel or fence begins and
 * ends on one host thread, nested in those open there: with a tool behind, theirs go on a
 * stack of that thread, and bits 32 to 62 of the id Kokkos keeps say where (1 + the
 * place; 0 past USER_DEPTH open at once, when their end gets 0).  Their section ids are
 * kept in a table by ours, process-wide already (one of 1024: ids 1024 apart share one).
 */
#define USER_DEPTH 16
static __thread struct {
	uint64_t ids[USER_DEPTH];
	uint32_t depth;
} user_open LT_TLS;
static uint32_t user_sections[1024];

/* Whether the symbol is defined in handle.  A failed dlsym leaves its message for the
 * program's next dlerror(): taken back here, the program's dlerror() state stays its own
 * (we only probe right after a successful dlopen). */
static int has_symbol(void *handle, const char *name)
{
	void *p = dlsym(handle, name);
	if (!p)
		(void)dlerror();
	return p != NULL;
}
static uint32_t next_section;

/* The first entry of a tools list into first (PATH_MAX bytes): 0 when empty or too long. */
static int first_entry(const char *list, char *first)
{
	size_t n = strcspn(list, ";");
	if (n == 0 || n >= PATH_MAX)
		return 0;
	memcpy(first, list, n);
	first[n] = '\0';
	return 1;
}

/* Whether the first entry of a tools list (Kokkos loads only the first) is this library:
 * the same file (device and inode, whatever the path that leads to it), or, for a bare
 * name that Kokkos's dlopen looks up in the library path, the same file name. */
static int names_self(const char *list)
{
	char first[PATH_MAX];
	if (!first_entry(list, first))
		return 0;
	if (!strchr(first, '/')) {
		const char *base = strrchr(self_path, '/');
		return !strcmp(first, base ? base + 1 : self_path);
	}
	if (!strcmp(first, self_path))
		return 1; /* what a traced parent set: every child of it comes here */
	struct stat a, b;
	return !stat(first, &a) && !stat(self_path, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/* A tool named on the command line (--kokkos-tools-library=, --kokkos-tools-libs=): its
 * value, or the next argument's where it has no '='. */
static int tool_argument(char *name, size_t len)
{
	size_t n;
	const char *buf = lt_cmdline(&n);
	for (const char *p = buf; p && p < buf + n; p += strlen(p) + 1) {
		if (strncmp(p, "--kokkos-tools-librar", 21) &&
		    strncmp(p, "--kokkos-tools-libs", 19))
			continue;
		const char *eq = strchr(p, '='), *next = p + strlen(p) + 1;
		snprintf(name, len, "%s", eq ? eq + 1 : next < buf + n ? next : "");
		return 1;
	}
	return 0;
}

/* The user's tool, the first entry of list, is kept to be loaded behind this library
 * (unless it is this library again). */
static void keep_user_tool(const char *list)
{
	if (!first_entry(list, user_path) || names_self(user_path))
		user_path[0] = '\0';
}

static void kokkos_register(void)
{
	if (!(lt_active & LT_MOD_KOKKOS))
		return;
	Dl_info di;
	if (!dladdr((void *)&kokkos_register, &di) || !di.dli_fname ||
	    !realpath(di.dli_fname, self_path)) {
		lt_info("kokkos: cannot find this library's own path; Kokkos will not call it");
		return;
	}
	int has_37 = kokkos_init_37 != NULL, has_old = kokkos_init_old != NULL;
	int has_kokkos = has_37 || has_old;
	const char *user = lt_foreign_env("KOKKOS_TOOLS_LIBS");
	if (!user)
		user = lt_foreign_env("KOKKOS_PROFILE_LIBRARY");
	char arg[PATH_MAX];
	int named = tool_argument(arg, sizeof(arg));
	if (named) {
		/* Kokkos takes the argument over the variable, and the argument cannot be
		 * changed from here: the tool Kokkos will load is us, or theirs alone.  Said
		 * once, where it matters: a program that uses Kokkos (or may). */
		if (!names_self(arg))
			lt_log(has_kokkos ? 0 : 1,
			       "kokkos: another Kokkos tool is set on the command line (%s): left "
			       "alone, Kokkos kernels are not recorded (LIBTRACE_MODULES without "
			       "kokkos silences this)",
			       arg);
		return;
	}
	if (user) {
		/* "us;theirs" (what a traced parent leaves its children, or a user's own
		 * list): theirs is loaded behind us.  Another tool first: it goes behind us,
		 * and the list Kokkos reads becomes "us;<the user's list>". */
		const char *var = lt_foreign_env("KOKKOS_TOOLS_LIBS") ? "KOKKOS_TOOLS_LIBS"
								      : "KOKKOS_PROFILE_LIBRARY";
		if (names_self(user)) {
			const char *rest = strchr(user, ';');
			if (rest)
				keep_user_tool(rest + 1);
			return;
		}
		keep_user_tool(user);
		char list[2 * PATH_MAX + 2];
		if (snprintf(list, sizeof(list), "%s;%s", self_path, user) >= (int)sizeof(list)) {
			lt_warn(
			    "kokkos: %s is too long: left alone, Kokkos kernels are not recorded",
			    var);
			user_path[0] = '\0';
			return;
		}
		setenv(var, list, 1);
		lt_debug("kokkos: %s=%s", var, list);
		return;
	}
	/* Before 3.7 only KOKKOS_PROFILE_LIBRARY works; from 3.7 on it is deprecated (a warning
	 * on every run).  Without a Kokkos in sight yet (static, or dlopen'ed later), the
	 * modern name, and kokkos_dlopened() adds the old one if an old Kokkos comes. */
	int old = !has_37 && has_old;
	setenv(old ? "KOKKOS_PROFILE_LIBRARY" : "KOKKOS_TOOLS_LIBS", self_path, 1);
	set_tools_libs = !old;
	lt_debug("kokkos: %s=%s", old ? "KOKKOS_PROFILE_LIBRARY" : "KOKKOS_TOOLS_LIBS", self_path);
}

/* After a successful dlopen (any thread): a Kokkos older than 3.7 that came in needs the old
 * variable.  The setenv is the one environment change made after start: it happens at most
 * once, when such a Kokkos is loaded, before it reads the variable in Kokkos::initialize. */
static void kokkos_dlopened(const char *name, void *handle)
{
	(void)name;
	if (!__atomic_load_n(&set_tools_libs, __ATOMIC_ACQUIRE) || !handle)
		return;
	if (has_symbol(handle, KOKKOS_INIT_OLD) && !has_symbol(handle, KOKKOS_INIT_37) &&
	    __atomic_exchange_n(&set_tools_libs, 0, __ATOMIC_ACQ_REL)) {
		if (!lt_foreign_env("KOKKOS_PROFILE_LIBRARY"))
			setenv("KOKKOS_PROFILE_LIBRARY", self_path, 1);
	}
}

/* ---- the user's tool ---- */

static int user_loaded;
static pthread_once_t user_once = PTHREAD_ONCE_INIT;

/* A callback of theirs: NULL where they define none (the failed dlsym's message taken back,
 * as in has_symbol). */
static void *user_symbol(void *handle, const char *name)
{
	void *p = dlsym(handle, name);
	if (!p)
		(void)dlerror();
	return p;
}

/* Loads the user's tool as Kokkos would have (with dlopen, which the proc module records
 * like the program's), RTLD_LOCAL so that its kokkosp_* never stand for ours. */
static void load_user_tool(void)
{
	void *h = dlopen(user_path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *e = dlerror();
		lt_warn("kokkos: cannot load the Kokkos tool %s (%s): only libtrace records",
			user_path, e ? e : "?");
		return;
	}
	int n = 0;
#define KP_LOOKUP(name, args) \
	n += (*(void **)&tool.name = user_symbol(h, "kokkosp_" #name)) != NULL;
	KP_FORWARDED(KP_LOOKUP)
#undef KP_LOOKUP
	user_loaded = 1;
	lt_log(lt_setting("LIBTRACE_QUIET") ? 1 : 0,
	       "kokkos: Kokkos tool %s loaded behind libtrace; its callbacks are forwarded (%d)",
	       user_path, n);
}

/* Called by every callback Kokkos may call first (those of Kokkos::initialize). */
static inline void user_setup(void)
{
	if (user_path[0])
		pthread_once(&user_once, load_user_tool);
}

/* Their begin of a kernel or fence, after ours: their id goes on this thread's stack. */
static inline void user_begin(void (*begin)(const char *, uint32_t, uint64_t *), const char *name,
			      uint32_t device, uint64_t *id)
{
	if (!begin)
		return;
	uint64_t theirs = 0;
	begin(name, device, &theirs);
	uint32_t d = user_open.depth;
	if (!id || d >= USER_DEPTH)
		return;
	user_open.ids[d] = theirs;
	user_open.depth = d + 1;
	*id |= (uint64_t)(d + 1) << 32;
}

/* Their end of it, before ours, with their id, taken off the stack (with whatever was
 * left above it). */
static inline void user_end(void (*end)(uint64_t), uint64_t id)
{
	if (!end)
		return;
	uint32_t d = (uint32_t)(id >> 32) & 0x7fffffff;
	uint64_t theirs = 0;
	if (d && d <= USER_DEPTH) {
		theirs = user_open.ids[d - 1];
		user_open.depth = d - 1;
	}
	end(theirs);
}

/* Their section id, kept by ours. */
static inline uint32_t *user_section(uint32_t id)
{
	return &user_sections[id % (sizeof(user_sections) / sizeof(user_sections[0]))];
}

/* ---- the callbacks ---- */

LT_EXPORT void kokkosp_init_library(const int load_seq, const uint64_t interface_version,
				    const uint32_t ndevices, struct kp_device_info *devices)
{
	user_setup();
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_meta_line(LT_META_KOKKOS " %llu", (unsigned long long)interface_version);
		lt_info("kokkos: recording (interface version %llu)",
			(unsigned long long)interface_version);
		lt_finish(t);
	}
	if (tool.init_library)
		tool.init_library(load_seq, interface_version, ndevices, devices);
}

LT_EXPORT void kokkosp_finalize_library(void)
{
	if (tool.finalize_library)
		tool.finalize_library();
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_meta_line(LT_META_KOKKOS_END " %llu", (unsigned long long)lt_now());
	lt_finish(t);
}

/* The id of a kernel or fence whose name is filtered out. */
#define SKIPPED (1ull << 63)

/* A kernel or a fence begins: the id Kokkos gives back at its end is ours. */
static inline void begin_id(unsigned kind, const char *name, uint32_t device, uint64_t *id)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t) {
		if (id)
			*id = 0;
		return;
	}
	uint32_t n = (uint32_t)++lt_local(t, &lt_module_kokkos)->n; /* kernels, fences begun */
	uint32_t name_id = lt_string_id(t, name);
	if (lt_str_skip(name_id)) {
		t->dropped[LT_DROP_FILTER]++;
		if (id)
			*id = SKIPPED | n; /* its end records nothing either */
		lt_finish(t);
		return;
	}
	if (id)
		*id = n;
	uint64_t *at = t->pos;
	lt_counters(t, LT_MOD_KOKKOS);
	lt_emit1(t, LT_REC_KOKKOS_BEGIN, kind, name_id, (uint64_t)device << 32 | n);
	lt_short_open(t, at);
	lt_finish(t);
}

static inline void end_id(unsigned kind, uint64_t id)
{
	if (id & SKIPPED)
		return;
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_counters(t, LT_MOD_KOKKOS);
	if (kind == LT_KOKKOS_region || kind == LT_KOKKOS_section || !lt_short_close(t))
		lt_emit0(t, LT_REC_KOKKOS_END, kind, (uint32_t)id);
	lt_finish(t);
}

LT_EXPORT void kokkosp_begin_parallel_for(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_parallel_for, name, device, id);
	user_begin(tool.begin_parallel_for, name, device, id);
}

LT_EXPORT void kokkosp_end_parallel_for(const uint64_t id)
{
	user_end(tool.end_parallel_for, id);
	end_id(LT_KOKKOS_parallel_for, id);
}

LT_EXPORT void kokkosp_begin_parallel_reduce(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_parallel_reduce, name, device, id);
	user_begin(tool.begin_parallel_reduce, name, device, id);
}

LT_EXPORT void kokkosp_end_parallel_reduce(const uint64_t id)
{
	user_end(tool.end_parallel_reduce, id);
	end_id(LT_KOKKOS_parallel_reduce, id);
}

LT_EXPORT void kokkosp_begin_parallel_scan(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_parallel_scan, name, device, id);
	user_begin(tool.begin_parallel_scan, name, device, id);
}

LT_EXPORT void kokkosp_end_parallel_scan(const uint64_t id)
{
	user_end(tool.end_parallel_scan, id);
	end_id(LT_KOKKOS_parallel_scan, id);
}

LT_EXPORT void kokkosp_begin_fence(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_fence, name, device, id);
	user_begin(tool.begin_fence, name, device, id);
}

LT_EXPORT void kokkosp_end_fence(const uint64_t id)
{
	user_end(tool.end_fence, id);
	end_id(LT_KOKKOS_fence, id);
}

LT_EXPORT void kokkosp_push_profile_region(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_counters(t, LT_MOD_KOKKOS);
		lt_emit0(t, LT_REC_KOKKOS_BEGIN, LT_KOKKOS_region, lt_string_id(t, name));
		lt_finish(t);
	}
	if (tool.push_profile_region)
		tool.push_profile_region(name);
}

LT_EXPORT void kokkosp_pop_profile_region(void)
{
	if (tool.pop_profile_region)
		tool.pop_profile_region();
	end_id(LT_KOKKOS_region, 0);
}

LT_EXPORT void kokkosp_create_profile_section(const char *name, uint32_t *id)
{
	uint32_t n = __atomic_add_fetch(&next_section, 1, __ATOMIC_RELAXED);
	if (id)
		*id = n;
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_emit1(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_SECTION_CREATE, lt_string_id(t, name), n);
		lt_finish(t);
	}
	if (tool.create_profile_section) {
		uint32_t theirs = 0;
		tool.create_profile_section(name, &theirs);
		__atomic_store_n(user_section(n), theirs, __ATOMIC_RELAXED);
	}
}

LT_EXPORT void kokkosp_start_profile_section(const uint32_t id)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_counters(t, LT_MOD_KOKKOS);
		lt_emit1(t, LT_REC_KOKKOS_BEGIN, LT_KOKKOS_section, 0, id);
		lt_finish(t);
	}
	if (tool.start_profile_section)
		tool.start_profile_section(__atomic_load_n(user_section(id), __ATOMIC_RELAXED));
}

LT_EXPORT void kokkosp_stop_profile_section(const uint32_t id)
{
	if (tool.stop_profile_section)
		tool.stop_profile_section(__atomic_load_n(user_section(id), __ATOMIC_RELAXED));
	end_id(LT_KOKKOS_section, id);
}

LT_EXPORT void kokkosp_destroy_profile_section(const uint32_t id)
{
	if (tool.destroy_profile_section)
		tool.destroy_profile_section(__atomic_load_n(user_section(id), __ATOMIC_RELAXED));
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_emit1(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_SECTION_DESTROY, 0, id);
	lt_finish(t);
}

LT_EXPORT void kokkosp_profile_event(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_emit0(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_EVENT, lt_string_id(t, name));
		lt_finish(t);
	}
	if (tool.profile_event)
		tool.profile_event(name);
}

/* A space's name, which Kokkos passes in a 64-byte array that need not end in NUL. */
static uint32_t space_id(struct lt_thread *t, const struct kp_space *s)
{
	char name[sizeof(s->name) + 1];
	size_t n = strnlen(s->name, sizeof(s->name));
	memcpy(name, s->name, n);
	name[n] = '\0';
	return lt_string_id(t, name);
}

static void alloc_event(unsigned sub, const struct kp_space *space, const char *label,
			const void *ptr, uint64_t size)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	uint32_t sp = space_id(t, space), lab = lt_string_id(t, label);
	uint64_t *p = lt_reserve(t, 5);
	lt_rec_put(p, lt_now(), LT_REC_KOKKOS_ALLOC, 5, sub, lab);
	p[2] = (uint64_t)(uintptr_t)ptr;
	p[3] = size;
	p[4] = sp;
	lt_commit(t);
	lt_finish(t);
}

LT_EXPORT void kokkosp_allocate_data(const struct kp_space space, const char *label,
				     const void *ptr, const uint64_t size)
{
	alloc_event(0, &space, label, ptr, size);
	if (tool.allocate_data)
		tool.allocate_data(space, label, ptr, size);
}

LT_EXPORT void kokkosp_deallocate_data(const struct kp_space space, const char *label,
				       const void *ptr, const uint64_t size)
{
	alloc_event(1, &space, label, ptr, size);
	if (tool.deallocate_data)
		tool.deallocate_data(space, label, ptr, size);
}

static void copy_event(const struct kp_space *dst_space, const char *dst_label, const void *dst_ptr,
		       const struct kp_space *src_space, const char *src_label, const void *src_ptr,
		       uint64_t size)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	uint64_t spaces = (uint64_t)space_id(t, dst_space) << 32 | space_id(t, src_space);
	uint64_t labels = (uint64_t)lt_string_id(t, dst_label) << 32 | lt_string_id(t, src_label);
	uint64_t *p = lt_reserve(t, 7);
	lt_rec_put(p, lt_now(), LT_REC_KOKKOS_COPY, 7, 0, (uint32_t)size);
	p[2] = size;
	p[3] = spaces;
	p[4] = labels;
	p[5] = (uint64_t)(uintptr_t)dst_ptr;
	p[6] = (uint64_t)(uintptr_t)src_ptr;
	lt_commit(t);
	lt_finish(t);
}

LT_EXPORT void kokkosp_begin_deep_copy(struct kp_space dst_space, const char *dst_label,
				       const void *dst_ptr, struct kp_space src_space,
				       const char *src_label, const void *src_ptr, uint64_t size)
{
	copy_event(&dst_space, dst_label, dst_ptr, &src_space, src_label, src_ptr, size);
	if (tool.begin_deep_copy)
		tool.begin_deep_copy(dst_space, dst_label, dst_ptr, src_space, src_label, src_ptr,
				     size);
}

LT_EXPORT void kokkosp_end_deep_copy(void)
{
	if (tool.end_deep_copy)
		tool.end_deep_copy();
	end_id(LT_KOKKOS_deep_copy, 0);
}

static void dual_view(unsigned what, const char *label, const void *ptr, bool device)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_emit(t, LT_REC_KOKKOS_INFO, what, lt_string_id(t, label), 2, (uint64_t)(uintptr_t)ptr,
		device);
	lt_finish(t);
}

LT_EXPORT void kokkosp_dual_view_sync(const char *label, const void *const ptr, bool to_device)
{
	dual_view(LT_KOKKOS_DV_SYNC, label, ptr, to_device);
	if (tool.dual_view_sync)
		tool.dual_view_sync(label, ptr, to_device);
}

LT_EXPORT void kokkosp_dual_view_modify(const char *label, const void *const ptr, bool on_device)
{
	dual_view(LT_KOKKOS_DV_MODIFY, label, ptr, on_device);
	if (tool.dual_view_modify)
		tool.dual_view_modify(label, ptr, on_device);
}

LT_EXPORT void kokkosp_declare_metadata(const char *key, const char *value)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (t) {
		lt_meta_escaped2(LT_META_KOKKOS_META, key ? key : "", value ? value : "");
		lt_finish(t);
	}
	if (tool.declare_metadata)
		tool.declare_metadata(key, value);
}

static int gpu_object(struct dl_phdr_info *info, size_t size, void *data)
{
	static const char *const runtimes[] = {"libcuda.so", "libcudart.so",	"libamdhip64.so",
					       "libsycl.so", "libomptarget.so", NULL};
	(void)size;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	for (int i = 0; runtimes[i]; i++)
		if (!strncmp(base, runtimes[i], strlen(runtimes[i]))) {
			*(const char **)data = runtimes[i];
			return 1;
		}
	return 0;
}

/*
 * Kokkos presets requires_global_fencing: a fence before each begin and end callback, so
 * that the host times of asynchronous (GPU) kernels are their real times.  On host
 * backends, where kernels are synchronous, that fence is all the cost of having a tool
 * (12 ns of 27 per kernel on Serial here): LIBTRACE_KOKKOS_FENCE=auto keeps it only when
 * a GPU runtime is in the process, or when a tool of the user's behind this one asks for it
 * (it is asked first; Kokkos's preset, on, stands where it says nothing).
 */
LT_EXPORT void kokkosp_request_tool_settings(const uint32_t n, struct kp_tool_settings *settings)
{
	user_setup();
	if (tool.request_tool_settings)
		tool.request_tool_settings(n, settings);
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	const char *gpu = NULL;
	uint64_t setting = lt_setting("LIBTRACE_KOKKOS_FENCE"); /* auto, on, off */
	int fence = setting == 1;
	if (setting == 0)
		fence = dl_iterate_phdr(gpu_object, &gpu) != 0 ||
			(user_loaded && n >= 1 && settings && settings->requires_global_fencing);
	if (n >= 1 && settings)
		settings->requires_global_fencing = fence;
	lt_meta_line(LT_META_KOKKOS_FENCE " %d", fence);
	lt_info("kokkos: global fencing %s%s%s", fence ? "on" : "off", gpu ? ": " : "",
		gpu			? gpu
		: fence && setting == 0 ? ": the tool behind"
					: "");
	lt_finish(t);
}

LT_EXPORT void kokkosp_provide_tool_programming_interface(const uint32_t n,
							  struct kp_tool_interface actions)
{
	user_setup();
	if (tool.provide_tool_programming_interface)
		tool.provide_tool_programming_interface(n, actions);
}

LT_EXPORT void kokkosp_parse_args(int argc, char **argv)
{
	user_setup(); /* called twice by Kokkos 4.6: theirs sees both */
	if (tool.parse_args)
		tool.parse_args(argc, argv);
}

LT_EXPORT void kokkosp_print_help(char *exe)
{
	static const char help[] =
	    "libtrace (Kokkos tool): records kernels, fences, profile regions and sections,\n"
	    "deep copies, allocations and metadata of every Kokkos call into the libtrace trace.\n"
	    "It takes no Kokkos tool arguments: configure it with the LIBTRACE_* variables\n"
	    "(trace-run --help), and convert the trace with trace2otf2.\n";
	ssize_t r = write(STDOUT_FILENO, help, sizeof(help) - 1);
	(void)r;
	user_setup();
	if (tool.print_help)
		tool.print_help(exe);
}

LT_MODULE(kokkos) = {
    .name = "kokkos",
    .bit = LT_MOD_KOKKOS,
    .order = 40,
    .constructor = kokkos_register,
    .dlopened = kokkos_dlopened,
};
