// SPDX-License-Identifier: BSD-3-Clause
/* symplug - a library loaded with dlopen, holding a start routine (see symbolic.c). */
static volatile long sink;

void *plug_work(void *arg)
{
	for (long i = 0; i < 1000; i++)
		sink += i;
	return arg;
}
