/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * otf2_map.h - trace2otf2's OTF2 region roles and paradigms, read back by trace-report.
 */
#ifndef LIBTRACE_REPORT_OTF2_MAP_H
#define LIBTRACE_REPORT_OTF2_MAP_H

#include <otf2/otf2.h>

#include "convert.h"

/* The converter's role of an OTF2 region role (function: the region is a thread's start
 * routine or main).  1, or 0 for a role trace2otf2 does not write (*out: CV_ROLE_USER). */
int rp_otf2_role(OTF2_RegionRole role, int function, enum cv_role *out);
/* The profile's kind ("pthread", "openmp"...) of a region of paradigm with role. */
const char *rp_otf2_kind(OTF2_Paradigm paradigm, enum cv_role role);

/* The attributes that say what a call did to memory, as trace2otf2 names them (in
 * rp_call_attrs). */
enum {
	CA_KOKKOS_BYTES,
	CA_KOKKOS_ADDRESS,
	CA_KOKKOS_LABEL,
	CA_GPU_BYTES,
	CA_GPU_MEMORY,
	CA_ALLOCATION_SIZE,
	CA_ARGUMENT_ADDRESS,
	CA_RESULT_ADDRESS,
	CALL_ATTRS
};
extern const char *const rp_call_attrs[CALL_ATTRS];

#endif /* LIBTRACE_REPORT_OTF2_MAP_H */
