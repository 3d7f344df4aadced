// SPDX-License-Identifier: BSD-3-Clause
/*
 * pairs - N uncontended pthread_mutex_lock + unlock pairs, or N annotated region enter +
 * leave pairs, in one thread and nothing else: bench/size.sh measures the trace's bytes on
 * disk and the whole process's CPU time per pair.
 *
 *   pairs lock|region N
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libtrace/annotate.h"

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "lock") && strcmp(argv[1], "region"))) {
		fprintf(stderr, "usage: pairs lock|region N\n");
		return 2;
	}
	long n = atol(argv[2]);
	if (!strcmp(argv[1], "lock")) {
		static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		for (long i = 0; i < n; i++) {
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
		}
	} else {
		uint32_t h = ltr_handle("pairs");
		for (long i = 0; i < n; i++) {
			ltr_region_begin_h(h);
			ltr_region_end_h(h);
		}
	}
	return 0;
}
