// SPDX-License-Identifier: BSD-3-Clause
/*
 * core.c - the MPI companion library's state: libtrace.so's entry points (found with
 * dlsym), the communicators and the pending non-blocking requests of this process, and
 * MPI_Init/MPI_Finalize.  The wrappers themselves are generated from mpi.spec.
 *
 * Communicators get an id that is the same in every member: rank 0 of a new one makes it
 * ((its world rank + 1) << 32 | its count) and broadcasts it over the new communicator
 * (every member is inside the creating call, which is collective).  Requests are tracked
 * from the call that starts them to the wait or test that completes them, keyed by the
 * handle's value.  Both tables are fixed arrays with lock-free slots: a wrapper never
 * allocates or locks (MPI_THREAD_MULTIPLE programs call from several threads).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "libtrace/mpi_abi.h"
#include "ltm.h"

/* ---- libtrace.so ---- */

static struct {
	__typeof__(&ltr_mpi_enter) enter;
	__typeof__(&ltr_mpi_leave) leave;
	__typeof__(&ltr_mpi_p2p) p2p;
	__typeof__(&ltr_mpi_coll) coll;
	__typeof__(&ltr_mpi_comm) comm;
	__typeof__(&ltr_mpi_world) world;
	__typeof__(&ltr_mpi_now) now;
	__typeof__(&ltr_mpi_clock) clock;
	int state; /* 0: not looked up yet, 1: found, -1: absent (pass everything through) */
} lt;

static int lookup(void)
{
	int s = __atomic_load_n(&lt.state, __ATOMIC_ACQUIRE);
	if (s)
		return s > 0;
#define FIND(f) (*(void **)&lt.f = dlsym(RTLD_DEFAULT, "ltr_mpi_" #f))
	int ok = FIND(enter) && FIND(leave) && FIND(p2p) && FIND(coll) && FIND(comm) &&
		 FIND(world) && FIND(now) && FIND(clock);
#undef FIND
	__atomic_store_n(&lt.state, ok ? 1 : -1, __ATOMIC_RELEASE);
	return ok;
}

int ltm_enter(struct ltm_call *c, const char *name, const void *caller)
{
	c->t = lookup() ? lt.enter(name, caller) : NULL;
	return c->t != NULL;
}

void ltm_leave(struct ltm_call *c, int rc)
{
	if (c->t)
		lt.leave(c->t, rc);
}

/* ---- lock-free tables keyed by a handle's value ---- */

#define EMPTY 0u
#define GONE  1u /* a removed entry: lookups go on past it */

struct slot {
	uint64_t key;
	uint64_t comm, bytes, id;
	int64_t tag;
	uint32_t peer;
	uint32_t kind;
};

#define COMMS	 4096
#define REQUESTS 65536
static struct slot comms[COMMS], requests[REQUESTS];

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return k ^ (k >> 33);
}

static struct slot *find(struct slot *tab, size_t n, uint64_t key);

/* A slot claimed for key (its other fields to be filled by the caller), or NULL: full.  A
 * key already there is taken over: its handle was released by a call that is not tracked
 * (MPI_Request_free) and given out again. */
static struct slot *claim(struct slot *tab, size_t n, uint64_t key)
{
	if (key <= GONE)
		return NULL;
	struct slot *old = find(tab, n, key);
	if (old)
		return old;
	for (size_t i = 0, h = mix(key) % n; i < n; i++, h = (h + 1) % n) {
		uint64_t k = __atomic_load_n(&tab[h].key, __ATOMIC_ACQUIRE);
		if (k == EMPTY || k == GONE) {
			if (__atomic_compare_exchange_n(&tab[h].key, &k, key, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE))
				return &tab[h];
		}
	}
	return NULL;
}

static struct slot *find(struct slot *tab, size_t n, uint64_t key)
{
	if (key <= GONE)
		return NULL;
	for (size_t i = 0, h = mix(key) % n; i < n; i++, h = (h + 1) % n) {
		uint64_t k = __atomic_load_n(&tab[h].key, __ATOMIC_ACQUIRE);
		if (k == key)
			return &tab[h];
		if (k == EMPTY)
			return NULL;
	}
	return NULL;
}

static void drop(struct slot *s)
{
	__atomic_store_n(&s->key, GONE, __ATOMIC_RELEASE);
}

/* ---- communicators ---- */

static int world_rank = -1;
static uint64_t created; /* communicators this rank led the creation of */

uint64_t ltm_comm_key(MPI_Comm comm)
{
	uint64_t k = 0;
	memcpy(&k, &comm, sizeof(comm) < sizeof(k) ? sizeof(comm) : sizeof(k));
	return k;
}

uint64_t ltm_comm_id(MPI_Comm comm)
{
	if (comm == MPI_COMM_WORLD)
		return LT_MPI_COMM_WORLD;
	if (comm == MPI_COMM_SELF)
		return LT_MPI_COMM_SELF;
	struct slot *s = find(comms, COMMS, ltm_comm_key(comm));
	return s ? __atomic_load_n(&s->id, __ATOMIC_ACQUIRE) : 0;
}

int ltm_comm_size(MPI_Comm comm)
{
	int n = 0;
	if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
		return 0;
	return n;
}

int ltm_comm_rank(MPI_Comm comm)
{
	int r = -1;
	if (comm == MPI_COMM_NULL || PMPI_Comm_rank(comm, &r) != MPI_SUCCESS)
		return -1;
	return r;
}

void ltm_comm_new(struct ltm_call *c, MPI_Comm comm)
{
	/* Every member must take part in the broadcast, traced or not (a rank whose call is
	 * not traced would otherwise leave the others waiting). */
	int inter = 0;
	if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return; /* intercommunicators: regions only */
	int rank = ltm_comm_rank(comm), size = ltm_comm_size(comm);
	uint64_t id = 0;
	if (rank == 0)
		id = (uint64_t)(world_rank + 1) << 32 | (++created & 0xffffffffu);
	if (PMPI_Bcast(&id, 1, MPI_UINT64_T, 0, comm) != MPI_SUCCESS || size <= 0)
		return;
	struct slot *s = claim(comms, COMMS, ltm_comm_key(comm));
	if (s)
		__atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
	if (!c->t)
		return;
	/* Its members' world ranks (creation is not a hot path: the heap for big ones). */
	int small[256], *in = small, *out = small + 128;
	if (size > 128 && !(in = malloc(2 * sizeof(int) * (size_t)size)))
		return;
	if (size > 128)
		out = in + size;
	MPI_Group g, wg;
	if (PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
		if (PMPI_Comm_group(MPI_COMM_WORLD, &wg) == MPI_SUCCESS) {
			for (int i = 0; i < size; i++)
				in[i] = i;
			if (PMPI_Group_translate_ranks(g, size, in, wg, out) == MPI_SUCCESS)
				lt.comm(c->t, id, (uint32_t)size, (const uint32_t *)out);
			PMPI_Group_free(&wg);
		}
		PMPI_Group_free(&g);
	}
	if (in != small)
		free(in);
}

void ltm_comm_free(uint64_t key)
{
	struct slot *s = find(comms, COMMS, key);
	if (s)
		drop(s);
}

/* ---- sizes and ranks ---- */

uint64_t ltm_bytes(int count, MPI_Datatype type)
{
	int size = 0;
	if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS ||
	    size < 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

uint64_t ltm_sum_bytes(const int *counts, MPI_Datatype type, MPI_Comm comm)
{
	int n = ltm_comm_size(comm);
	uint64_t sum = 0;
	for (int i = 0; counts && i < n; i++)
		sum += ltm_bytes(counts[i], type);
	return sum;
}

uint32_t ltm_rank_arg(int rank)
{
	return rank < 0 ? LT_MPI_NO_RANK : (uint32_t)rank;
}

/* ---- point to point ---- */

static uint64_t next_request; /* request ids of this process */

void ltm_send(struct ltm_call *c, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type)
{
	if (c->t && dest != MPI_PROC_NULL)
		lt.p2p(c->t, LT_MPI_SEND, ltm_rank_arg(dest), ltm_comm_id(comm), tag,
		       ltm_bytes(count, type), 0);
}

static uint64_t status_bytes(const MPI_Status *st)
{
	int n = 0;
	if (PMPI_Get_count(st, MPI_BYTE, &n) != MPI_SUCCESS || n == MPI_UNDEFINED || n < 0)
		return 0;
	return (uint64_t)n;
}

void ltm_recv(struct ltm_call *c, MPI_Comm comm, const MPI_Status *st)
{
	if (c->t && st && st->MPI_SOURCE != MPI_PROC_NULL && st->MPI_SOURCE >= 0)
		lt.p2p(c->t, LT_MPI_RECV, (uint32_t)st->MPI_SOURCE, ltm_comm_id(comm), st->MPI_TAG,
		       status_bytes(st), 0);
}

uint64_t ltm_req_key(MPI_Request req)
{
	uint64_t k = 0;
	if (req == MPI_REQUEST_NULL)
		return 0;
	memcpy(&k, &req, sizeof(req) < sizeof(k) ? sizeof(req) : sizeof(k));
	return k;
}

static void track(struct ltm_call *c, unsigned kind, MPI_Comm comm, int peer, int tag,
		  uint64_t bytes, MPI_Request req)
{
	uint64_t id = __atomic_add_fetch(&next_request, 1, __ATOMIC_RELAXED);
	struct slot *s = claim(requests, REQUESTS, ltm_req_key(req));
	if (s) {
		s->comm = ltm_comm_id(comm);
		s->bytes = bytes;
		s->id = id;
		s->tag = tag;
		s->peer = ltm_rank_arg(peer);
		s->kind = kind;
	}
	lt.p2p(c->t, kind, ltm_rank_arg(peer), ltm_comm_id(comm), tag, bytes, id);
}

void ltm_isend(struct ltm_call *c, MPI_Comm comm, int dest, int tag, int count, MPI_Datatype type,
	       MPI_Request req)
{
	if (c->t && dest != MPI_PROC_NULL)
		track(c, LT_MPI_ISEND, comm, dest, tag, ltm_bytes(count, type), req);
}

void ltm_irecv(struct ltm_call *c, MPI_Comm comm, int source, int tag, MPI_Request req)
{
	if (c->t && source != MPI_PROC_NULL)
		track(c, LT_MPI_IRECV_POSTED, comm, source, tag, 0, req);
}

void ltm_done(struct ltm_call *c, uint64_t key, const MPI_Status *st)
{
	struct slot *s = find(requests, REQUESTS, key);
	if (!s)
		return; /* not one of ours (persistent, a collective's, before tracing) */
	struct slot r = *s;
	drop(s);
	if (!c->t)
		return;
	int cancelled = 0;
	if (st && PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS && cancelled) {
		lt.p2p(c->t, LT_MPI_CANCELLED, r.peer, r.comm, r.tag, 0, r.id);
	} else if (r.kind == LT_MPI_ISEND) {
		lt.p2p(c->t, LT_MPI_ISEND_DONE, r.peer, r.comm, r.tag, r.bytes, r.id);
	} else if (st && st->MPI_SOURCE >= 0) {
		lt.p2p(c->t, LT_MPI_IRECV_DONE, (uint32_t)st->MPI_SOURCE, r.comm, st->MPI_TAG,
		       status_bytes(st), r.id);
	}
}

/* ---- collectives ---- */

void ltm_coll(struct ltm_call *c, unsigned op, MPI_Comm comm, int root, uint64_t sent,
	      uint64_t received)
{
	if (c->t)
		lt.coll(c->t, op, ltm_rank_arg(root), ltm_comm_id(comm), sent, received);
}

/* ---- init and finalize ---- */

/*
 * Clock offsets to rank 0, as Score-P and Extrae measure them: each rank in turn does
 * ping-pongs with rank 0, which answers each with its time; the round trip that took least
 * gives the offset (rank 0's time minus the midpoint of the round trip), good to half that
 * round trip.  At least MIN_ROUNDS; more while the best round trip is still slow (ranks
 * that share cores with others answer late until they are all running), within about 2 s
 * for all ranks (MAX_NS at most per rank).  Rank 0 calls the ranks in turn and lets them all go at
 * the end; meanwhile the others wait asleep.  On a communicator of its own, so that no message of
 * the program can match. Every rank takes part whether or not libtrace.so is there.
 */
enum { MIN_ROUNDS = 10, MAX_ROUNDS = 1000, TAG_GO = 1, TAG_PING = 2, TAG_PONG = 3, TAG_DONE = 4 };
#define GOOD_NS 20000	  /* a round trip this short ends the measurement */
#define MAX_NS	200000000 /* time one rank may spend beyond MIN_ROUNDS */
static MPI_Comm sync_comm = MPI_COMM_NULL;

static int64_t now_ns(void)
{
	if (lookup())
		return lt.now();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Waits for rank 0's message of tag `tag` without spinning: MPI libraries poll, and ranks
 * polling while they wait would take the CPUs of the two that measure (on oversubscribed
 * nodes).  0, or -1 when MPI failed. */
static int wait_for(int tag, int size)
{
	MPI_Request req;
	int flag = 0, word = 0;
	if (PMPI_Irecv(&word, 1, MPI_INT, 0, tag, sync_comm, &req) != MPI_SUCCESS)
		return -1;
	/* Rank 0 spends at most MAX_NS on each rank: past that (rank 0's MPI failed and its
	 * errors return), give up rather than wait for ever. */
	int64_t deadline = now_ns() + (int64_t)size * (MAX_NS + 100000000) + 10000000000;
	while (!flag) {
		if (PMPI_Test(&req, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -1;
		if (flag)
			break;
		if (now_ns() > deadline) {
			PMPI_Cancel(&req);
			PMPI_Request_free(&req);
			return -1;
		}
		nanosleep(&(struct timespec){0, 50000}, NULL);
	}
	return 0;
}

static void clock_sync(void)
{
	int rank = -1, size = 0;
	if (sync_comm == MPI_COMM_NULL || PMPI_Comm_rank(sync_comm, &rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(sync_comm, &size) != MPI_SUCCESS)
		return;
	int64_t t = 0;
	int more = 1;
	if (rank == 0) {
		/* Calls each rank in turn and answers its pings until it says it is done. */
		for (int r = 1; r < size; r++) {
			int turn = 1;
			if (PMPI_Send(&turn, 1, MPI_INT, r, TAG_GO, sync_comm) != MPI_SUCCESS)
				return;
			for (;;) {
				if (PMPI_Recv(&more, 1, MPI_INT, r, TAG_PING, sync_comm,
					      MPI_STATUS_IGNORE) != MPI_SUCCESS)
					return;
				if (!more)
					break;
				t = now_ns();
				PMPI_Send(&t, 1, MPI_INT64_T, r, TAG_PONG, sync_comm);
			}
		}
		for (int r = 1; r < size; r++) /* all measured: the program goes on */
			PMPI_Send(&more, 1, MPI_INT, r, TAG_DONE, sync_comm);
		return;
	}
	if (wait_for(TAG_GO, size))
		return;
	/* About 2 s for all ranks together, 5 ms to MAX_NS each. */
	int64_t budget = 2000000000 / (size - 1);
	budget = budget < 5000000 ? 5000000 : budget > MAX_NS ? MAX_NS : budget;
	int64_t best = INT64_MAX, offset = 0, mid = 0, start = now_ns();
	for (int i = 0; i < MAX_ROUNDS; i++) {
		int64_t t0 = now_ns();
		if (i >= MIN_ROUNDS && (best <= GOOD_NS || t0 - start > budget))
			break;
		if (PMPI_Send(&more, 1, MPI_INT, 0, TAG_PING, sync_comm) != MPI_SUCCESS ||
		    PMPI_Recv(&t, 1, MPI_INT64_T, 0, TAG_PONG, sync_comm, MPI_STATUS_IGNORE) !=
			MPI_SUCCESS)
			return;
		int64_t t2 = now_ns();
		if (t2 - t0 < best) {
			best = t2 - t0;
			mid = t0 + (t2 - t0) / 2;
			offset = t - mid;
		}
	}
	more = 0;
	if (PMPI_Send(&more, 1, MPI_INT, 0, TAG_PING, sync_comm) != MPI_SUCCESS)
		return;
	if (lookup())
		lt.clock(mid, offset, best);
	wait_for(TAG_DONE, size);
}

void ltm_init_done(void)
{
	int size = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &size);
	if (lookup())
		lt.world(world_rank, size, LTM_LIBRARY);
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &sync_comm) != MPI_SUCCESS)
		sync_comm = MPI_COMM_NULL;
	clock_sync();
}

void ltm_finalizing(void)
{
	clock_sync();
	if (sync_comm != MPI_COMM_NULL)
		PMPI_Comm_free(&sync_comm);
}

int MPI_Init(int *argc, char ***argv)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Init", __builtin_return_address(0));
	int rc = PMPI_Init(argc, argv);
	if (rc == MPI_SUCCESS)
		ltm_init_done();
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Init_thread", __builtin_return_address(0));
	int rc = PMPI_Init_thread(argc, argv, required, provided);
	if (rc == MPI_SUCCESS)
		ltm_init_done();
	ltm_leave(&c, rc);
	return rc;
}

int MPI_Finalize(void)
{
	struct ltm_call c;
	ltm_enter(&c, "MPI_Finalize", __builtin_return_address(0));
	ltm_finalizing();
	int rc = PMPI_Finalize();
	ltm_leave(&c, rc);
	return rc;
}
