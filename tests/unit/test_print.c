// SPDX-License-Identifier: BSD-3-Clause
/*
 * test_print - the core's snprintf (src/core/print.c) against the C library's: the same
 * text and the same return value for every conversion it knows, at every buffer size from
 * 0 up, and for formats it hands over to the C library whole.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "lt.h"
#include "test.h"

static int cases;

/* Both printers over the same arguments, at buffer sizes 0 .. the whole text + 2. */
#define SAME(...)                                                                                \
	do {                                                                                     \
		char want[512], got[512];                                                        \
		int wn = snprintf(want, sizeof(want), __VA_ARGS__);                              \
		for (size_t len = 0; len <= (size_t)wn + 2 && len <= sizeof(got); len++) {       \
			memset(got, 'Z', sizeof(got));                                           \
			int gn = lt_snprintf(len ? got : NULL, len, __VA_ARGS__);                \
			cases++;                                                                 \
			if (gn != wn || (len && strncmp(got, want, len - 1)) ||                  \
			    (len && got[len - 1 < (size_t)wn ? len - 1 : (size_t)wn] != '\0') || \
			    got[len < sizeof(got) ? len : sizeof(got) - 1] != 'Z') {             \
				fprintf(stderr,                                                  \
					"%s:%d: %s at %zu: got %d \"%.*s\", want %d \"%s\"\n",   \
					__FILE__, __LINE__, #__VA_ARGS__, len, gn,               \
					(int)(len ? len - 1 : 0), got, wn, want);                \
				test_failures++;                                                 \
				break;                                                           \
			}                                                                        \
		}                                                                                \
	} while (0)

int main(void)
{
	SAME("plain text");
	SAME("%s", "");
	SAME("%s=%s", "LIBTRACE_OUTPUT", "/var/tmp/trace dir");
	SAME("%s/%s", "/a/b", "ring");
	SAME("%d %d %d %d", 0, -1, INT_MAX, INT_MIN);
	SAME("%i|%u|%u", -42, 0u, UINT_MAX);
	SAME("%ld %lu", LONG_MIN, ULONG_MAX);
	SAME("%lld %llu", LLONG_MIN, ULLONG_MAX);
	SAME("%lldns %lluns", -5000ll, 123456789ull);
	SAME("%zu %zd", (size_t)SIZE_MAX, (ssize_t)-7);
	SAME("%jd %ju", (intmax_t)INTMAX_MIN, (uintmax_t)UINTMAX_MAX);
	SAME("%hd %hu %hhd %hhu", 70000, 70000, 300, 300);
	SAME("%x %lx %llx", 0xdeadbeefu, 0x7fffffffffffffffUL, 0ull);
	SAME("%#x %#x %#lx", 0u, 255u, 0x1000UL);
	SAME("map %lx %lx %lx", 0x55d1d48b4000UL, 0x55d1d48b6000UL, 0UL);
	SAME("%c%c%c", 'a', ' ', '~');
	SAME("100%% done %s%%", "x");
	SAME("%s.%d.%d", "host", 12345, 2);
	SAME("%.3f", 2096061000.0);
	SAME("%.3f %.3f %.3f", 0.0005, 0.0015, 0.0025);
	SAME("%.3f %.3f", 1.0005, 2.675);
	SAME("%.0f %.0f %.0f %.0f", 0.5, 1.5, 2.5, -0.5);
	SAME("%.1f %.2f", -3.25, 1e15 / 3);
	SAME("%.3f %.3f", -0.0, 1.0 / 3);
	SAME("%.3f %.3f %.3f", (double)INFINITY, (double)-INFINITY, (double)NAN);
	SAME("%.3f", 1e300);
	SAME("%.3f", DBL_MIN);
	/* Handed over to the C library whole: widths, other flags and conversions. */
	SAME("%5d|%-5s|%05u", 42, "ab", 7u);
	SAME("%.*s", 3, "abcdef");
	SAME("%p %o %e", (void *)0x1234, 8u, 1.5);
	SAME("%s %.6f", "x", 3.14159265);
	SAME("%g", 0.1);
	SAME("%#.0f|%#.3f", 3.0, 2.5);
	SAME("%ls|%lc|%s", L"abc", (wint_t)L'x', "y");
	/* Values around the decimal places of the clock's frequency line. */
	for (int i = 0; i < 2000; i++) {
		double v = 1000000.0 + i * 0.0005;
		SAME("clock_hz %.3f", v);
	}
	printf("%d cases\n", cases);
	TEST_DONE();
}
