// SPDX-License-Identifier: BSD-3-Clause
/*
 * seccomp_filter - a program under a seccomp filter that refuses ftruncate and fallocate
 * with EPERM (as a container's profile may), then starts threads that lock and unlock.
 *
 *   seccomp_filter THREADS PAIRS
 *
 * The filter is installed first (with no_new_privs, so no privilege is needed); each of
 * THREADS threads then locks and unlocks a mutex PAIRS times.  Prints "ok", or why not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long pairs;

static void *work(void *arg)
{
	for (long i = 0; i < pairs; i++) {
		pthread_mutex_lock(&lock);
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[1]) : 0;
	pairs = argc > 2 ? atol(argv[2]) : 0;
	if (threads < 1 || threads > 64 || pairs < 1) {
		fprintf(stderr, "usage: seccomp_filter THREADS PAIRS\n");
		return 2;
	}
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ftruncate, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fallocate, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
	};
	struct sock_fprog prog = {sizeof(code) / sizeof(code[0]), code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
		perror("seccomp_filter: prctl");
		return 3;
	}
	if (syscall(SYS_ftruncate, 1, 0) == 0 || errno != EPERM) {
		fprintf(stderr, "seccomp_filter: the filter does not refuse ftruncate\n");
		return 3;
	}
	pthread_t th[64];
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, work, NULL) != 0) {
			fprintf(stderr, "seccomp_filter: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	puts("ok");
	return 0;
}
