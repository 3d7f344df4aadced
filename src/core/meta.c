// SPDX-License-Identifier: BSD-3-Clause
/*
 * meta.c - the process's meta file: one line per write(2), O_APPEND, so each line is whole
 * on disk the moment the call returns, whatever happens to the process afterwards.  Only
 * the lines of the start and of the end (lt_meta_hold), which no record depends on before
 * the start or the end is over, are gathered and written together: a few writes instead
 * of a hundred calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "lt.h"

static struct lt_file meta = {.fd = -1};
/* The lines of the start or of the end, while the thread that holds them (`owner`, 0 when
 * none) gathers its own; every other thread's go out as they come. */
static struct {
	pthread_t owner;
	size_t len;
	char buf[16384];
} hold LT_PAGE_ALIGNED;

int lt_meta_open(const char *dir)
{
	lt_file_close(&meta); /* the parent's, after fork */
	return lt_file_create(&meta, dir, LT_META_FILE, O_WRONLY | O_APPEND);
}

static void meta_put(const char *buf, size_t len)
{
	int saved = errno;
	int fd = lt_file_fd(&meta);
	if (fd >= 0) {
		ssize_t w;
		do
			w = write(fd, buf, len);
		while (w < 0 && errno == EINTR);
		lt_file_done(&meta);
	}
	errno = saved;
}

static int holding(void)
{
	return pthread_equal(__atomic_load_n(&hold.owner, __ATOMIC_ACQUIRE), pthread_self());
}

/* Writes the lines held so far, whole lines in one write. */
static void meta_flush(void)
{
	if (hold.len)
		meta_put(hold.buf, hold.len);
	hold.len = 0;
}

static void meta_write(const char *buf, size_t len)
{
	if (holding()) {
		if (hold.len + len > sizeof(hold.buf))
			meta_flush(); /* what came first goes first */
		if (len <= sizeof(hold.buf)) {
			memcpy(hold.buf + hold.len, buf, len);
			hold.len += len;
			return;
		}
	}
	meta_put(buf, len);
}

void lt_meta_discard(void)
{
	if (holding()) {
		hold.len = 0;
		__atomic_store_n(&hold.owner, (pthread_t)0, __ATOMIC_RELEASE);
	}
	lt_file_close(&meta);
}

void lt_meta_hold(int on)
{
	if (on) {
		/* Held already (an end during the start): that holder keeps it, nothing is
		 * dropped. */
		pthread_t none = 0;
		if (__atomic_compare_exchange_n(&hold.owner, &none, pthread_self(), 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			hold.len = 0;
		return;
	}
	if (!holding())
		return;
	meta_flush();
	__atomic_store_n(&hold.owner, (pthread_t)0, __ATOMIC_RELEASE);
}

void lt_meta_raw(const char *buf, size_t len)
{
	meta_write(buf, len);
}

void lt_meta_line(const char *fmt, ...)
{
	char buf[4600];
	va_list ap;
	va_start(ap, fmt);
	int n = lt_vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	meta_write(buf, (size_t)n);
}

/* Appends `value` escaped (see format.h) to buf[n..cap); returns the new length. */
static size_t escape_into(char *buf, size_t n, size_t cap, const char *value)
{
	static const char hex[] = "0123456789abcdef";
	for (const unsigned char *p = (const unsigned char *)value; *p && n < cap - 6; p++) {
		if (*p < 0x21 || *p == 0x7f || *p == '\\') {
			buf[n++] = '\\';
			buf[n++] = 'x';
			buf[n++] = hex[*p >> 4];
			buf[n++] = hex[*p & 15];
		} else {
			buf[n++] = (char)*p;
		}
	}
	return n;
}

/* "key a" or "key a b" (b NULL: none) with the values escaped (see format.h): in a stack
 * buffer when the line fits there, else in pages of its own (a module's long value, a
 * path longer than PATH_MAX with blanks in it); cut to the stack buffer only when those
 * cannot be had (a and b each to half of it). */
static void meta_escaped(const char *key, const char *a, const char *b)
{
	char stack[4600], *buf = stack;
	size_t klen = strlen(key), cap = sizeof(stack);
	size_t need = klen + 2 + 4 * strlen(a) + (b ? 1 + 4 * strlen(b) : 0) + 8;
	int saved = errno; /* a wrapper's caller sees its own */
	if (need > cap) {
		void *p =
		    mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
			buf = p;
			cap = need;
		}
	}
	if (klen > cap - 8)
		klen = cap - 8;
	memcpy(buf, key, klen);
	size_t n = klen;
	buf[n++] = ' ';
	n = escape_into(buf, n, b && need > cap ? cap / 2 : cap, a); /* cut: half each */
	if (b) {
		buf[n++] = ' ';
		n = escape_into(buf, n, cap, b);
	}
	buf[n++] = '\n';
	meta_write(buf, n);
	if (buf != stack)
		munmap(buf, cap);
	errno = saved;
}

void lt_meta_escaped(const char *key, const char *value)
{
	meta_escaped(key, value, NULL);
}

void lt_meta_escaped2(const char *key, const char *a, const char *b)
{
	meta_escaped(key, a, b);
}

/* A hexadecimal field of a maps line ending at `stop`: its value, *s past the stop.  -1 (no
 * value) when it is not one. */
static int maps_hex(const char **s, char stop, unsigned long *v)
{
	const char *p = *s;
	unsigned long x = 0;
	int digits = 0;
	for (;; p++, digits++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			break;
		if (digits == 16)
			return -1;
		x = x << 4 | d;
	}
	if (!digits || *p != stop)
		return -1;
	*v = x;
	*s = p + 1;
	return 0;
}

/* One line of proc/self/maps ("lo-hi perms offset dev inode   path"): a MAP line when the
 * mapping is executable and names a file. */
static void maps_line(const char *line)
{
	unsigned long lo, hi, off;
	const char *p = line, *perms;
	if (maps_hex(&p, '-', &lo) || maps_hex(&p, ' ', &hi))
		return;
	perms = p;
	while (*p && *p != ' ')
		p++;
	if (p - perms < 3 || perms[2] != 'x' || !*p++ || maps_hex(&p, ' ', &off))
		return;
	for (int field = 0; field < 2; field++) { /* device, inode */
		while (*p && *p != ' ')
			p++;
		while (*p == ' ')
			p++;
	}
	if (*p != '/')
		return;
	char key[96];
	lt_snprintf(key, sizeof(key), LT_META_MAP " %lx %lx %lx", lo, hi, off);
	lt_meta_escaped(key, p);
}

/* The executable file mappings of /proc/self/maps, as "map" lines.  Read with a buffer on
 * the stack for one line of a path of PATH_MAX, and no more: the start's stack stays shallow
 * (each new page of it is a page fault).  A longer line (the kernel prints a path of any
 * length) moves to a buffer from malloc, up to MAPS_LINE_MAX; past that, or without memory,
 * that one line is skipped to its end. */
#define MAPS_LINE_MAX (1u << 20)
void lt_meta_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	char small[PATH_MAX + 256], *buf = small;
	size_t cap = sizeof(small), have = 0;
	int skip = 0; /* dropping the rest of a line too long to keep */
	for (;;) {
		ssize_t r = read(fd, buf + have, cap - 1 - have);
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		char *line = buf, *nl;
		while ((nl = strchr(line, '\n'))) {
			*nl = '\0';
			if (!skip)
				maps_line(line);
			skip = 0;
			line = nl + 1;
		}
		have = (size_t)(buf + have - line);
		memmove(buf, line, have);
		if (have < cap - 1)
			continue;
		/* One line fills the buffer: a larger one, or skip to its end. */
		char *more = cap < MAPS_LINE_MAX ? malloc(cap * 4) : NULL;
		if (more) {
			memcpy(more, buf, have);
			if (buf != small)
				free(buf);
			buf = more;
			cap *= 4;
		} else {
			skip = 1;
			have = 0;
		}
	}
	if (buf != small)
		free(buf);
	close(fd);
}

/* A pair of readings (ticks, CLOCK_MONOTONIC) read together (lt_clock_pair), and the
 * wall clock. */
void lt_meta_sync(void)
{
	uint64_t mid = 0, mono = 0;
	lt_clock_pair(&mid, &mono);
	uint64_t real = lt_clock_real_ns();
	lt_meta_line(LT_META_SYNC " %llu %llu %llu", (unsigned long long)mid,
		     (unsigned long long)mono, (unsigned long long)real);
}
