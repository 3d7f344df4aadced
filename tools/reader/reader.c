// SPDX-License-Identifier: BSD-3-Clause
/*
 * reader.c - trace directory reader (see reader.h).  Everything read from disk is checked
 * before use: sizes against the file, record lengths against the chunk.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rdfile.h"
#include "reader.h"

#define MAX_CHUNK_DATA (1ull << 31) /* larger `used` values are damage */
#define MAX_META_SIZE  (1ull << 30) /* a larger meta file is not one the runtime wrote */

static void warnf(rd_warn_fn warn, void *ctx, struct rd_process *p, const char *fmt, ...)
{
	char msg[PATH_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p)
		p->errors++;
	if (warn)
		warn(ctx, msg);
}

/* A file cut short (what a killed process or a full disk leaves): not damage. */
static void cutf(rd_warn_fn warn, void *ctx, struct rd_process *p, const char *fmt, ...)
{
	char msg[PATH_MAX + 512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->truncated++;
	if (warn)
		warn(ctx, msg);
}

#define REC_NAME(t) [LT_REC_##t] = #t,
static const char *const rec_names[LT_REC_TYPE_MAX] = {LT_REC_LIST(REC_NAME)};
#undef REC_NAME
#define REC_COUNT(t) +1
/* Every type has a name: the list and enum lt_rec_type agree (types 0 and 1 are unused). */
_Static_assert(0 LT_REC_LIST(REC_COUNT) == LT_REC_TYPE_MAX - 2, "LT_REC_LIST misses a type");
#undef REC_COUNT

static const char *const omp_names[] = {
#define OMP_ROW(name, text) text,
    LT_OMP_LIST(OMP_ROW)
#undef OMP_ROW
};

const char *rd_omp_name(unsigned construct)
{
	return construct < LT_OMP_MAX ? omp_names[construct] : "!$omp (unknown construct)";
}

static const char *const kokkos_names[] = {
#define KOKKOS_ROW(name, text) text,
    LT_KOKKOS_LIST(KOKKOS_ROW)
#undef KOKKOS_ROW
};

const char *rd_kokkos_name(unsigned kind)
{
	return kind < LT_KOKKOS_MAX ? kokkos_names[kind] : "Kokkos (unknown)";
}

/* The GPU enumerations of format.h, by value; "?" for a value they do not have. */
static const char *pick(const char *const *names, size_t n, unsigned v)
{
	return v < n && names[v] ? names[v] : "?";
}
#define PICK(names, v) pick(names, sizeof(names) / sizeof(names[0]), v)

const char *rd_gpu_api_name(unsigned api)
{
	static const char *const names[] = {
	    [LT_GPU_CUDART] = "cudart",
	    [LT_GPU_CUPTI_RUNTIME] = "cupti-runtime",
	    [LT_GPU_CUPTI_DRIVER] = "cupti-driver",
	    [LT_GPU_HIP] = "hip",
	};
	return PICK(names, api);
}

const char *rd_gpu_op_name(unsigned op)
{
	static const char *const names[] = {
	    [LT_GPU_OP_CALL] = "call", [LT_GPU_OP_ALLOC] = "alloc", [LT_GPU_OP_FREE] = "free",
	    [LT_GPU_OP_COPY] = "copy", [LT_GPU_OP_SET] = "set",	    [LT_GPU_OP_LAUNCH] = "launch",
	    [LT_GPU_OP_SYNC] = "sync",
	};
	return PICK(names, op);
}

const char *rd_gpu_mem_name(unsigned mem)
{
	static const char *const names[] = {
	    [LT_GPU_MEM_DEVICE] = "device",
	    [LT_GPU_MEM_HOST] = "pinned host",
	    [LT_GPU_MEM_MANAGED] = "managed",
	    [LT_GPU_MEM_ASYNC] = "stream-ordered device",
	};
	return PICK(names, mem);
}

const char *rd_gpu_copy_name(unsigned kind)
{
	static const char *const names[] = {
	    [LT_GPU_COPY_HTOH] = "HtoH",       [LT_GPU_COPY_HTOD] = "HtoD",
	    [LT_GPU_COPY_DTOH] = "DtoH",       [LT_GPU_COPY_DTOD] = "DtoD",
	    [LT_GPU_COPY_DEFAULT] = "Default", [LT_GPU_COPY_PEER] = "PtoP",
	    [LT_GPU_COPY_UNKNOWN] = "unknown",
	};
	return PICK(names, kind);
}

const char *rd_gpu_act_name(unsigned kind)
{
	static const char *const names[] = {
	    [LT_GPU_ACT_KERNEL] = "kernel",
	    [LT_GPU_ACT_COPY] = "copy",
	    [LT_GPU_ACT_SET] = "set",
	    [LT_GPU_ACT_SYNC] = "sync",
	};
	return PICK(names, kind);
}

/*
 * The most words a record of each type has, its call-site word included (format.h):
 * records of a fixed shape have at most 8; the others as their payload allows.  A record
 * above its bound is damage, even where its type byte and length fit the chunk.
 */
static unsigned max_words(unsigned type)
{
	switch (type) {
	case LT_REC_CALLSITE:
		return 2 + 32;
	case LT_REC_COUNTERS:
		return 2 + 16;
	case LT_REC_MPI_COMM:
		return LT_REC_WORDS_MAX;
	case LT_REC_GPU_ENTER: /* correlation id, LAUNCH's 6 words, the call site */
		return 2 + 1 + 6 + 1;
	case LT_REC_GPU_LEAVE: /* what the call made */
		return 2 + 1;
	case LT_REC_GPU_ACTIVITY: /* start, end, device/context, stream, correlation, 3 more */
		return 2 + 8;
	case LT_REC_STACK:
		return 2 + LT_STACK_MAX;
	default:
		return 8;
	}
}

const char *rd_rec_name(unsigned type)
{
	if (type < LT_REC_TYPE_MAX && rec_names[type])
		return rec_names[type];
	return "UNKNOWN";
}

static const struct {
	const char *name;
	int object;
} fns[] = {
#define FN_ROW(name, module, object) {#name, LT_OBJ_##object},
    LT_FN_LIST(FN_ROW)
#undef FN_ROW
};

const char *rd_fn_name(unsigned fn)
{
	return fn < LT_FN_MAX ? fns[fn].name : "unknown";
}

int rd_fn_object(unsigned fn)
{
	return fn < LT_FN_MAX ? fns[fn].object : LT_OBJ_NONE;
}

const char *rd_string(const struct rd_process *p, uint32_t id)
{
	if (id < p->nstrings && p->strings[id])
		return p->strings[id];
	return NULL;
}

/* Undoes the \xNN escapes of the meta file, in place. */
static void unescape(char *s)
{
	char *o = s;
	for (char *i = s; *i; i++) {
		unsigned v;
		if (i[0] == '\\' && i[1] == 'x' && sscanf(i + 2, "%2x", &v) == 1) {
			*o++ = (char)v;
			i += 3;
		} else {
			*o++ = *i;
		}
	}
	*o = '\0';
}

static void define_string(struct rd_process *p, uint32_t id, const char *text)
{
	if (id == 0 || id > (1u << 24))
		return;
	if (id >= p->nstrings) {
		uint32_t n = id + 1 > p->nstrings * 2 ? id + 1 : p->nstrings * 2;
		char **s = realloc(p->strings, n * sizeof(*s));
		if (!s)
			return;
		memset(s + p->nstrings, 0, (n - p->nstrings) * sizeof(*s));
		p->strings = s;
		p->nstrings = n;
	}
	if (!p->strings[id])
		p->strings[id] = strdup(text);
}

/* The tick rate: from the first and last clock readings, else the estimate at start. */
static void clock_fit(struct rd_process *p)
{
	const struct rd_sync *a = &p->syncs[0], *b = &p->syncs[p->nsyncs - 1];
	p->ns_per_tick = 1e9 / p->clock_hz;
	if (p->nsyncs > 1 && b->ticks > a->ticks && b->mono_ns > a->mono_ns)
		p->ns_per_tick = (double)(b->mono_ns - a->mono_ns) / (double)(b->ticks - a->ticks);
}

/* A "KEY ESCAPED ESCAPED" line's value (sampler_off, gpu_off, kokkos_meta): one more pair of
 * *list (name, text, name, text...).  A line without its second field is ignored. */
static void add_pair(char ***list, size_t *n, char *val)
{
	char *v = strchr(val, ' ');
	if (!v)
		return;
	*v++ = '\0';
	unescape(val);
	unescape(v);
	char **a = realloc(*list, (*n + 1) * 2 * sizeof(*a));
	if (!a)
		return;
	*list = a;
	a[*n * 2] = strdup(val);
	a[*n * 2 + 1] = strdup(v);
	if (a[*n * 2] && a[*n * 2 + 1]) {
		(*n)++;
	} else {
		free(a[*n * 2]);
		free(a[*n * 2 + 1]);
	}
}

/* A "lost" or "dropped" line's THREAD CAUSE COUNT, appended to *a (*n entries); -1 when
 * the line is not one (a cause from `causes` on is unknown).  Out of memory, it is left out
 * as the other lists of the meta file leave theirs. */
static int add_count(struct rd_lost **a, size_t *n, const char *val, unsigned causes)
{
	struct rd_lost l;
	unsigned long long count;
	if (sscanf(val, "%u %u %llu", &l.thread, &l.cause, &count) != 3 || l.cause >= causes)
		return -1;
	l.count = count;
	struct rd_lost *more = realloc(*a, (*n + 1) * sizeof(*more));
	if (more) {
		*a = more;
		more[(*n)++] = l;
	}
	return 0;
}

static int parse_meta(struct rd_process *p, rd_warn_fn warn, void *ctx, char *err, size_t errlen)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/%s", p->dir, LT_META_FILE);
	/* Read whole, as far as its size at open: lines have no length limit (the runtime's
	 * reach 4.6 KB), but the file has one. */
	size_t size;
	char *text = rd_file_read(path, MAX_META_SIZE, &size, err, errlen);
	if (!text)
		return -1;
	int lineno = 0, major = -1, minor = -1;
	for (char *line = text, *next; line < text + size; line = next) {
		char *nl = memchr(line, '\n', (size_t)(text + size - line));
		next = nl ? nl + 1 : text + size;
		lineno++;
		size_t len = (size_t)(next - line);
		if (memchr(line, '\0', len)) {
			warnf(warn, ctx, p, "%s:%d: a NUL byte: line ignored", path, lineno);
			continue;
		}
		if (line[len - 1] != '\n') {
			cutf(warn, ctx, p, "%s:%d: truncated line ignored", path, lineno);
			continue;
		}
		line[len - 1] = '\0';
		char *val = strchr(line, ' ');
		if (!val)
			continue;
		*val++ = '\0';
		if (lineno == 1) {
			if (strcmp(line, LT_META_MAGIC) ||
			    sscanf(val, "%d.%d", &major, &minor) != 2)
				break;
			continue;
		}
		if (!strcmp(line, LT_META_PID)) {
			p->pid = atoi(val);
		} else if (!strcmp(line, LT_META_PPID)) {
			p->ppid = atoi(val);
		} else if (!strcmp(line, LT_META_MPI_RANK) || !strcmp(line, LT_META_MPI_SIZE)) {
			/* Ranks and sizes up to 2^24, as communicators (the converter's bound) */
			long v = strtol(val, NULL, 10);
			if (v < 0 || v > (1l << 24)) {
				warnf(warn, ctx, p, "%s:%d: bad %s line", path, lineno, line);
				continue;
			}
			if (!strcmp(line, LT_META_MPI_RANK))
				p->mpi_rank = (int)v + 1;
			else
				p->mpi_size = (int)v;
		} else if (!strcmp(line, LT_META_MPI_CLOCK)) {
			long long l, o, r;
			size_t n = p->nmpi_clock;
			const long long big = 1ll << 60; /* 36 years of ns: no overflow below */
			if (sscanf(val, "%lld %lld %lld", &l, &o, &r) != 3 || r < 0 || r > big ||
			    l <= 0 || l > big || o < -big || o > big ||
			    (n && l <= p->mpi_clock[n - 1].local_ns)) {
				warnf(warn, ctx, p, "%s:%d: bad mpi_clock line", path, lineno);
				continue;
			}
			if (n == sizeof(p->mpi_clock) / sizeof(p->mpi_clock[0]))
				n--; /* keep the first and the last */
			p->mpi_clock[n] = (struct rd_mpi_clock){l, o, r};
			p->nmpi_clock = n + 1;
		} else if (!strcmp(line, LT_META_HOST)) {
			unescape(val);
			snprintf(p->host, sizeof(p->host), "%s", val);
		} else if (!strcmp(line, LT_META_OPENMP)) {
			p->ompt = !strncmp(val, "ompt", 4);
		} else if (!strcmp(line, LT_META_PAPI)) {
			char *name = strchr(val, ' ');
			unsigned i = (unsigned)atoi(val);
			if (name && i < 16 && !p->papi[i]) {
				unescape(++name);
				p->papi[i] = strdup(name);
				if (p->papi[i] && i >= p->npapi)
					p->npapi = i + 1;
			}
		} else if (!strcmp(line, LT_META_PAPI_CODE)) {
			char *code = strchr(val, ' ');
			unsigned i = (unsigned)atoi(val);
			if (code && i < 16)
				p->papi_code[i] = (uint32_t)strtoul(code + 1, NULL, 0);
		} else if (!strcmp(line, LT_META_EXE)) {
			unescape(val);
			snprintf(p->exe, sizeof(p->exe), "%s", val);
		} else if (!strcmp(line, LT_META_ARG)) {
			unescape(val);
			char **a = realloc(p->args, (p->nargs + 1) * sizeof(*a));
			if (a) {
				p->args = a;
				p->args[p->nargs++] = strdup(val);
			}
		} else if (!strcmp(line, LT_META_CLOCK)) {
			p->clock_tsc = !strcmp(val, "tsc");
		} else if (!strcmp(line, LT_META_CLOCK_HZ)) {
			p->clock_hz = atof(val);
		} else if (!strcmp(line, LT_META_SYNC)) {
			struct rd_sync s;
			unsigned long long a, b, c;
			if (sscanf(val, "%llu %llu %llu", &a, &b, &c) != 3) {
				warnf(warn, ctx, p, "%s:%d: bad sync line", path, lineno);
				continue;
			}
			s.ticks = a;
			s.mono_ns = b;
			s.real_ns = c;
			struct rd_sync *n = realloc(p->syncs, (p->nsyncs + 1) * sizeof(*n));
			if (n) {
				p->syncs = n;
				p->syncs[p->nsyncs++] = s;
			}
		} else if (!strcmp(line, LT_META_PARENT)) {
			sscanf(val, "%d %u", &p->parent_pid, &p->parent_thread);
		} else if (!strcmp(line, LT_META_MAP)) {
			/* Three hexadecimal numbers and a path, each after one blank: strtoull, as
			 * sscanf costs a microsecond a line (a process may have millions). */
			char *e1, *e2, *e3;
			errno = 0;
			unsigned long long lo = strtoull(val, &e1, 16);
			unsigned long long hi =
			    e1 > val && *e1 == ' ' ? strtoull(e1 + 1, &e2, 16) : 0;
			if (e1 == val || *e1 != ' ' || e2 == e1 + 1 || *e2 != ' ')
				continue;
			unsigned long long off = strtoull(e2 + 1, &e3, 16);
			if (e3 == e2 + 1 || (*e3 != ' ' && *e3) || errno)
				continue;
			int at = (int)(e3 + (*e3 == ' ') - val);
			unescape(val + at);
			struct rd_map *m = p->maps;
			if (p->nmaps == p->maps_cap) {
				size_t cap = p->maps_cap ? 2 * p->maps_cap : 64;
				m = realloc(p->maps, cap * sizeof(*m));
				if (m)
					p->maps_cap = cap;
			}
			if (m) {
				p->maps = m;
				p->maps[p->nmaps++] =
				    (struct rd_map){lo, hi, off, strdup(val + at)};
			}
		} else if (!strcmp(line, LT_META_STRING)) {
			unsigned id;
			int at = 0;
			if (sscanf(val, "%u %n", &id, &at) != 1 || !at) {
				warnf(warn, ctx, p, "%s:%d: bad string line", path, lineno);
				continue;
			}
			unescape(val + at);
			define_string(p, id, val + at);
		} else if (!strcmp(line, LT_META_CHUNKS)) {
			struct rd_written w;
			unsigned long long n;
			if (sscanf(val, "%u %llu", &w.thread, &n) != 2) {
				warnf(warn, ctx, p, "%s:%d: bad chunks line", path, lineno);
				continue;
			}
			w.chunks = n;
			struct rd_written *a = realloc(p->written, (p->nwritten + 1) * sizeof(*a));
			if (a) {
				p->written = a;
				p->written[p->nwritten++] = w;
			}
		} else if (!strcmp(line, LT_META_LOST) || !strcmp(line, LT_META_DROPPED)) {
			int lost = !strcmp(line, LT_META_LOST);
			if (add_count(lost ? &p->lost : &p->dropped,
				      lost ? &p->nlost : &p->ndropped, val,
				      lost ? UINT_MAX : LT_DROP_CAUSES))
				warnf(warn, ctx, p, "%s:%d: bad %s line", path, lineno, line);
		} else if (!strcmp(line, LT_META_MAIN)) {
			p->main_recorded = 1;
		} else if (!strcmp(line, LT_META_MODE)) {
			if (!strncmp(val, "flight", 6))
				p->flight = val[6] == ' ' ? strtoull(val + 7, NULL, 10) : 1;
			if (!strncmp(val, "flight", 6) && !p->flight)
				p->flight = 1;
		} else if (!strcmp(line, LT_META_STACK)) {
			p->stack_period = strtoull(val, NULL, 10);
		} else if (!strcmp(line, LT_META_STACK_BLOCKED)) {
			if (add_count(&p->stack_blocked, &p->nstack_blocked, val, UINT_MAX))
				warnf(warn, ctx, p, "%s:%d: bad %s line", path, lineno, line);
		} else if (!strcmp(line, LT_META_KOKKOS)) {
			p->kokkos_version = strtoull(val, NULL, 10);
		} else if (!strcmp(line, LT_META_KOKKOS_END)) {
			p->kokkos_end_ticks = strtoull(val, NULL, 10);
		} else if (!strcmp(line, LT_META_SAMPLER)) {
			p->sampler_thread = (uint32_t)strtoul(val, NULL, 10);
		} else if (!strcmp(line, LT_META_METRIC)) {
			struct rd_metric m = {0};
			char scope[16], mode[16];
			int at = 0;
			if (sscanf(val, "%u %15s %15s %15s %n", &m.id, scope, mode, m.unit, &at) !=
				4 ||
			    !at) {
				warnf(warn, ctx, p, "%s:%d: bad metric line", path, lineno);
				continue;
			}
			unescape(val + at);
			m.node = !strcmp(scope, "node");
			m.accumulated = !strcmp(mode, "accumulated");
			struct rd_metric *a = realloc(p->metrics, (p->nmetrics + 1) * sizeof(*a));
			if (a && (m.name = strdup(val + at))) {
				p->metrics = a;
				p->metrics[p->nmetrics++] = m;
			} else if (a) {
				p->metrics = a;
			}
		} else if (!strcmp(line, LT_META_SAMPLER_OFF)) {
			add_pair(&p->sampler_off, &p->nsampler_off, val);
		} else if (!strcmp(line, LT_META_GPU_OFF)) {
			add_pair(&p->gpu_off, &p->ngpu_off, val);
		} else if (!strcmp(line, LT_META_KOKKOS_META)) {
			add_pair(&p->kokkos_meta, &p->nkokkos_meta, val);
		} else if (!strcmp(line, LT_META_GPU)) {
			unescape(val);
			snprintf(p->gpu, sizeof(p->gpu), "%s", val);
		} else if (!strcmp(line, LT_META_GPU_CLOCK)) {
			unescape(val);
			snprintf(p->gpu_clock, sizeof(p->gpu_clock), "%s", val);
		} else if (!strcmp(line, LT_META_PAUSED)) {
			p->started_paused = atoi(val) != 0;
		} else if (!strcmp(line, LT_META_WRITER_CPU)) {
			p->writer_cpu_ns = (int64_t)(strtoull(val, NULL, 10) & INT64_MAX);
		} else if (!strcmp(line, LT_META_ENDING)) {
			p->ending_ticks = strtoull(val, NULL, 10);
		} else if (!strcmp(line, LT_META_END) || !strcmp(line, LT_META_EXEC)) {
			p->ended = 1;
			p->end_ticks = strtoull(val, NULL, 10);
		}
	}
	free(text);
	if (major < 0) {
		snprintf(err, errlen, "%s:1: not a libtrace meta file (no \"%s\" first line)", path,
			 LT_META_MAGIC);
		return -1;
	}
	if (major < LT_FORMAT_MAJOR_OLDEST || major > LT_FORMAT_MAJOR) {
		snprintf(
		    err, errlen,
		    "%s:1: format version %d.%d; this reader knows major versions %d to %d only",
		    path, major, minor, LT_FORMAT_MAJOR_OLDEST, LT_FORMAT_MAJOR);
		return -1;
	}
	p->major = major;
	p->minor = minor;
	if (p->nsyncs == 0) {
		snprintf(err, errlen, "%s: no clock reading (sync line)", path);
		return -1;
	}
	if (!(p->clock_hz > 0) || p->clock_hz > 1e12) /* NaN, absurd: nanoseconds */
		p->clock_hz = 1e9;
	clock_fit(p);
	return 0;
}

static int add_chunk(struct rd_process *p, size_t *cap, const struct rd_chunk *c)
{
	if (p->nchunks == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct rd_chunk *a = realloc(p->chunks, n * sizeof(*a));
		if (!a)
			return -1;
		p->chunks = a;
		*cap = n;
	}
	p->chunks[p->nchunks++] = *c;
	return 0;
}

static int header_valid(const struct lt_chunk_header *h)
{
	return h->magic == LT_CHUNK_MAGIC && h->header_size >= sizeof(*h) &&
	       h->header_size <= 4096 && h->header_size % 8 == 0 && h->check == lt_chunk_check(h);
}

static int read_file_header(struct rd_process *p, int fd, const char *path, const char *magic,
			    struct lt_file_header *h, rd_warn_fn warn, void *ctx)
{
	ssize_t n = pread(fd, h, sizeof(*h), 0);
	if (n != (ssize_t)sizeof(*h)) {
		warnf(warn, ctx, p, "%s:0: file header missing or truncated", path);
		return -1;
	}
	if (memcmp(h->magic, magic, 8)) {
		warnf(warn, ctx, p, "%s:0: not a libtrace file (bad magic)", path);
		return -1;
	}
	if (h->major < LT_FORMAT_MAJOR_OLDEST || h->major > LT_FORMAT_MAJOR) {
		warnf(warn, ctx, p,
		      "%s:0: format version %u.%u; this reader knows major versions %d to %d", path,
		      h->major, h->minor, LT_FORMAT_MAJOR_OLDEST, LT_FORMAT_MAJOR);
		return -1;
	}
	return 0;
}

/*
 * The packed bytes a chunk header announces (capacity - header_size), when it is packed:
 * 0 for a raw chunk, and for a packed one whose fields do not agree (damage).
 */
static uint64_t packed_size(const struct lt_chunk_header *h)
{
	uint64_t stored = h->capacity - h->header_size;
	if (h->capacity < h->header_size || stored % 8 || stored > MAX_CHUNK_DATA ||
	    h->reserved == 0 || h->reserved > stored || stored - h->reserved >= 8 ||
	    h->used > MAX_CHUNK_DATA || h->reserved > h->used)
		return 0;
	return stored;
}

/*
 * The raw bytes of the whole records in the first `avail` packed bytes of a chunk that was
 * cut short (0 when they cannot be read).
 */
static uint64_t packed_prefix(int fd, uint64_t off, uint64_t avail, uint64_t used)
{
	uint8_t *b = malloc(avail ? avail : 1);
	uint64_t *rec = malloc(LT_REC_WORDS_MAX * 8);
	struct lt_pack_state *s = malloc(sizeof(*s));
	uint64_t raw = 0;
	if (b && rec && s && pread(fd, b, avail, (off_t)off) == (ssize_t)avail) {
		lt_pack_reset(s);
		size_t at = 0;
		const char *why;
		unsigned n;
		while (at < avail && (n = lt_unpack_rec(s, b, avail, &at, rec, &why)) &&
		       raw + n * 8u <= used)
			raw += n * 8u;
	}
	free(s);
	free(rec);
	free(b);
	return raw;
}

/* 0 when the `len` stored bytes at `off` of the events file have the check `want`
 * (LT_CHUNK_SUMMED); -1 when they differ or cannot be read.  *buf grows as needed. */
static int verify_payload(struct rd_process *p, uint64_t off, uint64_t len, uint32_t want,
			  uint8_t **buf, size_t *cap)
{
	if (len > *cap) {
		uint8_t *b = realloc(*buf, len);
		if (!b)
			return 0; /* not checked, not damage */
		*buf = b;
		*cap = len;
	}
	if (pread(p->events_fd, *buf, len, (off_t)off) != (ssize_t)len)
		return -1;
	return lt_payload_check(*buf, len) == want ? 0 : -1;
}

static void index_events(struct rd_process *p, size_t *cap, rd_warn_fn warn, void *ctx)
{
	uint8_t *sum_buf = NULL;
	size_t sum_cap = 0;
	struct lt_file_header fh;
	if (read_file_header(p, p->events_fd, p->events_path, LT_FILE_MAGIC, &fh, warn, ctx))
		return;
	uint64_t size = p->events_size, off = LT_FILE_HEADER_SIZE;
	int resyncing = 0;
	while (off + sizeof(struct lt_chunk_header) <= size) {
		struct lt_chunk_header h;
		if (pread(p->events_fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h))
			break;
		uint64_t packed = h.flags & LT_CHUNK_PACKED ? packed_size(&h) : 0;
		if (!header_valid(&h) || h.used % 8 || h.used > MAX_CHUNK_DATA ||
		    ((h.flags & LT_CHUNK_PACKED) && !packed)) {
			if (!resyncing)
				warnf(warn, ctx, p,
				      "%s:%llu: damaged chunk header; looking for the next one",
				      p->events_path, (unsigned long long)off);
			resyncing = 1;
			off += 8;
			continue;
		}
		resyncing = 0;
		uint64_t data = off + h.header_size;
		uint64_t stored = packed ? packed : h.used;
		uint64_t used = h.used, truncated_from = 0;
		if (data + stored > size) {
			/* A write cut short by the process's death: the ring may hold it whole,
			 * so the warning waits until the copies are compared. */
			truncated_from = used;
			uint64_t avail = size > data ? size - data : 0;
			if (packed) {
				used = packed_prefix(p->events_fd, data, avail, h.used);
				packed = avail;
			} else {
				used = avail & ~7ull;
			}
		} else {
			if (packed)
				packed = h.reserved;
			if ((h.flags & LT_CHUNK_SUMMED) &&
			    verify_payload(p, data, packed ? packed : used, h.state, &sum_buf,
					   &sum_cap) != 0)
				warnf(warn, ctx, p,
				      "%s:%llu: chunk (thread %u, seq %llu): its records do not "
				      "match "
				      "their checksum (damaged data; its values may be wrong)",
				      p->events_path, (unsigned long long)off, h.thread,
				      (unsigned long long)h.seq);
		}
		struct rd_chunk c = {RD_EVENTS, off,	 h.thread, h.tid,	   h.seq, used,
				     h.lost,	h.flags, packed,   truncated_from, 0};
		if (add_chunk(p, cap, &c)) {
			free(sum_buf);
			return;
		}
		off = data + stored;
	}
	free(sum_buf);
	if (off < size && off + sizeof(struct lt_chunk_header) > size)
		cutf(warn, ctx, p, "%s:%llu: %llu trailing bytes (a truncated chunk header)",
		     p->events_path, (unsigned long long)off, (unsigned long long)(size - off));
}

static void index_ring(struct rd_process *p, size_t *cap, rd_warn_fn warn, void *ctx)
{
	struct lt_file_header fh;
	if (read_file_header(p, p->ring_fd, p->ring_path, LT_RING_MAGIC, &fh, warn, ctx))
		return;
	if (fh.chunks == 0 || fh.chunk_size < 4096 || fh.chunk_size > MAX_CHUNK_DATA ||
	    fh.slot_size != fh.chunk_size * fh.chunks) {
		warnf(warn, ctx, p, "%s:0: implausible ring geometry", p->ring_path);
		return;
	}
	/* A ring cut short (a copy of it, a full disk) may end inside a chunk: what it holds
	 * of it is taken. */
	uint64_t size = p->ring_size;
	for (uint64_t off = LT_FILE_HEADER_SIZE; off + sizeof(struct lt_chunk_header) <= size;
	     off += fh.chunk_size) {
		struct lt_chunk_header h;
		if (pread(p->ring_fd, &h, sizeof(h), (off_t)off) != (ssize_t)sizeof(h))
			break;
		if (h.state != LT_CHUNK_ACTIVE && h.state != LT_CHUNK_SEALED)
			continue;
		if (!header_valid(&h) || h.capacity != fh.chunk_size) {
			warnf(warn, ctx, p, "%s:%llu: damaged chunk header skipped", p->ring_path,
			      (unsigned long long)off);
			continue;
		}
		uint64_t used = h.used & ~7ull;
		if (used > fh.chunk_size - h.header_size)
			used = fh.chunk_size - h.header_size;
		if (off + h.header_size > size)
			continue;
		if (used > size - off - h.header_size)
			used = (size - off - h.header_size) & ~7ull;
		struct rd_chunk c = {RD_RING,
				     off,
				     h.thread,
				     h.tid,
				     h.seq,
				     used,
				     h.lost,
				     h.flags & ~LT_CHUNK_PACKED,
				     0,
				     0,
				     h.state == LT_CHUNK_ACTIVE};
		if (add_chunk(p, cap, &c))
			return;
	}
}

static int chunk_cmp(const void *a, const void *b)
{
	const struct rd_chunk *x = a, *y = b;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	if (x->used != y->used)
		return x->used > y->used ? -1 : 1; /* the longest copy first */
	return x->file - y->file;		   /* then the events file's */
}

static int thread_cmp(const void *a, const void *b)
{
	const struct rd_thread *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * The chunks a thread is missing are damage: say which (the records around them stay).
 * Its sequence numbers are 0, 1, 2...: a gap lost the chunks in it (an events file cut
 * short, or damaged).  A process that ended normally drained every chunk of every thread
 * that ended, the last one flagged LT_CHUNK_LAST; a thread that still ran at the end has
 * its current chunk ACTIVE in the ring.  A thread with neither lost its last chunks (an
 * events file cut at a chunk boundary), how many is not known.  Without a ring file
 * (deleted since) a thread that still ran cannot be told from one cut short: not damage.
 */
static void check_sequence(struct rd_process *p, const struct rd_thread *th, rd_warn_fn warn,
			   void *ctx)
{
	uint64_t expect = 0, missing = 0;
	for (size_t i = 0; i < th->count; i++) {
		const struct rd_chunk *c = &p->chunks[th->first + i];
		if (c->seq != expect) /* sorted and unique: seq > expect */
			missing += c->seq - expect;
		expect = c->seq + 1;
	}
	if (missing && p->flight)
		missing = 0; /* a window (flight_window says so), not damage */
	if (missing)
		warnf(warn, ctx, p, "%s: thread %u: %llu chunk%s missing from its sequence", p->dir,
		      th->index, (unsigned long long)missing, missing == 1 ? "" : "s");
	if (!th->count || !p->ended || p->ring_fd < 0)
		return;
	const struct rd_chunk *last = &p->chunks[th->first + th->count - 1];
	if (!(last->flags & LT_CHUNK_LAST) && !last->live)
		warnf(warn, ctx, p,
		      "%s: thread %u: its last chunk is missing (at least 1 chunk after chunk "
		      "%llu): the process ended, but the thread neither ended nor still ran",
		      p->dir, th->index, (unsigned long long)last->seq);
}

/*
 * The chunks an ended thread said it wrote (meta "chunks") against those found: a thread
 * whose chunks all lie past a cut of the events file has left nothing else behind.
 */
static void check_written(struct rd_process *p, rd_warn_fn warn, void *ctx)
{
	for (size_t w = 0; w < p->nwritten; w++) {
		const struct rd_written *wr = &p->written[w];
		const struct rd_thread *th = NULL;
		for (size_t t = 0; t < p->nthreads && !th; t++)
			if (p->threads[t].index == wr->thread)
				th = &p->threads[t];
		uint64_t found = 0;
		if (th && th->count)
			found = p->chunks[th->first + th->count - 1].seq + 1;
		if (found < wr->chunks)
			warnf(warn, ctx, p,
			      "%s: thread %u: wrote %llu chunk%s, %llu found: chunks %llu to %llu "
			      "are missing",
			      p->dir, wr->thread, (unsigned long long)wr->chunks,
			      wr->chunks == 1 ? "" : "s", (unsigned long long)found,
			      (unsigned long long)found, (unsigned long long)wr->chunks - 1);
	}
}

/* The time stamp of a chunk's first record, or 0. */
static uint64_t chunk_first_ts(const struct rd_process *p, const struct rd_chunk *c)
{
	struct lt_chunk_header h;
	struct lt_rec r;
	int fd = c->file == RD_EVENTS ? p->events_fd : p->ring_fd;
	if (c->used < sizeof(r) || pread(fd, &h, sizeof(h), (off_t)c->off) != (ssize_t)sizeof(h))
		return 0;
	if (h.flags & LT_CHUNK_PACKED) {
		/* The first record alone, from the packer's empty state. */
		uint8_t in[LT_PACK_REC_MAX];
		uint64_t rec[LT_REC_WORDS_MAX];
		struct lt_pack_state s;
		size_t len = h.reserved < sizeof(in) ? h.reserved : sizeof(in), at = 0;
		const char *why;
		lt_pack_reset(&s);
		if (pread(fd, in, len, (off_t)(c->off + h.header_size)) != (ssize_t)len ||
		    !lt_unpack_rec(&s, in, len, &at, rec, &why))
			return 0;
		return rec[0];
	}
	if (pread(fd, &r, sizeof(r), (off_t)(c->off + h.header_size)) != (ssize_t)sizeof(r))
		return 0;
	return r.ts;
}

/*
 * A flight recorder's trace: each thread's last run of consecutive chunks is its final
 * window (chunks before a gap are an earlier copy, LIBTRACE_FLIGHT_SIGNAL's).  From the
 * latest start of a window that lost its beginning on, every thread's records are whole.
 */
static void flight_window(struct rd_process *p, rd_warn_fn warn, void *ctx)
{
	uint64_t from = 0;
	unsigned cut = 0;
	for (size_t t = 0; t < p->nthreads; t++) {
		const struct rd_thread *th = &p->threads[t];
		if (!th->count)
			continue;
		size_t i = th->count - 1;
		while (i > 0 &&
		       p->chunks[th->first + i - 1].seq + 1 == p->chunks[th->first + i].seq)
			i--;
		if (i > 0)
			p->flight_copies++;
		const struct rd_chunk *c = &p->chunks[th->first + i];
		if (c->seq == 0)
			continue;
		cut++;
		uint64_t ts = chunk_first_ts(p, c);
		if (ts > from)
			from = ts;
	}
	p->flight_ticks = from;
	if (!warn)
		return;
	char msg[PATH_MAX + 512];
	if (!cut)
		snprintf(msg, sizeof(msg),
			 "%s: a flight-recorder trace (LIBTRACE_MODE=flight) that kept every "
			 "record: no thread outran its ring",
			 p->dir);
	else
		snprintf(msg, sizeof(msg),
			 "%s: a flight-recorder trace (LIBTRACE_MODE=flight): a window of each "
			 "thread's last records, whole from %.6f s after the process started; "
			 "the older records of %u thread%s were not kept (not lost)%s",
			 p->dir,
			 ((double)rd_ticks_to_ns(p, from) - (double)p->syncs[0].mono_ns) / 1e9, cut,
			 cut == 1 ? "" : "s",
			 p->flight_copies ? "; copies made earlier (LIBTRACE_FLIGHT_SIGNAL) come "
					    "before a gap"
					  : "");
	warn(ctx, msg);
}

int rd_process_meta(struct rd_process *p, const char *dir, rd_warn_fn warn, void *ctx, char *err,
		    size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->events_fd = p->ring_fd = -1;
	p->sampler_thread = LT_NO_THREAD;
	p->writer_cpu_ns = -1;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	const char *base = strrchr(dir, '/');
	snprintf(p->name, sizeof(p->name), "%s", base ? base + 1 : dir);
	if (parse_meta(p, warn, ctx, err, errlen)) {
		rd_process_close(p); /* what the meta file's good lines allocated */
		return -1;
	}
	rd_maps_index(p);
	return 0;
}

int rd_process_open(struct rd_process *p, const char *dir, rd_warn_fn warn, void *ctx, char *err,
		    size_t errlen)
{
	if (rd_process_meta(p, dir, warn, ctx, err, errlen))
		return -1;
	snprintf(p->events_path, sizeof(p->events_path), "%s/%s", dir, LT_EVENTS_FILE);
	snprintf(p->ring_path, sizeof(p->ring_path), "%s/ring", dir);
	/* A FIFO or a device in place of either is refused: the trace is not the runtime's. */
	char events_err[PATH_MAX + 64], ring_err[PATH_MAX + 64];
	p->events_fd =
	    rd_file_open(p->events_path, &p->events_size, events_err, sizeof(events_err));
	int events_errno = errno;
	p->ring_fd = rd_file_open(p->ring_path, &p->ring_size, ring_err, sizeof(ring_err));
	int ring_errno = errno;
	if ((p->events_fd < 0 && events_errno == EINVAL) ||
	    (p->ring_fd < 0 && ring_errno == EINVAL)) {
		snprintf(err, errlen, "%s",
			 p->events_fd < 0 && events_errno == EINVAL ? events_err : ring_err);
		rd_process_close(p);
		return -1;
	}
	if (p->events_fd < 0 && p->ring_fd < 0) {
		snprintf(err, errlen, "%s: neither %s nor ring can be read", dir, LT_EVENTS_FILE);
		rd_process_close(p);
		return -1;
	}
	size_t cap = 0;
	if (p->events_fd >= 0)
		index_events(p, &cap, warn, ctx);
	else
		warnf(warn, ctx, p, "%s", events_err);
	if (p->ring_fd >= 0)
		index_ring(p, &cap, warn, ctx);
	if (p->nchunks) /* qsort(NULL, 0) is undefined (found by fuzzing) */
		qsort(p->chunks, p->nchunks, sizeof(*p->chunks), chunk_cmp);
	/* Keep one copy of each (thread, seq); group by thread. */
	size_t out = 0;
	for (size_t i = 0; i < p->nchunks; i++) {
		if (out && p->chunks[out - 1].thread == p->chunks[i].thread &&
		    p->chunks[out - 1].seq == p->chunks[i].seq) {
			p->chunks[out - 1].live |= p->chunks[i].live;
			continue;
		}
		p->chunks[out++] = p->chunks[i];
	}
	p->nchunks = out;
	for (size_t i = 0; i < p->nchunks; i++) {
		const struct rd_chunk *c = &p->chunks[i];
		if (c->truncated_from)
			cutf(warn, ctx, p,
			     "%s:%llu: chunk truncated (%llu of %llu bytes) and not in the ring; "
			     "keeping its whole records",
			     p->events_path, (unsigned long long)c->off,
			     (unsigned long long)c->used, (unsigned long long)c->truncated_from);
	}
	for (size_t i = 0; i < p->nchunks; i++) {
		if (i == 0 || p->chunks[i].thread != p->chunks[i - 1].thread) {
			struct rd_thread *t = realloc(p->threads, (p->nthreads + 1) * sizeof(*t));
			if (!t)
				break;
			p->threads = t;
			p->threads[p->nthreads++] =
			    (struct rd_thread){p->chunks[i].thread, p->chunks[i].tid, i, 0};
		}
		p->threads[p->nthreads - 1].count++;
	}
	/* Threads known only from a "lost" line (they never had a ring) appear too. */
	for (size_t l = 0; l < p->nlost; l++) {
		size_t t;
		for (t = 0; t < p->nthreads; t++)
			if (p->threads[t].index == p->lost[l].thread)
				break;
		if (t < p->nthreads)
			continue;
		struct rd_thread *a = realloc(p->threads, (p->nthreads + 1) * sizeof(*a));
		if (!a)
			break;
		p->threads = a;
		p->threads[p->nthreads++] = (struct rd_thread){p->lost[l].thread, 0, 0, 0};
	}
	if (p->nthreads)
		qsort(p->threads, p->nthreads, sizeof(*p->threads), thread_cmp);
	for (size_t t = 0; t < p->nthreads; t++)
		check_sequence(p, &p->threads[t], warn, ctx);
	check_written(p, warn, ctx);
	if (p->flight)
		flight_window(p, warn, ctx);
	/* The sampler thread is the tracer's: out of the program's threads. */
	for (size_t t = 0; t < p->nthreads; t++)
		if (p->threads[t].index == p->sampler_thread) {
			p->sampler = p->threads[t];
			memmove(&p->threads[t], &p->threads[t + 1],
				(p->nthreads - t - 1) * sizeof(*p->threads));
			p->nthreads--;
			break;
		}
	return 0;
}

/*
 * The cursor reads a chunk's records through a window of at most CURSOR_WINDOW bytes, so
 * that many threads can be read side by side in little memory.  A record never spans
 * chunks; a window refill starts at the first record the last window did not hold whole.
 */
#define CURSOR_WINDOW	    (64u * 1024u)
#define CURSOR_FIRST_WINDOW 512u /* a longer first record is read again, whole */

static const char *chunk_path(const struct rd_cursor *c, const struct rd_chunk *ch)
{
	return ch->file == RD_EVENTS ? c->p->events_path : c->p->ring_path;
}

/* At a chunk's start: where its records begin (after its header, as long as it says). */
static int cursor_start(struct rd_cursor *c, const struct rd_chunk *ch)
{
	int fd = ch->file == RD_EVENTS ? c->p->events_fd : c->p->ring_fd;
	struct lt_chunk_header h;
	if (pread(fd, &h, sizeof(h), (off_t)ch->off) != (ssize_t)sizeof(h)) {
		warnf(c->warn, c->wctx, c->p, "%s:%llu: cannot read chunk header",
		      chunk_path(c, ch), (unsigned long long)ch->off);
		return -1;
	}
	c->data_off = ch->off + h.header_size;
	c->wstart = 0;
	lt_pack_reset(&c->pk);
	return 0;
}

/* Reads `want` bytes at offset `from` of the chunk's stored records into buf[0..]. */
static int cursor_read(struct rd_cursor *c, const struct rd_chunk *ch, uint64_t from, size_t want,
		       size_t window)
{
	if (want > c->cap) {
		char *b = realloc(c->buf, window);
		if (!b)
			return -1;
		c->buf = b;
		c->cap = window;
	}
	int fd = ch->file == RD_EVENTS ? c->p->events_fd : c->p->ring_fd;
	if (pread(fd, c->buf, want, (off_t)(c->data_off + from)) != (ssize_t)want) {
		warnf(c->warn, c->wctx, c->p, "%s:%llu: cannot read chunk data", chunk_path(c, ch),
		      (unsigned long long)(c->data_off + from));
		return -1;
	}
	c->len = want;
	c->at = 0;
	return 0;
}

static int cursor_fill(struct rd_cursor *c)
{
	const struct rd_chunk *ch = &c->p->chunks[c->th->first + c->chunk];
	uint64_t left = ch->used - c->pos;
	/* The first read of a thread is small: a merge primes every thread at once, and a
	 * storm of short threads must not cost a full window each. */
	size_t window = c->cap ? CURSOR_WINDOW : CURSOR_FIRST_WINDOW;
	size_t want = left < window ? (size_t)left : window;
	if (c->pos == 0 && cursor_start(c, ch))
		return -1;
	return cursor_read(c, ch, c->pos, want, window);
}

/*
 * A packed chunk: the window holds the next LT_PACK_REC_MAX packed bytes (or all that is
 * left), so that a record that does not decode is damage, never the window's end.
 */
#define CURSOR_PACKED_FIRST_WINDOW 4096u

static int cursor_fill_packed(struct rd_cursor *c, const struct rd_chunk *ch)
{
	if (c->pos == 0 && c->len == 0) {
		if (cursor_start(c, ch))
			return -1;
	} else {
		if (c->len - c->at >= LT_PACK_REC_MAX || c->wstart + c->len >= ch->packed)
			return 0;
		c->wstart += c->at;
	}
	size_t window = c->cap ? CURSOR_WINDOW : CURSOR_PACKED_FIRST_WINDOW;
	uint64_t left = ch->packed - c->wstart;
	size_t want = left < window ? (size_t)left : window;
	return cursor_read(c, ch, c->wstart, want, window);
}

/* The next record of a packed chunk, decoded into c->plain; NULL at its end or damage. */
static const struct lt_rec *cursor_unpack(struct rd_cursor *c, const struct rd_chunk *ch)
{
	if (cursor_fill_packed(c, ch))
		return NULL;
	uint64_t at_packed = c->wstart + c->at;
	if (c->pos >= ch->used) {
		if (at_packed < ch->packed && !ch->truncated_from)
			warnf(c->warn, c->wctx, c->p,
			      "%s:%llu: packed chunk (thread %u, seq %llu): %llu bytes after its "
			      "last record",
			      chunk_path(c, ch), (unsigned long long)ch->off, ch->thread,
			      (unsigned long long)ch->seq,
			      (unsigned long long)(ch->packed - at_packed));
		return NULL;
	}
	const char *why = "record cut short";
	unsigned n = c->at < c->len ? lt_unpack_rec(&c->pk, (const uint8_t *)c->buf, c->len, &c->at,
						    c->plain, &why)
				    : 0;
	if (n && c->pos + n * 8u > ch->used) {
		why = "more records than the header's used bytes";
		n = 0;
	}
	if (!n) {
		if (ch->truncated_from) {
			c->truncated = 1; /* the record the cut went through: already told */
			return NULL;
		}
		warnf(c->warn, c->wctx, c->p,
		      "%s:%llu: packed chunk (thread %u, seq %llu) malformed at packed byte %llu: "
		      "%s; rest of chunk skipped",
		      chunk_path(c, ch), (unsigned long long)ch->off, ch->thread,
		      (unsigned long long)ch->seq, (unsigned long long)at_packed, why);
		return NULL;
	}
	return (const struct lt_rec *)c->plain;
}

/* A synthetic LOST record (the count kept in a chunk header or a meta "lost" line). */
static const struct lt_rec *cursor_lost(struct rd_cursor *c, unsigned cause, uint64_t count)
{
	c->callsite = 0;
	/* After the thread's last record; a thread without records: at the last clock reading
	 * (never 0, which would stretch the trace back to the machine's boot). */
	uint64_t ts = c->last_ts    ? c->last_ts
		      : c->p->ended ? c->p->end_ticks
				    : c->p->syncs[c->p->nsyncs - 1].ticks;
	c->lost.r = (struct lt_rec){ts, LT_REC_LOST, 3, (uint16_t)cause, 0};
	c->lost.count = count;
	return &c->lost.r;
}

void rd_cursor_init(struct rd_cursor *c, struct rd_process *p, const struct rd_thread *th,
		    rd_warn_fn warn, void *wctx)
{
	memset(c, 0, sizeof(*c));
	c->p = p;
	c->th = th;
	c->warn = warn;
	c->wctx = wctx;
}

const struct lt_rec *rd_cursor_next(struct rd_cursor *c)
{
	while (c->chunk < c->th->count) {
		const struct rd_chunk *ch = &c->p->chunks[c->th->first + c->chunk];
		if (c->chunk_done) {
			c->chunk_done = 0;
			c->truncated |= ch->truncated_from != 0;
			c->chunk++;
			c->pos = 0;
			c->len = c->at = 0;
			if (ch->lost)
				return cursor_lost(c, (ch->flags >> 8) & 0xff, ch->lost);
			continue;
		}
		const struct lt_rec *r;
		if (ch->packed) {
			r = cursor_unpack(c, ch);
			if (!r) {
				c->chunk_done = 1;
				continue;
			}
		} else {
			if (c->at + sizeof(struct lt_rec) > c->len) {
				if (c->pos >= ch->used || cursor_fill(c)) {
					c->chunk_done = 1;
					continue;
				}
				if (c->len <
				    sizeof(struct lt_rec)) { /* a record cut by truncation */
					c->truncated |= ch->truncated_from != 0;
					c->chunk_done = 1;
					continue;
				}
			}
			r = (const struct lt_rec *)(c->buf + c->at);
		}
		uint64_t size = (uint64_t)r->words * 8u;
		if (ch->truncated_from && r->words >= 2 && c->pos + size > ch->used) {
			c->truncated = 1; /* the record the cut went through: already told */
			c->chunk_done = 1;
			continue;
		}
		unsigned type = r->type & ~LT_REC_F_CALLSITE;
		if (r->words < 2 || c->pos + size > ch->used || type == 0 ||
		    type >= LT_REC_TYPE_MAX || (type != r->type && r->words < 3) ||
		    r->words > max_words(type)) {
			if (ch->packed)
				warnf(
				    c->warn, c->wctx, c->p,
				    "%s:%llu: packed chunk (thread %u, seq %llu): bad record (type "
				    "%u, %u words) at raw byte %llu; rest of chunk skipped",
				    chunk_path(c, ch), (unsigned long long)ch->off, ch->thread,
				    (unsigned long long)ch->seq, r->type, r->words,
				    (unsigned long long)c->pos);
			else
				warnf(c->warn, c->wctx, c->p,
				      "%s:%llu: bad record (type %u, %u words); rest of chunk "
				      "skipped",
				      chunk_path(c, ch), (unsigned long long)(c->data_off + c->pos),
				      r->type, r->words);
			c->chunk_done = 1;
			continue;
		}
		if (ch->packed) {
			c->pos += size;
		} else {
			if (c->at + size > c->len) { /* cut by the window: from this record on */
				if (cursor_fill(c)) {
					c->chunk_done = 1;
					continue;
				}
				r = (const struct lt_rec *)c->buf;
			}
			c->at += size;
			c->pos += size;
		}
		if (r->ts > c->last_ts)
			c->last_ts = r->ts;
		c->callsite = 0;
		if (type != r->type) { /* the call site is the last payload word */
			if ((const void *)r != c->plain) /* a packed record is there already */
				memcpy(c->plain, r, size - 8u);
			c->callsite = ((const uint64_t *)r)[r->words - 1u];
			struct lt_rec *plain = (struct lt_rec *)c->plain;
			plain->type = (uint8_t)type;
			plain->words = (uint8_t)(r->words - 1u);
			return plain;
		}
		return r;
	}
	/* Losses told by the meta file come after the thread's last record. */
	while (c->meta_lost < c->p->nlost) {
		const struct rd_lost *l = &c->p->lost[c->meta_lost++];
		if (l->thread == c->th->index)
			return cursor_lost(c, l->cause, l->count);
	}
	return NULL;
}

void rd_cursor_fini(struct rd_cursor *c)
{
	free(c->buf);
	c->buf = NULL;
}

int rd_thread_records(struct rd_process *p, const struct rd_thread *th, rd_record_fn fn, void *ctx,
		      rd_warn_fn warn, void *wctx)
{
	struct rd_cursor c;
	rd_cursor_init(&c, p, th, warn, wctx);
	const struct lt_rec *r;
	int ret = 0;
	while (!ret && (r = rd_cursor_next(&c)))
		ret = fn(ctx, p, th, r);
	rd_cursor_fini(&c);
	return ret;
}

uint64_t rd_ticks_to_ns(const struct rd_process *p, uint64_t ticks)
{
	const struct rd_sync *a = &p->syncs[0];
	/* Signed differences convert to double in one instruction; unsigned ones do not. */
	double ns =
	    (double)(int64_t)a->mono_ns + (double)(int64_t)(ticks - a->ticks) * p->ns_per_tick;
	/* Damaged clock data must not make the conversion undefined (found by fuzzing). */
	if (!(ns > 0))
		return 0;
	return ns >= 0x1p62 ? UINT64_C(1) << 62 : (uint64_t)ns; /* far from any overflow */
}

void rd_process_close(struct rd_process *p)
{
	for (size_t i = 0; i < p->nargs; i++)
		free(p->args[i]);
	free(p->args);
	for (size_t i = 0; i < p->nkokkos_meta * 2; i++)
		free(p->kokkos_meta[i]);
	free(p->kokkos_meta);
	for (unsigned i = 0; i < 16; i++)
		free(p->papi[i]);
	for (size_t i = 0; i < p->nmetrics; i++)
		free(p->metrics[i].name);
	free(p->metrics);
	for (size_t i = 0; i < p->nsampler_off * 2; i++)
		free(p->sampler_off[i]);
	free(p->sampler_off);
	for (size_t i = 0; i < p->ngpu_off * 2; i++)
		free(p->gpu_off[i]);
	free(p->gpu_off);
	for (size_t i = 0; i < p->nmaps; i++)
		free(p->maps[i].path);
	free(p->maps);
	free(p->map_segs);
	free(p->map_paths);
	free(p->syncs);
	free(p->lost);
	free(p->dropped);
	free(p->stack_blocked);
	free(p->written);
	free(p->chunks);
	free(p->threads);
	for (uint32_t i = 0; i < p->nstrings; i++)
		free(p->strings[i]);
	free(p->strings);
	if (p->events_fd >= 0)
		close(p->events_fd);
	if (p->ring_fd >= 0)
		close(p->ring_fd);
	memset(p, 0, sizeof(*p));
	p->events_fd = p->ring_fd = -1;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rd_trace_list(const char *trace_dir, char ***dirs, char *err, size_t errlen)
{
	DIR *d = opendir(trace_dir);
	if (!d) {
		snprintf(err, errlen, "%s: %s", trace_dir, strerror(errno));
		return -1;
	}
	char **list = NULL;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[PATH_MAX], meta[PATH_MAX + 16];
		snprintf(path, sizeof(path), "%s/%s", trace_dir, e->d_name);
		snprintf(meta, sizeof(meta), "%s/%s", path, LT_META_FILE);
		struct stat st;
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || stat(meta, &st) != 0)
			continue;
		char **l = realloc(list, (size_t)(n + 1) * sizeof(*l));
		if (!l)
			break;
		list = l;
		list[n++] = strdup(path);
	}
	closedir(d);
	if (n == 0) {
		snprintf(err, errlen,
			 "%s: not a libtrace trace directory (no <host>.<pid>/%s inside)",
			 trace_dir, LT_META_FILE);
		free(list);
		return -1;
	}
	qsort(list, (size_t)n, sizeof(*list), str_cmp);
	*dirs = list;
	return n;
}
