// SPDX-License-Identifier: BSD-3-Clause
/*
 * otf2_defs.c - the OTF2 backend's global definitions (otf2_out.h), in the order Score-P
 * writes them: strings, paradigms, the system tree, location groups and locations,
 * regions, groups and communicators, RMA windows, metrics, call sites and calling contexts,
 * attributes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "otf2_out.h"

const struct otf2_attr_def otf2_attrs[CV_ATTR_COUNT] = {
    [CV_ATTR_TASK_ID] = {"TaskId", "the OpenMP task's id (unique in its process)",
			 OTF2_TYPE_UINT64},
    [CV_ATTR_TASK_DEPENDS] = {"TaskDependsOn",
			      "ids of the tasks this task waited for (depend clauses)",
			      OTF2_TYPE_STRING},
    [CV_ATTR_KOKKOS_DEVICE] = {"KokkosDevice", "the Kokkos execution space instance",
			       OTF2_TYPE_STRING},
    [CV_ATTR_KOKKOS_BYTES] = {"KokkosBytes", "bytes allocated, freed or copied", OTF2_TYPE_UINT64},
    [CV_ATTR_KOKKOS_LABEL] = {"KokkosLabel", "the label of the View", OTF2_TYPE_STRING},
    [CV_ATTR_KOKKOS_SRC] = {"KokkosSource", "the label of the View copied from", OTF2_TYPE_STRING},
    [CV_ATTR_KOKKOS_DST] = {"KokkosDestination", "the label of the View copied to",
			    OTF2_TYPE_STRING},
    [CV_ATTR_KOKKOS_ADDRESS] = {"KokkosAddress",
				"the allocation's address (the View's data minus its header)",
				OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_CORRELATION] = {"GpuCorrelationId",
				 "joins a GPU API call and what the device did for it (CUPTI)",
				 OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_BYTES] = {"GpuBytes", "bytes copied or set", OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_COPY_KIND] = {"GpuCopyKind", "the direction of a copy (HtoD, DtoH, DtoD...)",
			       OTF2_TYPE_STRING},
    [CV_ATTR_GPU_DST] = {"GpuDestination", "the address copied or set", OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_SRC] = {"GpuSource", "the address copied from", OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_STREAM] = {"GpuStream", "the stream (or event) the call names (0: the default)",
			    OTF2_TYPE_UINT64},
    [CV_ATTR_GPU_KERNEL] = {"GpuKernel", "the kernel launched", OTF2_TYPE_STRING},
    [CV_ATTR_GPU_GRID] = {"GpuGrid", "blocks of the launch (x, y, z)", OTF2_TYPE_STRING},
    [CV_ATTR_GPU_BLOCK] = {"GpuBlock", "threads per block of the launch (x, y, z)",
			   OTF2_TYPE_STRING},
    [CV_ATTR_GPU_MEMORY] = {"GpuMemoryKind", "the kind of memory allocated or freed",
			    OTF2_TYPE_STRING},
    [CV_ATTR_GPU_RESULT] = {"GpuResult", "the call's return code (an error: not 0)",
			    OTF2_TYPE_INT64},
    [CV_ATTR_ALLOCATION_SIZE] = {"ALLOCATION_SIZE", "bytes allocated", OTF2_TYPE_UINT64},
    [CV_ATTR_DEALLOCATION_SIZE] = {"DEALLOCATION_SIZE", "bytes freed", OTF2_TYPE_UINT64},
    [CV_ATTR_ARGUMENT_ADDRESS] = {"ARGUMENT_ADDRESS", "the address freed", OTF2_TYPE_UINT64},
    [CV_ATTR_RESULT_ADDRESS] = {"RESULT_ADDRESS", "the address allocated", OTF2_TYPE_UINT64},
};

static OTF2_RegionRole role(enum cv_role r)
{
	switch (r) {
	case CV_ROLE_WRAPPER:
		return OTF2_REGION_ROLE_WRAPPER;
	case CV_ROLE_THREAD_CREATE:
		return OTF2_REGION_ROLE_THREAD_CREATE;
	case CV_ROLE_THREAD_WAIT:
		return OTF2_REGION_ROLE_THREAD_WAIT;
	case CV_ROLE_PARALLEL:
		return OTF2_REGION_ROLE_PARALLEL;
	case CV_ROLE_LOOP:
		return OTF2_REGION_ROLE_LOOP;
	case CV_ROLE_SECTIONS:
		return OTF2_REGION_ROLE_SECTIONS;
	case CV_ROLE_SINGLE:
		return OTF2_REGION_ROLE_SINGLE;
	case CV_ROLE_BARRIER:
		return OTF2_REGION_ROLE_BARRIER;
	case CV_ROLE_IMPLICIT_BARRIER:
		return OTF2_REGION_ROLE_IMPLICIT_BARRIER;
	case CV_ROLE_CRITICAL:
		return OTF2_REGION_ROLE_CRITICAL;
	case CV_ROLE_ATOMIC:
		return OTF2_REGION_ROLE_ATOMIC;
	case CV_ROLE_ORDERED:
		return OTF2_REGION_ROLE_ORDERED;
	case CV_ROLE_MASTER:
		return OTF2_REGION_ROLE_MASTER;
	case CV_ROLE_TASK:
		return OTF2_REGION_ROLE_TASK;
	case CV_ROLE_TASK_CREATE:
		return OTF2_REGION_ROLE_TASK_CREATE;
	case CV_ROLE_TASK_WAIT:
		return OTF2_REGION_ROLE_TASK_WAIT;
	case CV_ROLE_WORKSHARE:
		return OTF2_REGION_ROLE_WORKSHARE;
	case CV_ROLE_PHASE:
		return OTF2_REGION_ROLE_CODE; /* OTF2 has no phase role: a code block */
	case CV_ROLE_DATA_TRANSFER:
		return OTF2_REGION_ROLE_DATA_TRANSFER;
	case CV_ROLE_ALLOCATE:
		return OTF2_REGION_ROLE_ALLOCATE;
	case CV_ROLE_DEALLOCATE:
		return OTF2_REGION_ROLE_DEALLOCATE;
	case CV_ROLE_POINT2POINT:
		return OTF2_REGION_ROLE_POINT2POINT;
	case CV_ROLE_COLLECTIVE:
		return OTF2_REGION_ROLE_COLL_ALL2ALL;
	case CV_ROLE_GPU_SYNC: /* Score-P: every CUDA API call is a wrapper */
		return OTF2_REGION_ROLE_WRAPPER;
	case CV_ROLE_GPU_MEMORY:
		return OTF2_REGION_ROLE_DATA_TRANSFER;
	case CV_ROLE_KERNEL:
	case CV_ROLE_FUNCTION:
	case CV_ROLE_USER:
		break;
	}
	return OTF2_REGION_ROLE_FUNCTION;
}

OTF2_Paradigm otf2_paradigm(enum cv_paradigm p)
{
	switch (p) {
	case CV_PARADIGM_PTHREAD:
		return OTF2_PARADIGM_PTHREAD;
	case CV_PARADIGM_OPENMP:
		return OTF2_PARADIGM_OPENMP;
	case CV_PARADIGM_KOKKOS:
		return OTF2_PARADIGM_KOKKOS;
	case CV_PARADIGM_USER:
		return OTF2_PARADIGM_USER;
	case CV_PARADIGM_MPI:
		return OTF2_PARADIGM_MPI;
	case CV_PARADIGM_CUDA:
		return OTF2_PARADIGM_CUDA;
	case CV_PARADIGM_HIP:
		return OTF2_PARADIGM_HIP;
	case CV_PARADIGM_PROCESS:
		break;
	}
	return OTF2_PARADIGM_NONE;
}

static OTF2_StringRef str_ref(uint32_t s)
{
	return s == CV_NO_STRING ? OTF2_UNDEFINED_STRING : s;
}

/*
 * MPI's strings, registered before the strings go out: [0] "MPI", then each
 * communicator's name.  NULL when the trace has no MPI (or no memory).
 */
static uint32_t *mpi_names(struct cv *cv)
{
	int any = cv->ncomms > 0;
	for (uint32_t i = 0; i < cv->nregions && !any; i++)
		any = cv->regions[i].paradigm == CV_PARADIGM_MPI;
	uint32_t *s = any ? malloc((cv->ncomms + 1) * sizeof(*s)) : NULL;
	if (!s)
		return NULL;
	s[0] = cv_string(cv, "MPI");
	for (uint32_t c = 0; c < cv->ncomms; c++) {
		const struct cv_comm *cm = &cv->comms[c];
		char name[96];
		if (cm->id == LT_MPI_COMM_WORLD)
			snprintf(name, sizeof(name), "MPI_COMM_WORLD");
		else if (cm->id == LT_MPI_COMM_SELF)
			snprintf(name, sizeof(name), "MPI_COMM_SELF");
		else
			snprintf(name, sizeof(name), "MPI communicator %u (%u ranks)", c, cm->size);
		s[1 + c] = cv_string(cv, name);
	}
	return s;
}

/*
 * MPI's paradigm and groups, from group ref `base` on: the COMM_LOCATIONS group of every
 * rank's main thread by COMM_WORLD rank (OTF2_UNDEFINED_LOCATION for a rank whose trace
 * is missing), then one per communicator (a communicator whose members were never
 * recorded has an empty one).
 */
static void write_mpi_groups(struct cv *cv, OTF2_GlobalDefWriter *g, const uint32_t *names,
			     uint32_t s_empty, OTF2_GroupRef base)
{
	if (!names)
		return;
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_MPI, names[0],
						      OTF2_PARADIGM_CLASS_PROCESS),
		   "Paradigm");
	uint32_t world = cv->mpi_world;
	size_t most = world;
	for (uint32_t c = 0; c < cv->ncomms; c++)
		if (cv->comms[c].size > most)
			most = cv->comms[c].size;
	uint64_t *members = malloc((most ? most : 1) * sizeof(*members));
	if (!members) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Group");
		return;
	}
	for (uint32_t r = 0; r < world; r++)
		members[r] = OTF2_UNDEFINED_LOCATION;
	for (size_t i = 0; i < cv->nprocs; i++) {
		const struct cv_process *p = &cv->procs[i];
		if (p->mpi_rank >= 0 && (uint32_t)p->mpi_rank < world && p->nlocs)
			members[p->mpi_rank] = cv->locs[p->first_loc].id;
	}
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteGroup(
		       g, base, names[0], OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
		       OTF2_GROUP_FLAG_NONE, world, members),
		   "Group");
	for (uint32_t c = 0; c < cv->ncomms; c++) {
		const struct cv_comm *cm = &cv->comms[c];
		OTF2_GroupType type = OTF2_GROUP_TYPE_COMM_GROUP;
		uint32_t n = cm->size;
		if (cm->id == LT_MPI_COMM_WORLD) {
			n = world;
			for (uint32_t r = 0; r < n; r++)
				members[r] = r;
		} else if (cm->id == LT_MPI_COMM_SELF) {
			type = OTF2_GROUP_TYPE_COMM_SELF;
			n = 0;
		} else {
			for (uint32_t r = 0; r < n; r++)
				members[r] = cm->ranks[r] == LT_MPI_NO_RANK ? OTF2_UNDEFINED_UINT64
									    : cm->ranks[r];
		}
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteGroup(g, base + 1 + c, s_empty, type,
							   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
							   n, members),
			   "Group");
	}
	free(members);
}

/*
 * The GPU copies' groups, from group ref `base` on: a COMM_LOCATIONS group of paradigm
 * CUDA over every location (in cv.locs order: ranks are location indices), then per RMA
 * window the COMM_GROUP of its members.  Nothing without GPU streams.
 */
/* Score-P's region groups of Kokkos (parallel_for, parallel_reduce, parallel_scan, profile
 * regions and sections, deep copies), and fences, by the kind each region is of (its
 * description); then the allocations and deallocations, which have no kind. */
static const char *const kokkos_group_names[LT_KOKKOS_MAX + 1] = {
    [LT_KOKKOS_parallel_for] = "Kokkos parallel_for",
    [LT_KOKKOS_parallel_reduce] = "Kokkos parallel_reduce",
    [LT_KOKKOS_parallel_scan] = "Kokkos parallel_scan",
    [LT_KOKKOS_fence] = "Kokkos fences",
    [LT_KOKKOS_region] = "Kokkos profile regions",
    [LT_KOKKOS_section] = "Kokkos profile sections",
    [LT_KOKKOS_deep_copy] = "Kokkos deep copy",
    [LT_KOKKOS_MAX] = "Kokkos memory", /* allocations and deallocations */
};

/* The Kokkos region groups that have members, numbered from `base` (after every other). */
static void write_kokkos_groups(struct cv *cv, OTF2_GlobalDefWriter *g, const uint32_t *s_group,
				const uint32_t *desc, OTF2_GroupRef base)
{
	uint64_t *members = malloc((cv->nregions ? cv->nregions : 1) * sizeof(*members));
	if (!members) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Group");
		return;
	}
	for (unsigned k = 0; k <= LT_KOKKOS_MAX; k++) {
		uint32_t n = 0;
		for (uint32_t i = 0; i < cv->nregions; i++)
			if (cv->regions[i].paradigm == CV_PARADIGM_KOKKOS &&
			    cv->regions[i].desc == desc[k])
				members[n++] = i;
		if (n)
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteGroup(
				       g, base++, s_group[k], OTF2_GROUP_TYPE_REGIONS,
				       OTF2_PARADIGM_KOKKOS, OTF2_GROUP_FLAG_NONE, n, members),
				   "Group");
	}
	free(members);
}

static void write_gpu_groups(struct cv *cv, OTF2_GlobalDefWriter *g, uint32_t s_cuda,
			     uint32_t s_empty, OTF2_GroupRef base)
{
	if (!cv->ngpu_wins)
		return;
	uint64_t *members = malloc((cv->nlocs ? cv->nlocs : 1) * sizeof(*members));
	if (!members) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Group");
		return;
	}
	for (size_t i = 0; i < cv->nlocs; i++)
		members[i] = cv->locs[i].id;
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteGroup(g, base, s_cuda, OTF2_GROUP_TYPE_COMM_LOCATIONS,
						   OTF2_PARADIGM_CUDA, OTF2_GROUP_FLAG_NONE,
						   (uint32_t)cv->nlocs, members),
		   "Group");
	for (uint32_t w = 0; w < cv->ngpu_wins; w++) {
		const struct cv_gpu_win *win = &cv->gpu_wins[w];
		for (uint32_t i = 0; i < win->nmembers; i++)
			members[i] = win->members[i];
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteGroup(
			       g, base + 1 + w, s_empty, OTF2_GROUP_TYPE_COMM_GROUP,
			       OTF2_PARADIGM_CUDA, OTF2_GROUP_FLAG_NONE, win->nmembers, members),
			   "Group");
	}
	free(members);
}

/* Call sites and call paths (after the strings and regions).  Only the call sites with a
 * file and a line are SourceCodeLocations, numbered by cv_scl.site; a path's frame
 * without them has none. */
static void write_callsites(struct cv *cv, OTF2_GlobalDefWriter *g)
{
	for (uint32_t i = 0; i < cv->nscls; i++)
		if (cv->scls[i].site != CV_NO_SITE)
			otf2_check(
			    cv,
			    OTF2_GlobalDefWriter_WriteSourceCodeLocation(
				g, cv->scls[i].site, str_ref(cv->scls[i].file), cv->scls[i].line),
			    "SourceCodeLocation");
	for (uint32_t i = 0; i < cv->nctxs; i++)
		otf2_check(
		    cv,
		    OTF2_GlobalDefWriter_WriteCallingContext(
			g, i, cv->ctxs[i].region,
			cv->ctxs[i].scl < cv->nscls && cv->scls[cv->ctxs[i].scl].site != CV_NO_SITE
			    ? cv->scls[cv->ctxs[i].scl].site
			    : OTF2_UNDEFINED_SOURCE_CODE_LOCATION,
			cv->ctxs[i].parent ? cv->ctxs[i].parent - 1
					   : OTF2_UNDEFINED_CALLING_CONTEXT),
		    "CallingContext");
	if (cv->sample_period) /* stack samples: one period of each thread's CPU time */
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteInterruptGenerator(
			       g, 0, str_ref(cv_string(cv, "CPU time sampling")),
			       OTF2_INTERRUPT_GENERATOR_MODE_TIME, OTF2_BASE_DECIMAL, -9,
			       cv->sample_period),
			   "InterruptGenerator");
}

/* A metric class: metric m's own (asynchronous, one member), or PAPI set k's (one member
 * per event from `member`, synchronous: STRICT where every Enter and Leave of every
 * location that used it carried a reading). */
static void write_class(struct cv *cv, OTF2_GlobalDefWriter *g, OTF2_MetricRef ref, uint32_t what,
			uint32_t member)
{
	if (!(what & CLASS_PAPI)) {
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteMetricClass(g, ref, 1, &what,
								 OTF2_METRIC_ASYNCHRONOUS,
								 OTF2_RECORDER_KIND_ABSTRACT),
			   "MetricClass");
		return;
	}
	uint32_t k = what & ~CLASS_PAPI;
	const struct cv_papi *ps = &cv->papis[k];
	OTF2_MetricMemberRef members[16];
	for (unsigned i = 0; i < ps->n; i++)
		members[i] = member + i;
	int strict = 0;
	for (size_t i = 0; i < cv->nlocs; i++) {
		if (cv->locs[i].papi != k + 1)
			continue;
		strict = !cv->locs[i].papi_missed;
		if (!strict)
			break;
	}
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteMetricClass(g, ref, (uint8_t)ps->n, members,
							 strict ? OTF2_METRIC_SYNCHRONOUS_STRICT
								: OTF2_METRIC_SYNCHRONOUS,
							 OTF2_RECORDER_KIND_CPU),
		   "MetricClass");
}

/*
 * Metric members (the metrics', then each PAPI set's events: values since the thread's
 * start) and classes (the metrics' in order, then the PAPI sets'), which the events reach
 * through their locations' mapping tables (CLASS_PAPI in otf2_out.h).
 */
static void write_metrics(struct cv *cv, OTF2_GlobalDefWriter *g, uint32_t s_empty)
{
	for (uint32_t m = 0; m < cv->nmetrics; m++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteMetricMember(
			       g, m, cv->metrics[m].name, s_empty, OTF2_METRIC_TYPE_USER,
			       /* energy: a running total since the start, whose slope is power */
			       cv->metrics[m].accumulated ? OTF2_METRIC_ACCUMULATED_START
							  : OTF2_METRIC_ABSOLUTE_POINT,
			       cv->metrics[m].is_double ? OTF2_TYPE_DOUBLE : OTF2_TYPE_INT64,
			       OTF2_BASE_DECIMAL, 0, cv->metrics[m].unit),
			   "MetricMember");
	uint32_t *first = calloc(cv->npapis + 1, sizeof(*first)); /* each set's first member */
	if (!first) {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "MetricMember");
		return;
	}
	uint32_t member = cv->nmetrics;
	for (uint32_t k = 0; k < cv->npapis; k++) {
		const struct cv_papi *ps = &cv->papis[k];
		first[k] = member;
		for (unsigned i = 0; i < ps->n; i++)
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteMetricMember(
				       g, member++, ps->names[i], ps->names[i],
				       OTF2_METRIC_TYPE_PAPI, OTF2_METRIC_ACCUMULATED_START,
				       OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, cv_string(cv, "#")),
				   "MetricMember");
	}
	for (uint32_t m = 0; m < cv->nmetrics; m++)
		write_class(cv, g, m, m, 0);
	for (uint32_t k = 0; k < cv->npapis; k++)
		write_class(cv, g, cv->nmetrics + k, CLASS_PAPI | k, first[k]);
	free(first);
}

void otf2_write_definitions(struct cv *cv, OTF2_GlobalDefWriter *g)
{
	struct out *o = cv->out;
	/* Every string a definition below needs, registered before the strings go out. */
	uint32_t s_empty = cv_string(cv, ""), s_machine = cv_string(cv, "machine"),
		 s_node = cv_string(cv, "node"), s_pthread = cv_string(cv, "POSIX threads"),
		 s_group = cv_string(cv, "PTHREAD"), s_tid = cv_string(cv, "ThreadId"),
		 s_tid_d = cv_string(cv, "the thread's operating system id"),
		 s_closed = cv_string(cv, "libtrace:closed_by_converter"),
		 s_closed_d = cv_string(cv, "the trace left this region open; the converter "
					    "closed it at the location's last time stamp"),
		 s_linux = cv_string(cv, "Linux"), s_cs = cv_string(cv, "CallSite"),
		 s_cs_d = cv_string(cv, "where the program made this call (function, file, line)"),
		 s_cp = cv_string(cv, "CallPath"),
		 s_cp_d = cv_string(cv, "the call path that made this call "
					"(LIBTRACE_CALLSITE_DEPTH frames)"),
		 s_cpu = cv_string(cv, "libtrace:cpu_time"),
		 s_cpu_d = cv_string(cv, "the thread's CPU time (ns) a stack sample stands for: "
					 "the interrupt generator's period, or a multiple of it");
	uint32_t s_attr[CV_ATTR_COUNT][2];
	for (int i = 0; i < CV_ATTR_COUNT; i++) {
		s_attr[i][0] = cv_string(cv, otf2_attrs[i].name);
		s_attr[i][1] = cv_string(cv, otf2_attrs[i].desc);
	}
	int kokkos = 0, cuda = 0, hip = 0;
	for (uint32_t i = 0; i < cv->nregions; i++) {
		kokkos |= cv->regions[i].paradigm == CV_PARADIGM_KOKKOS;
		cuda |= cv->regions[i].paradigm == CV_PARADIGM_CUDA;
		hip |= cv->regions[i].paradigm == CV_PARADIGM_HIP;
	}
	/* Kokkos as Score-P names it: the paradigm "KOKKOS", the source file "KOKKOS" of every
	 * Kokkos region, and a region group per kind of them. */
	uint32_t s_kokkos = kokkos ? cv_string(cv, "KOKKOS") : s_empty;
	uint32_t s_kgroup[LT_KOKKOS_MAX + 1], kdesc[LT_KOKKOS_MAX + 1];
	for (unsigned k = 0; k <= LT_KOKKOS_MAX; k++) {
		s_kgroup[k] = kokkos ? cv_string(cv, kokkos_group_names[k]) : s_empty;
		/* as kokkos.c describes them; the allocations and frees have none */
		kdesc[k] = kokkos && k < LT_KOKKOS_MAX ? cv_string(cv, rd_kokkos_name(k)) + 1 : 0;
	}
	uint32_t s_cuda = cuda || cv->ngpu_wins ? cv_string(cv, "CUDA") : s_empty,
		 s_hip = hip ? cv_string(cv, "HIP") : s_empty;
	uint32_t s_openmp = cv_string(cv, "OpenMP"),
		 s_team_template = cv_string(cv, "Thread team ${id}"),
		 s_unread = cv_string(cv, "(unreadable process)");
	size_t ncomm = cv->max_procs + cv->nteams;
	uint32_t *s_comm = calloc(ncomm ? ncomm : 1, sizeof(*s_comm));
	for (size_t i = 0; s_comm && i < cv->max_procs; i++) {
		char name[400];
		if (i >= cv->nprocs) {
			s_comm[i] = s_unread;
			continue;
		}
		snprintf(name, sizeof(name), "pthreads of %s", cv->strings[cv->procs[i].name]);
		s_comm[i] = cv_string(cv, name);
	}
	for (uint32_t k = 0; s_comm && k < cv->nteams; k++) {
		char name[400];
		const struct cv_team *tm = &cv->teams[k];
		snprintf(name, sizeof(name), "Thread team %u (%u threads, thread %u of %s)", k,
			 tm->size, tm->forker, cv->strings[cv->procs[tm->process].name]);
		s_comm[cv->max_procs + k] = cv_string(cv, name);
	}
	/* --core-view: a location group per host for its CPUs, after the processes'. */
	uint32_t *s_cores = calloc(cv->ncore_hosts + 1, sizeof(*s_cores));
	for (uint32_t h = 0; s_cores && h < cv->ncore_hosts; h++) {
		char name[400];
		snprintf(name, sizeof(name), "CPUs of %s", cv->strings[cv->hosts[h]]);
		s_cores[h] = cv_string(cv, name);
	}
	uint32_t *s_mpi = mpi_names(cv);
	uint64_t length = cv->stats.last_ns - cv->stats.first_ns + 1;
	uint64_t real = cv->nprocs ? cv->stats.first_ns + cv->procs[0].real_minus_mono
				   : OTF2_UNDEFINED_TIMESTAMP;
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, cv->stats.first_ns,
							     length, real),
		   "ClockProperties");
	for (uint32_t i = 0; i < cv->nstrings; i++)
		otf2_check(cv, OTF2_GlobalDefWriter_WriteString(g, i, cv->strings[i]), "String");
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_PTHREAD, s_pthread,
						      OTF2_PARADIGM_CLASS_THREAD_CREATE_WAIT),
		   "Paradigm");
	if (cv->nteams) {
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENMP, s_openmp,
							      OTF2_PARADIGM_CLASS_THREAD_FORK_JOIN),
			   "Paradigm");
		OTF2_AttributeValue v;
		v.stringRef = s_team_template;
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteParadigmProperty(
			       g, OTF2_PARADIGM_OPENMP, OTF2_PARADIGM_PROPERTY_COMM_NAME_TEMPLATE,
			       OTF2_TYPE_STRING, v),
			   "ParadigmProperty");
	}
	if (kokkos)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_KOKKOS, s_kokkos,
							      OTF2_PARADIGM_CLASS_ACCELERATOR),
			   "Paradigm");
	if (cuda || cv->ngpu_wins)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_CUDA, s_cuda,
							      OTF2_PARADIGM_CLASS_ACCELERATOR),
			   "Paradigm");
	if (hip)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_HIP, s_hip,
							      OTF2_PARADIGM_CLASS_ACCELERATOR),
			   "Paradigm");
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_linux, s_machine,
							    OTF2_UNDEFINED_SYSTEM_TREE_NODE),
		   "SystemTreeNode");
	for (uint32_t h = 0; h < cv->nhosts; h++)
		otf2_check(
		    cv, OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + h, cv->hosts[h], s_node, 0),
		    "SystemTreeNode");
	otf2_check(
	    cv,
	    OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, 0, OTF2_SYSTEM_TREE_DOMAIN_MACHINE),
	    "SystemTreeNodeDomain");
	for (uint32_t h = 0; h < cv->nhosts; h++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(
			       g, 1 + h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY),
			   "SystemTreeNodeDomain");
	for (size_t i = 0; i < cv->nprocs; i++) {
		const struct cv_process *p = &cv->procs[i];
		OTF2_LocationGroupRef creator = p->creator >= 0 && (size_t)p->creator < i
						    ? (OTF2_LocationGroupRef)p->creator
						    : OTF2_UNDEFINED_LOCATION_GROUP;
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteLocationGroup(
			       g, (OTF2_LocationGroupRef)i, p->name,
			       OTF2_LOCATION_GROUP_TYPE_PROCESS, 1 + p->host, creator),
			   "LocationGroup");
	}
	for (uint32_t h = 0; h < cv->ncore_hosts; h++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteLocationGroup(
			       g, (OTF2_LocationGroupRef)(cv->nprocs + h),
			       s_cores ? s_cores[h] : s_empty, OTF2_LOCATION_GROUP_TYPE_PROCESS,
			       1 + h, OTF2_UNDEFINED_LOCATION_GROUP),
			   "LocationGroup");
	free(s_cores);
	/* GPU contexts after the processes and the --core-view hosts, created by their
	 * process. */
	OTF2_LocationGroupRef gpu_groups = (OTF2_LocationGroupRef)(cv->nprocs + cv->ncore_hosts);
	for (uint32_t k = 0; k < cv->ngpu_groups; k++) {
		const struct cv_gpu_group *gg = &cv->gpu_groups[k];
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteLocationGroup(
			       g, gpu_groups + k, gg->name, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
			       1 + cv->procs[gg->process].host, (OTF2_LocationGroupRef)gg->process),
			   "LocationGroup");
	}
	for (size_t i = 0; i < cv->nlocs; i++) {
		const struct cv_loc *l = &cv->locs[i];
		/* The samplers' metrics sit on METRIC locations, as Score-P's asynchronous
		 * metrics do; threads and --core-view CPUs are timelines of regions. */
		OTF2_LocationType type = l->kind == CV_LOC_METRIC ? OTF2_LOCATION_TYPE_METRIC
					 : l->kind == CV_LOC_GPU_STREAM
					     ? OTF2_LOCATION_TYPE_ACCELERATOR_STREAM
					     : OTF2_LOCATION_TYPE_CPU_THREAD;
		OTF2_LocationGroupRef group =
		    l->kind == CV_LOC_GPU_STREAM ? gpu_groups + l->gpu : l->process;
		otf2_check(
		    cv,
		    OTF2_GlobalDefWriter_WriteLocation(g, l->id, l->name, type, l->nevents, group),
		    "Location");
	}
	for (uint32_t i = 0; i < cv->nregions; i++) {
		const struct cv_region *r = &cv->regions[i];
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteRegion(
			       g, i, r->name, r->canonical, r->desc ? r->desc - 1 : s_empty,
			       role(r->role), otf2_paradigm(r->paradigm), OTF2_REGION_FLAG_NONE,
			       str_ref(r->paradigm == CV_PARADIGM_KOKKOS && r->file == CV_NO_STRING
					   ? s_kokkos
					   : r->file),
			       r->line, r->line),
			   "Region");
	}
	/* Group 0: every thread of every process; group 1 + p: process p's, as ranks in 0. */
	uint64_t *members = malloc((cv->nlocs ? cv->nlocs : 1) * sizeof(*members));
	if (members) {
		for (size_t i = 0; i < cv->nlocs; i++)
			members[i] = cv->locs[i].id;
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteGroup(
			       g, 0, s_group, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_PTHREAD,
			       OTF2_GROUP_FLAG_NONE, (uint32_t)cv->nlocs, members),
			   "Group");
		for (size_t p = 0; p < cv->max_procs; p++) {
			uint32_t n = 0; /* its threads' contingent: not its GPU streams */
			for (size_t k = 0; k < cv->procs[p].nlocs; k++)
				if (cv->locs[cv->procs[p].first_loc + k].kind != CV_LOC_GPU_STREAM)
					members[n++] = cv->procs[p].first_loc + k;
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteGroup(
				       g, (OTF2_GroupRef)(1 + p), s_empty,
				       OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_PTHREAD,
				       OTF2_GROUP_FLAG_NONE, n, members),
				   "Group");
		}
		/* OpenMP: every thread again (same order: ranks are location indices), then
		 * each team over it. */
		OTF2_GroupRef omp = (OTF2_GroupRef)(1 + cv->max_procs);
		if (cv->nteams) {
			for (size_t i = 0; i < cv->nlocs; i++)
				members[i] = cv->locs[i].id;
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteGroup(
				       g, omp, s_openmp, OTF2_GROUP_TYPE_COMM_LOCATIONS,
				       OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE,
				       (uint32_t)cv->nlocs, members),
				   "Group");
		}
		for (uint32_t k = 0; k < cv->nteams; k++) {
			const struct cv_team *tm = &cv->teams[k];
			for (uint32_t i = 0; i < tm->nmembers; i++)
				members[i] = tm->members[i];
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteGroup(
				       g, omp + 1 + k, s_empty, OTF2_GROUP_TYPE_COMM_GROUP,
				       OTF2_PARADIGM_OPENMP, OTF2_GROUP_FLAG_NONE, tm->nmembers,
				       members),
				   "Group");
		}
		free(members);
	} else {
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Group");
	}
	write_mpi_groups(cv, g, s_mpi, s_empty,
			 (OTF2_GroupRef)(1 + cv->max_procs + (cv->nteams ? 1 + cv->nteams : 0)));
	OTF2_GroupRef gpu_comm_groups =
	    (OTF2_GroupRef)(1 + cv->max_procs + (cv->nteams ? 1 + cv->nteams : 0) +
			    (s_mpi ? 1 + cv->ncomms : 0));
	write_gpu_groups(cv, g, s_cuda, s_empty, gpu_comm_groups);
	if (kokkos)
		write_kokkos_groups(cv, g, s_kgroup, kdesc,
				    gpu_comm_groups + (cv->ngpu_wins ? 1 + cv->ngpu_wins : 0));
	for (size_t p = 0; p < cv->max_procs; p++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteComm(
			       g, (OTF2_CommRef)p, s_comm ? s_comm[p] : s_empty,
			       (OTF2_GroupRef)(1 + p), OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
			   "Comm");
	/* Then the teams' and MPI's, in their one numbering. */
	OTF2_GroupRef mpi_groups =
	    (OTF2_GroupRef)(1 + cv->max_procs + (cv->nteams ? 1 + cv->nteams : 0));
	uint32_t *by_ref = malloc((cv->ncomm_refs + 1) * sizeof(*by_ref));
	if (by_ref) {
		for (uint32_t k = 0; k < cv->nteams; k++)
			by_ref[cv->teams[k].comm] = k;
		for (uint32_t c = 0; c < cv->ncomms; c++)
			by_ref[cv->comms[c].comm] = cv->nteams + c;
		for (uint32_t w = 0; w < cv->ngpu_wins; w++)
			by_ref[cv->gpu_wins[w].comm] = cv->nteams + cv->ncomms + w;
	}
	for (uint32_t r = 0; by_ref && r < cv->ncomm_refs; r++) {
		uint32_t k = by_ref[r];
		if (k >= cv->nteams + cv->ncomms) {
			const struct cv_gpu_win *w = &cv->gpu_wins[k - cv->nteams - cv->ncomms];
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteComm(
				       g, (OTF2_CommRef)(cv->max_procs + w->comm), w->name,
				       gpu_comm_groups + 1 + (k - cv->nteams - cv->ncomms),
				       OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
				   "Comm");
		} else if (k < cv->nteams)
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteComm(
				       g, team_comm(cv, k),
				       s_comm ? s_comm[cv->max_procs + k] : s_empty,
				       (OTF2_GroupRef)(2 + cv->max_procs + k), OTF2_UNDEFINED_COMM,
				       OTF2_COMM_FLAG_NONE),
				   "Comm");
		else if (s_mpi)
			otf2_check(cv,
				   OTF2_GlobalDefWriter_WriteComm(
				       g, mpi_comm(cv, k - cv->nteams), s_mpi[1 + k - cv->nteams],
				       mpi_groups + 1 + k - cv->nteams, OTF2_UNDEFINED_COMM,
				       OTF2_COMM_FLAG_NONE),
				   "Comm");
	}
	if (!by_ref)
		otf2_check(cv, OTF2_ERROR_MEM_ALLOC_FAILED, "Comm");
	free(by_ref);
	for (uint32_t w = 0; w < cv->ngpu_wins; w++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteRmaWin(
			       g, w, cv->gpu_wins[w].name,
			       (OTF2_CommRef)(cv->max_procs + cv->gpu_wins[w].comm),
			       OTF2_RMA_WIN_FLAG_NONE),
			   "RmaWin");
	free(s_comm);
	free(s_mpi);
	write_metrics(cv, g, s_empty);
	write_callsites(cv, g);
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_THREAD_ID, s_tid, s_tid_d,
						       OTF2_TYPE_UINT64),
		   "Attribute");
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_CLOSED, s_closed, s_closed_d,
						       OTF2_TYPE_UINT8),
		   "Attribute");
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_CALLSITE, s_cs, s_cs_d,
						       OTF2_TYPE_SOURCE_CODE_LOCATION),
		   "Attribute");
	otf2_check(cv,
		   OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_CALLPATH, s_cp, s_cp_d,
						       OTF2_TYPE_CALLING_CONTEXT),
		   "Attribute");
	otf2_check(
	    cv,
	    OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_CPU_TIME, s_cpu, s_cpu_d, OTF2_TYPE_UINT64),
	    "Attribute");
	for (int i = 0; i < CV_ATTR_COUNT; i++)
		otf2_check(cv,
			   OTF2_GlobalDefWriter_WriteAttribute(g, ATTR_COUNT + i, s_attr[i][0],
							       s_attr[i][1], otf2_attrs[i].type),
			   "Attribute");
	(void)o;
}
