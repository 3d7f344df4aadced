// SPDX-License-Identifier: BSD-3-Clause
/*
 * annotate.c - the annotation API (include/libtrace/annotate.h), module "user": what the
 * program itself calls, so it lives beside the core rather than among the interposers.
 */
#include <string.h>

#include "libtrace/annotate.h"
#include "../core/module.h"
#include "../common/modules.h"

/* A region's enter and leave, unless its name is filtered out or it was too short. */
static void region_enter(struct lt_thread *t, uint32_t id)
{
	if (lt_str_skip(id)) {
		t->dropped[LT_DROP_FILTER]++;
		return;
	}
	uint64_t *at = t->pos;
	lt_counters(t, LT_MOD_USER);
	lt_emit0(t, LT_REC_REGION_ENTER, 0, id);
	lt_short_open(t, at);
}

static void region_leave(struct lt_thread *t, uint32_t id)
{
	if (lt_str_skip(id))
		return;
	lt_counters(t, LT_MOD_USER);
	if (lt_short_close(t))
		return;
	lt_emit0(t, LT_REC_REGION_LEAVE, 0, id);
}

LT_EXPORT void ltr_region_begin(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	region_enter(t, lt_string_id(t, name));
	lt_finish(t);
}

LT_EXPORT void ltr_region_end(const char *name)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	region_leave(t, lt_string_id(t, name));
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
	if (!t && lt_recording_paused(LT_MOD_USER) && (t = lt_self) && !t->guard)
		lt_guard_take(t); /* a handle taken while paused serves after the resume */
	else if (!t)
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
	if (handle)
		region_enter(t, handle);
	lt_finish(t);
}

LT_EXPORT void ltr_region_end_h(uint32_t handle)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	if (handle)
		region_leave(t, handle);
	lt_finish(t);
}

LT_EXPORT void ltr_trace_pause(void)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER);
	lt_recording_pause(t);
	if (t)
		lt_finish(t);
}

LT_EXPORT void ltr_trace_resume(void)
{
	struct lt_thread *t = lt_begin(LT_MOD_USER); /* initialises the tracer if need be */
	if (t) {
		lt_finish(t);
		return; /* not paused */
	}
	lt_recording_resume();
	t = lt_begin(LT_MOD_USER);
	if (!t)
		return;
	lt_emit0(t, LT_REC_MARKER, 0, lt_string_id(t, LT_RESUME_TEXT));
	lt_finish(t);
}

LT_MODULE(user) = {.name = "user", .bit = LT_MOD_USER, .order = 5};
