// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpi_par.c - libtrace-convert-mpi-<abi>.so, the converter's ranks over MPI (parallel.h), one
 * module per MPI (Open MPI, MPICH): the
 * collectives a parallel conversion needs, and OTF2's own MPI collective callbacks for the
 * archive that every rank writes.  Buffers of any size travel in pieces of at most 1 GiB.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <otf2/OTF2_MPI_Collectives.h>
#include <otf2/otf2.h>

#include "parallel.h"

#define PIECE (1 << 30)

struct mpi_state {
	struct conv_mpi m; /* first: the module hands out its address */
	MPI_Comm comm;
};

static int send_all(const void *buf, size_t len, int to, MPI_Comm comm)
{
	const char *p = buf;
	for (size_t at = 0; at < len; at += PIECE) {
		int n = len - at > PIECE ? PIECE : (int)(len - at);
		if (MPI_Send(p + at, n, MPI_BYTE, to, 1, comm) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

static int recv_all(void *buf, size_t len, int from, MPI_Comm comm)
{
	char *p = buf;
	for (size_t at = 0; at < len; at += PIECE) {
		int n = len - at > PIECE ? PIECE : (int)(len - at);
		if (MPI_Recv(p + at, n, MPI_BYTE, from, 1, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
	}
	return 0;
}

static int gather(struct cv_par *par, const void *buf, size_t len, void ***all, size_t **lens)
{
	struct mpi_state *s = (struct mpi_state *)par;
	long long mine = (long long)len;
	long long *sizes = NULL;
	*all = NULL;
	*lens = NULL;
	if (par->rank == 0 && !(sizes = calloc((size_t)par->size, sizeof(*sizes))))
		mine = -1; /* still takes part, then fails */
	if (MPI_Gather(&mine, 1, MPI_LONG_LONG, sizes, 1, MPI_LONG_LONG, 0, s->comm) !=
	    MPI_SUCCESS) {
		free(sizes);
		return -1;
	}
	if (par->rank != 0)
		return send_all(buf, len, 0, s->comm);
	int rc = 0;
	void **a = calloc((size_t)par->size, sizeof(*a));
	size_t *l = calloc((size_t)par->size, sizeof(*l));
	for (int r = 0; r < par->size; r++) {
		size_t n = sizes && sizes[r] > 0 ? (size_t)sizes[r] : 0;
		void *b = malloc(n + 1);
		if (!b || !a || !l || !sizes)
			rc = -1;
		if (r == 0 && b)
			memcpy(b, buf, n);
		else if (r != 0 && recv_all(b ? b : NULL, b ? n : 0, r, s->comm))
			rc = -1;
		if (a && l) {
			a[r] = b;
			l[r] = n;
		} else {
			free(b);
		}
	}
	free(sizes);
	*all = a;
	*lens = l;
	return rc;
}

static int bcast(struct cv_par *par, void **buf, size_t *len)
{
	struct mpi_state *s = (struct mpi_state *)par;
	long long n = par->rank == 0 ? (long long)*len : 0;
	if (MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, s->comm) != MPI_SUCCESS)
		return -1;
	char *b = par->rank == 0 ? *buf : malloc((size_t)n + 1);
	int ok = b != NULL;
	for (long long at = 0; at < n; at += PIECE) {
		int k = n - at > PIECE ? PIECE : (int)(n - at);
		static char sink[1];
		/* a rank without memory still takes part, into a sink it overwrites */
		if (MPI_Bcast(ok ? b + at : sink, ok ? k : 0, MPI_BYTE, 0, s->comm) != MPI_SUCCESS)
			return -1;
	}
	if (par->rank != 0) {
		*buf = b;
		*len = ok ? (size_t)n : 0;
	}
	return ok ? 0 : -1;
}

static int otf2_collectives(struct cv_par *par, void *archive)
{
	struct mpi_state *s = (struct mpi_state *)par;
	return OTF2_MPI_Archive_SetCollectiveCallbacks(archive, s->comm, MPI_COMM_NULL) ==
		       OTF2_SUCCESS
		   ? 0
		   : -1;
}

static void finalize(struct conv_mpi *m)
{
	struct mpi_state *s = (struct mpi_state *)m;
	MPI_Comm_free(&s->comm);
	MPI_Finalize();
	free(s);
}

static void abort_all(struct conv_mpi *m, int status)
{
	struct mpi_state *s = (struct mpi_state *)m;
	MPI_Abort(s->comm, status);
}

__attribute__((visibility("default"))) int ltr_convert_mpi_init(int *argc, char ***argv,
								int expected, struct conv_mpi **out,
								char *err, size_t errlen)
{
	struct mpi_state *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (MPI_Init(argc, argv) != MPI_SUCCESS) {
		snprintf(err, errlen, "MPI_Init failed");
		free(s);
		return -1;
	}
	int rank = 0, size = 0;
	MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
	MPI_Comm_rank(s->comm, &rank);
	MPI_Comm_size(s->comm, &size);
	if (size != expected) {
		snprintf(err, errlen,
			 "the launcher started %d processes but MPI sees %d: it is not the MPI "
			 "of this converter's module",
			 expected, size);
		MPI_Comm_free(&s->comm);
		MPI_Finalize();
		free(s);
		return -1;
	}
	s->m.par = (struct cv_par){rank, size, gather, bcast, otf2_collectives};
	s->m.finalize = finalize;
	s->m.abort = abort_all;
	*out = &s->m;
	return 0;
}
