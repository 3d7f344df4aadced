// SPDX-License-Identifier: BSD-3-Clause
/*
 * print.c - snprintf for the texts the tracer writes as a process starts (paths, the meta
 * file's lines, the settings): the conversions they use, each in a few instructions.  The C
 * library's costs hundreds of instructions a call, and its first call faults in pages of
 * its code and tables that a short process never touches otherwise; a traced /bin/true
 * made about a hundred such calls.  A format this one does not know goes to the C
 * library's, whole, so the result is always what snprintf would give.
 *
 * Known: flag '#' (x) and none else; no width; a precision only in "%.Nf" (N <= 3);
 * length modifiers hh, h, l, ll, z, j; conversions d i u x c s f %.
 */
#include <float.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdio.h>
#include <string.h>

#include "lt.h"

struct out {
	char *buf;
	size_t len, n; /* n: what the whole text takes, as snprintf counts */
};

static void put_char(struct out *o, char c)
{
	if (o->n + 1 < o->len)
		o->buf[o->n] = c;
	o->n++;
}

static void put_mem(struct out *o, const char *s, size_t k)
{
	if (o->n + 1 < o->len) {
		size_t room = o->len - 1 - o->n;
		memcpy(o->buf + o->n, s, k < room ? k : room);
	}
	o->n += k;
}

static void put_u(struct out *o, uint64_t v, unsigned base, int alt)
{
	char tmp[24];
	int k = 0;
	do {
		tmp[k++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (alt)
		put_mem(o, "0x", 2);
	while (k)
		put_char(o, tmp[--k]);
}

/* "%.<prec>f" of v, prec <= 3: v * 10^prec is exact in a long double (64 bits of mantissa
 * or more: a double's 53 and 10 more), so it rounds as the C library does in the default
 * rounding mode, half to even.
 * The C library's own for what is not a finite number under 2^62.  Not inlined: its buffer
 * for that stays off the stack of every other conversion. */
_Static_assert(LDBL_MANT_DIG >= 64, "print.c rounds %.3f in a long double of 64 bits or more");
static __attribute__((noinline)) void put_f(struct out *o, double v, unsigned prec)
{
	static const unsigned scale[] = {1, 10, 100, 1000};
	double a = v < 0 ? -v : v;
	if (!(a < 4.6e18 / scale[prec])) { /* NaN, infinite or too large */
		char tmp[400];
		int k = snprintf(tmp, sizeof(tmp), "%.*f", (int)prec, v);
		put_mem(o, tmp, k > 0 ? (size_t)k : 0);
		return;
	}
	long double x = (long double)a * scale[prec];
	uint64_t whole = (uint64_t)x;
	long double rest = x - (long double)whole;
	if (rest > 0.5L || (rest == 0.5L && (whole & 1)))
		whole++;
	if (v < 0 || (v == 0 && 1 / v < 0))
		put_char(o, '-');
	put_u(o, whole / scale[prec], 10, 0);
	if (!prec)
		return;
	put_char(o, '.');
	unsigned frac = (unsigned)(whole % scale[prec]);
	for (unsigned d = prec; d-- > 0;)
		put_char(o, (char)('0' + frac / scale[d] % 10));
}

/* Whether every conversion of fmt is one this file knows: "%%", "%c", "%s", "%.Nf" (N <= 3),
 * and d i u x with one of the length modifiers hh h l ll z j or none, '#' with x only. */
static int known(const char *fmt)
{
	for (const char *p = fmt; (p = strchr(p, '%')) != NULL;) {
		p++;
		int alt = *p == '#';
		p += alt;
		if (*p == '.') {
			if (alt || p[1] < '0' || p[1] > '3' || p[2] != 'f')
				return 0;
			p += 3;
			continue;
		}
		const char *mod = p;
		while (*p == 'h' || *p == 'l' || *p == 'z' || *p == 'j')
			p++;
		size_t m = (size_t)(p - mod);
		int mod_ok =
		    m <= 1 || (m == 2 && mod[0] == mod[1] && mod[0] != 'z' && mod[0] != 'j');
		if (!*p || !mod_ok || (alt && *p != 'x'))
			return 0;
		if (!strchr("diux", *p) && (m || !strchr("cs%", *p)))
			return 0; /* c, s and % take no length modifier */
		p++;
	}
	return 1;
}

int lt_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	if (!known(fmt))
		return vsnprintf(buf, len, fmt, ap);
	struct out o = {buf, len, 0};
	for (const char *p = fmt; *p;) {
		const char *pct = strchr(p, '%');
		if (!pct) {
			put_mem(&o, p, strlen(p));
			break;
		}
		put_mem(&o, p, (size_t)(pct - p));
		p = pct + 1;
		int alt = *p == '#';
		p += alt;
		if (*p == '.') {
			put_f(&o, va_arg(ap, double), (unsigned)(p[1] - '0'));
			p += 3;
			continue;
		}
		int shorts = 0, longs = 0;
		for (; *p == 'h' || *p == 'l' || *p == 'z' || *p == 'j'; p++) {
			shorts += *p == 'h';
			longs = *p == 'z' ? 'z' : *p == 'j' ? 'j' : longs + (*p == 'l');
		}
		char c = *p++;
		if (c == '%') {
			put_char(&o, '%');
		} else if (c == 'c') {
			put_char(&o, (char)va_arg(ap, int));
		} else if (c == 's') {
			const char *s = va_arg(ap, const char *);
			s = s ? s : "(null)";
			put_mem(&o, s, strlen(s));
		} else if (c == 'd' || c == 'i') {
			int64_t v = longs == 'z'   ? (int64_t)va_arg(ap, ssize_t)
				    : longs == 'j' ? (int64_t)va_arg(ap, intmax_t)
				    : longs == 1   ? (int64_t)va_arg(ap, long)
				    : longs	   ? (int64_t)va_arg(ap, long long)
						   : (int64_t)va_arg(ap, int);
			if (shorts == 1)
				v = (short)v;
			else if (shorts > 1)
				v = (signed char)v;
			if (v < 0)
				put_char(&o, '-');
			put_u(&o, v < 0 ? -(uint64_t)v : (uint64_t)v, 10, 0);
		} else {
			uint64_t v = longs == 'z'   ? (uint64_t)va_arg(ap, size_t)
				     : longs == 'j' ? (uint64_t)va_arg(ap, uintmax_t)
				     : longs == 1   ? (uint64_t)va_arg(ap, unsigned long)
				     : longs	    ? (uint64_t)va_arg(ap, unsigned long long)
						    : (uint64_t)va_arg(ap, unsigned);
			if (shorts == 1)
				v = (unsigned short)v;
			else if (shorts > 1)
				v = (unsigned char)v;
			put_u(&o, v, c == 'x' ? 16 : 10, alt && c == 'x' && v);
		}
	}
	if (len)
		buf[o.n < len ? o.n : len - 1] = '\0';
	return (int)o.n;
}

int lt_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = lt_vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}
