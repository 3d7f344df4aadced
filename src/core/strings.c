// SPDX-License-Identifier: BSD-3-Clause
/*
 * strings.c - string interning.  A string gets a process-wide id (1, 2, ...) the first time
 * it is seen; that thread writes the STRING definition into its own stream, later uses carry
 * the id only.  Lookups are lock-free (acquire loads of published entries); insertions take
 * a lock.  Each thread also keeps a small pointer-keyed cache, checked with strcmp, so a
 * literal passed again and again costs a compare, not a hash.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "lt.h"

#define TABLE_SIZE 65536u /* distinct strings per process; more are folded into one id */

struct entry {
	uint64_t hash;
	uint32_t id;
	char str[];
};

static LT_PAGE_ALIGNED struct entry *table[TABLE_SIZE];
static struct lt_lock insert_lock = LT_LOCK_INIT;
static uint32_t next_id = 1;
static uint32_t overflow_id;

static uint64_t hash_str(const char *s, size_t *len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = s;
	for (; *p && p - s < (long)LT_STRING_MAX; p++) {
		h ^= (unsigned char)*p;
		h *= 0x100000001b3ull;
	}
	*len = (size_t)(p - s);
	return h;
}

/* Writes the definition of `e` to the meta file. */
static void define(const struct entry *e)
{
	char key[32];
	lt_snprintf(key, sizeof(key), LT_META_STRING " %u", e->id);
	lt_meta_escaped(key, e->str);
}

static uint32_t lookup(const char *s, const char **interned)
{
	size_t len;
	uint64_t h = hash_str(s, &len);
	unsigned i = (unsigned)h & (TABLE_SIZE - 1);
	for (;;) {
		struct entry *e = __atomic_load_n(&table[i], __ATOMIC_ACQUIRE);
		if (!e)
			break;
		if (e->hash == h && !strncmp(e->str, s, len) && e->str[len] == '\0') {
			*interned = e->str;
			return e->id;
		}
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	/* Not there: insert under the lock, re-probing from where we stopped. */
	lt_lock(&insert_lock);
	uint32_t id = 0;
	for (;;) {
		struct entry *e = __atomic_load_n(&table[i], __ATOMIC_ACQUIRE);
		if (!e)
			break;
		if (e->hash == h && !strncmp(e->str, s, len) && e->str[len] == '\0') {
			*interned = e->str;
			id = e->id;
			break;
		}
		i = (i + 1) & (TABLE_SIZE - 1);
	}
	if (!id && next_id < TABLE_SIZE * 3 / 4) {
		struct entry *e = malloc(sizeof(*e) + len + 1);
		if (e) {
			e->hash = h;
			e->id = next_id++;
			memcpy(e->str, s, len);
			e->str[len] = '\0';
			define(e);
			lt_filter_string(e->id, e->str);
			__atomic_store_n(&table[i], e, __ATOMIC_RELEASE);
			*interned = e->str;
			id = e->id;
		}
	}
	lt_unlock(&insert_lock);
	if (!id) {
		/* Table full (or no memory): one shared id says so. */
		if (!overflow_id) {
			overflow_id = 0xffffffu;
			struct entry *e = malloc(sizeof(*e) + 32);
			if (e) {
				e->id = overflow_id;
				strcpy(e->str, "(too many distinct strings)");
				define(e);
			}
			lt_warn("more than %u distinct strings: the rest share one name",
				TABLE_SIZE * 3 / 4);
		}
		*interned = NULL;
		return overflow_id;
	}
	return id;
}

uint32_t lt_string_id(struct lt_thread *t, const char *s)
{
	if (!s)
		s = "(null)";
	unsigned c = (unsigned)(((uintptr_t)s >> 3) ^ ((uintptr_t)s >> 9)) & 31;
	if (t->scache[c].ptr == s && t->scache[c].interned && !strcmp(s, t->scache[c].interned))
		return t->scache[c].id;
	const char *interned = NULL;
	uint32_t id = lookup(s, &interned);
	t->scache[c].ptr = s;
	t->scache[c].interned = interned;
	t->scache[c].id = id;
	return id;
}

void lt_strings_after_fork_child(void)
{
	/* The child's stream is new: every string must be defined again in it. */
	insert_lock = (struct lt_lock)LT_LOCK_INIT;
	for (unsigned i = 0; i < TABLE_SIZE; i++)
		table[i] = NULL; /* leaked: see lt_thread_after_fork_child */
	next_id = 1;
	overflow_id = 0;
	if (lt_self)
		memset(lt_self->scache, 0, sizeof(lt_self->scache));
}
