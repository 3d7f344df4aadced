// SPDX-License-Identifier: BSD-3-Clause
/*
 * replay.c - runs a fuzz target over saved inputs without libFuzzer (any compiler, with or
 * without sanitizers): the regression test of every input the fuzzer once found failing.
 *
 *   fuzz_reader_replay FILE...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		uint8_t *buf = NULL;
		size_t len = 0, cap = 0, n;
		do {
			if (len == cap) {
				cap = cap ? cap * 2 : 65536;
				uint8_t *b = realloc(buf, cap);
				if (!b)
					return 2;
				buf = b;
			}
			n = fread(buf + len, 1, cap - len, f);
			len += n;
		} while (n > 0);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
		printf("%s: ok\n", argv[i]);
	}
	return 0;
}
