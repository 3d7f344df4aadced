// SPDX-License-Identifier: BSD-3-Clause
/*
 * otf2_map.c - what trace2otf2's OTF2 region roles and paradigms mean to the profile: the
 * converter's roles and the profile's kinds, read back (otf2_in.c); the names of the
 * attributes of calls that allocate, free and copy memory.
 */
#include "otf2_map.h"

const char *const rp_call_attrs[CALL_ATTRS] = {
    [CA_KOKKOS_BYTES] = "KokkosBytes",		[CA_KOKKOS_ADDRESS] = "KokkosAddress",
    [CA_KOKKOS_LABEL] = "KokkosLabel",		[CA_GPU_BYTES] = "GpuBytes",
    [CA_GPU_MEMORY] = "GpuMemoryKind",		[CA_ALLOCATION_SIZE] = "ALLOCATION_SIZE",
    [CA_ARGUMENT_ADDRESS] = "ARGUMENT_ADDRESS", [CA_RESULT_ADDRESS] = "RESULT_ADDRESS",
};

int rp_otf2_role(OTF2_RegionRole role, int function, enum cv_role *out)
{
	switch (role) {
	case OTF2_REGION_ROLE_FUNCTION:
		*out = function ? CV_ROLE_FUNCTION : CV_ROLE_USER;
		return 1;
	case OTF2_REGION_ROLE_WRAPPER:
		*out = CV_ROLE_WRAPPER;
		return 1;
	case OTF2_REGION_ROLE_THREAD_CREATE:
		*out = CV_ROLE_THREAD_CREATE;
		return 1;
	case OTF2_REGION_ROLE_THREAD_WAIT:
		*out = CV_ROLE_THREAD_WAIT;
		return 1;
	case OTF2_REGION_ROLE_PARALLEL:
		*out = CV_ROLE_PARALLEL;
		return 1;
	case OTF2_REGION_ROLE_LOOP:
		*out = CV_ROLE_LOOP;
		return 1;
	case OTF2_REGION_ROLE_SECTIONS:
		*out = CV_ROLE_SECTIONS;
		return 1;
	case OTF2_REGION_ROLE_SINGLE:
		*out = CV_ROLE_SINGLE;
		return 1;
	case OTF2_REGION_ROLE_BARRIER:
		*out = CV_ROLE_BARRIER;
		return 1;
	case OTF2_REGION_ROLE_IMPLICIT_BARRIER:
		*out = CV_ROLE_IMPLICIT_BARRIER;
		return 1;
	case OTF2_REGION_ROLE_CRITICAL:
		*out = CV_ROLE_CRITICAL;
		return 1;
	case OTF2_REGION_ROLE_ATOMIC:
		*out = CV_ROLE_ATOMIC;
		return 1;
	case OTF2_REGION_ROLE_ORDERED:
		*out = CV_ROLE_ORDERED;
		return 1;
	case OTF2_REGION_ROLE_MASTER:
		*out = CV_ROLE_MASTER;
		return 1;
	case OTF2_REGION_ROLE_TASK:
		*out = CV_ROLE_TASK;
		return 1;
	case OTF2_REGION_ROLE_TASK_CREATE:
		*out = CV_ROLE_TASK_CREATE;
		return 1;
	case OTF2_REGION_ROLE_TASK_WAIT:
		*out = CV_ROLE_TASK_WAIT;
		return 1;
	case OTF2_REGION_ROLE_WORKSHARE:
		*out = CV_ROLE_WORKSHARE;
		return 1;
	case OTF2_REGION_ROLE_CODE:
		*out = CV_ROLE_PHASE;
		return 1;
	case OTF2_REGION_ROLE_DATA_TRANSFER:
		*out = CV_ROLE_DATA_TRANSFER;
		return 1;
	case OTF2_REGION_ROLE_ALLOCATE:
		*out = CV_ROLE_ALLOCATE;
		return 1;
	case OTF2_REGION_ROLE_DEALLOCATE:
		*out = CV_ROLE_DEALLOCATE;
		return 1;
	default:
		*out = CV_ROLE_USER;
		return 0;
	}
}

const char *rp_otf2_kind(OTF2_Paradigm paradigm, enum cv_role role)
{
	switch (paradigm) {
	case OTF2_PARADIGM_USER:
		return cv_paradigm_name(CV_PARADIGM_USER, role);
	case OTF2_PARADIGM_PTHREAD:
		return cv_paradigm_name(CV_PARADIGM_PTHREAD, role);
	case OTF2_PARADIGM_NONE: /* fork, exec, spawn, dlopen */
		return cv_paradigm_name(CV_PARADIGM_PROCESS, role);
	case OTF2_PARADIGM_OPENMP:
		return cv_paradigm_name(CV_PARADIGM_OPENMP, role);
	case OTF2_PARADIGM_KOKKOS:
		return cv_paradigm_name(CV_PARADIGM_KOKKOS, role);
	case OTF2_PARADIGM_MPI:
		return cv_paradigm_name(CV_PARADIGM_MPI, role);
	case OTF2_PARADIGM_CUDA:
		return cv_paradigm_name(CV_PARADIGM_CUDA, role);
	case OTF2_PARADIGM_HIP:
		return cv_paradigm_name(CV_PARADIGM_HIP, role);
	default:
		return "other";
	}
}
