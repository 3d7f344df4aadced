// SPDX-License-Identifier: BSD-3-Clause
/*
 * gpu.c - the table of kernel names shared by the CUDA and HIP layers (gpu.h), and the
 * call site the cudart wrappers note for CUPTI.
 *
 * Keys are host addresses the program launches with: a kernel's host stub
 * (__cudaRegisterFunction, __hipRegisterFunction), a CUDA 13 kernel handle
 * (__cudaGetKernel) or a HIP module function (hipModuleGetFunction).  Registration happens
 * while modules load, a few hundred times per program at most: it takes a lock and
 * copies the name once.  Launches look names up without a lock (acquire loads of
 * published entries).  A full table leaves the rest unnamed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "../core/lock.h"

#define NAMES_SIZE 8192u /* kernels per process; a power of two */

struct kname {
	const void *key;
	const char *name;
};

__thread struct lt_caller lt_gpu_caller LT_TLS;

static LT_PAGE_ALIGNED struct kname names[NAMES_SIZE];
static struct lt_lock names_lock = LT_LOCK_INIT;
static unsigned names_used;

static unsigned slot_of(const void *key)
{
	return (unsigned)(((uintptr_t)key >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (NAMES_SIZE - 1);
}

const char *lt_gpu_kernel_name(const void *key)
{
	if (!key)
		return NULL;
	for (unsigned i = slot_of(key), n = 0; n < NAMES_SIZE;
	     i = (i + 1) & (NAMES_SIZE - 1), n++) {
		const void *k = __atomic_load_n(&names[i].key, __ATOMIC_ACQUIRE);
		if (!k)
			return NULL;
		if (k == key)
			return names[i].name;
	}
	return NULL;
}

/* Publishes key -> name (name already owned by the table); under names_lock. */
static void put(const void *key, const char *name)
{
	if (names_used >= NAMES_SIZE * 3 / 4)
		return;
	unsigned i = slot_of(key);
	while (names[i].key) {
		if (names[i].key == key)
			return; /* registered again (a module reloaded): the first name stays */
		i = (i + 1) & (NAMES_SIZE - 1);
	}
	names[i].name = name;
	__atomic_store_n(&names[i].key, key, __ATOMIC_RELEASE);
	names_used++;
}

void lt_gpu_kernel_name_set(const void *key, const char *name)
{
	if (!key || !name || lt_gpu_kernel_name(key))
		return;
	char *copy = strdup(name);
	if (!copy)
		return;
	lt_lock(&names_lock);
	put(key, copy);
	lt_unlock(&names_lock);
	if (lt_gpu_kernel_name(key) != copy)
		free(copy);
}

void lt_gpu_kernel_alias(const void *key, const void *known)
{
	const char *name = lt_gpu_kernel_name(known);
	if (!key || !name || key == known || lt_gpu_kernel_name(key))
		return;
	lt_lock(&names_lock);
	put(key, name);
	lt_unlock(&names_lock);
}
