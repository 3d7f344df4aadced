// SPDX-License-Identifier: BSD-3-Clause
/*
 * deep_regions - annotated regions nested deeper than the converter follows (65,536
 * levels), for tests/e2e/hostile-files.sh: trace2otf2 must say it left some out.
 *
 *   deep_regions [DEPTH]
 *
 * Begins region "deep" DEPTH times (default 70000), each inside the one before, then a
 * region "inner" inside them all, then ends them all in order.
 */
#include <stdio.h>
#include <stdlib.h>

#include "libtrace/annotate.h"

int main(int argc, char **argv)
{
	long depth = argc > 1 ? strtol(argv[1], NULL, 10) : 70000;
	if (depth < 1) {
		fprintf(stderr, "usage: deep_regions [DEPTH]\n");
		return 2;
	}
	for (long i = 0; i < depth; i++)
		ltr_region_begin("deep");
	ltr_region_begin("inner");
	ltr_region_end("inner");
	for (long i = 0; i < depth; i++)
		ltr_region_end("deep");
	printf("depth=%ld\n", depth);
	return 0;
}
