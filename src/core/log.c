// SPDX-License-Identifier: BSD-3-Clause
/*
 * log.c - the runtime's only way to speak: snprintf into a stack buffer, one write(2) to
 * stderr.  Async-signal-safe in practice (no stdio, no malloc), and silent unless the
 * message's level is within LIBTRACE_DEBUG (warnings: level 0, always shown).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "lt.h"

void lt_log(int level, const char *fmt, ...)
{
	if (level > lt_cfg.debug)
		return;
	int saved = errno;
	char buf[512];
	int n = snprintf(buf, sizeof(buf), "libtrace[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, buf, len);
	(void)w;
	errno = saved;
}
