// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos_null_tool - a Kokkos tool whose callbacks do nothing (bench/kokkos.sh): what Kokkos
 * itself spends once a tool is loaded, to tell it from what libtrace's callbacks cost.
 */
#include <stdint.h>
#include <stdlib.h>

static uint64_t next;

void kokkosp_init_library(int seq, uint64_t version, uint32_t n, void *info)
{
	(void)seq, (void)version, (void)n, (void)info;
}

void kokkosp_finalize_library(void)
{
}

void kokkosp_begin_parallel_for(const char *name, uint32_t dev, uint64_t *id)
{
	(void)name, (void)dev;
	*id = ++next;
}

void kokkosp_end_parallel_for(uint64_t id)
{
	(void)id;
}

void kokkosp_push_profile_region(const char *name)
{
	(void)name;
}

void kokkosp_pop_profile_region(void)
{
}

struct settings {
	_Bool requires_global_fencing;
	_Bool padding[255];
};

void kokkosp_request_tool_settings(uint32_t n, struct settings *s)
{
	if (n >= 1 && getenv("NULL_TOOL_NO_FENCE"))
		s->requires_global_fencing = 0;
}
