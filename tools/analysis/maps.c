// SPDX-License-Identifier: BSD-3-Clause
/*
 * maps.c - the hash maps of the analysis core: strings to ids (definitions), 64-bit
 * keys to values (live objects by id or address), and the table of live allocations.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int strmap_grow(struct cv_strmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 256;
	char **keys = calloc(cap, sizeof(*keys));
	uint32_t *vals = calloc(cap, sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = hash_str(m->keys[i]) & (cap - 1);
		while (keys[j])
			j = (j + 1) & (cap - 1);
		keys[j] = m->keys[i];
		vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->cap = cap;
	return 0;
}

/* Looks key up; when absent and val_if_new != NULL, inserts *val_if_new.  Returns a
 * pointer to the value, or NULL (absent, or no memory). */
uint32_t *cv_strmap_get(struct cv_strmap *m, const char *key, const uint32_t *val_if_new)
{
	if (m->cap) {
		size_t j = hash_str(key) & (m->cap - 1);
		while (m->keys[j]) {
			if (!strcmp(m->keys[j], key))
				return &m->vals[j];
			j = (j + 1) & (m->cap - 1);
		}
	}
	if (!val_if_new)
		return NULL;
	if ((m->n + 1) * 2 > m->cap && strmap_grow(m))
		return NULL;
	size_t j = hash_str(key) & (m->cap - 1);
	while (m->keys[j])
		j = (j + 1) & (m->cap - 1);
	m->keys[j] = strdup(key);
	if (!m->keys[j])
		return NULL;
	m->vals[j] = *val_if_new;
	m->n++;
	return &m->vals[j];
}

void cv_strmap_free(struct cv_strmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++)
		free(m->keys[i]);
	free(m->keys);
	free(m->vals);
	free(m);
}

void *cv_grow(void *array, uint32_t *cap, size_t elem)
{
	uint32_t n = *cap ? *cap * 2 : 64;
	void *a = realloc(array, (size_t)n * elem);
	if (a)
		*cap = n;
	return a;
}

static size_t idmap_slot(const struct idmap *m, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 17) & (m->cap - 1);
}

uint64_t *cv_idmap_get(struct idmap *m, uint64_t key, int create)
{
	if (!key)
		return NULL;
	if (create && (m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *k = calloc(cap, sizeof(*k)), *v = calloc(cap, sizeof(*v));
		if (!k || !v) {
			free(k);
			free(v);
			return NULL;
		}
		struct idmap nm = {k, v, 0, cap};
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t j = idmap_slot(&nm, m->keys[i]);
				while (k[j])
					j = (j + 1) & (cap - 1);
				k[j] = m->keys[i];
				v[j] = m->vals[i];
			}
		nm.n = m->n;
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	if (!m->cap)
		return NULL;
	size_t j = idmap_slot(m, key);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j]) {
		if (!create)
			return NULL;
		m->keys[j] = key;
		m->vals[j] = 0;
		m->n++;
	}
	return &m->vals[j];
}

void cv_idmap_del(struct idmap *m, uint64_t key)
{
	if (!key || !m->cap)
		return;
	size_t j = idmap_slot(m, key);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		return;
	m->keys[j] = 0;
	m->n--;
	for (size_t i = (j + 1) & (m->cap - 1); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
		size_t home = idmap_slot(m, m->keys[i]);
		/* Move i back to j when its home is not in (j, i] (cyclically). */
		if ((i > j && (home <= j || home > i)) || (i < j && home <= j && home > i)) {
			m->keys[j] = m->keys[i];
			m->vals[j] = m->vals[i];
			m->keys[i] = 0;
			j = i;
		}
	}
}

void cv_idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	*m = (struct idmap){0};
}

/* Forgets live allocation i: the last one takes its place, so t->a holds the live ones. */
void cv_alloc_remove(struct alloc_table *t, uint32_t i)
{
	cv_idmap_del(&t->map, t->a[i].addr);
	if (i != --t->n) {
		t->a[i] = t->a[t->n];
		uint64_t *moved = cv_idmap_get(&t->map, t->a[i].addr, 0);
		if (moved)
			*moved = i + 1;
	}
}

/* Keeps allocation k at its address's slot of t->map (cv_idmap_get(..., 1)): a new entry, or
 * in place of the one the address had (allocated again without a free between). */
void cv_alloc_set(struct alloc_table *t, uint64_t *slot, const struct kalloc *k)
{
	if (!*slot) {
		if (t->n == t->cap) {
			struct kalloc *a = cv_grow(t->a, &t->cap, sizeof(*a));
			if (!a) {
				cv_idmap_del(&t->map, k->addr);
				return;
			}
			t->a = a;
		}
		*slot = ++t->n;
	}
	t->a[*slot - 1] = *k;
}

void cv_alloc_free(struct alloc_table *t)
{
	cv_idmap_free(&t->map);
	free(t->a);
	*t = (struct alloc_table){0};
}
