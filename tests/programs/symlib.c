// SPDX-License-Identifier: BSD-3-Clause
/* symlib - a linked shared library holding a start routine (see symbolic.c). */
static volatile long sink;

void *lib_work(void *arg)
{
	for (long i = 0; i < 1000; i++)
		sink += i;
	return arg;
}
