// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_out.c - the Paraver backend, following what Extrae's merger writes: NAME.prv (header,
 * then state, event and communication records in time order, times in ns from the trace's start),
 * NAME.pcf (states, event types, value labels) and NAME.row (object names).
 *
 *   One application; one Paraver task per process, on the node of its host; one Paraver
 *   thread per traced thread, in the order the threads appear.  CPUs are unknown: records
 *   name CPU 0 and each node has one CPU.
 *
 *   States (Extrae's numbers, so Paraver's standard configurations apply): Not created
 *   before a thread's first and after its last event; Running; Idle for an OpenMP worker
 *   between its teams; Synchronization in barriers, joins, condition and semaphore waits,
 *   taskwaits; Blocked while waiting for a mutex, rwlock, critical section or OpenMP lock;
 *   Scheduling and Fork/Join in pthread_create; Memory transfer in Kokkos deep copies.
 *
 *   GPU as Extrae shows it: each GPU stream is one more thread of its process's task
 *   (after the process's threads), Idle between its operations, Running in a kernel,
 *   Memory transfer in a copy or set, with 63100000 (the device operation: 1 kernel, 3
 *   copy, 34 set), 63000006 (the kernel), 63000001 (bytes), 63000011/63000012 (blocks per
 *   grid, threads per block).  API calls on the calling thread as 63000000 (CUDA) or
 *   63500000 (HIP) valued by Extrae's numbers for the calls Extrae knows, in states of
 *   Extrae's: Allocating memory, Freeing memory, Memory transfer, Synchronization.
 *
 *   Events: each region's Enter writes its type and value, its Leave the value of the
 *   enclosing region of the same type, or 0 ("End").  Extrae's types where Extrae has one
 *   (60000001 parallel, 60000018 outlined function, 60000019 user function, 60000020 thread
 *   function, 61000000 pthread call with Extrae's values, 40000001 application); our own
 *   numbers otherwise (table `kinds` below).  Function-like values are small ids (the
 *   region's id + 1) labelled "function [file:line]" in the .pcf, as Paraver's labels are
 *   32-bit.  Counters go out as events without labels, markers as events whose values name
 *   their text.
 *
 *   Communications: tag 1 from a pthread_create to the new thread's begin; tag 2 from the
 *   end of an OpenMP task to the start of a task that depended on it; tag 3 from a GPU API
 *   call to the start of what the device did for it (Extrae's host-to-stream links; size:
 *   the bytes of a copy).  MPI messages with
 *   their MPI tag and size, from the start of the sending call (MPI_Send, MPI_Isend...)
 *   to the completion of the receive (the end of MPI_Recv, the wait or test that
 *   completed an MPI_Irecv), on the ranks' clocks put on rank 0's: each send matched to
 *   its receive by communicator, the two ranks and tag, in the order they were sent and
 *   posted (MPI's non-overtaking rule).  The halves are kept until the end (24 bytes
 *   each per message).
 *
 * Records are gathered as fixed-size binary records; every RUN_RECORDS they are sorted and
 * spilled to a scratch file beside the output, and finish() merges the sorted runs into the
 * .prv.  Memory: one run, a read buffer per run, and per-thread stacks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "convert.h"

#define RUN_RECORDS  (1u << 20) /* records sorted in memory at a time: 48 MB */
#define READ_RECORDS 4096u	/* per run while merging */

/* Extrae's states (src/merger/paraver/labels.h), the ones we write and their colours. */
enum {
	ST_IDLE = 0,
	ST_RUNNING = 1,
	ST_NOT_CREATED = 2,
	ST_WAIT_MESSAGE = 3,
	ST_BLOCKING_SEND = 4,
	ST_SYNC = 5,
	ST_TEST_PROBE = 6,
	ST_FORK_JOIN = 7,
	ST_WAIT_ALL = 8,
	ST_BLOCKED = 9,
	ST_GROUP_COMM = 13,
	ST_OTHERS = 15,
	ST_MEMORY_TRANSFER = 17,
	ST_OVERHEAD = 24,
	ST_ALLOC = 30,
	ST_FREE = 31,
	ST_INHERIT = 255, /* a frame that keeps the state below it */
};

static const struct {
	int id;
	const char *label;
	unsigned char rgb[3];
} states[] = {
    {0, "Idle", {117, 195, 255}},
    {1, "Running", {0, 0, 255}},
    {2, "Not created", {255, 255, 255}},
    {3, "Waiting a message", {255, 0, 0}},
    {4, "Blocking Send", {255, 0, 174}},
    {5, "Synchronization", {179, 0, 0}},
    {6, "Test/Probe", {0, 255, 0}},
    {7, "Scheduling and Fork/Join", {255, 255, 0}},
    {8, "Wait/WaitAll", {235, 0, 0}},
    {9, "Blocked", {0, 162, 0}},
    {12, "I/O", {172, 174, 41}},
    {13, "Group Communication", {255, 144, 26}},
    {14, "Tracing Disabled", {2, 255, 177}},
    {15, "Others", {192, 224, 0}},
    {17, "Memory transfer", {255, 0, 96}},
    {24, "Overhead", {139, 121, 177}},
    {30, "Allocating memory", {255, 171, 0}},
    {31, "Freeing memory", {0, 120, 120}},
};

/* Event types. */
#define TY_APPLICATION	40000001u
#define TY_OMP_PARALLEL 60000001u
#define TY_PTHREAD	61000000u
#define TY_GPU_OP	63100000u /* a stream's operation: Extrae's numbers of the calls */
#define TY_GPU_BYTES	63000001u /* bytes of a stream's copy or set */
#define TY_GPU_BLOCKS	63000011u /* a kernel's blocks per grid */
#define TY_GPU_THREADS	63000012u /* a kernel's threads per block */
#define TY_METRIC	64000000u /* + metric id */
#define TY_MARKER	69000010u /* + CV_MARK_* */
#define TY_ATTR		69100000u /* + CV_ATTR_* of integer attributes */
#define TY_PAPI_SET	41999999u /* the set of counters read: PAPI set id + 1 */
#define TY_PAPI_PRESET	42000000u /* + (code & 0xffff): a PAPI preset, as a delta */
#define TY_PAPI_NATIVE	44000000u /* + a hash of the name: a native event, as a delta */
#define TY_CALLER	70000000u /* + depth: the calling function (string id + 1) */
#define TY_CALLER_LINE	80000000u /* + depth: the calling line (label string id + 1) */
#define MAX_CALLER	32u	  /* depths shown (LIBTRACE_CALLSITE_DEPTH's limit) */

/* Region kinds that become one event type each, valued by region id + 1. */
enum kind {
	K_USER,
	K_THREAD_FN,
	K_OMP_OUTLINED,
	K_OMP_WORKSHARE,
	K_OMP_SYNC,
	K_OMP_LOCK,
	K_OMP_TASK,
	K_OMP_TASK_CREATE,
	K_OMP_TASK_WAIT,
	K_OMP_OTHER,
	K_KOKKOS_KERNEL,
	K_KOKKOS_REGION,
	K_KOKKOS_FENCE,
	K_KOKKOS_SECTION,
	K_KOKKOS_COPY,
	K_KOKKOS_MEMORY,
	K_PROCESS,
	K_MPI,
	K_CUDA,	      /* a CUDA API call: valued by Extrae's numbers where it has one */
	K_HIP,	      /* a HIP API call: the same numbers */
	K_GPU_KERNEL, /* a kernel on its stream */
	K_GPU_DEVICE, /* a copy or set on its stream: valued by its Extrae number */
	K_PTHREAD,    /* valued by Extrae's pthread call numbers instead */
	K_COUNT
};

static const struct {
	uint32_t type;
	const char *label;
} kinds[K_COUNT] = {
    [K_USER] = {60000019, "User function"},
    [K_THREAD_FN] = {60000020, "Thread function (main or start routine)"},
    [K_OMP_OUTLINED] = {60000018, "Executed OpenMP parallel function"},
    [K_OMP_WORKSHARE] = {60000002, "OpenMP worksharing construct"},
    [K_OMP_SYNC] = {60000005, "OpenMP barrier"},
    [K_OMP_LOCK] = {60000006, "OpenMP critical or lock"},
    [K_OMP_TASK] = {60000023, "Executed OpenMP task function"},
    [K_OMP_TASK_CREATE] = {60000021, "OpenMP task instantiation"},
    [K_OMP_TASK_WAIT] = {60000022, "OpenMP taskwait or taskgroup"},
    [K_OMP_OTHER] = {60000050, "OpenMP construct or runtime call"},
    [K_KOKKOS_KERNEL] = {65000001, "Kokkos kernel"},
    [K_KOKKOS_REGION] = {65000002, "Kokkos profile region"},
    [K_KOKKOS_FENCE] = {65000003, "Kokkos fence"},
    [K_KOKKOS_SECTION] = {65000004, "Kokkos profile section"},
    [K_KOKKOS_COPY] = {65000005, "Kokkos deep copy"},
    [K_KOKKOS_MEMORY] = {65000006, "Kokkos allocation or deallocation"},
    [K_PROCESS] = {69000001, "Process call (fork, exec, spawn, dlopen)"},
    [K_MPI] = {50000001, "MPI call"},
    [K_CUDA] = {63000000, "CUDA call"},
    [K_HIP] = {63500000, "HIP call"},
    [K_GPU_KERNEL] = {63000006, "CUDA kernel"},
    [K_GPU_DEVICE] = {TY_GPU_OP, "CUDA device operation"},
    [K_PTHREAD] = {TY_PTHREAD, "pthread call"},
};

/* Extrae's pthread call values (pthread_prv_events.c), and two of ours for semaphores. */
static const struct {
	const char *prefix;
	int value;
	const char *label;
} pthread_values[] = {
    {"pthread_exit", 1, "pthread_exit"},
    {"pthread_create", 2, "pthread_create"},
    {"pthread_join", 3, "pthread_join"},
    {"pthread_tryjoin_np", 3, NULL},
    {"pthread_timedjoin_np", 3, NULL},
    {"pthread_clockjoin_np", 3, NULL},
    {"pthread_detach", 4, "pthread_detach"},
    {"pthread_rwlock_wrlock", 5, "pthread_rwlock_*wrlock"},
    {"pthread_rwlock_trywrlock", 5, NULL},
    {"pthread_rwlock_timedwrlock", 5, NULL},
    {"pthread_rwlock_clockwrlock", 5, NULL},
    {"pthread_rwlock_rdlock", 6, "pthread_rwlock_*rdlock"},
    {"pthread_rwlock_tryrdlock", 6, NULL},
    {"pthread_rwlock_timedrdlock", 6, NULL},
    {"pthread_rwlock_clockrdlock", 6, NULL},
    {"pthread_rwlock_unlock", 7, "pthread_rwlock_unlock"},
    {"pthread_mutex_lock", 8, "pthread_mutex_*lock"},
    {"pthread_mutex_trylock", 8, NULL},
    {"pthread_mutex_timedlock", 8, NULL},
    {"pthread_mutex_clocklock", 8, NULL},
    {"pthread_mutex_unlock", 9, "pthread_mutex_unlock"},
    {"pthread_cond_signal", 10, "pthread_cond_signal"},
    {"pthread_cond_broadcast", 11, "pthread_cond_broadcast"},
    {"pthread_cond_wait", 12, "pthread_cond_*wait"},
    {"pthread_cond_timedwait", 12, NULL},
    {"pthread_cond_clockwait", 12, NULL},
    {"pthread_barrier_wait", 13, "pthread_barrier_wait"},
    {"sem_wait", 14, "sem_*wait"},
    {"sem_trywait", 14, NULL},
    {"sem_timedwait", 14, NULL},
    {"sem_clockwait", 14, NULL},
    {"sem_post", 15, "sem_post"},
};

/* Extrae's CUDA call values (events.h, the order of its CUDA enum), by the name after "cuda"
 * or "hip"; calls Extrae has no number for are valued GPU_VALUE_OTHER + their region id. */
static const struct {
	const char *suffix;
	int value;
	const char *label; /* NULL: another name of the value above */
} gpu_values[] = {
    {"Launch", 1, "Launch"},
    {"LaunchKernel", 1, NULL},
    {"ConfigureCall", 2, "ConfigureCall"},
    {"Memcpy", 3, "Memcpy"},
    {"DeviceSynchronize", 4, "DeviceSynchronize"},
    {"StreamSynchronize", 5, "StreamSynchronize"},
    {"StreamCreate", 6, "StreamCreate"},
    {"StreamCreateWithFlags", 6, NULL},
    {"StreamCreateWithPriority", 6, NULL},
    {"MemcpyAsync", 7, "MemcpyAsync"},
    {"DeviceReset", 8, "DeviceReset"},
    {"ThreadExit", 9, "ThreadExit"},
    {"StreamDestroy", 10, "StreamDestroy"},
    {"Malloc", 11, "Malloc"},
    {"MallocPitch", 12, "MallocPitch"},
    {"Free", 13, "Free"},
    {"MallocArray", 14, "MallocArray"},
    {"FreeArray", 15, "FreeArray"},
    {"MallocHost", 16, "MallocHost"},
    {"FreeHost", 17, "FreeHost"},
    {"HostAlloc", 18, "HostAlloc"},
    {"MemcpyToSymbol", 25, "MemcpyToSymbol"},
    {"MemcpyFromSymbol", 26, "MemcpyFromSymbol"},
    {"Memset", 34, "Memset"},
    {"MemsetAsync", 35, "MemsetAsync"},
    {"EventRecord", 36, "EventRecord"},
    {"EventSynchronize", 37, "EventSynchronize"},
    {"StreamWaitEvent", 38, "StreamWaitEvent"},
    {"Malloc3D", 39, "Malloc3D"},
    {"Malloc3DArray", 40, "Malloc3DArray"},
};
#define GPU_VALUE_OTHER 1000

/* A stream's operations (63100000), as Extrae numbers them. */
#define GPU_OP_KERNEL 1
#define GPU_OP_COPY   3
#define GPU_OP_SET    34

#define TAG_GPU 3 /* communications from a GPU call to its device operation */

enum { REC_STATE = 1, REC_EVENT = 2, REC_COMM = 3 };

/* One record, before sorting.  State: [time, a) in state b.  Event: type b, value a.
 * Communication: from (loc, time) to (b, a), tag c, size `size`. */
struct rec {
	uint64_t time, a, seq, size;
	uint32_t loc, b;
	uint32_t kind, c;
};

/* Half of an MPI message: who (COMM_WORLD ranks), in what order, when and where. */
struct msg {
	uint64_t comm;	     /* communicator id */
	uint32_t from, to;   /* COMM_WORLD ranks */
	uint32_t tag, loc;   /* loc: the sender's or receiver's location */
	uint64_t order;	     /* send: its call's start; receive: when it was posted */
	uint64_t time, size; /* send: its call's start; receive: its completion */
};

struct frame {
	uint32_t type;	/* event type written at its Enter, 0: none */
	uint8_t state;	/* ST_*, or ST_INHERIT */
	uint8_t par;	/* the master's frame of a parallel region it forked */
	uint64_t value; /* event value */
	uint64_t task;	/* an OpenMP task's id, 0: none */
};

struct ploc {
	struct frame *stack;
	uint32_t depth, cap;
	uint8_t base;	/* the state outside every region */
	uint8_t cur;	/* the state written since `since` */
	uint64_t since; /* when cur began */
	uint64_t first; /* the first and last event times */
	uint64_t last;
	uint32_t forking; /* OpenMP forks in progress (the team's master) */
	int fork_pending; /* forked, its parallel region not entered yet */
	int begun, ended;
	uint32_t papi;		/* PAPI set id + 1 of papi_last, 0: no reading yet */
	uint64_t papi_last[16]; /* the last reading: events are deltas since it */
	uint64_t mpi_enter;	/* when its innermost MPI call began */
};

/* A half of a communication waiting for the other: key -> (loc, time). */
struct pending {
	uint64_t key, time;
	uint32_t loc;
	uint8_t used, half, done; /* half: 1 the send side is here, 2 the receive side */
};

struct pmap {
	struct pending *slot;
	size_t cap, n;
};

/* A value of a marker or string attribute type: string sid + 1. */
struct label {
	uint32_t type, sid;
};

struct out {
	char *name; /* NAME of NAME.prv */
	struct ploc *locs;
	size_t nlocs;
	struct rec *run;
	size_t nrun;
	uint64_t seq;
	FILE *scratch; /* the sorted runs spilled so far, one after the other */
	size_t nruns;
	uint64_t records;  /* written to scratch */
	uint32_t *regions; /* per region: kind + 1 and, for pthread calls, the value (0: none) */
	uint32_t nregions;
	struct pmap creates;   /* thread create/begin halves: key (process << 32) | thread */
	struct pmap tasks;     /* finished OpenMP tasks: key (process << 40) ^ task id */
	struct pmap label_set; /* (type << 32) | string id of the labelled values below */
	struct label *labels;
	size_t nlabels, labels_cap;
	uint32_t *scl_line; /* per call site: its line label's string id + 1 */
	uint32_t nscl_line;
	uint32_t (*papi_types)[16]; /* per PAPI set: the event type of each member */
	uint32_t npapi_types;
	uint32_t max_caller;	   /* the deepest caller level written */
	struct msg *sends, *recvs; /* MPI message halves, matched at the end */
	size_t nsends, nrecvs, sends_cap, recvs_cap;
	struct pmap irecvs;  /* MPI_Irecv posted: key (process << 40) ^ request -> its time */
	struct pmap isends;  /* MPI_Isend: the same key -> its send half's index + 1 (time) */
	uint64_t attrs_used; /* bit CV_ATTR_*: events of that attribute were written */
	char error[4096 + 300];
};

static void fail(struct out *o, const char *what, int err)
{
	if (!o->error[0])
		snprintf(o->error, sizeof(o->error), "%s: %s", what, strerror(err));
}

/* ---- sorting ---- */

static int rec_cmp(const void *x, const void *y)
{
	const struct rec *a = x, *b = y;
	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->loc != b->loc)
		return a->loc < b->loc ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void spill(struct out *o)
{
	if (!o->nrun)
		return;
	qsort(o->run, o->nrun, sizeof(*o->run), rec_cmp);
	if (fwrite(o->run, sizeof(*o->run), o->nrun, o->scratch) != o->nrun)
		fail(o, "writing the scratch file", errno ? errno : ENOSPC);
	o->records += o->nrun;
	o->nruns++;
	o->nrun = 0;
}

static void put(struct out *o, int kind, uint32_t loc, uint64_t time, uint32_t b, uint64_t a,
		uint32_t c)
{
	if (o->nrun == RUN_RECORDS)
		spill(o);
	o->run[o->nrun++] = (struct rec){time, a, o->seq++, 0, loc, b, (uint32_t)kind, c};
}

/* A communication of `size` bytes with `tag`, received no earlier than it was sent. */
static void put_comm(struct out *o, uint32_t from, uint64_t sent, uint32_t to, uint64_t received,
		     uint64_t size, uint32_t tag)
{
	if (o->nrun == RUN_RECORDS)
		spill(o);
	o->run[o->nrun++] = (struct rec){
	    sent, received < sent ? sent : received, o->seq++, size, from, to, REC_COMM, tag};
}

/* ---- pending communication halves ---- */

static struct pending *pmap_slot(struct pmap *m, uint64_t key, int create)
{
	if (create && (m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct pending *s = calloc(cap, sizeof(*s));
		if (!s)
			return NULL;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slot[i].used)
				continue;
			size_t j = (m->slot[i].key * 0x9e3779b97f4a7c15ull) >> 20 & (cap - 1);
			while (s[j].used)
				j = (j + 1) & (cap - 1);
			s[j] = m->slot[i];
		}
		free(m->slot);
		m->slot = s;
		m->cap = cap;
	}
	if (!m->cap)
		return NULL;
	size_t j = (key * 0x9e3779b97f4a7c15ull) >> 20 & (m->cap - 1);
	while (m->slot[j].used && m->slot[j].key != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->slot[j].used) {
		if (!create)
			return NULL;
		m->slot[j].used = 1;
		m->slot[j].key = key;
		m->n++;
	}
	return &m->slot[j];
}

/* ---- per-thread state ---- */

static uint32_t loc_index(struct cv *cv, struct cv_loc *l)
{
	return (uint32_t)(l - cv->locs);
}

static struct ploc *ploc(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	uint32_t i = loc_index(cv, l);
	return i < o->nlocs ? &o->locs[i] : NULL;
}

static uint8_t current_state(const struct ploc *p)
{
	for (uint32_t i = p->depth; i-- > 0;)
		if (p->stack[i].state != ST_INHERIT)
			return p->stack[i].state;
	return p->base;
}

/* Called after every change of p's stack or base: closes the state written so far when the
 * thread's state changed. */
static void restate(struct out *o, uint32_t li, struct ploc *p, uint64_t t)
{
	uint8_t s = current_state(p);
	if (s == p->cur)
		return;
	if (t > p->since)
		put(o, REC_STATE, li, p->since, p->cur, t, 0);
	p->cur = s;
	p->since = t;
}

/* Notes time t on p; the first time begins the thread's life. */
static void touch(struct ploc *p, uint64_t t)
{
	if (!p->begun) {
		p->begun = 1;
		p->first = p->since = t;
		p->base = p->cur = ST_RUNNING;
	}
	if (t > p->last)
		p->last = t;
}

/* ---- regions ---- */

static enum kind region_kind(const struct cv_region *r)
{
	switch (r->paradigm) {
	case CV_PARADIGM_PTHREAD:
		return K_PTHREAD;
	case CV_PARADIGM_PROCESS:
		return K_PROCESS;
	case CV_PARADIGM_MPI:
		return K_MPI;
	case CV_PARADIGM_USER:
		return r->role == CV_ROLE_USER ? K_USER : K_THREAD_FN;
	case CV_PARADIGM_KOKKOS:
		switch (r->role) {
		case CV_ROLE_PARALLEL:
			return K_KOKKOS_KERNEL;
		case CV_ROLE_BARRIER:
			return K_KOKKOS_FENCE;
		case CV_ROLE_PHASE:
			return K_KOKKOS_SECTION;
		case CV_ROLE_DATA_TRANSFER:
			return K_KOKKOS_COPY;
		case CV_ROLE_ALLOCATE:
		case CV_ROLE_DEALLOCATE:
			return K_KOKKOS_MEMORY;
		default:
			return K_KOKKOS_REGION;
		}
	case CV_PARADIGM_CUDA:
	case CV_PARADIGM_HIP:
		return r->role == CV_ROLE_KERNEL	? K_GPU_KERNEL
		       : r->role == CV_ROLE_GPU_MEMORY	? K_GPU_DEVICE
		       : r->paradigm == CV_PARADIGM_HIP ? K_HIP
							: K_CUDA;
	case CV_PARADIGM_OPENMP:
		break;
	}
	switch (r->role) {
	case CV_ROLE_PARALLEL:
		return K_OMP_OUTLINED;
	case CV_ROLE_LOOP:
	case CV_ROLE_SECTIONS:
	case CV_ROLE_SINGLE:
	case CV_ROLE_WORKSHARE:
	case CV_ROLE_MASTER:
		return K_OMP_WORKSHARE;
	case CV_ROLE_BARRIER:
	case CV_ROLE_IMPLICIT_BARRIER:
		return K_OMP_SYNC;
	case CV_ROLE_CRITICAL:
	case CV_ROLE_ATOMIC:
	case CV_ROLE_ORDERED:
		return K_OMP_LOCK;
	case CV_ROLE_TASK:
		return K_OMP_TASK;
	case CV_ROLE_TASK_CREATE:
		return K_OMP_TASK_CREATE;
	case CV_ROLE_TASK_WAIT:
		return K_OMP_TASK_WAIT;
	default:
		return K_OMP_OTHER;
	}
}

static int pthread_value(const char *name)
{
	for (size_t i = 0; i < sizeof(pthread_values) / sizeof(pthread_values[0]); i++)
		if (!strcmp(name, pthread_values[i].prefix))
			return pthread_values[i].value;
	return 0;
}

/* The value of GPU region r of kind k (K_CUDA, K_HIP, K_GPU_DEVICE): Extrae's number. */
static int gpu_value(const struct cv *cv, uint32_t r, enum kind k)
{
	const char *name = cv->strings[cv->regions[r].name];
	if (k == K_GPU_DEVICE)
		return strstr(name, "Memset") ? GPU_OP_SET : GPU_OP_COPY;
	const char *prefix = k == K_HIP ? "hip" : "cuda";
	size_t n = strlen(prefix);
	for (size_t i = 0;
	     !strncmp(name, prefix, n) && i < sizeof(gpu_values) / sizeof(gpu_values[0]); i++)
		if (!strcmp(name + n, gpu_values[i].suffix))
			return gpu_values[i].value;
	return GPU_VALUE_OTHER + (int)r;
}

/* The kind of region r (cached), and for a pthread call its value. */
static enum kind kind_of(struct cv *cv, uint32_t r, int *pvalue)
{
	struct out *o = cv->out;
	if (r >= o->nregions) {
		uint32_t n = cv->nregions > r ? cv->nregions : r + 1;
		uint32_t *a = realloc(o->regions, n * sizeof(*a));
		if (!a) {
			*pvalue = 0;
			return region_kind(&cv->regions[r]);
		}
		memset(a + o->nregions, 0, (n - o->nregions) * sizeof(*a));
		o->regions = a;
		o->nregions = n;
	}
	if (!o->regions[r]) {
		const struct cv_region *reg = &cv->regions[r];
		enum kind k = region_kind(reg);
		int v = k == K_PTHREAD ? pthread_value(cv->strings[reg->canonical])
			: k == K_CUDA || k == K_HIP || k == K_GPU_DEVICE ? gpu_value(cv, r, k)
									 : 0;
		o->regions[r] = ((uint32_t)k + 1) | (uint32_t)v << 8;
	}
	*pvalue = (int)(o->regions[r] >> 8);
	return (enum kind)((o->regions[r] & 0xff) - 1);
}

/* The state a region puts its thread in. */
/* An MPI call's state, as Extrae's: by what the call waits for. */
static uint8_t mpi_state(const char *name, enum cv_role role)
{
	if (role == CV_ROLE_COLLECTIVE)
		return name[4] == 'I' ? ST_OTHERS : ST_GROUP_COMM; /* MPI_I...: only starts it */
	if (!strncmp(name, "MPI_Wait", 8))
		return ST_WAIT_ALL;
	if (!strncmp(name, "MPI_Test", 8) || !strcmp(name, "MPI_Iprobe"))
		return ST_TEST_PROBE;
	if (!strcmp(name, "MPI_Recv") || !strcmp(name, "MPI_Probe") ||
	    !strncmp(name, "MPI_Sendrecv", 12))
		return ST_WAIT_MESSAGE;
	if (!strcmp(name, "MPI_Send") || !strcmp(name, "MPI_Ssend") || !strcmp(name, "MPI_Bsend") ||
	    !strcmp(name, "MPI_Rsend"))
		return ST_BLOCKING_SEND;
	if (!strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread") ||
	    !strcmp(name, "MPI_Finalize"))
		return ST_OTHERS;
	return ST_INHERIT;
}

static uint8_t region_state(const struct cv *cv, const struct cv_region *r, enum kind k, int pvalue)
{
	const char *name = cv->strings[r->name];
	switch (k) {
	case K_PTHREAD:
		switch (pvalue) {
		case 2:
			return ST_FORK_JOIN;
		case 3:
		case 12:
		case 13:
		case 14:
			return ST_SYNC;
		case 5:
		case 6:
		case 8:
			return ST_BLOCKED;
		}
		return ST_INHERIT;
	case K_OMP_OUTLINED:
	case K_OMP_TASK:
	case K_KOKKOS_KERNEL:
	case K_GPU_KERNEL:
		return ST_RUNNING;
	case K_GPU_DEVICE:
		return ST_MEMORY_TRANSFER;
	case K_CUDA:
	case K_HIP: /* as Extrae's states of the calls */
		switch (r->role) {
		case CV_ROLE_ALLOCATE:
			return ST_ALLOC;
		case CV_ROLE_DEALLOCATE:
			return ST_FREE;
		case CV_ROLE_DATA_TRANSFER:
			return ST_MEMORY_TRANSFER;
		case CV_ROLE_GPU_SYNC:
			return ST_SYNC;
		default:
			return ST_INHERIT;
		}
	case K_OMP_SYNC:
	case K_OMP_TASK_WAIT:
	case K_KOKKOS_FENCE:
		return ST_SYNC;
	case K_OMP_LOCK:
		return ST_BLOCKED; /* until the lock is acquired */
	case K_OMP_OTHER:
		/* omp_set_lock and omp_set_nest_lock end when they hold the lock */
		return strstr(name, "set_")	      ? ST_BLOCKED
		       : strstr(name, "depend(sink)") ? ST_SYNC
						      : ST_INHERIT;
	case K_KOKKOS_COPY:
		return ST_MEMORY_TRANSFER;
	case K_KOKKOS_MEMORY:
		return r->role == CV_ROLE_ALLOCATE ? ST_ALLOC : ST_FREE;
	case K_MPI:
		return mpi_state(name, r->role);
	default:
		return ST_INHERIT;
	}
}

/* ---- labelled values of markers and string attributes ---- */

/* Remembers that events of `type` carry string sid + 1, for the .pcf. */
static void note_label(struct out *o, uint32_t type, uint32_t sid)
{
	struct pending *e = pmap_slot(&o->label_set, (uint64_t)type << 32 | sid, 1);
	if (!e || e->done)
		return;
	e->done = 1;
	if (o->nlabels == o->labels_cap) {
		size_t cap = o->labels_cap ? 2 * o->labels_cap : 64;
		struct label *a = realloc(o->labels, cap * sizeof(*a));
		if (!a)
			return;
		o->labels = a;
		o->labels_cap = cap;
	}
	o->labels[o->nlabels++] = (struct label){type, sid};
}

/* ---- backend operations ---- */

static int location_begin(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	uint32_t i = loc_index(cv, l);
	if (i >= o->nlocs) {
		size_t n = i + 1 > 2 * o->nlocs ? i + 1 : 2 * o->nlocs;
		struct ploc *a = realloc(o->locs, n * sizeof(*a));
		if (!a) {
			fail(o, "out of memory", ENOMEM);
			return -1;
		}
		memset(a + o->nlocs, 0, (n - o->nlocs) * sizeof(*a));
		o->locs = a;
		o->nlocs = n;
	}
	return 0;
}

static int location_end(struct cv *cv, struct cv_loc *l)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	if (p && p->begun && !p->ended) {
		p->depth = 0;
		p->base = ST_NOT_CREATED;
		restate(o, loc_index(cv, l), p, p->last);
		p->ended = 1;
	}
	return o->error[0] ? -1 : 0;
}

static void event(struct out *o, uint32_t li, uint64_t t, uint32_t type, uint64_t value)
{
	put(o, REC_EVENT, li, t, type, value, 0);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* ---- what a record adds to its first Enter or Leave (convert.h, cv.cur_*) ---- */

/* A native event's type: 44000000 + a hash of its name below one million, as Extrae numbers
 * them; a type another name already has is passed over. */
static uint32_t native_type(struct out *o, const struct cv *cv, uint32_t name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (const unsigned char *c = (const unsigned char *)cv->strings[name]; *c; c++)
		h = (h ^ *c) * 16777619u;
	for (uint32_t k = 0;; k++) {
		uint32_t type = TY_PAPI_NATIVE + (h + k) % 1000000u;
		uint32_t owner = name;
		for (uint32_t s = 0; s < o->npapi_types && owner == name; s++)
			for (unsigned i = 0; i < cv->papis[s].n; i++)
				if (o->papi_types[s][i] == type)
					owner = cv->papis[s].names[i];
		if (owner == name)
			return type;
	}
}

/* The event types of PAPI set s (made at its first use). */
static const uint32_t *papi_types(struct cv *cv, uint32_t s)
{
	struct out *o = cv->out;
	while (o->npapi_types <= s) {
		uint32_t n = o->npapi_types;
		uint32_t(*a)[16] = realloc(o->papi_types, (n + 1) * sizeof(*a));
		if (!a) {
			fail(o, "out of memory", ENOMEM);
			return NULL;
		}
		o->papi_types = a;
		memset(a[n], 0, sizeof(a[n]));
		const struct cv_papi *ps = &cv->papis[n];
		for (unsigned i = 0; i < ps->n; i++) {
			uint32_t code = ps->codes[i];
			a[n][i] = (code & 0xc0000000u) == 0x80000000u /* PAPI_PRESET_MASK */
				      ? TY_PAPI_PRESET + (code & 0xffffu)
				      : native_type(o, cv, ps->names[i]);
		}
		o->npapi_types = n + 1;
	}
	return o->papi_types[s];
}

/* The label "LINE (file)" of call site s, as Extrae writes caller lines: string id. */
static uint32_t line_label(struct cv *cv, uint32_t s)
{
	struct out *o = cv->out;
	if (s >= o->nscl_line) {
		uint32_t n = s + 1 > 2 * o->nscl_line ? s + 1 : 2 * o->nscl_line;
		uint32_t *a = realloc(o->scl_line, n * sizeof(*a));
		if (!a)
			return CV_NO_STRING;
		memset(a + o->nscl_line, 0, (n - o->nscl_line) * sizeof(*a));
		o->scl_line = a;
		o->nscl_line = n;
	}
	if (!o->scl_line[s]) {
		const struct cv_scl *c = &cv->scls[s];
		const char *file = cv->strings[c->file];
		char text[512];
		if (c->line && *file)
			snprintf(text, sizeof(text), "%u (%s)", c->line, base_name(file));
		else
			snprintf(text, sizeof(text), "unknown line (%s)", cv->strings[c->function]);
		o->scl_line[s] = cv_string(cv, text) + 1;
	}
	return o->scl_line[s] - 1;
}

static void caller(struct cv *cv, uint32_t li, uint64_t t, uint32_t depth, uint32_t s)
{
	struct out *o = cv->out;
	uint32_t fn = cv->scls[s].function, line = line_label(cv, s);
	note_label(o, TY_CALLER + depth, fn);
	event(o, li, t, TY_CALLER + depth, (uint64_t)fn + 1);
	if (line != CV_NO_STRING) {
		note_label(o, TY_CALLER_LINE + depth, line);
		event(o, li, t, TY_CALLER_LINE + depth, (uint64_t)line + 1);
	}
	if (depth > o->max_caller)
		o->max_caller = depth;
}

/*
 * The PAPI reading as events of the counters' types, each the delta since the thread's
 * previous reading (Extrae's convention), with the set's number when it changes; on an
 * Enter, the call site as caller events, one function and one line per depth.
 */
static void decorate(struct cv *cv, struct cv_loc *l, struct ploc *p, uint64_t t, int is_enter)
{
	struct out *o = cv->out;
	uint32_t li = loc_index(cv, l);
	cv_papi_seen(cv, l);
	if (cv->cur_papi) {
		const struct cv_papi *ps = &cv->papis[cv->cur_papi - 1];
		const uint32_t *types = papi_types(cv, cv->cur_papi - 1);
		if (types && p->papi != cv->cur_papi) {
			event(o, li, t, TY_PAPI_SET, cv->cur_papi);
			memset(p->papi_last, 0, sizeof(p->papi_last));
			p->papi = cv->cur_papi;
		}
		for (unsigned i = 0; types && i < ps->n; i++) {
			uint64_t v = cv->cur_values[i], last = p->papi_last[i];
			uint64_t d = v >= last ? v - last : v; /* a counter that was reset */
			event(o, li, t, types[i], d > INT64_MAX ? INT64_MAX : d);
			p->papi_last[i] = v;
		}
		cv->cur_papi = 0;
	}
	if (!is_enter)
		return;
	if (cv->cur_ctx) {
		uint32_t depth = 1;
		for (uint32_t c = cv->cur_ctx; c && depth <= MAX_CALLER; c = cv->ctxs[c - 1].parent)
			caller(cv, li, t, depth++, cv->ctxs[c - 1].scl);
	} else if (cv->cur_scl) {
		caller(cv, li, t, 1, cv->cur_scl - 1);
	}
	cv->cur_scl = cv->cur_ctx = 0;
}

static void enter_frame(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, uint64_t task)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	uint32_t li = loc_index(cv, l);
	if (!p)
		return;
	touch(p, t);
	decorate(cv, l, p, t, 1);
	if (p->depth == p->cap) {
		uint32_t cap = p->cap ? 2 * p->cap : 16;
		struct frame *a = realloc(p->stack, cap * sizeof(*a));
		if (!a) {
			fail(o, "out of memory", ENOMEM);
			return;
		}
		p->stack = a;
		p->cap = cap;
	}
	int pv;
	enum kind k = kind_of(cv, region, &pv);
	struct frame *f = &p->stack[p->depth++];
	f->type = kinds[k].type;
	f->value = pv ? (uint64_t)pv : (uint64_t)region + 1; /* pthread and GPU calls: pv */
	f->state = region_state(cv, &cv->regions[region], k, pv);
	f->task = k == K_OMP_TASK ? task : 0;
	f->par = k == K_OMP_OUTLINED && p->fork_pending;
	if (f->par) {
		p->fork_pending = 0;
		event(o, li, t, TY_OMP_PARALLEL, 3);
	}
	if (k == K_PTHREAD && !pv)
		f->type = 0; /* a call Extrae has no number for */
	if (f->type)
		event(o, li, t, f->type, f->value);
	restate(o, li, p, t);
}

static void enter(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region)
{
	enter_frame(cv, l, t, region, 0);
	struct ploc *p = ploc(cv, l);
	if (p && cv->regions[region].paradigm == CV_PARADIGM_MPI)
		p->mpi_enter = t;
}

/* A task that depended on others: a communication from each one's end. */
static void task_depends(struct cv *cv, struct cv_loc *l, uint64_t t, const char *list)
{
	struct out *o = cv->out;
	while (*list) {
		char *end;
		uint64_t id = strtoull(list, &end, 10);
		if (end == list)
			break;
		struct pending *e = pmap_slot(&o->tasks, (uint64_t)l->process << 40 ^ id, 0);
		if (e)
			put(o, REC_COMM, e->loc, e->time, loc_index(cv, l),
			    t < e->time ? e->time : t, 2);
		list = *end == ',' ? end + 1 : end;
	}
}

/* How attributes (enum cv_attr_id) show: events of type TY_ATTR + id, valued by the number,
 * or (labelled) by the string's id + 1 with the string as the label; label NULL: none. */
static const struct {
	int labelled;
	const char *label;
} attr_types[CV_ATTR_COUNT] = {
    [CV_ATTR_TASK_ID] = {0, "OpenMP task id"},
    [CV_ATTR_TASK_DEPENDS] = {0, NULL}, /* communications */
    [CV_ATTR_KOKKOS_DEVICE] = {1, "Kokkos execution space instance"},
    [CV_ATTR_KOKKOS_BYTES] = {0, "Kokkos bytes"},
    [CV_ATTR_KOKKOS_LABEL] = {1, "Kokkos View"},
    [CV_ATTR_KOKKOS_SRC] = {1, "Kokkos deep copy source View"},
    [CV_ATTR_KOKKOS_DST] = {1, "Kokkos deep copy destination View"},
    [CV_ATTR_KOKKOS_ADDRESS] = {0, "Kokkos allocation address"},
    [CV_ATTR_GPU_CORRELATION] = {0, "GPU correlation id"},
    [CV_ATTR_GPU_BYTES] = {0, "GPU bytes copied or set"},
    [CV_ATTR_GPU_COPY_KIND] = {1, "GPU copy direction"},
    [CV_ATTR_GPU_DST] = {0, "GPU destination address"},
    [CV_ATTR_GPU_SRC] = {0, "GPU source address"},
    [CV_ATTR_GPU_STREAM] = {0, "GPU stream"},
    [CV_ATTR_GPU_KERNEL] = {1, "GPU kernel launched"},
    [CV_ATTR_GPU_GRID] = {1, "GPU grid (blocks)"},
    [CV_ATTR_GPU_BLOCK] = {1, "GPU block (threads)"},
    [CV_ATTR_GPU_MEMORY] = {1, "GPU memory kind"},
    [CV_ATTR_GPU_RESULT] = {0, "GPU call result (error code)"},
    [CV_ATTR_ALLOCATION_SIZE] = {0, "Bytes allocated"},
    [CV_ATTR_DEALLOCATION_SIZE] = {0, "Bytes freed"},
    [CV_ATTR_ARGUMENT_ADDRESS] = {0, "Address freed"},
    [CV_ATTR_RESULT_ADDRESS] = {0, "Address allocated"},
};

/* Attributes as events of thread li at t (attr_types). */
static void attr_events(struct cv *cv, uint32_t li, uint64_t t, const struct cv_attr *attrs,
			unsigned n)
{
	struct out *o = cv->out;
	for (unsigned i = 0; i < n; i++) {
		enum cv_attr_id id = attrs[i].id;
		uint32_t type = TY_ATTR + id;
		uint64_t v = attrs[i].value;
		if (!attr_types[id].label)
			continue;
		o->attrs_used |= UINT64_C(1) << id;
		if (attr_types[id].labelled) {
			note_label(o, type, (uint32_t)v);
			event(o, li, t, type, v + 1);
		} else {
			/* a result is signed; other values above INT64_MAX show as the maximum */
			event(o, li, t, type,
			      id == CV_ATTR_GPU_RESULT || v <= INT64_MAX ? v : INT64_MAX);
		}
	}
}

static void enter_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	struct out *o = cv->out;
	uint64_t task = 0;
	const char *depends = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (attrs[i].id == CV_ATTR_TASK_ID)
			task = attrs[i].value;
		else if (attrs[i].id == CV_ATTR_TASK_DEPENDS)
			depends = cv->strings[attrs[i].value];
	}
	enter_frame(cv, l, t, region, task);
	struct ploc *p = ploc(cv, l);
	if (!p || !p->depth)
		return;
	uint64_t id = p->stack[p->depth - 1].task;
	if (depends && id) { /* once: a task resumed after a switch enters again */
		struct pending *e =
		    pmap_slot(&o->tasks, (uint64_t)l->process << 40 ^ id ^ 1ull << 63, 1);
		if (e && !e->done) {
			e->done = 1;
			task_depends(cv, l, t, depends);
		}
	}
	attr_events(cv, loc_index(cv, l), t, attrs, n);
}

static void leave(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region, int closed)
{
	(void)closed; /* the converter's marker says it */
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	uint32_t li = loc_index(cv, l);
	if (!p || !p->depth)
		return;
	touch(p, t);
	decorate(cv, l, p, t, 0);
	/* The converter leaves in stack order; the region is the top frame. */
	uint32_t i = p->depth - 1;
	(void)region;
	struct frame f = p->stack[i];
	p->depth = i;
	if (f.type) {
		uint64_t outer = 0;
		for (uint32_t j = i; j-- > 0;)
			if (p->stack[j].type == f.type) {
				outer = p->stack[j].value;
				break;
			}
		event(o, li, t, f.type, outer);
	}
	if (f.par)
		event(o, li, t, TY_OMP_PARALLEL, 0);
	if (f.task) {
		struct pending *e = pmap_slot(&o->tasks, (uint64_t)l->process << 40 ^ f.task, 1);
		if (e) {
			e->loc = li;
			e->time = t;
		}
	}
	restate(o, li, p, t);
}

static void leave_attrs(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t region,
			const struct cv_attr *attrs, unsigned n)
{
	leave(cv, l, t, region, 0);
	attr_events(cv, loc_index(cv, l), t, attrs, n);
}

/* Thread creation: a communication from the creating call to the thread's begin (the
 * runtime records the creation first; either order is taken). */
static void create_half(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, int send)
{
	struct out *o = cv->out;
	uint64_t key = (uint64_t)l->process << 32 | (seq & 0xffffffffu);
	struct pending *e = pmap_slot(&o->creates, key, 1);
	uint32_t li = loc_index(cv, l);
	if (!e || e->done)
		return;
	if (!e->half) {
		e->half = send ? 1 : 2;
		e->loc = li;
		e->time = t;
		return;
	}
	if (e->half == (send ? 1 : 2))
		return; /* the same side twice: damage */
	e->done = 1;
	uint32_t sl = send ? li : e->loc, rl = send ? e->loc : li;
	uint64_t st = send ? t : e->time, rt = send ? e->time : t;
	put(o, REC_COMM, sl, st, rl, rt < st ? st : rt, 1);
}

static void thread_create(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	struct ploc *p = ploc(cv, l);
	if (p)
		touch(p, t);
	create_half(cv, l, t, seq, 1);
}

static void thread_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq, uint32_t tid)
{
	(void)tid;
	struct ploc *p = ploc(cv, l);
	if (p)
		touch(p, t);
	create_half(cv, l, t, seq, 0);
}

static void thread_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	(void)seq;
	struct ploc *p = ploc(cv, l);
	if (p)
		touch(p, t);
}

static void thread_wait(struct cv *cv, struct cv_loc *l, uint64_t t, uint64_t seq)
{
	thread_end(cv, l, t, seq);
}

/* A stream's operation: its region's events and state (the stream idles between them),
 * Extrae's device events, and a communication from the call that asked for it. */
static void gpu_activity(struct cv *cv, struct cv_loc *l, const struct cv_gpu_op *op)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	uint32_t li = loc_index(cv, l);
	if (!p)
		return;
	int fresh = !p->begun, kernel = op->kind == LT_GPU_ACT_KERNEL;
	touch(p, op->start);
	if (fresh)
		p->base = p->cur = ST_IDLE;
	enter_frame(cv, l, op->start, op->region, 0);
	if (kernel) {
		event(o, li, op->start, TY_GPU_OP, GPU_OP_KERNEL);
		event(o, li, op->start, TY_GPU_BLOCKS, op->blocks);
		event(o, li, op->start, TY_GPU_THREADS, op->threads);
	} else {
		event(o, li, op->start, TY_GPU_BYTES, op->bytes);
	}
	for (unsigned i = 0; i < op->nattrs; i++)
		if (op->attrs[i].id == CV_ATTR_GPU_CORRELATION)
			attr_events(cv, li, op->start, &op->attrs[i], 1);
	if (op->host_loc != UINT32_MAX)
		put_comm(o, op->host_loc, op->host_ns, li, op->start, op->bytes, TAG_GPU);
	leave(cv, l, op->end, op->region, 0);
	if (kernel) {
		event(o, li, op->end, TY_GPU_OP, 0);
		event(o, li, op->end, TY_GPU_BLOCKS, 0);
		event(o, li, op->end, TY_GPU_THREADS, 0);
	} else {
		event(o, li, op->end, TY_GPU_BYTES, 0);
	}
}

static void lock(struct cv *cv, struct cv_loc *l, uint64_t t, enum cv_paradigm paradigm,
		 int acquire, uint32_t id, uint32_t order)
{
	(void)paradigm, (void)id, (void)order;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	touch(p, t);
	/* A critical section or lock region waits until the lock is held, then runs. */
	if (acquire && p->depth && p->stack[p->depth - 1].state == ST_BLOCKED) {
		p->stack[p->depth - 1].state = ST_RUNNING;
		restate(cv->out, loc_index(cv, l), p, t);
	}
}

static void thread_fork(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t requested)
{
	(void)requested;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	touch(p, t);
	p->forking++;
	p->fork_pending = 1;
}

static void thread_join(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	touch(p, t);
	if (p->forking)
		p->forking--;
}

static void team_begin(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)team;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	touch(p, t);
	p->base = ST_RUNNING;
	restate(cv->out, loc_index(cv, l), p, t);
}

/* A worker that leaves its team waits, idle, for the next one. */
static void team_end(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t team)
{
	(void)team;
	struct ploc *p = ploc(cv, l);
	if (!p)
		return;
	touch(p, t);
	if (!p->forking)
		p->base = ST_IDLE;
	restate(cv->out, loc_index(cv, l), p, t);
}

static void metric(struct cv *cv, struct cv_loc *l, uint64_t t, uint32_t m, uint64_t raw)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	if (p && !p->ended)
		touch(p, t);
	int64_t v = (int64_t)raw;
	if (cv->metrics[m].is_double) { /* in thousandths: Paraver values are integers */
		double d;
		memcpy(&d, &raw, sizeof(d));
		d *= 1000.0;
		v = d >= 9.2e18	   ? INT64_MAX
		    : d <= -9.2e18 ? INT64_MIN
				   : (int64_t)(d + (d < 0 ? -0.5 : 0.5));
	}
	event(o, loc_index(cv, l), t, TY_METRIC + m, (uint64_t)v);
}

static void marker(struct cv *cv, struct cv_loc *l, uint64_t t, int kind, const char *text)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	if (p && !p->ended)
		touch(p, t);
	uint32_t sid = cv_string(cv, text);
	note_label(o, TY_MARKER + (uint32_t)kind, sid);
	event(o, loc_index(cv, l), t, TY_MARKER + (uint32_t)kind, (uint64_t)sid + 1);
}

static void program_begin(struct cv *cv, struct cv_loc *l, uint64_t t, const struct rd_process *pr)
{
	(void)pr;
	struct ploc *p = ploc(cv, l);
	if (p)
		touch(p, t);
	event(cv->out, loc_index(cv, l), t, TY_APPLICATION, 1);
}

static void program_end(struct cv *cv, struct cv_loc *l, uint64_t t)
{
	struct ploc *p = ploc(cv, l);
	if (p)
		touch(p, t);
	event(cv->out, loc_index(cv, l), t, TY_APPLICATION, 0);
}

/* ---- writing the files ---- */

/* Paraver numbering: task of each process (1-based; 0: a process without threads). */
struct numbering {
	uint32_t *task;
	uint32_t ntasks;
	size_t nthreads;
};

static int number_objects(struct cv *cv, struct numbering *n)
{
	n->task = calloc(cv->nprocs ? cv->nprocs : 1, sizeof(*n->task));
	if (!n->task)
		return -1;
	n->ntasks = 0;
	n->nthreads = 0;
	for (size_t i = 0; i < cv->nprocs; i++)
		if (cv->procs[i].nlocs) {
			n->task[i] = ++n->ntasks;
			n->nthreads += cv->procs[i].nlocs;
		}
	return 0;
}

/* A label on one line: newlines and tabs become spaces. */
static void put_label(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\n' || *s == '\r' || *s == '\t' ? ' ' : *s, f);
}

/* A region's value label: "function [file:line]" where known, as Extrae writes them. */
static void region_label(FILE *f, const struct cv *cv, const struct cv_region *r)
{
	if (r->file != CV_NO_STRING && r->line && r->canonical != CV_NO_STRING) {
		put_label(f, cv->strings[r->canonical]);
		fprintf(f, " [%s:%u]", base_name(cv->strings[r->file]), r->line);
	} else {
		put_label(f, cv->strings[r->name]);
	}
}

static void write_row(struct cv *cv, FILE *f, const struct numbering *n)
{
	fprintf(f, "LEVEL CPU SIZE %u\n", cv->nhosts);
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		fprintf(f, "1.");
		put_label(f, cv->strings[cv->hosts[h]]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL NODE SIZE %u\n", cv->nhosts);
	for (uint32_t h = 0; h < cv->nhosts; h++) {
		put_label(f, cv->strings[cv->hosts[h]]);
		fputc('\n', f);
	}
	fprintf(f, "\nLEVEL APPL SIZE 1\n");
	for (size_t i = 0; i < cv->nprocs; i++)
		if (n->task[i]) {
			put_label(f, cv->strings[cv->procs[i].name]);
			fputc('\n', f);
			break;
		}
	fprintf(f, "\nLEVEL TASK SIZE %u\n", n->ntasks);
	for (size_t i = 0; i < cv->nprocs; i++)
		if (n->task[i]) {
			put_label(f, cv->strings[cv->procs[i].name]);
			fputc('\n', f);
		}
	fprintf(f, "\nLEVEL THREAD SIZE %zu\n", n->nthreads);
	for (size_t i = 0; i < cv->nprocs; i++)
		for (size_t j = 0; j < cv->procs[i].nlocs; j++) {
			const char *name = cv->strings[cv->locs[cv->procs[i].first_loc + j].name];
			put_label(f, *name ? name : "thread");
			fputc('\n', f);
		}
}

static void write_values_of_kind(struct cv *cv, FILE *f, enum kind k)
{
	fprintf(f, "EVENT_TYPE\n0    %u    %s\nVALUES\n0      End\n", kinds[k].type,
		kinds[k].label);
	if (k == K_PTHREAD) {
		for (size_t i = 0; i < sizeof(pthread_values) / sizeof(pthread_values[0]); i++)
			if (pthread_values[i].label)
				fprintf(f, "%-6d %s\n", pthread_values[i].value,
					pthread_values[i].label);
	} else if (k == K_GPU_DEVICE) {
		fprintf(f, "%-6d Kernel\n%-6d Memory copy\n%-6d Memory set\n", GPU_OP_KERNEL,
			GPU_OP_COPY, GPU_OP_SET);
	} else if (k == K_CUDA || k == K_HIP) {
		const char *prefix = k == K_HIP ? "hip" : "cuda";
		for (size_t i = 0; i < sizeof(gpu_values) / sizeof(gpu_values[0]); i++)
			if (gpu_values[i].label)
				fprintf(f, "%-6d %s%s\n", gpu_values[i].value, prefix,
					gpu_values[i].label);
		for (uint32_t r = 0; r < cv->nregions; r++) {
			int v = region_kind(&cv->regions[r]) == k ? gpu_value(cv, r, k) : 0;
			if (v < GPU_VALUE_OTHER)
				continue;
			fprintf(f, "%-6d ", v);
			put_label(f, cv->strings[cv->regions[r].name]);
			fputc('\n', f);
		}
	} else {
		for (uint32_t r = 0; r < cv->nregions; r++) {
			if (region_kind(&cv->regions[r]) != k)
				continue;
			fprintf(f, "%-6u ", r + 1);
			region_label(f, cv, &cv->regions[r]);
			fputc('\n', f);
		}
	}
	fputs("\n\n", f);
}

/* A type valued by strings: its block, when some event used it. */
static void write_labels_of_type(struct cv *cv, FILE *f, uint32_t type, const char *label)
{
	struct out *o = cv->out;
	size_t i = 0;
	while (i < o->nlabels && o->labels[i].type != type)
		i++;
	if (i == o->nlabels)
		return;
	fprintf(f, "EVENT_TYPE\n0    %u    %s\nVALUES\n", type, label);
	for (; i < o->nlabels; i++)
		if (o->labels[i].type == type) {
			fprintf(f, "%-6u ", o->labels[i].sid + 1);
			put_label(f, cv->strings[o->labels[i].sid]);
			fputc('\n', f);
		}
	fputs("\n\n", f);
}

static const char *const marker_labels[CV_MARK_KINDS] = {
    [CV_MARK_USER] = "Annotation marker",
    [CV_MARK_LOST] = "Lost events",
    [CV_MARK_TRUNCATED] = "Truncated trace",
    [CV_MARK_CLOSED] = "Regions closed by the converter",
    [CV_MARK_KOKKOS_EVENT] = "Kokkos profile event",
    [CV_MARK_KOKKOS_DUALVIEW] = "Kokkos DualView",
    [CV_MARK_KOKKOS_LEAK] = "Kokkos memory never freed",
    [CV_MARK_KOKKOS_KEPT] = "Kokkos runtime memory kept past finalize",
    [CV_MARK_KOKKOS_UNFINALIZED] = "Kokkos memory live at an exit without finalize",
    [CV_MARK_GPU_LEAK] = "GPU memory never freed",
};

static void write_pcf(struct cv *cv, FILE *f)
{
	fputs("DEFAULT_OPTIONS\n\nLEVEL               THREAD\nUNITS               NANOSEC\n"
	      "LOOK_BACK           100\nSPEED               1\nFLAG_ICONS          ENABLED\n"
	      "NUM_OF_STATE_COLORS 1000\nYMAX_SCALE          37\n\n\n"
	      "DEFAULT_SEMANTIC\n\nTHREAD_FUNC          State As Is\n\n\nSTATES\n",
	      f);
	size_t ns = sizeof(states) / sizeof(states[0]);
	for (size_t i = 0; i < ns; i++)
		fprintf(f, "%-4d %s\n", states[i].id, states[i].label);
	fputs("\n\nSTATES_COLOR\n", f);
	for (size_t i = 0; i < ns; i++)
		fprintf(f, "%-4d {%u,%u,%u}\n", states[i].id, states[i].rgb[0], states[i].rgb[1],
			states[i].rgb[2]);
	fputs("\n\nEVENT_TYPE\n0    40000001    Application\nVALUES\n0      End\n1      Begin\n\n\n"
	      "EVENT_TYPE\n0    60000001    Parallel (OMP)\nVALUES\n0      close\n"
	      "3      REGION (open)\n\n\n",
	      f);
	int used[K_COUNT] = {0};
	for (uint32_t r = 0; r < cv->nregions; r++)
		used[region_kind(&cv->regions[r])] = 1;
	used[K_GPU_DEVICE] |= used[K_GPU_KERNEL]; /* 63100000 tells kernels too */
	for (int k = 0; k < K_COUNT; k++)
		if (used[k])
			write_values_of_kind(cv, f, (enum kind)k);
	if (used[K_GPU_DEVICE])
		fprintf(f,
			"EVENT_TYPE\n0    %u    CUDA bytes copied or set\n"
			"0    %u    CUDA blocks per grid\n0    %u    CUDA threads per block\n\n\n",
			TY_GPU_BYTES, TY_GPU_BLOCKS, TY_GPU_THREADS);
	for (int k = 0; k < CV_MARK_KINDS; k++)
		write_labels_of_type(cv, f, TY_MARKER + (uint32_t)k, marker_labels[k]);
	struct out *o = cv->out;
	for (int i = 0; i < CV_ATTR_COUNT; i++) {
		uint32_t type = TY_ATTR + (uint32_t)i;
		if (!attr_types[i].label || !(o->attrs_used >> i & 1))
			continue;
		if (attr_types[i].labelled)
			write_labels_of_type(cv, f, type, attr_types[i].label);
		else
			fprintf(f, "EVENT_TYPE\n0    %u    %s\n\n\n", type, attr_types[i].label);
	}
	for (uint32_t d = 1; d <= o->max_caller; d++) {
		char label[64];
		snprintf(label, sizeof(label), "Caller at level %u", d);
		write_labels_of_type(cv, f, TY_CALLER + d, label);
		snprintf(label, sizeof(label), "Caller line at level %u", d);
		write_labels_of_type(cv, f, TY_CALLER_LINE + d, label);
	}
	if (o->npapi_types) {
		fprintf(f, "EVENT_TYPE\n0    %u    Active hardware counter set\nVALUES\n",
			TY_PAPI_SET);
		for (uint32_t s = 0; s < o->npapi_types; s++) {
			fprintf(f, "%-6u Set %u:", s + 1, s + 1);
			for (unsigned i = 0; i < cv->papis[s].n; i++)
				fprintf(f, " %s", cv->strings[cv->papis[s].names[i]]);
			fputc('\n', f);
		}
		fputs("\n\n", f);
	}
	for (uint32_t s = 0; s < o->npapi_types; s++)
		for (unsigned i = 0; i < cv->papis[s].n; i++) {
			int seen = 0; /* a type of an earlier set */
			for (uint32_t s2 = 0; s2 <= s && !seen; s2++)
				for (unsigned j = 0; j < (s2 < s ? cv->papis[s2].n : i); j++)
					seen |= o->papi_types[s2][j] == o->papi_types[s][i];
			if (seen)
				continue;
			fprintf(f, "EVENT_TYPE\n7    %u    ", o->papi_types[s][i]);
			put_label(f, cv->strings[cv->papis[s].names[i]]);
			fputs(" (delta since the previous reading)\n\n\n", f);
		}
	for (uint32_t m = 0; m < cv->nmetrics; m++) {
		fprintf(f, "EVENT_TYPE\n7    %u    ", TY_METRIC + m);
		put_label(f, cv->strings[cv->metrics[m].name]);
		const char *unit = cv->strings[cv->metrics[m].unit];
		if (*unit || cv->metrics[m].is_double)
			fprintf(f, " [%s%s%s]", cv->metrics[m].is_double ? "1/1000 " : "", unit,
				*unit ? "" : "units");
		fputs("\n\n\n", f);
	}
}

/* One sorted run of the scratch file being merged. */
struct cursor {
	uint64_t next, end; /* record indices in the scratch file */
	struct rec *buf;
	size_t n, at;
};

static int cursor_fill(struct out *o, struct cursor *c, size_t cap)
{
	c->at = 0;
	c->n = c->end - c->next < cap ? (size_t)(c->end - c->next) : cap;
	if (!c->n)
		return 0;
	ssize_t got = pread(fileno(o->scratch), c->buf, c->n * sizeof(struct rec),
			    (off_t)(c->next * sizeof(struct rec)));
	if (got != (ssize_t)(c->n * sizeof(struct rec))) {
		fail(o, "reading the scratch file", got < 0 ? errno : EIO);
		c->n = 0;
		return -1;
	}
	c->next += c->n;
	return 0;
}

struct writer {
	FILE *f;
	const struct cv *cv;
	const struct numbering *n;
	uint64_t t0;
	int open_event; /* an event line is open for (ev_time, ev_loc) */
	uint64_t ev_time;
	uint32_t ev_loc;
	uint32_t types[16]; /* the types of the open event record */
	unsigned ntypes;
};

/* Decimal digits of v at p; returns the end.  (fprintf is most of the time otherwise.) */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_i64(char *p, int64_t v)
{
	if (v >= 0)
		return put_u64(p, (uint64_t)v);
	*p++ = '-';
	return put_u64(p, -(uint64_t)v);
}

/* ":" then the object fields of location li: cpu (0, unknown), application, task, thread. */
static char *object(const struct writer *w, char *p, uint32_t li)
{
	const struct cv_loc *l = &w->cv->locs[li];
	const struct cv_process *pr = &w->cv->procs[l->process];
	memcpy(p, ":0:1:", 5);
	p = put_u64(p + 5, w->n->task[l->process]);
	*p++ = ':';
	return put_u64(p, (uint64_t)li - pr->first_loc + 1);
}

static char *field(char *p, uint64_t v)
{
	*p++ = ':';
	return put_u64(p, v);
}

static void write_rec(struct writer *w, const struct rec *r)
{
	char line[256], *p = line;
	/* Events of one time and thread share a record, unless a type would appear twice
	 * (a leave and an enter of the same type): then a second record follows. */
	int join = w->open_event && r->kind == REC_EVENT && r->time == w->ev_time &&
		   r->loc == w->ev_loc && w->ntypes < sizeof(w->types) / sizeof(w->types[0]);
	for (unsigned i = 0; join && i < w->ntypes; i++)
		join = w->types[i] != r->b;
	if (w->open_event && !join) {
		*p++ = '\n';
		w->open_event = 0;
	}
	switch (r->kind) {
	case REC_STATE:
		*p++ = '1';
		p = object(w, p, r->loc);
		p = field(p, r->time - w->t0);
		p = field(p, r->a - w->t0);
		p = field(p, r->b);
		*p++ = '\n';
		break;
	case REC_EVENT:
		if (!w->open_event) {
			*p++ = '2';
			p = object(w, p, r->loc);
			p = field(p, r->time - w->t0);
			w->open_event = 1;
			w->ev_time = r->time;
			w->ev_loc = r->loc;
			w->ntypes = 0;
		}
		w->types[w->ntypes++] = r->b;
		p = field(p, r->b);
		*p++ = ':';
		p = put_i64(p, (int64_t)r->a);
		break;
	case REC_COMM:
		*p++ = '3';
		p = object(w, p, r->loc);
		p = field(p, r->time - w->t0);
		p = field(p, r->time - w->t0);
		p = object(w, p, r->b);
		p = field(p, r->a - w->t0);
		p = field(p, r->a - w->t0);
		p = field(p, r->size);
		p = field(p, r->c);
		*p++ = '\n';
		break;
	}
	fwrite_unlocked(line, 1, (size_t)(p - line), w->f);
}

static int heap_less(const struct cursor *a, const struct cursor *b)
{
	return rec_cmp(&a->buf[a->at], &b->buf[b->at]) < 0;
}

static void heap_down(struct cursor **h, size_t n, size_t i)
{
	for (;;) {
		size_t m = i, l = 2 * i + 1, r = l + 1;
		if (l < n && heap_less(h[l], h[m]))
			m = l;
		if (r < n && heap_less(h[r], h[m]))
			m = r;
		if (m == i)
			return;
		struct cursor *x = h[i];
		h[i] = h[m];
		h[m] = x;
		i = m;
	}
}

/* Merges the sorted runs of the scratch file into the body of the .prv. */
static int write_body(struct out *o, struct writer *w, const uint64_t *run_end)
{
	size_t k = o->nruns;
	if (!k)
		return 0;
	size_t cap = (64u << 20) / sizeof(struct rec) / k;
	cap = cap < 256 ? 256 : cap > READ_RECORDS ? READ_RECORDS : cap;
	struct cursor *c = calloc(k, sizeof(*c));
	struct cursor **h = calloc(k, sizeof(*h));
	int rc = c && h ? 0 : -1;
	size_t nh = 0;
	for (size_t i = 0; rc == 0 && i < k; i++) {
		c[i].next = i ? run_end[i - 1] : 0;
		c[i].end = run_end[i];
		if (!(c[i].buf = malloc(cap * sizeof(struct rec))) || cursor_fill(o, &c[i], cap))
			rc = -1;
		else if (c[i].n)
			h[nh++] = &c[i];
	}
	for (size_t i = nh / 2; rc == 0 && i-- > 0;)
		heap_down(h, nh, i);
	while (rc == 0 && nh) {
		struct cursor *top = h[0];
		write_rec(w, &top->buf[top->at]);
		if (++top->at == top->n && cursor_fill(o, top, cap))
			rc = -1;
		if (!top->n)
			h[0] = h[--nh];
		heap_down(h, nh, 0);
	}
	if (w->open_event)
		fputc('\n', w->f);
	for (size_t i = 0; c && i < k; i++)
		free(c[i].buf);
	free(c);
	free(h);
	if (rc && !o->error[0])
		fail(o, "merging the records", ENOMEM);
	return rc;
}

static FILE *open_output(struct out *o, const char *ext)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s", o->name, ext);
	FILE *f = fopen(path, "w");
	if (!f)
		fail(o, path, errno);
	return f;
}

static int close_output(struct out *o, FILE *f, const char *ext)
{
	if (!f)
		return -1;
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		char path[4096];
		snprintf(path, sizeof(path), "%s%s", o->name, ext);
		fail(o, path, errno ? errno : EIO);
		return -1;
	}
	return 0;
}

/* Closes every thread's life: Not created before its first and after its last event. */
static void close_states(struct cv *cv)
{
	struct out *o = cv->out;
	uint64_t t0 = cv->stats.first_ns, t1 = cv->stats.last_ns;
	for (size_t i = 0; i < o->nlocs && i < cv->nlocs; i++) {
		struct ploc *p = &o->locs[i];
		if (!p->begun) {
			put(o, REC_STATE, (uint32_t)i, t0, ST_NOT_CREATED, t1 > t0 ? t1 : t0 + 1,
			    0);
			continue;
		}
		if (!p->ended) {
			p->depth = 0;
			p->base = ST_NOT_CREATED;
			restate(o, (uint32_t)i, p, p->last);
		}
		if (p->first > t0)
			put(o, REC_STATE, (uint32_t)i, t0, ST_NOT_CREATED, p->first, 0);
		if (t1 > p->since)
			put(o, REC_STATE, (uint32_t)i, p->since, ST_NOT_CREATED, t1, 0);
	}
}

/* ---- MPI messages ---- */

static void add_half(struct out *o, struct msg **a, size_t *n, size_t *cap, struct msg m)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 1024;
		struct msg *b = realloc(*a, c * sizeof(*b));
		if (!b) {
			fail(o, "out of memory", ENOMEM);
			return;
		}
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = m;
}

static void mpi_p2p(struct cv *cv, struct cv_loc *l, uint64_t t, unsigned kind, uint32_t comm,
		    uint32_t peer, uint32_t tag, uint64_t bytes, uint64_t request)
{
	struct out *o = cv->out;
	struct ploc *p = ploc(cv, l);
	int self = cv->procs[l->process].mpi_rank;
	if (!p || self < 0)
		return;
	touch(p, t);
	uint32_t other = cv_world_rank(cv, comm, peer, (uint32_t)self);
	uint64_t key = (uint64_t)l->process << 40 ^ request;
	struct msg m = {cv->comms[comm].id, 0, 0, tag, loc_index(cv, l), 0, t, bytes};
	switch (kind) {
	case LT_MPI_SEND:
	case LT_MPI_ISEND:
		if (other == LT_MPI_NO_RANK)
			break;
		m.from = (uint32_t)self;
		m.to = other;
		m.order = m.time = p->mpi_enter;
		add_half(o, &o->sends, &o->nsends, &o->sends_cap, m);
		if (kind == LT_MPI_ISEND) {
			struct pending *e = pmap_slot(&o->isends, key, 1);
			if (e)
				e->time = o->nsends; /* its index + 1 */
		}
		break;
	case LT_MPI_CANCELLED: {
		/* A cancelled send sent nothing: out of its channel (a receive was never
		 * posted, or was cancelled: its half was never added). */
		struct pending *e = pmap_slot(&o->isends, key, 0);
		if (e && e->time && e->time <= o->nsends)
			o->sends[e->time - 1].comm = UINT64_MAX;
		break;
	}
	case LT_MPI_IRECV_POSTED: {
		struct pending *e = pmap_slot(&o->irecvs, key, 1);
		if (e)
			e->time = t;
		break;
	}
	case LT_MPI_RECV:
	case LT_MPI_IRECV_DONE: {
		if (other == LT_MPI_NO_RANK)
			break;
		struct pending *e =
		    kind == LT_MPI_IRECV_DONE ? pmap_slot(&o->irecvs, key, 0) : NULL;
		m.from = other;
		m.to = (uint32_t)self;
		m.order = e ? e->time : p->mpi_enter;
		add_half(o, &o->recvs, &o->nrecvs, &o->recvs_cap, m);
		break;
	}
	}
}

static int msg_cmp(const void *x, const void *y)
{
	const struct msg *a = x, *b = y;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	if (a->tag != b->tag)
		return a->tag < b->tag ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

static int same_channel(const struct msg *a, const struct msg *b)
{
	return a->comm == b->comm && a->from == b->from && a->to == b->to && a->tag == b->tag;
}

#define CLOCK_PRECISION_NS 1000u

/* The k-th send of a channel (communicator, ranks, tag) is the k-th receive posted on it. */
static void match_messages(struct out *o)
{
	if (o->nsends)
		qsort(o->sends, o->nsends, sizeof(*o->sends), msg_cmp);
	if (o->nrecvs)
		qsort(o->recvs, o->nrecvs, sizeof(*o->recvs), msg_cmp);
	for (size_t i = 0, j = 0; i < o->nsends && j < o->nrecvs;) {
		const struct msg *s = &o->sends[i], *r = &o->recvs[j];
		if (s->comm == UINT64_MAX)
			break; /* cancelled sends sort last */
		if (!same_channel(s, r)) {
			if (msg_cmp(s, r) < 0)
				i++;
			else
				j++;
			continue;
		}
		/* Clocks read on two CPUs agree to about 100 ns (less on bare metal): a receive
		 * that seems to end that little before its send began did not; more stays
		 * visible (a clock that alignment could not fix). */
		uint64_t recv = r->time;
		if (recv < s->time && s->time - recv <= CLOCK_PRECISION_NS)
			recv = s->time;
		put_comm(o, s->loc, s->time, r->loc, recv, s->size, s->tag);
		i++;
		j++;
	}
}

static int finish(struct cv *cv)
{
	struct out *o = cv->out;
	match_messages(o);
	close_states(cv);
	/* The run ends, before the last run is spilled. */
	uint64_t *run_end = NULL;
	spill(o);
	if (fflush(o->scratch) != 0)
		fail(o, "writing the scratch file", errno);
	struct numbering n = {0};
	if (!o->error[0]) {
		run_end = malloc((o->nruns ? o->nruns : 1) * sizeof(*run_end));
		if (!run_end || number_objects(cv, &n))
			fail(o, "out of memory", ENOMEM);
	}
	if (!o->error[0]) {
		/* Each spill appended RUN_RECORDS records but the last. */
		for (size_t i = 0; i < o->nruns; i++)
			run_end[i] =
			    i + 1 < o->nruns ? (uint64_t)(i + 1) * RUN_RECORDS : o->records;
		FILE *f = open_output(o, ".prv");
		if (f) {
			uint64_t t0 = cv->stats.first_ns, end = cv->stats.last_ns - t0;
			time_t real =
			    (time_t)((t0 + (cv->nprocs ? cv->procs[0].real_minus_mono : 0)) /
				     1000000000u);
			struct tm tm;
			localtime_r(&real, &tm);
			fprintf(f, "#Paraver (%02d/%02d/%04d at %02d:%02d):%" PRIu64 "_ns:%u(",
				tm.tm_mday, tm.tm_mon + 1, tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
				end ? end : 1, cv->nhosts);
			for (uint32_t h = 0; h < cv->nhosts; h++)
				fprintf(f, "%s1", h ? "," : "");
			fprintf(f, "):1:%u(", n.ntasks);
			int first = 1;
			for (size_t i = 0; i < cv->nprocs; i++)
				if (n.task[i]) {
					fprintf(f, "%s%zu:%u", first ? "" : ",", cv->procs[i].nlocs,
						cv->procs[i].host + 1);
					first = 0;
				}
			fputs(")\n", f);
			struct writer w = {.f = f, .cv = cv, .n = &n, .t0 = t0};
			write_body(o, &w, run_end);
			close_output(o, f, ".prv");
		}
		if ((f = open_output(o, ".pcf"))) {
			write_pcf(cv, f);
			close_output(o, f, ".pcf");
		}
		if ((f = open_output(o, ".row"))) {
			write_row(cv, f, &n);
			close_output(o, f, ".row");
		}
	}
	free(run_end);
	free(n.task);
	cv->stats.events = o->records; /* Paraver records, before events of one time join */
	if (o->error[0]) {	       /* no half-written trace is left behind */
		static const char *const exts[] = {".prv", ".pcf", ".row"};
		for (int i = 0; i < 3; i++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s%s", o->name, exts[i]);
			unlink(path);
		}
		return -1;
	}
	return 0;
}

int cv_prv_open(struct cv *cv, const char *name, char *err, size_t errlen)
{
	struct out *o = calloc(1, sizeof(*o));
	char path[4096];
	snprintf(path, sizeof(path), "%s.prv.sort-XXXXXX", name);
	int fd = -1;
	if (o && (o->name = strdup(name)) && (o->run = malloc(RUN_RECORDS * sizeof(*o->run))) &&
	    (fd = mkstemp(path)) >= 0 && (o->scratch = fdopen(fd, "w+"))) {
		unlink(path); /* gone with the process, whatever happens */
		cv->out = o;
		return 0;
	}
	snprintf(err, errlen, "%s: %s", fd < 0 && o && o->run ? path : name,
		 fd < 0 && o && o->run ? strerror(errno) : "out of memory");
	if (fd >= 0) {
		unlink(path);
		close(fd);
	}
	if (o) {
		free(o->name);
		free(o->run);
		free(o);
	}
	return -1;
}

const char *cv_prv_error(struct cv *cv)
{
	struct out *o = cv->out;
	return o && o->error[0] ? o->error : NULL;
}

void cv_prv_free(struct cv *cv)
{
	struct out *o = cv->out;
	if (!o)
		return;
	for (size_t i = 0; i < o->nlocs; i++)
		free(o->locs[i].stack);
	free(o->locs);
	free(o->run);
	free(o->regions);
	free(o->creates.slot);
	free(o->tasks.slot);
	free(o->irecvs.slot);
	free(o->isends.slot);
	free(o->sends);
	free(o->recvs);
	free(o->label_set.slot);
	free(o->labels);
	free(o->scl_line);
	free(o->papi_types);
	if (o->scratch)
		fclose(o->scratch);
	free(o->name);
	free(o);
	cv->out = NULL;
}

const struct cv_ops cv_prv_ops = {
    .name = "paraver",
    .location_begin = location_begin,
    .location_end = location_end,
    .enter = enter,
    .leave = leave,
    .thread_create = thread_create,
    .thread_begin = thread_begin,
    .thread_end = thread_end,
    .thread_wait = thread_wait,
    .lock = lock,
    .thread_fork = thread_fork,
    .thread_join = thread_join,
    .team_begin = team_begin,
    .team_end = team_end,
    .enter_attrs = enter_attrs,
    .metric = metric,
    .marker = marker,
    .program_begin = program_begin,
    .program_end = program_end,
    .mpi_p2p = mpi_p2p,
    .leave_attrs = leave_attrs,
    .gpu_activity = gpu_activity,
    .finish = finish,
};
