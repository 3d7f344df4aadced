// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos.c - the kokkos module: the Kokkos profiling interface (KokkosP).
 *
 * Kokkos calls a tool through the kokkosp_* functions it looks up with dlsym on the library
 * named in KOKKOS_TOOLS_LIBS (Kokkos 3.7 and later) or KOKKOS_PROFILE_LIBRARY (earlier); it
 * never looks at a library that is only preloaded.  kokkos_register(), called from the
 * constructor, names this library's own file there when the user named no tool: Kokkos's
 * dlopen of that path then returns this very copy, already initialised.
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

/* Whether the first entry of a tools list (Kokkos loads only the first) is this library:
 * the same file (device and inode, whatever the path that leads to it), or, for a bare
 * name that Kokkos's dlopen looks up in the library path, the same file name. */
static int names_self(const char *list)
{
	char first[PATH_MAX];
	size_t n = strcspn(list, ";");
	if (n == 0 || n >= sizeof(first))
		return 0;
	memcpy(first, list, n);
	first[n] = '\0';
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
	if (user || named) {
		/* The tool Kokkos will load is us (Kokkos takes the argument over the variable
		 * where both are given): nothing to do. */
		if (named ? names_self(arg) : names_self(user))
			return;
		/* Said once, where it matters: a program that uses Kokkos (or may). */
		lt_log(has_kokkos ? 0 : 1,
		       "kokkos: another Kokkos tool is set (%s): left alone, Kokkos kernels are "
		       "not recorded (LIBTRACE_MODULES without kokkos silences this)",
		       named ? arg : user);
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

/* ---- the callbacks ---- */

LT_EXPORT void kokkosp_init_library(const int load_seq, const uint64_t interface_version,
				    const uint32_t ndevices, struct kp_device_info *devices)
{
	(void)load_seq, (void)ndevices, (void)devices;
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_meta_line(LT_META_KOKKOS " %llu", (unsigned long long)interface_version);
	lt_info("kokkos: recording (interface version %llu)",
		(unsigned long long)interface_version);
	lt_finish(t);
}

LT_EXPORT void kokkosp_finalize_library(void)
{
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
}

LT_EXPORT void kokkosp_end_parallel_for(const uint64_t id)
{
	end_id(LT_KOKKOS_parallel_for, id);
}

LT_EXPORT void kokkosp_begin_parallel_reduce(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_parallel_reduce, name, device, id);
}

LT_EXPORT void kokkosp_end_parallel_reduce(const uint64_t id)
{
	end_id(LT_KOKKOS_parallel_reduce, id);
}

LT_EXPORT void kokkosp_begin_parallel_scan(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_parallel_scan, name, device, id);
}

LT_EXPORT void kokkosp_end_parallel_scan(const uint64_t id)
{
	end_id(LT_KOKKOS_parallel_scan, id);
}

LT_EXPORT void kokkosp_begin_fence(const char *name, const uint32_t device, uint64_t *id)
{
	begin_id(LT_KOKKOS_fence, name, device, id);
}

LT_EXPORT void kokkosp_end_fence(const uint64_t id)
{
	end_id(LT_KOKKOS_fence, id);
}

LT_EXPORT void kokkosp_push_profile_region(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_counters(t, LT_MOD_KOKKOS);
	lt_emit0(t, LT_REC_KOKKOS_BEGIN, LT_KOKKOS_region, lt_string_id(t, name));
	lt_finish(t);
}

LT_EXPORT void kokkosp_pop_profile_region(void)
{
	end_id(LT_KOKKOS_region, 0);
}

LT_EXPORT void kokkosp_create_profile_section(const char *name, uint32_t *id)
{
	uint32_t n = __atomic_add_fetch(&next_section, 1, __ATOMIC_RELAXED);
	if (id)
		*id = n;
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_emit1(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_SECTION_CREATE, lt_string_id(t, name), n);
	lt_finish(t);
}

LT_EXPORT void kokkosp_start_profile_section(const uint32_t id)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_counters(t, LT_MOD_KOKKOS);
	lt_emit1(t, LT_REC_KOKKOS_BEGIN, LT_KOKKOS_section, 0, id);
	lt_finish(t);
}

LT_EXPORT void kokkosp_stop_profile_section(const uint32_t id)
{
	end_id(LT_KOKKOS_section, id);
}

LT_EXPORT void kokkosp_destroy_profile_section(const uint32_t id)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_emit1(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_SECTION_DESTROY, 0, id);
	lt_finish(t);
}

LT_EXPORT void kokkosp_profile_event(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_emit0(t, LT_REC_KOKKOS_INFO, LT_KOKKOS_EVENT, lt_string_id(t, name));
	lt_finish(t);
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
}

LT_EXPORT void kokkosp_deallocate_data(const struct kp_space space, const char *label,
				       const void *ptr, const uint64_t size)
{
	alloc_event(1, &space, label, ptr, size);
}

LT_EXPORT void kokkosp_begin_deep_copy(struct kp_space dst_space, const char *dst_label,
				       const void *dst_ptr, struct kp_space src_space,
				       const char *src_label, const void *src_ptr, uint64_t size)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	uint64_t spaces = (uint64_t)space_id(t, &dst_space) << 32 | space_id(t, &src_space);
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

LT_EXPORT void kokkosp_end_deep_copy(void)
{
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
}

LT_EXPORT void kokkosp_dual_view_modify(const char *label, const void *const ptr, bool on_device)
{
	dual_view(LT_KOKKOS_DV_MODIFY, label, ptr, on_device);
}

LT_EXPORT void kokkosp_declare_metadata(const char *key, const char *value)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	lt_meta_escaped2(LT_META_KOKKOS_META, key ? key : "", value ? value : "");
	lt_finish(t);
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
 * a GPU runtime is in the process.
 */
LT_EXPORT void kokkosp_request_tool_settings(const uint32_t n, struct kp_tool_settings *settings)
{
	struct lt_thread *t = lt_begin(LT_MOD_KOKKOS);
	if (!t)
		return;
	const char *gpu = NULL;
	uint64_t setting = lt_setting("LIBTRACE_KOKKOS_FENCE"); /* auto, on, off */
	int fence = setting == 1;
	if (setting == 0)
		fence = dl_iterate_phdr(gpu_object, &gpu) != 0;
	if (n >= 1 && settings)
		settings->requires_global_fencing = fence;
	lt_meta_line(LT_META_KOKKOS_FENCE " %d", fence);
	lt_info("kokkos: global fencing %s%s%s", fence ? "on" : "off", gpu ? ": " : "",
		gpu ? gpu : "");
	lt_finish(t);
}

LT_EXPORT void kokkosp_provide_tool_programming_interface(const uint32_t n,
							  struct kp_tool_interface actions)
{
	(void)n, (void)actions;
}

LT_EXPORT void kokkosp_parse_args(int argc, char **argv)
{
	(void)argc, (void)argv; /* called twice by Kokkos 4.6: harmless */
}

LT_EXPORT void kokkosp_print_help(char *exe)
{
	static const char help[] =
	    "libtrace (Kokkos tool): records kernels, fences, profile regions and sections,\n"
	    "deep copies, allocations and metadata of every Kokkos call into the libtrace trace.\n"
	    "It takes no Kokkos tool arguments: configure it with the LIBTRACE_* variables\n"
	    "(trace-run --help), and convert the trace with trace2otf2.\n";
	(void)exe;
	ssize_t r = write(STDOUT_FILENO, help, sizeof(help) - 1);
	(void)r;
}

LT_MODULE(kokkos) = {
    .name = "kokkos",
    .bit = LT_MOD_KOKKOS,
    .order = 40,
    .constructor = kokkos_register,
    .dlopened = kokkos_dlopened,
};
