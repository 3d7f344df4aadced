// SPDX-License-Identifier: BSD-3-Clause
/*
 * backends.c - the table of output formats.  A format is its file (which defines its
 * struct cv_backend) plus one line below; a build leaves a format out by not linking its
 * file: the declarations are weak, so the table skips what is not there.
 */
#include <stdio.h>
#include <string.h>

#include "backends.h"

#define CV_BACKENDS(X)                                      \
	X(cv_otf2_backend)   /* otf2_out.c, with libotf2 */ \
	X(cv_prv_backend)    /* paraver_out.c */            \
	X(cv_chrome_backend) /* chrome_out.c */             \
	X(cv_count_backend)  /* tests/backends/count.c, in the tests' converter only */

#define DECLARE(b) extern const struct cv_backend b __attribute__((weak));
CV_BACKENDS(DECLARE)
#undef DECLARE

#define ENTRY(b) &b,
static const struct cv_backend *const all[] = {CV_BACKENDS(ENTRY) NULL};
#undef ENTRY

static const struct cv_backend *built[sizeof(all) / sizeof(all[0])];

const struct cv_backend *const *cv_backend_list(void)
{
	if (!built[0]) {
		size_t n = 0;
		for (size_t i = 0; i + 1 < sizeof(all) / sizeof(all[0]); i++)
			if (all[i])
				built[n++] = all[i];
	}
	return built;
}

const struct cv_backend *cv_backend_find(const char *name)
{
	for (const struct cv_backend *const *b = cv_backend_list(); *b; b++)
		if (!strcmp((*b)->name, name))
			return *b;
	return NULL;
}

void cv_backend_names(char *buf, size_t len)
{
	const struct cv_backend *const *b = cv_backend_list();
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; b[i] && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s",
				       i == 0	  ? ""
				       : b[i + 1] ? ", "
						  : " or ",
				       b[i]->name);
}
