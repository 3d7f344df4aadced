/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libtrace/annotate.h - mark regions, events and values in your own code.
 *
 * Link with -ltrace-annotate (a library of no-op functions) so the program runs anywhere;
 * under LD_PRELOAD=libtrace.so the same calls are recorded.  All functions are thread-safe,
 * async-signal-safe, and never fail: they return nothing that needs checking.
 *
 *	ltr_region_begin("solve");
 *	...
 *	ltr_region_end("solve");
 *
 * Names are copied on first use; they may live on the stack.  For the hottest loops,
 * ltr_handle() turns a name into a small integer once, and the *_h variants take it.
 */
#ifndef LIBTRACE_ANNOTATE_H
#define LIBTRACE_ANNOTATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Begins a region named `name` on the calling thread.  Regions nest; end them in order. */
void ltr_region_begin(const char *name);

/* Ends the innermost region, which must have been begun with the same name. */
void ltr_region_end(const char *name);

/* Records a point event carrying `text` (a phase change, an iteration number...). */
void ltr_marker(const char *text);

/* Records the value of a counter named `name` at this instant. */
void ltr_counter(const char *name, int64_t value);
void ltr_counter_double(const char *name, double value);

/*
 * Returns a handle for `name`, valid in this process for the rest of its life, or 0 when
 * nothing is being recorded (the *_h functions then do nothing).
 */
uint32_t ltr_handle(const char *name);
void ltr_region_begin_h(uint32_t handle);
void ltr_region_end_h(uint32_t handle);

/*
 * Pauses and resumes recording in the whole process (every thread, every module): what
 * happens in between leaves no records, calls already under way when it pauses finish
 * theirs.  The calling thread records a marker at each.  LIBTRACE_START_PAUSED=1 starts a
 * process paused; LIBTRACE_TOGGLE_SIGNAL names a signal that pauses and resumes.
 */
void ltr_trace_pause(void);
void ltr_trace_resume(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBTRACE_ANNOTATE_H */
