// SPDX-License-Identifier: BSD-3-Clause
/*
 * annotate.c - the annotation API (include/libtrace/annotate.h), module "user": what the
 * program itself calls, so it lives beside the core rather than among the interposers.
 */
#include <string.h>

#include "libtrace/annotate.h"
#include "../core/module.h"
#include "../common/modules.h"

LT_EXPORT void ltr_region_begin(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	lt_counters(t, LT_MOD_USER);
	lt_emit0(t, LT_REC_REGION_ENTER, 0, lt_string_id(t, name));
	lt_finish(t);
}

LT_EXPORT void ltr_region_end(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	lt_counters(t, LT_MOD_USER);
	lt_emit0(t, LT_REC_REGION_LEAVE, 0, lt_string_id(t, name));
	lt_finish(t);
}

LT_EXPORT void ltr_marker(const char *text)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	lt_emit0(t, LT_REC_MARKER, 0, lt_string_id(t, text));
	lt_finish(t);
}

LT_EXPORT void ltr_counter(const char *name, int64_t value)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	lt_emit1(t, LT_REC_COUNTER, LT_VALUE_INT64, lt_string_id(t, name), (uint64_t)value);
	lt_finish(t);
}

LT_EXPORT void ltr_counter_double(const char *name, double value)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	uint64_t bits;
	memcpy(&bits, &value, sizeof(bits));
	lt_emit1(t, LT_REC_COUNTER, LT_VALUE_DOUBLE, lt_string_id(t, name), bits);
	lt_finish(t);
}

LT_EXPORT uint32_t ltr_handle(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return 0;
	uint32_t id = lt_string_id(t, name);
	lt_finish(t);
	return id;
}

LT_EXPORT void ltr_region_begin_h(uint32_t handle)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	if (handle) {
		lt_counters(t, LT_MOD_USER);
		lt_emit0(t, LT_REC_REGION_ENTER, 0, handle);
	}
	lt_finish(t);
}

LT_EXPORT void ltr_region_end_h(uint32_t handle)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	if (handle) {
		lt_counters(t, LT_MOD_USER);
		lt_emit0(t, LT_REC_REGION_LEAVE, 0, handle);
	}
	lt_finish(t);
}

LT_MODULE(user) = {.name = "user", .bit = LT_MOD_USER, .order = 5};
