// SPDX-License-Identifier: BSD-3-Clause
/*
 * fortran.c - the Open MPI companion's hand-written Fortran wrappers (see fortran.h):
 * MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE (the init and finalize steps of core.c), and
 * the wait and test family (as waits.c: each completed request's key, taken before the
 * call, is handed to ltm_done with its status, provided here when the program ignores it).
 * The other wrappers are generated from mpi.spec.  Built into libtrace-mpi-openmpi.so only.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fortran.h"

void *ltmf_resolve(void **cache, const char *name)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	if (!(p = dlsym(RTLD_NEXT, name)) && !(p = dlsym(RTLD_DEFAULT, name))) {
		/* Signal-safe and allocation-free: nothing else can be done for this call. */
		static const char msg[] = "libtrace-mpi-openmpi: Open MPI's Fortran entry point ";
		static const char end[] = " is not loaded (libmpi_mpifh); aborting\n";
		ssize_t ignored = write(2, msg, sizeof(msg) - 1);
		ignored = write(2, name, strlen(name));
		ignored = write(2, end, sizeof(end) - 1);
		(void)ignored;
		abort();
	}
	__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	return p;
}

/* ---- init and finalize ---- */

static void (*real_pmpi_init_)(MPI_Fint *ierr);
static void (*real_pmpi_init_thread_)(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr);
static void (*real_pmpi_finalize_)(MPI_Fint *ierr);

void mpi_init_(MPI_Fint *ierr)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Init", __builtin_return_address(0));
	LTMF_REAL(pmpi_init_)(ierr);
	if (*ierr == MPI_SUCCESS)
		ltm_init_done();
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_init_, mpi_init);
LTMF_ALIAS(mpi_init_, mpi_init__);
LTMF_ALIAS(mpi_init_, MPI_INIT);

void mpi_init_thread_(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Init_thread", __builtin_return_address(0));
	LTMF_REAL(pmpi_init_thread_)(required, provided, ierr);
	if (*ierr == MPI_SUCCESS)
		ltm_init_done();
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_init_thread_, mpi_init_thread);
LTMF_ALIAS(mpi_init_thread_, mpi_init_thread__);
LTMF_ALIAS(mpi_init_thread_, MPI_INIT_THREAD);

void mpi_finalize_(MPI_Fint *ierr)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Finalize", __builtin_return_address(0));
	ltm_finalizing();
	LTMF_REAL(pmpi_finalize_)(ierr);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_finalize_, mpi_finalize);
LTMF_ALIAS(mpi_finalize_, mpi_finalize__);
LTMF_ALIAS(mpi_finalize_, MPI_FINALIZE);

/* ---- waits and tests ---- */

#define SMALL 256

/* Keys and Fortran statuses of `n` requests: the stack's arrays, or the heap's. */
struct freqs {
	uint64_t small_keys[SMALL];
	MPI_Fint small_st[SMALL * LTMF_STATUS_INTS];
	uint64_t *keys;
	MPI_Fint *st; /* where the statuses go (the program's array, or ours) */
	void *heap;
};

/* program_st: the program's status array, MPI_F_STATUSES_IGNORE, or NULL for none wanted
 * (waitany and testany, whose one status is the caller's business). */
static int freqs_init(struct freqs *r, MPI_Fint n, const MPI_Fint *req, MPI_Fint *program_st)
{
	r->heap = NULL;
	r->keys = r->small_keys;
	r->st = program_st;
	if (n < 0)
		return -1;
	int own = program_st && program_st == MPI_F_STATUSES_IGNORE;
	if (n > SMALL) {
		size_t bytes = (size_t)n * (sizeof(uint64_t) + (own ? sizeof(MPI_Status) : 0));
		if (!(r->heap = malloc(bytes)))
			return -1;
		r->keys = r->heap;
		if (own)
			r->st = (MPI_Fint *)(r->keys + n);
	} else if (own) {
		r->st = r->small_st;
	}
	for (MPI_Fint i = 0; i < n; i++)
		r->keys[i] = ltmf_req_key(req[i]);
	return 0;
}

static void freqs_free(struct freqs *r)
{
	free(r->heap);
}

/* Request key completed with Fortran status f. */
static void done(struct ltm_call *c, uint64_t key, const MPI_Fint *f)
{
	MPI_Status st;
	ltm_done(c, key, ltmf_status(f, &st));
}

static void (*real_pmpi_wait_)(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr);
static void (*real_pmpi_test_)(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr);
static void (*real_pmpi_waitall_)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses,
				  MPI_Fint *ierr);
static void (*real_pmpi_testall_)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag,
				  MPI_Fint *statuses, MPI_Fint *ierr);
static void (*real_pmpi_waitany_)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
				  MPI_Fint *status, MPI_Fint *ierr);
static void (*real_pmpi_testany_)(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index,
				  MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr);
static void (*real_pmpi_waitsome_)(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
				   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr);
static void (*real_pmpi_testsome_)(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount,
				   MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr);

void mpi_wait_(MPI_Fint *request, MPI_Fint *status, MPI_Fint *ierr)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Wait", __builtin_return_address(0));
	MPI_Fint st[LTMF_STATUS_INTS];
	if (status == MPI_F_STATUS_IGNORE)
		status = st;
	uint64_t key = ltmf_req_key(*request);
	LTMF_REAL(pmpi_wait_)(request, status, ierr);
	if (*ierr == MPI_SUCCESS)
		done(&c, key, status);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_wait_, mpi_wait);
LTMF_ALIAS(mpi_wait_, mpi_wait__);
LTMF_ALIAS(mpi_wait_, MPI_WAIT);

void mpi_test_(MPI_Fint *request, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Test", __builtin_return_address(0));
	MPI_Fint st[LTMF_STATUS_INTS];
	if (status == MPI_F_STATUS_IGNORE)
		status = st;
	uint64_t key = ltmf_req_key(*request);
	LTMF_REAL(pmpi_test_)(request, flag, status, ierr);
	if (*ierr == MPI_SUCCESS && *flag) /* a LOGICAL: true is not 0 */
		done(&c, key, status);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_test_, mpi_test);
LTMF_ALIAS(mpi_test_, mpi_test__);
LTMF_ALIAS(mpi_test_, MPI_TEST);

void mpi_waitall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *statuses, MPI_Fint *ierr)
{
	struct ltm_call c;
	struct freqs r;
	ltm_enter(&c, "MPI_Waitall", __builtin_return_address(0));
	if (freqs_init(&r, *count, requests, statuses)) {
		LTMF_REAL(pmpi_waitall_)(count, requests, statuses, ierr);
		ltm_leave(&c, *ierr);
		return;
	}
	LTMF_REAL(pmpi_waitall_)(count, requests, r.st, ierr);
	if (*ierr == MPI_SUCCESS)
		for (MPI_Fint i = 0; i < *count; i++)
			done(&c, r.keys[i], r.st + i * LTMF_STATUS_INTS);
	freqs_free(&r);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_waitall_, mpi_waitall);
LTMF_ALIAS(mpi_waitall_, mpi_waitall__);
LTMF_ALIAS(mpi_waitall_, MPI_WAITALL);

void mpi_testall_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *flag, MPI_Fint *statuses,
		  MPI_Fint *ierr)
{
	struct ltm_call c;
	struct freqs r;
	ltm_enter(&c, "MPI_Testall", __builtin_return_address(0));
	if (freqs_init(&r, *count, requests, statuses)) {
		LTMF_REAL(pmpi_testall_)(count, requests, flag, statuses, ierr);
		ltm_leave(&c, *ierr);
		return;
	}
	LTMF_REAL(pmpi_testall_)(count, requests, flag, r.st, ierr);
	if (*ierr == MPI_SUCCESS && *flag)
		for (MPI_Fint i = 0; i < *count; i++)
			done(&c, r.keys[i], r.st + i * LTMF_STATUS_INTS);
	freqs_free(&r);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_testall_, mpi_testall);
LTMF_ALIAS(mpi_testall_, mpi_testall__);
LTMF_ALIAS(mpi_testall_, MPI_TESTALL);

/* Waitany and testany: Fortran's index is 1-based (MPI_UNDEFINED when none completed). */
void mpi_waitany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *status,
		  MPI_Fint *ierr)
{
	struct ltm_call c;
	struct freqs r;
	ltm_enter(&c, "MPI_Waitany", __builtin_return_address(0));
	MPI_Fint st[LTMF_STATUS_INTS];
	if (status == MPI_F_STATUS_IGNORE)
		status = st;
	if (freqs_init(&r, *count, requests, NULL)) {
		LTMF_REAL(pmpi_waitany_)(count, requests, index, status, ierr);
		ltm_leave(&c, *ierr);
		return;
	}
	LTMF_REAL(pmpi_waitany_)(count, requests, index, status, ierr);
	if (*ierr == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 1 && *index <= *count)
		done(&c, r.keys[*index - 1], status);
	freqs_free(&r);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_waitany_, mpi_waitany);
LTMF_ALIAS(mpi_waitany_, mpi_waitany__);
LTMF_ALIAS(mpi_waitany_, MPI_WAITANY);

void mpi_testany_(MPI_Fint *count, MPI_Fint *requests, MPI_Fint *index, MPI_Fint *flag,
		  MPI_Fint *status, MPI_Fint *ierr)
{
	struct ltm_call c;
	struct freqs r;
	ltm_enter(&c, "MPI_Testany", __builtin_return_address(0));
	MPI_Fint st[LTMF_STATUS_INTS];
	if (status == MPI_F_STATUS_IGNORE)
		status = st;
	if (freqs_init(&r, *count, requests, NULL)) {
		LTMF_REAL(pmpi_testany_)(count, requests, index, flag, status, ierr);
		ltm_leave(&c, *ierr);
		return;
	}
	LTMF_REAL(pmpi_testany_)(count, requests, index, flag, status, ierr);
	if (*ierr == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 1 &&
	    *index <= *count)
		done(&c, r.keys[*index - 1], status);
	freqs_free(&r);
	ltm_leave(&c, *ierr);
}
LTMF_ALIAS(mpi_testany_, mpi_testany);
LTMF_ALIAS(mpi_testany_, mpi_testany__);
LTMF_ALIAS(mpi_testany_, MPI_TESTANY);

/* Waitsome and testsome: the completed requests are named by `indices`, 1-based. */
#define SOME(name, NAME, Name)                                                                     \
	void name##_(MPI_Fint *incount, MPI_Fint *requests, MPI_Fint *outcount, MPI_Fint *indices, \
		     MPI_Fint *statuses, MPI_Fint *ierr)                                           \
	{                                                                                          \
		struct ltm_call c;                                                                 \
		struct freqs r;                                                                    \
		ltm_enter(&c, #Name, __builtin_return_address(0));                                 \
		if (freqs_init(&r, *incount, requests, statuses)) {                                \
			LTMF_REAL(p##name##_)                                                      \
			(incount, requests, outcount, indices, statuses, ierr);                    \
			ltm_leave(&c, *ierr);                                                      \
			return;                                                                    \
		}                                                                                  \
		LTMF_REAL(p##name##_)(incount, requests, outcount, indices, r.st, ierr);           \
		if (*ierr == MPI_SUCCESS && *outcount != MPI_UNDEFINED)                            \
			for (MPI_Fint i = 0; i < *outcount; i++)                                   \
				if (indices[i] >= 1 && indices[i] <= *incount)                     \
					done(&c, r.keys[indices[i] - 1],                           \
					     r.st + i * LTMF_STATUS_INTS);                         \
		freqs_free(&r);                                                                    \
		ltm_leave(&c, *ierr);                                                              \
	}                                                                                          \
	LTMF_ALIAS(name##_, name);                                                                 \
	LTMF_ALIAS(name##_, name##__);                                                             \
	LTMF_ALIAS(name##_, NAME)

SOME(mpi_waitsome, MPI_WAITSOME, MPI_Waitsome);
SOME(mpi_testsome, MPI_TESTSOME, MPI_Testsome);
