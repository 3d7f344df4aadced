// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi.c - what the MPI companion libraries (src/mpi, libtrace-mpi-<abi>.so) call to record,
 * module "mpi".  libtrace.so itself knows no MPI: the companion, built against one MPI's
 * headers, interposes MPI_* through PMPI and hands plain numbers here (include/libtrace/
 * mpi_abi.h).  The guard stays taken from ltr_mpi_enter to ltr_mpi_leave, across the PMPI
 * call: what the MPI library does inside (its own locks and threads' calls on this
 * thread) is not the program's, nor are the threads it starts meanwhile (pthread.c).  No
 * allocation, no lock.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libtrace/mpi_abi.h"

#include "../core/module.h"
#include "../common/modules.h"

extern const struct lt_module lt_module_mpi;

LT_EXPORT void *ltr_mpi_enter(const char *name, const void *caller)
{
	struct lt_thread *t = lt_begin(LT_MOD_MPI);
	if (!t)
		return NULL;
	lt_in_runtime = 1;
	uint32_t name_id = lt_string_id(t, name);
	if (lt_str_skip(name_id)) {
		/* Filtered out: the call keeps its guard, and writes nothing but communicator
		 * definitions, which later calls need. */
		t->dropped[LT_DROP_FILTER]++;
		lt_local(t, &lt_module_mpi)->n = 1;
		return t;
	}
	t->cs_ra = (uint64_t)(uintptr_t)caller;
	t->cs_fp = 0; /* frame 1 only: the companion's frame is not the program's */
	uint64_t *at = t->pos;
	uint64_t ts = lt_now();
	uint64_t ra = lt_callsite(t, ts);
	unsigned w = 2 + (ra != 0);
	uint64_t *p = lt_reserve(t, w);
	lt_rec_put(p, ts, LT_REC_MPI_ENTER | (ra ? LT_REC_F_CALLSITE : 0), w, 0, name_id);
	if (ra)
		p[2] = ra;
	lt_commit(t);
	lt_short_open(t, at);
	return t;
}

LT_EXPORT void ltr_mpi_leave(void *token, int rc)
{
	struct lt_thread *t = token;
	if (!t)
		return;
	if (lt_local(t, &lt_module_mpi)->n)
		lt_local(t, &lt_module_mpi)->n = 0; /* filtered out */
	else if (!lt_short_close(t))
		lt_emit0(t, LT_REC_MPI_LEAVE, 0, (uint32_t)rc);
	lt_in_runtime = 0;
	lt_finish(t);
}

LT_EXPORT void ltr_mpi_p2p(void *token, unsigned kind, uint32_t peer, uint64_t comm, int64_t tag,
			   uint64_t bytes, uint64_t request)
{
	struct lt_thread *t = token;
	if (!t || lt_local(t, &lt_module_mpi)->n)
		return;
	uint64_t *p = lt_reserve(t, 6);
	lt_rec_put(p, lt_now(), LT_REC_MPI_P2P, 6, kind, peer);
	p[2] = comm;
	p[3] = (uint64_t)tag;
	p[4] = bytes;
	p[5] = request;
	lt_commit(t);
}

LT_EXPORT void ltr_mpi_coll(void *token, unsigned op, uint32_t root, uint64_t comm, uint64_t sent,
			    uint64_t received)
{
	struct lt_thread *t = token;
	if (!t || lt_local(t, &lt_module_mpi)->n)
		return;
	uint64_t *p = lt_reserve(t, 5);
	lt_rec_put(p, lt_now(), LT_REC_MPI_COLL, 5, op, root);
	p[2] = comm;
	p[3] = sent;
	p[4] = received;
	lt_commit(t);
}

LT_EXPORT void ltr_mpi_comm(void *token, uint64_t id, uint32_t size, const uint32_t *world_ranks)
{
	struct lt_thread *t = token;
	if (!t)
		return;
	/* As many records as it takes, LT_REC_WORDS_MAX words each. */
	const uint32_t per = 2 * (LT_REC_WORDS_MAX - 3);
	uint32_t first = 0;
	do {
		uint32_t n = size - first < per ? size - first : per;
		unsigned w = 3 + (n + 1) / 2;
		uint64_t *p = lt_reserve(t, w);
		lt_rec_put(p, lt_now(), LT_REC_MPI_COMM, w, first > 0xffff ? 0xffff : first, size);
		p[2] = id;
		for (uint32_t i = 0; i < n; i += 2)
			p[3 + i / 2] = world_ranks[first + i] |
				       (i + 1 < n ? (uint64_t)world_ranks[first + i + 1] << 32 : 0);
		lt_commit(t);
		first += n;
	} while (first < size && first <= 0xffff);
}

LT_EXPORT void ltr_mpi_world(int rank, int size, const char *library)
{
	lt_meta_line(LT_META_MPI_RANK " %d", rank);
	lt_meta_line(LT_META_MPI_SIZE " %d", size);
	lt_meta_escaped(LT_META_MPI_LIBRARY, library);
}

LT_EXPORT int64_t ltr_mpi_now(void)
{
	return (int64_t)lt_clock_mono_ns();
}

LT_EXPORT void ltr_mpi_clock(int64_t local_ns, int64_t offset_ns, int64_t rtt_ns)
{
	lt_meta_line(LT_META_MPI_CLOCK " %lld %lld %lld", (long long)local_ns, (long long)offset_ns,
		     (long long)rtt_ns);
}

/* The rank as the launcher tells it, before MPI_Init; -1 when none does. */
static int launcher_rank(void)
{
	static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
						"SLURM_PROCID"};
	for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
		const char *r = lt_foreign_env(rank_vars[i]);
		if (r && *r >= '0' && *r <= '9')
			return atoi(r);
	}
	return -1;
}

/* The meta header's rank. */
static void mpi_meta(void)
{
	int rank = launcher_rank();
	if (rank >= 0)
		lt_meta_line(LT_META_MPI_RANK " %d", rank);
}

/*
 * The companion library.  libtrace.so knows no MPI, but a program linked with one (itself or
 * through another library) needs the companion built for that MPI's ABI preloaded beside
 * libtrace.so: libmpi.so.40 is Open MPI's, libmpich.so.12 MPICH's.  When the loaded objects
 * include one of them and no companion, the program is started again at once, before any of
 * it has run and before tracing makes anything (same pid, arguments and environment), with
 * libtrace-mpi-<abi>.so from libtrace.so's directory added to LD_PRELOAD right after
 * libtrace.so.  A companion that LD_PRELOAD names already but that is not loaded failed to
 * load: no second try; then, and where it was not built, rank 0 warns that the MPI calls are
 * not traced.  A program that loads its MPI later (dlopen) is not seen here.
 */

struct loaded {
	const char *abi; /* the MPI's, when its library is loaded */
	int companion;
};

static int find_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct loaded *l = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (!strcmp(base, "libmpi.so.40"))
		l->abi = "openmpi";
	else if (!strcmp(base, "libmpich.so.12"))
		l->abi = "mpich";
	else if (!strncmp(base, "libtrace-mpi-", 13))
		l->companion = 1;
	return 0;
}

/* Whether the colon- or space-separated list `list` names `path`. */
static int listed(const char *list, const char *path)
{
	size_t len = strlen(path);
	for (const char *p = list ? list : ""; *p;) {
		size_t n = strcspn(p, ": ");
		if (n == len && !strncmp(p, path, n))
			return 1;
		p += n + (p[n] != '\0');
	}
	return 0;
}

/* What to exec: the path the program was started by (AT_EXECFN), so that its name (comm, as
 * ps shows it) stays, when that is the running executable; else the executable itself (a
 * script's interpreter: the arguments already name the script). */
static const char *program_path(void)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	struct stat a, b;
	if (fn && stat(fn, &a) == 0 && stat("/proc/self/exe", &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return fn;
	return "/proc/self/exe";
}

/* Starts the program again with `companion` preloaded after `self` (libtrace.so); returns
 * only when it could not. */
static void start_again(const char *self, const char *companion)
{
	size_t len = 0;
	const char *cmd = lt_cmdline(&len);
	if (!cmd || !len)
		return;
	size_t argc = 0, envc = 0;
	for (size_t i = 0; i < len; i++)
		argc += cmd[i] == '\0';
	for (char **e = environ; *e; e++)
		envc++;
	char **argv = calloc(argc + 2, sizeof(*argv));
	char **envp = calloc(envc + 2, sizeof(*envp));
	const char *old = lt_foreign_env("LD_PRELOAD");
	size_t plen = (old ? strlen(old) : 0) + strlen(companion) + 32;
	char *preload = malloc(plen);
	if (!argv || !envp || !preload)
		goto out;
	for (size_t i = 0, a = 0; i < len && a < argc; i += strlen(cmd + i) + 1)
		argv[a++] = (char *)(uintptr_t)(cmd + i);
	/* LD_PRELOAD with the companion right after libtrace.so's entry (at the end when no
	 * entry is its path: its directory came from another spelling). */
	int put = 0;
	size_t at = (size_t)snprintf(preload, plen, "LD_PRELOAD=");
	for (const char *p = old ? old : ""; *p;) {
		size_t n = strcspn(p, ": ");
		if (n) {
			at += (size_t)snprintf(preload + at, plen - at, "%s%.*s",
					       at > 11 ? ":" : "", (int)n, p);
			if (!put && n == strlen(self) && !strncmp(p, self, n)) {
				at += (size_t)snprintf(preload + at, plen - at, ":%s", companion);
				put = 1;
			}
		}
		p += n + (p[n] != '\0');
	}
	if (!put)
		snprintf(preload + at, plen - at, "%s%s", at > 11 ? ":" : "", companion);
	size_t k = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11))
			envp[k++] = *e;
	envp[k++] = preload;
	execve(program_path(), argv, envp);
	lt_warn("cannot start the program again with %s preloaded: %s", companion, strerror(errno));
out:
	free(argv);
	free(envp);
	free(preload);
}

static void mpi_preflight(void)
{
	struct loaded l = {NULL, 0};
	dl_iterate_phdr(find_loaded, &l);
	if (!l.abi || l.companion)
		return;
	Dl_info self;
	char companion[4096];
	if (!dladdr((void *)mpi_preflight, &self) || !self.dli_fname ||
	    !strchr(self.dli_fname, '/'))
		return;
	snprintf(companion, sizeof(companion), "%.*s/libtrace-mpi-%s.so",
		 (int)(strrchr(self.dli_fname, '/') - self.dli_fname), self.dli_fname, l.abi);
	int built = access(companion, R_OK) == 0;
	if (built && !listed(lt_foreign_env("LD_PRELOAD"), companion))
		start_again(self.dli_fname, companion);
	if (launcher_rank() <= 0)
		lt_warn("this program uses %s but %s %s: its MPI calls are not traced",
			!strcmp(l.abi, "mpich") ? "MPICH" : "Open MPI", companion,
			built ? "could not be preloaded"
			      : "is missing (it is built where the MPI's development files are)");
}

LT_MODULE(mpi) = {
    .name = "mpi", .bit = LT_MOD_MPI, .order = 50, .preflight = mpi_preflight, .meta = mpi_meta};
