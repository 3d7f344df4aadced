// SPDX-License-Identifier: BSD-3-Clause
/*
 * annotate_stub.c - libtrace-annotate.so: the annotation API doing nothing, so annotated
 * programs link and run without the tracer.  Under LD_PRELOAD=libtrace.so the tracer's
 * definitions come first and these are never called.
 */
#include "libtrace/annotate.h"

#define STUB __attribute__((visibility("default")))

STUB void ltr_region_begin(const char *name)
{
	(void)name;
}

STUB void ltr_region_end(const char *name)
{
	(void)name;
}

STUB void ltr_marker(const char *text)
{
	(void)text;
}

STUB void ltr_counter(const char *name, int64_t value)
{
	(void)name;
	(void)value;
}

STUB void ltr_counter_double(const char *name, double value)
{
	(void)name;
	(void)value;
}

STUB uint32_t ltr_handle(const char *name)
{
	(void)name;
	return 0;
}

STUB void ltr_region_begin_h(uint32_t handle)
{
	(void)handle;
}

STUB void ltr_region_end_h(uint32_t handle)
{
	(void)handle;
}

STUB void ltr_trace_pause(void)
{
}

STUB void ltr_trace_resume(void)
{
}
