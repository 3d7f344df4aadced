// SPDX-License-Identifier: BSD-3-Clause
/*
 * local_par.c - trace2otf2 -j N: the converter's ranks as N processes of one machine (rank 0
 * the one started, ranks 1..N-1 forked from it), without MPI.  They talk over a socket pair
 * between rank 0 and each other rank; every collective goes through rank 0, the root of
 * all of them (OTF2's too: OTF2_COLLECTIVES_ROOT).  A message is its length (8 bytes) and
 * its bytes.  A rank that dies closes its socket: the others' collectives fail, nothing
 * waits forever.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef LIBTRACE_HAVE_OTF2
#include <otf2/otf2.h>
#endif

#include "parallel.h"

struct local {
	struct conv_mpi m; /* first: handed out by its address */
	int *fd;	   /* rank 0: fd[r] to rank r (fd[0] unused); others: fd[0] to rank 0 */
	pid_t *pid;	   /* rank 0: the other ranks */
};

static int io(int fd, void *buf, size_t len, int out)
{
	char *p = buf;
	while (len) {
		ssize_t n = out ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_msg(int fd, const void *buf, size_t len)
{
	uint64_t n = len;
	return io(fd, &n, sizeof(n), 1) || io(fd, (void *)buf, len, 1) ? -1 : 0;
}

/* A message into a new buffer (*buf, *len), or into `into` of exactly `want` bytes. */
static int recv_msg(int fd, void **buf, size_t *len, void *into, size_t want)
{
	uint64_t n;
	if (io(fd, &n, sizeof(n), 0))
		return -1;
	if (into) {
		if (n != want)
			return -1;
		return io(fd, into, want, 0);
	}
	char *b = malloc(n + 1);
	if (!b || io(fd, b, n, 0)) {
		free(b);
		return -1;
	}
	*buf = b;
	*len = n;
	return 0;
}

static int gather(struct cv_par *par, const void *buf, size_t len, void ***all, size_t **lens)
{
	struct local *s = (struct local *)par;
	*all = NULL;
	*lens = NULL;
	if (par->rank != 0)
		return send_msg(s->fd[0], buf, len);
	void **a = calloc((size_t)par->size, sizeof(*a));
	size_t *l = calloc((size_t)par->size, sizeof(*l));
	int rc = a && l ? 0 : -1;
	if (!rc && (a[0] = malloc(len + 1)))
		memcpy(a[0], buf, len), l[0] = len;
	for (int r = 1; r < par->size; r++) { /* every message is read, even after a failure */
		void *b = NULL;
		size_t n = 0;
		if (recv_msg(s->fd[r], &b, &n, NULL, 0))
			rc = -1;
		if (a && l)
			a[r] = b, l[r] = n;
		else
			free(b);
	}
	if (a && !a[0])
		rc = -1;
	*all = a;
	*lens = l;
	return rc;
}

static int bcast(struct cv_par *par, void **buf, size_t *len)
{
	struct local *s = (struct local *)par;
	if (par->rank != 0)
		return recv_msg(s->fd[0], buf, len, NULL, 0);
	int rc = 0;
	for (int r = 1; r < par->size; r++)
		if (send_msg(s->fd[r], *buf, *len))
			rc = -1;
	return rc;
}

#ifdef LIBTRACE_HAVE_OTF2
/* ---- OTF2's collectives, all rooted at rank 0 ---- */

static size_t type_size(OTF2_Type t)
{
	switch (t) {
	case OTF2_TYPE_UINT8:
	case OTF2_TYPE_INT8:
		return 1;
	case OTF2_TYPE_UINT16:
	case OTF2_TYPE_INT16:
		return 2;
	case OTF2_TYPE_UINT32:
	case OTF2_TYPE_INT32:
	case OTF2_TYPE_FLOAT:
		return 4;
	case OTF2_TYPE_UINT64:
	case OTF2_TYPE_INT64:
	case OTF2_TYPE_DOUBLE:
		return 8;
	default:
		return 0;
	}
}

#define OK(x) ((x) ? OTF2_CALLBACK_ERROR : OTF2_CALLBACK_SUCCESS)

static OTF2_CallbackCode c_size(void *ud, OTF2_CollectiveContext *c, uint32_t *size)
{
	(void)c;
	*size = (uint32_t)((struct local *)ud)->m.par.size;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode c_rank(void *ud, OTF2_CollectiveContext *c, uint32_t *rank)
{
	(void)c;
	*rank = (uint32_t)((struct local *)ud)->m.par.rank;
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode c_local_comm(void *ud, OTF2_CollectiveContext **local,
				      OTF2_CollectiveContext *global, uint32_t grank,
				      uint32_t gsize, uint32_t lrank, uint32_t lsize, uint32_t file,
				      uint32_t nfiles)
{
	(void)ud, (void)global, (void)grank, (void)gsize, (void)lrank, (void)lsize, (void)file,
	    (void)nfiles;
	*local = NULL; /* one file per location (POSIX): no file groups */
	return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode c_free_local(void *ud, OTF2_CollectiveContext *local)
{
	(void)ud, (void)local;
	return OTF2_CALLBACK_SUCCESS;
}

/* Rank 0's pieces to (scatter) or from (gather) every rank: piece r at data + off[r]. */
static int star(struct local *s, char *data, const size_t *off, const size_t *len, int out)
{
	int rc = 0;
	for (int r = 1; r < s->m.par.size; r++)
		if (out ? send_msg(s->fd[r], data + off[r], len[r])
			: recv_msg(s->fd[r], NULL, NULL, data + off[r], len[r]))
			rc = -1;
	return rc;
}

/* Offsets and lengths of n pieces of counts[r] (or each `each`) elements of size ts. */
static int pieces(int n, const uint32_t *counts, uint32_t each, size_t ts, size_t **off,
		  size_t **len)
{
	*off = calloc((size_t)n, sizeof(**off));
	*len = calloc((size_t)n, sizeof(**len));
	if (!*off || !*len)
		return -1;
	size_t at = 0;
	for (int r = 0; r < n; r++) {
		(*off)[r] = at;
		(*len)[r] = (size_t)(counts ? counts[r] : each) * ts;
		at += (*len)[r];
	}
	return 0;
}

static OTF2_CallbackCode c_barrier(void *ud, OTF2_CollectiveContext *c)
{
	(void)c;
	struct local *s = ud;
	char none;
	int rc = 0;
	if (s->m.par.rank != 0)
		return OK(send_msg(s->fd[0], "", 0) || recv_msg(s->fd[0], NULL, NULL, &none, 0));
	for (int r = 1; r < s->m.par.size; r++) /* everyone is here */
		rc |= recv_msg(s->fd[r], NULL, NULL, &none, 0);
	for (int r = 1; r < s->m.par.size; r++) /* go on */
		rc |= send_msg(s->fd[r], "", 0);
	return OK(rc);
}

static OTF2_CallbackCode c_bcast(void *ud, OTF2_CollectiveContext *c, void *data, uint32_t n,
				 OTF2_Type type, uint32_t root)
{
	(void)c;
	struct local *s = ud;
	size_t len = n * type_size(type);
	if (root != 0 || (n && !len))
		return OTF2_CALLBACK_ERROR;
	if (s->m.par.rank != 0)
		return OK(recv_msg(s->fd[0], NULL, NULL, data, len));
	int rc = 0;
	for (int r = 1; r < s->m.par.size; r++)
		rc |= send_msg(s->fd[r], data, len);
	return OK(rc);
}

/* Gatherv (scatter 0) and scatterv (scatter 1): rank 0's buffer `all` holds counts[r]
 * elements of each rank r; this rank's `mine`, n. */
static OTF2_CallbackCode vcoll(struct local *s, void *mine, uint32_t n, void *all,
			       const uint32_t *counts, OTF2_Type type, uint32_t root, int scatter)
{
	size_t ts = type_size(type), *off, *len;
	if (root != 0 || !ts)
		return OTF2_CALLBACK_ERROR;
	if (s->m.par.rank != 0)
		return OK(scatter ? recv_msg(s->fd[0], NULL, NULL, mine, n * ts)
				  : send_msg(s->fd[0], mine, n * ts));
	int rc = pieces(s->m.par.size, counts, 0, ts, &off, &len);
	if (!rc) {
		size_t k = len[0] < n * ts ? len[0] : n * ts;
		memcpy(scatter ? mine : all, scatter ? all : mine, k);
		rc = star(s, all, off, len, scatter);
	}
	free(off);
	free(len);
	return OK(rc);
}

static OTF2_CallbackCode c_gatherv(void *ud, OTF2_CollectiveContext *c, const void *in,
				   uint32_t nin, void *out, const uint32_t *nout, OTF2_Type type,
				   uint32_t root)
{
	(void)c;
	return vcoll(ud, (void *)in, nin, out, nout, type, root, 0);
}

/* n elements for each rank (gather and scatter as their v forms); NULL: no memory. */
static uint32_t *each(const struct local *s, uint32_t n)
{
	uint32_t *counts = calloc((size_t)s->m.par.size, sizeof(*counts));
	for (int r = 0; counts && r < s->m.par.size; r++)
		counts[r] = n;
	return counts;
}

static OTF2_CallbackCode c_gather(void *ud, OTF2_CollectiveContext *c, const void *in, void *out,
				  uint32_t n, OTF2_Type type, uint32_t root)
{
	uint32_t *counts = each(ud, n);
	OTF2_CallbackCode rc =
	    counts ? c_gatherv(ud, c, in, n, out, counts, type, root) : OTF2_CALLBACK_ERROR;
	free(counts);
	return rc;
}

static OTF2_CallbackCode c_scatterv(void *ud, OTF2_CollectiveContext *c, const void *in,
				    const uint32_t *nin, void *out, uint32_t nout, OTF2_Type type,
				    uint32_t root)
{
	(void)c;
	return vcoll(ud, out, nout, (void *)in, nin, type, root, 1);
}

static OTF2_CallbackCode c_scatter(void *ud, OTF2_CollectiveContext *c, const void *in, void *out,
				   uint32_t n, OTF2_Type type, uint32_t root)
{
	uint32_t *counts = each(ud, n);
	OTF2_CallbackCode rc =
	    counts ? c_scatterv(ud, c, in, counts, out, n, type, root) : OTF2_CALLBACK_ERROR;
	free(counts);
	return rc;
}

static void c_release(void *ud, OTF2_CollectiveContext *global, OTF2_CollectiveContext *local)
{
	(void)ud, (void)global, (void)local;
}

static const OTF2_CollectiveCallbacks callbacks = {
    c_release, c_size,	 c_rank,    c_local_comm, c_free_local, c_barrier,
    c_bcast,   c_gather, c_gatherv, c_scatter,	  c_scatterv,
};

static int otf2_collectives(struct cv_par *par, void *archive)
{
	return OTF2_Archive_SetCollectiveCallbacks(archive, &callbacks, par, NULL, NULL) ==
		       OTF2_SUCCESS
		   ? 0
		   : -1;
}

#else
#define otf2_collectives NULL /* a converter without OTF2: no format needs them */
#endif

static void finalize(struct conv_mpi *m)
{
	struct local *s = (struct local *)m;
	int n = m->par.rank == 0 ? m->par.size : 1;
	for (int r = m->par.rank == 0; r < n; r++)
		close(s->fd[r]);
	for (int r = 1; m->par.rank == 0 && r < m->par.size; r++)
		while (waitpid(s->pid[r], NULL, 0) < 0 && errno == EINTR)
			;
	free(s->fd);
	free(s->pid);
	free(s);
}

static void abort_all(struct conv_mpi *m, int status)
{
	struct local *s = (struct local *)m;
	for (int r = 1; m->par.rank == 0 && r < m->par.size; r++)
		kill(s->pid[r], SIGTERM);
	_exit(status);
}

int conv_local_start(int n, struct conv_mpi **out, char *err, size_t errlen)
{
	struct local *s = calloc(1, sizeof(*s));
	int *fd = calloc((size_t)n, sizeof(*fd));
	pid_t *pid = calloc((size_t)n, sizeof(*pid));
	if (!s || !fd || !pid) {
		free(s), free(fd), free(pid);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->m.par = (struct cv_par){0, n, gather, bcast, otf2_collectives};
	s->m.finalize = finalize;
	s->m.abort = abort_all;
	s->fd = fd;
	s->pid = pid;
	fflush(NULL); /* nothing buffered is written twice */
	for (int r = 1; r < n; r++) {
		int sv[2], e = 0;
		pid_t p = -1;
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
			e = errno;
		} else if ((p = fork()) < 0) {
			e = errno;
			close(sv[0]);
			close(sv[1]);
		}
		if (p < 0) { /* the ranks started so far go; this process converts nothing */
			snprintf(err, errlen, "starting rank %d: %s", r, strerror(e));
			for (int k = 1; k < r; k++) {
				close(fd[k]);
				kill(pid[k], SIGTERM);
				while (waitpid(pid[k], NULL, 0) < 0 && errno == EINTR)
					;
			}
			free(s), free(fd), free(pid);
			return -1;
		}
		if (p == 0) { /* rank r: only its socket to rank 0 */
			for (int k = 1; k < r; k++)
				close(fd[k]);
			close(sv[0]);
			fd[0] = sv[1];
			s->m.par.rank = r;
			*out = &s->m;
			return 0;
		}
		close(sv[1]);
		fd[r] = sv[0];
		pid[r] = p;
	}
	*out = &s->m;
	return 0;
}
