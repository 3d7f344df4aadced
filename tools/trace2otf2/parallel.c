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

int conv_launcher_size(void)
{
	if (!started_by_launcher())
		return 0;
	/* Open MPI's mpirun; MPICH's (Hydra) and Slurm's PMI; Slurm's srun with PMIx. */
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"};
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v)
			return atoi(v);
	}
	const char *v = getenv("SLURM_STEP_NUM_TASKS");
	if (v && *v && getenv("PMIX_RANK"))
		return atoi(v);
	return 0;
}

int conv_mpi_start(int *argc, char ***argv, int size, struct conv_mpi **out, char *err,
		   size_t errlen)
{
	char exe[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *h = NULL;
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		snprintf(path, sizeof(path), "%s/%s", exe, CONV_MPI_MODULE);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
#ifdef LIBTRACE_MODULE_DIR
	if (!h) {
		snprintf(path, sizeof(path), "%s/%s", LIBTRACE_MODULE_DIR, CONV_MPI_MODULE);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	}
#endif
	if (!h) {
		snprintf(err, errlen,
			 "an MPI launcher started %d converters, but this build has no MPI "
			 "module (%s: %s); run trace2otf2 without the launcher",
			 size, CONV_MPI_MODULE, dlerror());
		return -1;
	}
	conv_mpi_init_fn init = (conv_mpi_init_fn)dlsym(h, CONV_MPI_INIT);
	if (!init) {
		snprintf(err, errlen, "%s: no %s", path, CONV_MPI_INIT);
		return -1;
	}
	return init(argc, argv, size, out, err, errlen);
}
