/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * backends.h - the converter's output formats: the one table of them, from which the
 * options, the help text and the errors take their names.
 */
#ifndef LIBTRACE_BACKENDS_H
#define LIBTRACE_BACKENDS_H

#include <stddef.h>

#include "convert.h"

/* The backends built into this program, the default first; NULL-terminated. */
const struct cv_backend *const *cv_backend_list(void);

/* The backend called `name`; NULL: none. */
const struct cv_backend *cv_backend_find(const char *name);

/* The backends' names as text: "otf2, paraver or count". */
void cv_backend_names(char *buf, size_t len);

#endif /* LIBTRACE_BACKENDS_H */
