// SPDX-License-Identifier: BSD-3-Clause
/*
 * frame_named_call - a function of the program named as a call the tracer records, for
 * tests/e2e/callsites.sh: its own pthread_create (static, no thread) dlopens libm first, so
 * a call path holds a frame of that name before the real pthread_create is called (found
 * with dlsym: this file cannot name it).  The converter must keep the two apart: the frame
 * a function, the call a pthread call, whichever comes first.
 */
#include <dlfcn.h>
#include <stdio.h>

typedef int create_fn(unsigned long *, const void *, void *(*)(void *), void *);
typedef int join_fn(unsigned long, void **);

__attribute__((noinline)) static int pthread_create(void)
{
	void *h = dlopen("libm.so.6", RTLD_NOW);
	if (!h)
		return 1;
	dlclose(h);
	return 0;
}

static void *worker(void *arg)
{
	return arg;
}

int main(void)
{
	if (pthread_create())
		return 1;
	create_fn *create = (create_fn *)dlsym(RTLD_DEFAULT, "pthread_create");
	join_fn *join = (join_fn *)dlsym(RTLD_DEFAULT, "pthread_join");
	unsigned long t;
	if (!create || !join || create(&t, NULL, worker, NULL) || join(t, NULL)) {
		fprintf(stderr, "frame_named_call: the real pthread_create failed\n");
		return 1;
	}
	return 0;
}
