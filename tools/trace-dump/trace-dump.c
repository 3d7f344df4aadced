// SPDX-License-Identifier: BSD-3-Clause
/*
 * trace-dump - prints the records of a libtrace trace as text, one per line:
 *
 *   <process> <thread> <time_ns> <RECORD> <fields...>
 *
 * <process> is the process directory name (<host>.<pid>), <thread> the process-local
 * thread index, <time_ns> nanoseconds since the earliest start of any process of the trace.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"

static const char usage[] =
    "usage: trace-dump [--meta] [--stats] [--sampler] TRACE_DIR\n"
    "\n"
    "Prints every record of the program's threads in a libtrace trace directory (or in\n"
    "one process directory <host>.<pid> inside it) as one line of text:\n"
    "  <process> <thread> <time_ns> <RECORD> <fields...>\n"
    "\n"
    "  -m, --meta     print each process's meta data and strings first (lines starting\n"
    "                 with '#')\n"
    "  -S, --stats    instead of the records, one line per thread:\n"
    "                 <process> <thread> records=N lost=N <RECORD>=N...\n"
    "  -s, --sampler  the sampler thread's records too, after the program's threads:\n"
    "                 its metrics (METRIC) and the CPUs threads moved to (CPU)\n"
    "  -h, --help     this text\n"
    "      --version  the version of libtrace, then exit\n"
    "\n"
    "Exit status: 0 the trace was read whole; 1 it was damaged, and every valid record\n"
    "was printed (the problems are on stderr, with file and offset); 2 nothing could be\n"
    "read (bad arguments, not a trace directory, unknown format version).\n";

static void warn_stderr(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "trace-dump: %s\n", msg);
}

struct dump {
	uint64_t base_ns;
	FILE *out;
	uint64_t counts[LT_REC_TYPE_MAX + 1]; /* --stats: records of the current thread by type */
	uint64_t lost;
	uint64_t callsite; /* the call site of the record being printed (0: none) */
};

static int count_record(void *ctx, const struct rd_process *p, const struct rd_thread *th,
			const struct lt_rec *r)
{
	struct dump *d = ctx;
	(void)p;
	(void)th;
	d->counts[r->type < LT_REC_TYPE_MAX ? r->type : LT_REC_TYPE_MAX]++;
	if (r->type == LT_REC_LOST && r->words >= 3)
		d->lost += ((const uint64_t *)(r + 1))[0];
	return 0;
}

/* One line per thread: its record count by type, and the events lost. */
static void print_stats(struct dump *d, struct rd_process *p, const struct rd_thread *th)
{
	memset(d->counts, 0, sizeof(d->counts));
	d->lost = 0;
	rd_thread_records(p, th, count_record, d, warn_stderr, NULL);
	uint64_t total = 0;
	for (unsigned i = 0; i <= LT_REC_TYPE_MAX; i++)
		if (i != LT_REC_LOST)
			total += d->counts[i];
	fprintf(d->out, "%s %u records=%llu lost=%llu", p->name, th->index,
		(unsigned long long)total, (unsigned long long)d->lost);
	for (unsigned i = 1; i < LT_REC_TYPE_MAX; i++)
		if (d->counts[i] && i != LT_REC_LOST)
			fprintf(d->out, " %s=%llu", rd_rec_name(i),
				(unsigned long long)d->counts[i]);
	fputc('\n', d->out);
}

static void print_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void print_id(FILE *out, const struct rd_process *p, uint32_t id)
{
	const char *s = rd_string(p, id);
	if (s)
		print_string(out, s);
	else
		fprintf(out, "<undefined string %u>", id);
}

/* " value=V" of a COUNTER or METRIC (kind: enum lt_value_kind). */
static void print_value(FILE *out, unsigned kind, uint64_t raw)
{
	if (kind == LT_VALUE_DOUBLE) {
		double v;
		memcpy(&v, &raw, sizeof(v));
		fprintf(out, " value=%.17g", v);
	} else {
		fprintf(out, " value=%lld", (long long)raw);
	}
}

static const char *lost_cause_name(unsigned cause)
{
	switch (cause) {
	case LT_LOST_BUFFER:
		return "buffer";
	case LT_LOST_IO:
		return "io";
	case LT_LOST_NORING:
		return "noring";
	case LT_LOST_UNSEEN:
		return "unseen";
	}
	return "unknown";
}

/* Grid and block of a launch (LAUNCH's p[1..3], ACTIVITY's p[5..7]): " grid=XxYxZ block=XxYxZ". */
static void print_dims(FILE *out, const uint64_t *w)
{
	fprintf(out, " grid=%ux%ux%u block=%ux%ux%u", (unsigned)w[0], (unsigned)(w[0] >> 32),
		(unsigned)w[1], (unsigned)(w[1] >> 32), (unsigned)w[2], (unsigned)(w[2] >> 32));
}

/* GPU_ENTER: source, operation, function, correlation id, then the operation's words (a
 * word the record leaves out is 0, format.h). */
static void print_gpu_enter(struct dump *d, const struct rd_process *p, const struct lt_rec *r,
			    const uint64_t *pl, unsigned npl)
{
	uint64_t w[7] = {0};
	unsigned op = LT_GPU_OP(r->sub);
	memcpy(w, pl, (npl < 7 ? npl : 7) * sizeof(*w));
	fprintf(d->out, " %s %s ", rd_gpu_api_name(LT_GPU_API(r->sub)), rd_gpu_op_name(op));
	print_id(d->out, p, r->arg);
	fprintf(d->out, " corr=%llu", (unsigned long long)w[LT_W_GPU_CORRELATION]);
	switch (op) {
	case LT_GPU_OP_ALLOC:
		fprintf(d->out, " bytes=%llu mem=\"%s\"",
			(unsigned long long)w[LT_W_GPU_ALLOC_BYTES],
			rd_gpu_mem_name((unsigned)w[LT_W_GPU_ALLOC_MEM]));
		break;
	case LT_GPU_OP_FREE:
		fprintf(d->out, " ptr=0x%llx mem=\"%s\"", (unsigned long long)w[LT_W_GPU_FREE_ADDR],
			rd_gpu_mem_name((unsigned)w[LT_W_GPU_FREE_MEM]));
		break;
	case LT_GPU_OP_COPY:
		fprintf(d->out, " bytes=%llu dst=0x%llx src=0x%llx kind=%s stream=0x%llx",
			(unsigned long long)w[LT_W_GPU_COPY_BYTES],
			(unsigned long long)w[LT_W_GPU_COPY_DST],
			(unsigned long long)w[LT_W_GPU_COPY_SRC],
			rd_gpu_copy_name((unsigned)w[LT_W_GPU_COPY_KIND]),
			(unsigned long long)w[LT_W_GPU_COPY_STREAM]);
		break;
	case LT_GPU_OP_SET:
		fprintf(d->out, " bytes=%llu dst=0x%llx value=%llu stream=0x%llx",
			(unsigned long long)w[LT_W_GPU_SET_BYTES],
			(unsigned long long)w[LT_W_GPU_SET_DST],
			(unsigned long long)w[LT_W_GPU_SET_VALUE],
			(unsigned long long)w[LT_W_GPU_SET_STREAM]);
		break;
	case LT_GPU_OP_LAUNCH:
		print_dims(d->out, &w[LT_W_GPU_LAUNCH_DIMS]);
		fprintf(d->out, " shared=%llu stream=0x%llx kernel=",
			(unsigned long long)w[LT_W_GPU_LAUNCH_SHARED],
			(unsigned long long)w[LT_W_GPU_LAUNCH_STREAM]);
		if (w[LT_W_GPU_LAUNCH_KERNEL])
			print_id(d->out, p, (uint32_t)w[LT_W_GPU_LAUNCH_KERNEL]);
		else
			fputs("?", d->out);
		break;
	case LT_GPU_OP_SYNC:
		fprintf(d->out, " on=0x%llx", (unsigned long long)w[LT_W_GPU_SYNC_OBJ]);
		break;
	default:
		fprintf(d->out, " obj=0x%llx obj2=0x%llx", (unsigned long long)w[LT_W_GPU_CALL_OBJ],
			(unsigned long long)w[LT_W_GPU_CALL_OBJ2]);
	}
}

/* GPU_ACTIVITY: what the device did, where and when (start and end on the dump's time base,
 * as the records' times). */
static void print_gpu_activity(struct dump *d, const struct rd_process *p, const struct lt_rec *r,
			       const uint64_t *pl, unsigned npl)
{
	uint64_t w[8] = {0};
	memcpy(w, pl, (npl < 8 ? npl : 8) * sizeof(*w));
	fprintf(d->out, " %s", rd_gpu_act_name(r->sub));
	if (r->sub == LT_GPU_ACT_KERNEL) {
		fputc(' ', d->out);
		print_id(d->out, p, r->arg);
	} else if (r->sub == LT_GPU_ACT_COPY) {
		fprintf(d->out, " %s", rd_gpu_copy_name(r->arg));
	}
	fprintf(d->out,
		" device=%u context=%u stream=%llu corr=%llu start=%lld end=%lld duration=%lld",
		(unsigned)(w[LT_W_GPU_ACT_CONTEXT] >> 32), (unsigned)w[LT_W_GPU_ACT_CONTEXT],
		(unsigned long long)w[LT_W_GPU_ACT_STREAM],
		(unsigned long long)w[LT_W_GPU_ACT_CORRELATION],
		(long long)(w[LT_W_GPU_ACT_START] - d->base_ns),
		(long long)(w[LT_W_GPU_ACT_END] - d->base_ns),
		(long long)(w[LT_W_GPU_ACT_END] - w[LT_W_GPU_ACT_START]));
	if (r->sub == LT_GPU_ACT_KERNEL)
		print_dims(d->out, &w[LT_W_GPU_ACT_BYTES]);
	else if (r->sub != LT_GPU_ACT_SYNC)
		fprintf(d->out, " bytes=%llu", (unsigned long long)w[LT_W_GPU_ACT_BYTES]);
}

static int print_record(void *ctx, const struct rd_process *p, const struct rd_thread *th,
			const struct lt_rec *r)
{
	struct dump *d = ctx;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned npl = r->words - 2u;
	uint64_t ns = r->type == LT_REC_LOST && r->ts == 0 ? 0 : rd_ticks_to_ns(p, r->ts);
	fprintf(d->out, "%s %u %llu %s", p->name, th->index,
		(unsigned long long)(ns > d->base_ns ? ns - d->base_ns : 0), rd_rec_name(r->type));
	switch (r->type) {
	case LT_REC_THREAD_BEGIN:
		fprintf(d->out, " thread=%u", r->arg);
		if (npl >= 2)
			fprintf(d->out, " start=0x%llx parent=%d tid=%u",
				(unsigned long long)pl[LT_W_THREAD_BEGIN_START],
				(int)(uint32_t)(pl[LT_W_THREAD_BEGIN_PARENT] >> 32),
				(unsigned)(pl[LT_W_THREAD_BEGIN_PARENT] & 0xffffffffu));
		break;
	case LT_REC_THREAD_END:
	case LT_REC_THREAD_CREATE:
	case LT_REC_THREAD_WAIT:
		fprintf(d->out, " thread=%u", r->arg);
		break;
	case LT_REC_THREAD_NAME:
		fprintf(d->out, " thread=%llu name=",
			npl ? (unsigned long long)pl[LT_W_THREAD_NAME_THREAD] : 0ull);
		print_id(d->out, p, r->arg);
		break;
	case LT_REC_CALL_ENTER:
	case LT_REC_CALL:
		fprintf(d->out, " %s", rd_fn_name(r->sub));
		if (npl >= 1) {
			switch (rd_fn_object(r->sub)) {
			case LT_OBJ_THREAD:
				fprintf(d->out, " thread=%d", (int)(uint32_t)pl[LT_W_CALL_OBJ]);
				break;
			case LT_OBJ_STRING:
				fputs(" path=", d->out);
				print_id(d->out, p, (uint32_t)pl[LT_W_CALL_OBJ]);
				break;
			default:
				fprintf(d->out, " obj=0x%llx",
					(unsigned long long)pl[LT_W_CALL_OBJ]);
			}
		}
		if (npl >= 2)
			fprintf(d->out, " obj2=0x%llx", (unsigned long long)pl[LT_W_CALL_OBJ2]);
		if (r->type == LT_REC_CALL)
			fprintf(d->out, " ret=%d", (int32_t)r->arg);
		break;
	case LT_REC_CALL_LEAVE:
		fprintf(d->out, " %s ret=%d", rd_fn_name(r->sub), (int32_t)r->arg);
		break;
	case LT_REC_REGION_ENTER:
	case LT_REC_REGION_LEAVE:
	case LT_REC_MARKER:
		fputc(' ', d->out);
		print_id(d->out, p, r->arg);
		break;
	case LT_REC_COUNTER:
		fputc(' ', d->out);
		print_id(d->out, p, r->arg);
		if (npl >= 1)
			print_value(d->out, r->sub, pl[LT_W_COUNTER_VALUE]);
		break;
	case LT_REC_METRIC: {
		const char *name = NULL;
		for (size_t i = 0; i < p->nmetrics && !name; i++)
			if (p->metrics[i].id == r->arg)
				name = p->metrics[i].name;
		fputc(' ', d->out);
		if (name)
			print_string(d->out, name);
		else
			fprintf(d->out, "<undefined metric %u>", r->arg);
		if (npl >= 1)
			print_value(d->out, r->sub, pl[0]);
		break;
	}
	case LT_REC_CPU:
		fprintf(d->out, " cpu=%u", r->arg);
		if (r->sub != 0xffff)
			fprintf(d->out, " node=%u", r->sub);
		if (npl >= 1)
			fprintf(d->out, " thread=%llu", (unsigned long long)pl[0]);
		break;
	case LT_REC_STACK:
		/* the CPU time it stands for, whether the unwinding stopped early, the code
		 * addresses, innermost first */
		fprintf(d->out, " ns=%u early=%u frames=%u", r->arg, (unsigned)r->sub, npl);
		for (unsigned i = 0; i < npl; i++)
			fprintf(d->out, " 0x%llx", (unsigned long long)pl[i]);
		break;
	case LT_REC_LOST:
		fprintf(d->out, " cause=%s count=%llu", lost_cause_name(r->sub),
			npl ? (unsigned long long)pl[LT_W_LOST_COUNT] : 0ull);
		break;
	case LT_REC_KOKKOS_BEGIN:
	case LT_REC_KOKKOS_END:
		fprintf(d->out, " \"%s\"", rd_kokkos_name(r->sub));
		if (r->type == LT_REC_KOKKOS_BEGIN && r->arg) {
			fputc(' ', d->out);
			print_id(d->out, p, r->arg);
		}
		if (r->type == LT_REC_KOKKOS_END)
			fprintf(d->out, " id=%u", r->arg);
		else if (npl >= 1)
			fprintf(d->out, " id=%u device=0x%08x", (unsigned)pl[LT_W_KOKKOS_BEGIN_ID],
				(unsigned)(pl[LT_W_KOKKOS_BEGIN_ID] >> 32));
		break;
	case LT_REC_KOKKOS_COPY:
		if (npl >= 5) {
			fprintf(d->out,
				" bytes=%llu dst=", (unsigned long long)pl[LT_W_KOKKOS_COPY_BYTES]);
			print_id(d->out, p, (uint32_t)(pl[LT_W_KOKKOS_COPY_SPACES] >> 32));
			fputc(':', d->out);
			print_id(d->out, p, (uint32_t)(pl[LT_W_KOKKOS_COPY_LABELS] >> 32));
			fprintf(d->out,
				":0x%llx src=", (unsigned long long)pl[LT_W_KOKKOS_COPY_DST]);
			print_id(d->out, p, (uint32_t)pl[LT_W_KOKKOS_COPY_SPACES]);
			fputc(':', d->out);
			print_id(d->out, p, (uint32_t)pl[LT_W_KOKKOS_COPY_LABELS]);
			fprintf(d->out, ":0x%llx", (unsigned long long)pl[LT_W_KOKKOS_COPY_SRC]);
		}
		break;
	case LT_REC_KOKKOS_ALLOC:
		fputs(r->sub ? " free " : " alloc ", d->out);
		print_id(d->out, p, r->arg);
		if (npl >= 3) {
			fprintf(d->out, " ptr=0x%llx bytes=%llu space=",
				(unsigned long long)pl[LT_W_KOKKOS_ALLOC_ADDR],
				(unsigned long long)pl[LT_W_KOKKOS_ALLOC_BYTES]);
			print_id(d->out, p, (uint32_t)pl[LT_W_KOKKOS_ALLOC_SPACE]);
		}
		break;
	case LT_REC_KOKKOS_INFO:
		fprintf(d->out, " kind=%u", r->sub);
		if (r->arg) {
			fputc(' ', d->out);
			print_id(d->out, p, r->arg);
		}
		for (unsigned i = 0; i < npl; i++)
			fprintf(d->out, " p%u=0x%llx", i, (unsigned long long)pl[i]);
		break;
	case LT_REC_CALLSITE: /* the outer frames of the next record's call site */
		for (unsigned i = 0; i < npl; i++)
			fprintf(d->out, " %s0x%llx", i ? "" : "frames=", (unsigned long long)pl[i]);
		break;
	case LT_REC_COUNTERS: /* PAPI values of the next ENTER or LEAVE */
		for (unsigned i = 0, k = 0; i < 16 && k < npl; i++)
			if (r->sub & (1u << i)) {
				const char *name = i < p->npapi ? p->papi[i] : NULL;
				fprintf(d->out, " %s=%llu", name ? name : "?",
					(unsigned long long)pl[k++]);
			}
		break;
	case LT_REC_MPI_ENTER:
		fputc(' ', d->out);
		print_id(d->out, p, r->arg);
		break;
	case LT_REC_MPI_LEAVE:
		fprintf(d->out, " rc=%d", (int)r->arg);
		break;
	case LT_REC_MPI_P2P: {
		static const char *const kinds[] = {"send",	  "recv",	  "isend",
						    "isend_done", "irecv_posted", "irecv_done",
						    "cancelled"};
		fprintf(d->out, " %s peer=%d", r->sub < 7 ? kinds[r->sub] : "?", (int)r->arg);
		if (npl >= 4)
			fprintf(d->out, " comm=0x%llx tag=%lld bytes=%llu request=%llu",
				(unsigned long long)pl[LT_W_MPI_COMM_ID],
				(long long)pl[LT_W_MPI_P2P_TAG],
				(unsigned long long)pl[LT_W_MPI_P2P_BYTES],
				(unsigned long long)pl[LT_W_MPI_P2P_REQUEST]);
		break;
	}
	case LT_REC_MPI_COLL:
		fprintf(d->out, " op=%u root=%d", r->sub, (int)r->arg);
		if (npl >= 3)
			fprintf(d->out, " comm=0x%llx sent=%llu received=%llu",
				(unsigned long long)pl[LT_W_MPI_COMM_ID],
				(unsigned long long)pl[LT_W_MPI_COLL_SENT],
				(unsigned long long)pl[LT_W_MPI_COLL_RECEIVED]);
		break;
	case LT_REC_MPI_COMM:
		fprintf(d->out, " size=%u first=%u", r->arg, r->sub);
		if (npl >= 1)
			fprintf(d->out,
				" comm=0x%llx ranks=", (unsigned long long)pl[LT_W_MPI_COMM_ID]);
		for (unsigned i = LT_W_MPI_COMM_MEMBERS; i < npl; i++)
			fprintf(d->out, "%s%u,%u", i > LT_W_MPI_COMM_MEMBERS ? "," : "",
				(unsigned)pl[i], (unsigned)(pl[i] >> 32));
		break;
	case LT_REC_GPU_ENTER:
		print_gpu_enter(d, p, r, pl, npl);
		break;
	case LT_REC_GPU_LEAVE:
		fprintf(d->out, " %s %s rc=%d", rd_gpu_api_name(LT_GPU_API(r->sub)),
			rd_gpu_op_name(LT_GPU_OP(r->sub)), (int32_t)r->arg);
		if (npl >= 1)
			fprintf(d->out, " made=0x%llx",
				(unsigned long long)pl[LT_W_GPU_LEAVE_MADE]);
		break;
	case LT_REC_GPU_ACTIVITY:
		print_gpu_activity(d, p, r, pl, npl);
		break;
	default:
		if (r->type >= LT_REC_OMP_FORK && r->type <= LT_REC_OMP_CHUNK) {
			if (r->type != LT_REC_OMP_TASK_BEGIN && r->type != LT_REC_OMP_TASK_END &&
			    r->type != LT_REC_OMP_TASK_DEP)
				fprintf(d->out, " \"%s\"", rd_omp_name(r->sub));
			fprintf(d->out, " arg=%u", r->arg);
			for (unsigned i = 0; i < npl; i++)
				fprintf(d->out, " p%u=0x%llx", i, (unsigned long long)pl[i]);
		}
	}
	if (d->callsite)
		fprintf(d->out, " at=0x%llx", (unsigned long long)d->callsite);
	fputc('\n', d->out);
	return 0;
}

/* Prints the records of a thread in order, each with its call site. */
static void print_thread(struct dump *d, struct rd_process *p, const struct rd_thread *th)
{
	struct rd_cursor c;
	rd_cursor_init(&c, p, th, warn_stderr, NULL);
	const struct lt_rec *r;
	while ((r = rd_cursor_next(&c))) {
		d->callsite = c.callsite;
		print_record(d, p, th, r);
	}
	d->callsite = 0;
	rd_cursor_fini(&c);
}

static void print_meta(FILE *out, const struct rd_process *p)
{
	fprintf(out, "# process %s pid=%d ppid=%d host=%s exe=%s clock=%s threads=%zu ended=%d\n",
		p->name, p->pid, p->ppid, p->host, p->exe, p->clock_tsc ? "tsc" : "monotonic",
		p->nthreads, p->ended);
	/* How the events file stores the chunks (raw or packed), and what writing cost. */
	uint64_t packed = 0, raw_bytes = 0, stored = 0;
	for (size_t i = 0; i < p->nchunks; i++) {
		const struct rd_chunk *ch = &p->chunks[i];
		raw_bytes += ch->used;
		stored += ch->packed ? ch->packed : ch->used;
		packed += ch->packed != 0;
	}
	fprintf(out, "# %s format=%d.%d chunks=%zu packed=%llu record_bytes=%llu stored_bytes=%llu",
		p->name, p->major, p->minor, p->nchunks, (unsigned long long)packed,
		(unsigned long long)raw_bytes, (unsigned long long)stored);
	if (p->writer_cpu_ns >= 0)
		fprintf(out, " writer_cpu_ns=%lld", (long long)p->writer_cpu_ns);
	fputc('\n', out);
	if (p->parent_pid)
		fprintf(out, "# %s parent=%d parent_thread=%u\n", p->name, p->parent_pid,
			p->parent_thread);
	for (size_t i = 0; i < p->nargs; i++)
		fprintf(out, "# %s arg[%zu]=%s\n", p->name, i, p->args[i]);
	for (uint32_t i = 0; i < p->nstrings; i++) {
		if (!p->strings[i])
			continue;
		fprintf(out, "# %s string[%u]=", p->name, i);
		print_string(out, p->strings[i]);
		fputc('\n', out);
	}
}

int main(int argc, char **argv)
{
	/* Output past a file size limit (ulimit -f): a write error said, not SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	static const struct option opts[] = {
	    {"meta", no_argument, NULL, 'm'},
	    {"stats", no_argument, NULL, 'S'},
	    {"sampler", no_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'}, /* long only: V is not in the short options */
	    {NULL, 0, NULL, 0},
	};
	static struct dump d;
	d.out = stdout;
	int meta = 0, stats = 0, sampler = 0, c;
	while ((c = getopt_long(argc, argv, "mSsh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			meta = 1;
			break;
		case 'S':
			stats = 1;
			break;
		case 's':
			sampler = 1;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case 'V':
			printf("trace-dump (libtrace) %s\n", LIBTRACE_VERSION);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	const char *path = argv[optind];
	char err[PATH_MAX + 256];
	char **dirs = NULL;
	int n;
	char meta_path[PATH_MAX + 16];
	struct stat st;
	snprintf(meta_path, sizeof(meta_path), "%s/%s", path, LT_META_FILE);
	if (stat(meta_path, &st) == 0) {
		dirs = malloc(sizeof(*dirs));
		dirs[0] = strdup(path);
		n = 1;
	} else {
		n = rd_trace_list(path, &dirs, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "trace-dump: %s\n", err);
			return 2;
		}
	}
	struct rd_process *procs = calloc((size_t)n, sizeof(*procs));
	int opened = 0, damaged = 0;
	for (int i = 0; i < n; i++) {
		if (rd_process_open(&procs[i], dirs[i], warn_stderr, NULL, err, sizeof(err))) {
			fprintf(stderr, "trace-dump: %s\n", err);
			damaged = 1;
			procs[i].nsyncs = 0;
			continue;
		}
		opened++;
		uint64_t start = procs[i].syncs[0].mono_ns;
		if (d.base_ns == 0 || start < d.base_ns)
			d.base_ns = start;
	}
	if (!opened) {
		fprintf(stderr, "trace-dump: %s: no process could be read\n", path);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		struct rd_process *p = &procs[i];
		if (!p->nsyncs)
			continue;
		if (meta)
			print_meta(stdout, p);
		/* The program's threads, then (--sampler) the sampler thread. */
		for (size_t t = 0; t <= p->nthreads; t++) {
			const struct rd_thread *th = t < p->nthreads ? &p->threads[t] : &p->sampler;
			if (t == p->nthreads && (!sampler || !th->count))
				break;
			if (stats)
				print_stats(&d, p, th);
			else
				print_thread(&d, p, th);
		}
		if (p->errors)
			damaged = 1;
		rd_process_close(p);
		free(dirs[i]);
	}
	free(procs);
	free(dirs);
	if (fflush(stdout) != 0) {
		perror("trace-dump: stdout");
		return 2;
	}
	return damaged ? 1 : 0;
}
