// SPDX-License-Identifier: BSD-3-Clause
/* work.c - the library function that the test-only module wraps (tests/modules/testmod.c). */
int testmod_work(int x);

int testmod_work(int x)
{
	return x * 2 + 1;
}
