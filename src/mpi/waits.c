// SPDX-License-Identifier: BSD-3-Clause
/*
 * waits.c - the wait and test family: each completed request's handle, noted before the
 * call (completion resets it to MPI_REQUEST_NULL), is handed to ltm_done with its status.
 * A status the program ignores is provided here, on the stack for up to SMALL requests
 * (on the heap above: a wait on that many is rare and not made slower by it).
 */
#include <stdlib.h>

#include "ltm.h"

#define SMALL 256

/* Handles and statuses of `n` requests: the stack's arrays, or the heap's. */
struct reqs {
	uint64_t small_keys[SMALL];
	MPI_Status small_st[SMALL];
	uint64_t *keys;
	MPI_Status *st; /* where the statuses go (the program's array, or ours) */
	void *heap;
};

static int reqs_init(struct reqs *r, int n, const MPI_Request *req, MPI_Status *program_st)
{
	r->heap = NULL;
	r->keys = r->small_keys;
	r->st = program_st;
	if (n < 0)
		return -1;
	if (n > SMALL) {
		size_t bytes = (size_t)n * (sizeof(uint64_t) + sizeof(MPI_Status));
		if (!(r->heap = malloc(bytes)))
			return -1;
		r->keys = r->heap;
		if (program_st == MPI_STATUSES_IGNORE)
			r->st = (MPI_Status *)(r->keys + n);
	} else if (program_st == MPI_STATUSES_IGNORE) {
		r->st = r->small_st;
	}
	for (int i = 0; i < n; i++)
		r->keys[i] = ltm_req_key(req[i]);
	return 0;
}

static void reqs_free(struct reqs *r)
{
	free(r->heap);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Wait", __builtin_return_address(0));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	uint64_t key = ltm_req_key(*request);
	int rc = PMPI_Wait(request, status);
	if (rc == MPI_SUCCESS)
		ltm_done(&c, key, status);
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Test", __builtin_return_address(0));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	uint64_t key = ltm_req_key(*request);
	int rc = PMPI_Test(request, flag, status);
	if (rc == MPI_SUCCESS && *flag)
		ltm_done(&c, key, status);
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
	struct ltm_call c;
	struct reqs r;
	ltm_enter(&c, "MPI_Waitall", __builtin_return_address(0));
	if (reqs_init(&r, count, requests, statuses)) {
		int rc = PMPI_Waitall(count, requests, statuses);
		ltm_leave(&c, rc);
		return rc;
	}
	int rc = PMPI_Waitall(count, requests, r.st);
	if (rc == MPI_SUCCESS)
		for (int i = 0; i < count; i++)
			ltm_done(&c, r.keys[i], &r.st[i]);
	reqs_free(&r);
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
	struct ltm_call c;
	struct reqs r;
	ltm_enter(&c, "MPI_Testall", __builtin_return_address(0));
	if (reqs_init(&r, count, requests, statuses)) {
		int rc = PMPI_Testall(count, requests, flag, statuses);
		ltm_leave(&c, rc);
		return rc;
	}
	int rc = PMPI_Testall(count, requests, flag, r.st);
	if (rc == MPI_SUCCESS && *flag)
		for (int i = 0; i < count; i++)
			ltm_done(&c, r.keys[i], &r.st[i]);
	reqs_free(&r);
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
	struct ltm_call c;
	struct reqs r;
	ltm_enter(&c, "MPI_Waitany", __builtin_return_address(0));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	if (reqs_init(&r, count, requests, MPI_STATUSES_IGNORE)) {
		int rc = PMPI_Waitany(count, requests, index, status);
		ltm_leave(&c, rc);
		return rc;
	}
	int rc = PMPI_Waitany(count, requests, index, status);
	if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
		ltm_done(&c, r.keys[*index], status);
	reqs_free(&r);
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
	struct ltm_call c;
	struct reqs r;
	ltm_enter(&c, "MPI_Testany", __builtin_return_address(0));
	MPI_Status st;
	if (status == MPI_STATUS_IGNORE)
		status = &st;
	if (reqs_init(&r, count, requests, MPI_STATUSES_IGNORE)) {
		int rc = PMPI_Testany(count, requests, index, flag, status);
		ltm_leave(&c, rc);
		return rc;
	}
	int rc = PMPI_Testany(count, requests, index, flag, status);
	if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED && *index >= 0 && *index < count)
		ltm_done(&c, r.keys[*index], status);
	reqs_free(&r);
	ltm_leave(&c, rc);
	return rc;
}

/* Waitsome and Testsome: the completed requests are named by `indices`. */
#define SOME(NAME, PNAME)                                                               \
	int NAME(int incount, MPI_Request requests[], int *outcount, int indices[],     \
		 MPI_Status statuses[])                                                 \
	{                                                                               \
		struct ltm_call c;                                                      \
		struct reqs r;                                                          \
		ltm_enter(&c, #NAME, __builtin_return_address(0));                      \
		if (reqs_init(&r, incount, requests, statuses)) {                       \
			int rc = PNAME(incount, requests, outcount, indices, statuses); \
			ltm_leave(&c, rc);                                              \
			return rc;                                                      \
		}                                                                       \
		int rc = PNAME(incount, requests, outcount, indices, r.st);             \
		if (rc == MPI_SUCCESS && *outcount != MPI_UNDEFINED)                    \
			for (int i = 0; i < *outcount; i++)                             \
				if (indices[i] >= 0 && indices[i] < incount)            \
					ltm_done(&c, r.keys[indices[i]], &r.st[i]);     \
		reqs_free(&r);                                                          \
		ltm_leave(&c, rc);                                                      \
		return rc;                                                              \
	}

SOME(MPI_Waitsome, PMPI_Waitsome)
SOME(MPI_Testsome, PMPI_Testsome)
