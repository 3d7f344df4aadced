// SPDX-License-Identifier: BSD-3-Clause
/*
 * paraver_pcf.c - Paraver's numbering (states, event types and their values, as Extrae's
 * merger numbers them) and NAME.pcf, the file that labels them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "paraver.h"

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
    {10, "Immediate Send", {255, 0, 255}},
    {11, "Immediate Receive", {100, 100, 177}},
    {12, "I/O", {172, 174, 41}},
    {13, "Group Communication", {255, 144, 26}},
    {14, "Tracing Disabled", {2, 255, 177}},
    {15, "Others", {192, 224, 0}},
    {16, "Send Receive", {66, 66, 66}},
    {17, "Memory transfer", {255, 0, 96}},
    {24, "Overhead", {139, 121, 177}},
    {30, "Allocating memory", {255, 171, 0}},
    {31, "Freeing memory", {0, 120, 120}},
};

const struct prv_kind_def prv_kinds[K_COUNT] = {
    [K_USER] = {60000019, "User function"},
    [K_THREAD_FN] = {60000020, "Thread function (main or start routine)"},
    [K_OMP_OUTLINED] = {60000018, "Executed OpenMP parallel function"},
    [K_OMP_WORKSHARE] = {60000002, "Worksharing (OMP)"},
    [K_OMP_SYNC] = {60000005, "OpenMP barrier"},
    [K_OMP_JOIN] = {60000016, "OpenMP Worksharing join"},
    [K_OMP_CRITICAL] = {TY_OMP_CRITICAL, "OpenMP unnamed-Lock"},
    [K_OMP_LOCK] = {60000050, "OpenMP construct or runtime call"}, /* as K_OMP_OTHER */
    [K_OMP_TASK] = {60000023, "Executed OpenMP task function"},
    [K_OMP_TASK_CREATE] = {60000024, "Instantiated OpenMP task function"},
    [K_OMP_TASK_WAIT] = {60000022, "OMP taskwait"},
    [K_OMP_TASKGROUP] = {60000027, "Within Taskgroup region"},
    [K_OMP_OTHER] = {60000050, "OpenMP construct or runtime call"},
    [K_KOKKOS_KERNEL] = {65000001, "Kokkos kernel"},
    [K_KOKKOS_REGION] = {65000002, "Kokkos profile region"},
    [K_KOKKOS_FENCE] = {65000003, "Kokkos fence"},
    [K_KOKKOS_SECTION] = {65000004, "Kokkos profile section"},
    [K_KOKKOS_COPY] = {65000005, "Kokkos deep copy"},
    [K_KOKKOS_MEMORY] = {65000006, "Kokkos allocation or deallocation"},
    [K_PROCESS] = {69000001, "Process call (fork, exec, spawn, dlopen)"},
    [K_MPI] = {50000003, "MPI Other"}, /* each call has its class's type (mpi_calls) */
    [K_CUDA] = {63000000, "CUDA call"},
    [K_HIP] = {63500000, "HIP call"},
    [K_GPU_KERNEL] = {63000006, "CUDA kernel"},
    [K_GPU_DEVICE] = {TY_GPU_OP, "CUDA device operation"},
    [K_PTHREAD] = {TY_PTHREAD, "pthread call"},
};

/* Extrae's pthread call values, and two of ours for semaphores. */
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

/* Extrae's encoding of the MPI calls (the one Paraver's configurations select by, which
 * paraver-kernel itself ships): the type of the call's class, its value, and the state
 * Extrae's merger puts the thread in during the call. */
enum { MPI_PTOP, MPI_COLL, MPI_OTHER, MPI_RMA, MPI_CLASSES };
static const struct {
	uint32_t type;
	const char *label;
} mpi_classes[MPI_CLASSES] = {
    [MPI_PTOP] = {50000001, "MPI Point-to-point"},
    [MPI_COLL] = {50000002, "MPI Collective Comm"},
    [MPI_OTHER] = {50000003, "MPI Other"},
    [MPI_RMA] = {50000004, "MPI One-sided"},
};
static const struct {
	const char *name;
	uint8_t class, state;
	uint16_t value;
} mpi_calls[] = {
    {"MPI_Send", MPI_PTOP, ST_BLOCKING_SEND, 1},
    {"MPI_Recv", MPI_PTOP, ST_WAIT_MESSAGE, 2},
    {"MPI_Isend", MPI_PTOP, ST_IMMEDIATE_SEND, 3},
    {"MPI_Irecv", MPI_PTOP, ST_IMMEDIATE_RECV, 4},
    {"MPI_Wait", MPI_PTOP, ST_WAIT_ALL, 5},
    {"MPI_Waitall", MPI_PTOP, ST_WAIT_ALL, 6},
    {"MPI_Bcast", MPI_COLL, ST_GROUP_COMM, 7},
    {"MPI_Barrier", MPI_COLL, ST_GROUP_COMM, 8},
    {"MPI_Reduce", MPI_COLL, ST_GROUP_COMM, 9},
    {"MPI_Allreduce", MPI_COLL, ST_GROUP_COMM, 10},
    {"MPI_Alltoall", MPI_COLL, ST_GROUP_COMM, 11},
    {"MPI_Alltoallv", MPI_COLL, ST_GROUP_COMM, 12},
    {"MPI_Gather", MPI_COLL, ST_GROUP_COMM, 13},
    {"MPI_Gatherv", MPI_COLL, ST_GROUP_COMM, 14},
    {"MPI_Scatter", MPI_COLL, ST_GROUP_COMM, 15},
    {"MPI_Scatterv", MPI_COLL, ST_GROUP_COMM, 16},
    {"MPI_Allgather", MPI_COLL, ST_GROUP_COMM, 17},
    {"MPI_Allgatherv", MPI_COLL, ST_GROUP_COMM, 18},
    {"MPI_Comm_rank", MPI_OTHER, ST_OTHERS, 19},
    {"MPI_Comm_size", MPI_OTHER, ST_OTHERS, 20},
    {"MPI_Comm_create", MPI_OTHER, ST_OTHERS, 21},
    {"MPI_Comm_dup", MPI_OTHER, ST_OTHERS, 22},
    {"MPI_Comm_split", MPI_OTHER, ST_OTHERS, 23},
    {"MPI_Comm_group", MPI_OTHER, ST_OTHERS, 24},
    {"MPI_Comm_free", MPI_OTHER, ST_OTHERS, 25},
    {"MPI_Scan", MPI_COLL, ST_GROUP_COMM, 30},
    {"MPI_Init", MPI_OTHER, ST_OTHERS, 31},
    {"MPI_Init_thread", MPI_OTHER, ST_OTHERS, 31},
    {"MPI_Finalize", MPI_OTHER, ST_OTHERS, 32},
    {"MPI_Bsend", MPI_PTOP, ST_BLOCKING_SEND, 33},
    {"MPI_Ssend", MPI_PTOP, ST_BLOCKING_SEND, 34},
    {"MPI_Rsend", MPI_PTOP, ST_BLOCKING_SEND, 35},
    {"MPI_Ibsend", MPI_PTOP, ST_IMMEDIATE_SEND, 36},
    {"MPI_Issend", MPI_PTOP, ST_IMMEDIATE_SEND, 37},
    {"MPI_Irsend", MPI_PTOP, ST_IMMEDIATE_SEND, 38},
    {"MPI_Test", MPI_OTHER, ST_WAIT_ALL, 39},
    {"MPI_Cancel", MPI_PTOP, ST_OTHERS, 40},
    {"MPI_Sendrecv", MPI_PTOP, ST_SEND_RECV, 41},
    {"MPI_Sendrecv_replace", MPI_PTOP, ST_SEND_RECV, 42},
    {"MPI_Cart_create", MPI_OTHER, ST_OTHERS, 43},
    {"MPI_Waitany", MPI_PTOP, ST_WAIT_ALL, 59},
    {"MPI_Waitsome", MPI_PTOP, ST_WAIT_ALL, 60},
    {"MPI_Probe", MPI_PTOP, ST_TEST_PROBE, 61},
    {"MPI_Iprobe", MPI_PTOP, ST_TEST_PROBE, 62},
    {"MPI_Win_create", MPI_RMA, ST_OTHERS, 63},
    {"MPI_Win_free", MPI_RMA, ST_OTHERS, 64},
    {"MPI_Put", MPI_RMA, ST_MEMORY_TRANSFER, 65},
    {"MPI_Get", MPI_RMA, ST_MEMORY_TRANSFER, 66},
    {"MPI_Win_fence", MPI_RMA, ST_MEMORY_TRANSFER, 68},
    {"MPI_Win_lock", MPI_RMA, ST_OTHERS, 74},
    {"MPI_Win_unlock", MPI_RMA, ST_OTHERS, 75},
    {"MPI_Reduce_scatter", MPI_COLL, ST_GROUP_COMM, 80},
    {"MPI_Group_excl", MPI_OTHER, ST_OTHERS, 85},
    {"MPI_Group_free", MPI_OTHER, ST_OTHERS, 86},
    {"MPI_Group_incl", MPI_OTHER, ST_OTHERS, 87},
    {"MPI_Abort", MPI_OTHER, ST_OTHERS, 100},
    {"MPI_Request_free", MPI_OTHER, ST_OTHERS, 115},
    {"MPI_Testall", MPI_OTHER, ST_WAIT_ALL, 125},
    {"MPI_Testany", MPI_OTHER, ST_WAIT_ALL, 126},
    {"MPI_Testsome", MPI_OTHER, ST_WAIT_ALL, 128},
    {"MPI_Ireduce", MPI_COLL, ST_GROUP_COMM, 154},
    {"MPI_Iallreduce", MPI_COLL, ST_GROUP_COMM, 155},
    {"MPI_Ibarrier", MPI_COLL, ST_GROUP_COMM, 156},
    {"MPI_Ibcast", MPI_COLL, ST_GROUP_COMM, 157},
    {"MPI_Ialltoall", MPI_COLL, ST_GROUP_COMM, 158},
    {"MPI_Iallgather", MPI_COLL, ST_GROUP_COMM, 160},
    {"MPI_Reduce_scatter_block", MPI_COLL, ST_GROUP_COMM, 168},
    {"MPI_Comm_split_type", MPI_OTHER, ST_OTHERS, 194},
    {"MPI_Exscan", MPI_COLL, ST_GROUP_COMM, 214},
};

/* Extrae's CUDA call values (the order of its CUDA call enumeration), by the name after "cuda"
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

#define ANY_ROLE 0xff

/* The OpenMP kinds Extrae values by what they are, not by which: the values and labels of its
 * legacy OpenMP numbering (values 7 and 8 of worksharing are ours). */
static const struct {
	uint8_t kind, role; /* role: the region's, or ANY_ROLE */
	uint8_t value;
	const char *label;
} omp_values[] = {
    {K_OMP_WORKSHARE, CV_ROLE_LOOP, 4, "DO"},
    {K_OMP_WORKSHARE, CV_ROLE_SECTIONS, 5, "SECTIONS"},
    {K_OMP_WORKSHARE, CV_ROLE_SINGLE, 6, "SINGLE"},
    {K_OMP_WORKSHARE, CV_ROLE_MASTER, 7, "MASTER or MASKED"},
    {K_OMP_WORKSHARE, CV_ROLE_WORKSHARE, 8, "WORKSHARE"},
    {K_OMP_SYNC, ANY_ROLE, 1, "Begin"},
    {K_OMP_JOIN, ANY_ROLE, 1, "Join (w wait)"},
    {K_OMP_CRITICAL, ANY_ROLE, 3, "Lock"},
    {K_OMP_CRITICAL, ANY_ROLE, 5, "Unlock"},
    {K_OMP_CRITICAL, ANY_ROLE, OMP_LOCKED, "Locked status"},
    {K_OMP_TASK_WAIT, ANY_ROLE, 1, "Begin"},
    {K_OMP_TASKGROUP, ANY_ROLE, 1, "Begin"},
};

/* Region r's value if its kind k is valued as Extrae's OpenMP (0: by the region's id). */
uint32_t prv_omp_value(const struct cv_region *r, enum kind k)
{
	for (size_t i = 0; i < sizeof(omp_values) / sizeof(omp_values[0]); i++)
		if (omp_values[i].kind == k &&
		    (omp_values[i].role == ANY_ROLE || omp_values[i].role == r->role))
			return omp_values[i].value;
	return 0;
}

static int omp_valued(enum kind k)
{
	for (size_t i = 0; i < sizeof(omp_values) / sizeof(omp_values[0]); i++)
		if (omp_values[i].kind == k)
			return 1;
	return 0;
}

int prv_pthread_value(const char *name)
{
	for (size_t i = 0; i < sizeof(pthread_values) / sizeof(pthread_values[0]); i++)
		if (!strcmp(name, pthread_values[i].prefix))
			return pthread_values[i].value;
	return 0;
}

/* MPI call `name`: its value, and its type and state (an unknown one: MPI Other, value 0). */
int prv_mpi_call(const char *name, uint32_t *type, uint8_t *state)
{
	for (size_t i = 0; i < sizeof(mpi_calls) / sizeof(mpi_calls[0]); i++)
		if (!strcmp(name, mpi_calls[i].name)) {
			*type = mpi_classes[mpi_calls[i].class].type;
			*state = mpi_calls[i].state;
			return mpi_calls[i].value;
		}
	*type = mpi_classes[MPI_OTHER].type;
	*state = ST_OTHERS;
	return 0;
}

/* The MPI types, each with the values of its class as Extrae labels them, and the calls
 * Extrae has no number for under MPI Other. */
static void write_mpi_types(struct cv *cv, FILE *f)
{
	for (int c = 0; c < MPI_CLASSES; c++) {
		fprintf(f, "EVENT_TYPE\n0    %u    %s\nVALUES\n0      End\n", mpi_classes[c].type,
			mpi_classes[c].label);
		int last = 0;
		for (size_t i = 0; i < sizeof(mpi_calls) / sizeof(mpi_calls[0]); i++)
			if (mpi_calls[i].class == c && mpi_calls[i].value != last) {
				last = mpi_calls[i].value;
				fprintf(f, "%-6d %s\n", last, mpi_calls[i].name);
			}
		for (uint32_t r = 0; c == MPI_OTHER && r < cv->nregions; r++) {
			uint32_t type;
			uint8_t state;
			const char *name = cv->strings[cv->regions[r].name];
			if (prv_region_kind(cv, &cv->regions[r]) != K_MPI ||
			    prv_mpi_call(name, &type, &state))
				continue;
			fprintf(f, "%-6u ", MPI_VALUE_OTHER + r);
			prv_put_label(f, name);
			fputc('\n', f);
		}
		fputs("\n\n", f);
	}
}

/* The value of GPU region r of kind k (K_CUDA, K_HIP, K_GPU_DEVICE): Extrae's number. */
int prv_gpu_value(const struct cv *cv, uint32_t r, enum kind k)
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

const struct prv_attr_def prv_attr_types[CV_ATTR_COUNT] = {
    [CV_ATTR_TASK_ID] = {0, "Task Identifier", 60000028},
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

static void write_values_of_kind(struct cv *cv, FILE *f, enum kind k)
{
	fprintf(f, "EVENT_TYPE\n0    %u    %s\nVALUES\n0      %s\n", prv_kinds[k].type,
		prv_kinds[k].label, k == K_OMP_CRITICAL ? "Unlocked status" : "End");
	if (omp_valued(k)) {
		for (size_t i = 0; i < sizeof(omp_values) / sizeof(omp_values[0]); i++)
			if (omp_values[i].kind == k)
				fprintf(f, "%-6d %s\n", omp_values[i].value, omp_values[i].label);
	} else if (k == K_PTHREAD) {
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
			int v =
			    prv_region_kind(cv, &cv->regions[r]) == k ? prv_gpu_value(cv, r, k) : 0;
			if (v < GPU_VALUE_OTHER)
				continue;
			fprintf(f, "%-6d ", v);
			prv_put_label(f, cv->strings[cv->regions[r].name]);
			fputc('\n', f);
		}
	} else {
		for (uint32_t r = 0; r < cv->nregions; r++) {
			enum kind rk = prv_region_kind(cv, &cv->regions[r]);
			if (rk != k && !(k == K_OMP_OTHER && rk == K_OMP_LOCK))
				continue;
			fprintf(f, "%-6u ", r + 1);
			prv_region_label(f, cv, &cv->regions[r]);
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
			prv_put_label(f, cv->strings[o->labels[i].sid]);
			fputc('\n', f);
		}
	fputs("\n\n", f);
}

void prv_write_pcf(struct cv *cv, FILE *f)
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
	      "EVENT_TYPE\n0    40000003    Flushing Traces\nVALUES\n0      End\n1      Begin\n\n\n"
	      "EVENT_TYPE\n0    40000033    Executing CPU\n\n\n"
	      "EVENT_TYPE\n0    40000036    Process IDentifier\n\n\n"
	      "EVENT_TYPE\n0    60000001    Parallel (OMP)\nVALUES\n0      close\n"
	      "3      REGION (open)\n\n\n",
	      f);
	int used[K_COUNT] = {0};
	for (uint32_t r = 0; r < cv->nregions; r++)
		used[prv_region_kind(cv, &cv->regions[r])] = 1;
	used[K_GPU_DEVICE] |= used[K_GPU_KERNEL]; /* 63100000 tells kernels too */
	used[K_OMP_OTHER] |= used[K_OMP_LOCK];	  /* one block: they share a type */
	for (int k = 0; k < K_COUNT; k++)
		if (used[k] && k != K_MPI && k != K_OMP_LOCK)
			write_values_of_kind(cv, f, (enum kind)k);
	if (used[K_MPI])
		write_mpi_types(cv, f);
	if (cv->out && ((struct out *)cv->out)->mpi_colls)
		fprintf(f,
			"EVENT_TYPE\n1    %u    Send Size in MPI Global OP\n"
			"1    %u    Recv Size in MPI Global OP\n1    %u    Root in MPI Global OP\n"
			"1    %u    Communicator in MPI Global OP\n\n\n",
			TY_MPI_SENT, TY_MPI_RECEIVED, TY_MPI_ROOT, TY_MPI_COMM);
	if (used[K_GPU_DEVICE])
		fprintf(f,
			"EVENT_TYPE\n0    %u    CUDA bytes copied or set\n"
			"0    %u    CUDA blocks per grid\n0    %u    CUDA threads per block\n\n\n",
			TY_GPU_BYTES, TY_GPU_BLOCKS, TY_GPU_THREADS);
	for (int k = 0; k < CV_MARK_KINDS; k++)
		write_labels_of_type(cv, f, TY_MARKER + (uint32_t)k,
				     k == CV_MARK_USER ? "Annotation marker" : cv_mark_category(k));
	struct out *o = cv->out;
	for (int i = 0; i < CV_ATTR_COUNT; i++) {
		uint32_t type =
		    prv_attr_types[i].type ? prv_attr_types[i].type : TY_ATTR + (uint32_t)i;
		if (!prv_attr_types[i].label || !(o->attrs_used >> i & 1))
			continue;
		if (prv_attr_types[i].labelled)
			write_labels_of_type(cv, f, type, prv_attr_types[i].label);
		else
			fprintf(f, "EVENT_TYPE\n0    %u    %s\n\n\n", type,
				prv_attr_types[i].label);
	}
	for (uint32_t d = 0; d < o->samples; d++) { /* Extrae's names of its sample types */
		char label[64];
		if (d)
			snprintf(label, sizeof(label), "Sampled functions (depth %u)", d);
		else
			snprintf(label, sizeof(label), "Sampled functions");
		write_labels_of_type(cv, f, TY_SAMPLE + d, label);
		snprintf(label, sizeof(label), "Sampled line functions (depth %u)", d);
		write_labels_of_type(cv, f, TY_SAMPLE_LINE + d, label);
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
			prv_put_label(f, cv->strings[cv->papis[s].names[i]]);
			fputs(" (delta since the previous reading)\n\n\n", f);
		}
	for (uint32_t m = 0; m < cv->nmetrics; m++) {
		if (m + 1 == o->cpu_metric)
			continue; /* Executing CPU (40000033) instead */
		fprintf(f, "EVENT_TYPE\n7    %u    ", TY_METRIC + m);
		prv_put_label(f, cv->strings[cv->metrics[m].name]);
		const char *unit = cv->strings[cv->metrics[m].unit];
		if (*unit || cv->metrics[m].is_double)
			fprintf(f, " [%s%s%s]", cv->metrics[m].is_double ? "1/1000 " : "", unit,
				*unit ? "" : "units");
		fputs("\n\n\n", f);
	}
}
