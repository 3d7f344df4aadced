// SPDX-License-Identifier: BSD-3-Clause
/*
 * cupti_none.c - the CUPTI layer of a build that found no CUPTI headers: CUDA is recorded
 * through the wrappers of the shared CUDA runtime only (cuda.c).
 */
#include "gpu.h"

int lt_cupti_active;

void lt_cupti_init(void)
{
}

void lt_cupti_dlopened(const char *name, void *handle)
{
	(void)name;
	(void)handle;
}

void lt_cupti_flush(void)
{
}
