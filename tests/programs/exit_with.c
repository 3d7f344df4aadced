// SPDX-License-Identifier: BSD-3-Clause
/* exit_with N - prints its arguments and exits with status N (the launcher's tests). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		printf("%s\n", argv[i]);
	return argc > 1 ? atoi(argv[1]) : 0;
}
