// SPDX-License-Identifier: BSD-3-Clause
/*
 * parallel.c - whether an MPI launcher started trace2otf2, and loading the MPI module
 * (parallel.h) when it did.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parallel.h"

/* Whether this process's parent is an MPI launcher or its daemon: a program that a rank
 * runs (trace-run converting after the run, a job script) inherits the rank's environment,
 * and is not one of the converter's ranks. */
static int started_by_launcher(void)
{
	static const char *const names[] = {"mpirun", "mpiexec",	 "orterun", "orted",
					    "prte",   "hydra_pmi_proxy", "srun",    "slurmstepd"};
	char path[64], comm[32] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)getppid());
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int ok = fgets(comm, sizeof(comm), f) != NULL;
	fclose(f);
	for (size_t i = 0; ok && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(comm, names[i], strlen(names[i])))
			return 1;
	return 0;
}

int conv_launcher_size(enum conv_mpi_abi *abi)
{
	*abi = CONV_MPI_NONE;
	if (!started_by_launcher())
		return 0;
	const char *v = getenv("OMPI_COMM_WORLD_SIZE"); /* Open MPI's mpirun */
	if (v && *v) {
		*abi = CONV_MPI_OPENMPI;
		return atoi(v);
	}
	v = getenv("PMI_SIZE"); /* MPICH's Hydra, Slurm's PMI */
	if (!v || !*v) {
		v = getenv("SLURM_STEP_NUM_TASKS"); /* Slurm's srun with PMIx */
		if (!getenv("PMIX_RANK"))
			v = NULL;
	}
	if (v && *v) {
		*abi = CONV_MPI_PMI;
		return atoi(v);
	}
	return 0;
}

/* The module `name` beside the executable (a build directory), else in the module directory
 * relative to it (an install, wherever its prefix is now: a package's /opt/libtrace), else in
 * the module directory of the configured prefix. */
static void *load(const char *name, char *path, size_t len)
{
	char exe[PATH_MAX];
	void *h = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, len, "%s/%s", exe, name);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
#ifdef LIBTRACE_MODULE_RELDIR
		if (!h) {
			snprintf(path, len, "%s/%s/%s", exe, LIBTRACE_MODULE_RELDIR, name);
			h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		}
#endif
	}
#ifdef LIBTRACE_MODULE_DIR
	if (!h) {
		snprintf(path, len, "%s/%s", LIBTRACE_MODULE_DIR, name);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
#endif
	return h;
}

int conv_mpi_start(int *argc, char ***argv, int size, enum conv_mpi_abi abi, struct conv_mpi **out,
		   char *err, size_t errlen)
{
	static const char *const openmpi[] = {"libtrace-convert-mpi-openmpi.so", NULL},
				 *const pmi[] = {"libtrace-convert-mpi-mpich.so",
						 "libtrace-convert-mpi-openmpi.so", NULL};
	const char *const *names = abi == CONV_MPI_OPENMPI ? openmpi : pmi;
	char path[PATH_MAX + 64];
	void *h = NULL;
	for (size_t i = 0; names[i] && !h; i++)
		h = load(names[i], path, sizeof(path));
	if (!h) {
		snprintf(err, errlen,
			 "an MPI launcher started %d converters, but this build has no MPI module "
			 "for it (%s%s): run trace2otf2 without the launcher, or with -j N",
			 size, names[0], abi == CONV_MPI_OPENMPI ? "" : " or Open MPI's");
		return -1;
	}
	conv_mpi_init_fn init = (conv_mpi_init_fn)dlsym(h, CONV_MPI_INIT);
	if (!init) {
		snprintf(err, errlen, "%s: no %s", path, CONV_MPI_INIT);
		return -1;
	}
	return init(argc, argv, size, out, err, errlen);
}
