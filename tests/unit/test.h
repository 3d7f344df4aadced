/* SPDX-License-Identifier: BSD-3-Clause */
/* test.h - the unit tests' assertion macros: print where and why, count failures. */
#ifndef LIBTRACE_TEST_H
#define LIBTRACE_TEST_H

#include <stdio.h>
#include <stdlib.h>

static int test_failures;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			test_failures++;                                                         \
		}                                                                                \
	} while (0)

#define CHECK_EQ(a, b)                                                                      \
	do {                                                                                \
		long long a_ = (long long)(a), b_ = (long long)(b);                         \
		if (a_ != b_) {                                                             \
			fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", \
				__FILE__, __LINE__, #a, a_, #b, b_);                        \
			test_failures++;                                                    \
		}                                                                           \
	} while (0)

#define TEST_DONE()                                                             \
	do {                                                                    \
		if (test_failures) {                                            \
			fprintf(stderr, "%d check(s) failed\n", test_failures); \
			return 1;                                               \
		}                                                               \
		printf("all checks passed\n");                                  \
		return 0;                                                       \
	} while (0)

#endif
