// SPDX-License-Identifier: BSD-3-Clause
/*
 * kokkos.c - Kokkos: kernels, regions, sections, fences, deep copies, allocations (and
 * what was never freed), metadata.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* Kokkos up to 4.4 names an unnamed kernel after typeid().name() of its functor (and
 * "/" and its work tag's): a mangled type, which demangles as the symbol "_Z<type>"
 * ("Z4mainEUliE_": main::{lambda(int)#1}).  Demangled per part where the demangler takes
 * it, kept as it is otherwise.  From 4.5 on Kokkos demangles itself. */
/* Whether `part` (len bytes) reads as a mangled type: a local or nested name, or one
 * source name of 2 characters or more whose length prefix covers it exactly ("7Functor";
 * not labels like "1D", "1st" or "3D_laplacian"). */
static int mangled_type(const char *part, size_t len)
{
	if (part[0] == 'Z' || part[0] == 'N')
		return len > 2;
	size_t digits = 0, n = 0;
	while (digits < len && part[digits] >= '0' && part[digits] <= '9')
		n = n * 10 + (size_t)(part[digits++] - '0');
	return digits && part[0] != '0' && n >= 2 && n == len - digits;
}

static void kokkos_kernel_name(struct cv *cv, uint64_t version, const char *raw, char *out,
			       size_t len)
{
	snprintf(out, len, "%s", raw);
	if (version >= 20240906 || !cv->syms || !*raw)
		return;
	char buf[2048], part[1100];
	size_t n = 0;
	buf[0] = '\0';
	for (const char *p = raw; *p;) {
		size_t k = strcspn(p, "/");
		if (k == 0 || k >= sizeof(part) - 3 || !mangled_type(p, k))
			return;
		snprintf(part, sizeof(part), "_Z%.*s", (int)k, p); /* a type: as a symbol */
		char *d = sym_demangle(cv->syms, part);
		if (!d)
			return;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "/" : "", d);
		free(d);
		if (n >= sizeof(buf))
			return;
		p += k;
		if (*p == '/')
			p++;
	}
	snprintf(out, len, "%s", buf);
}

/* The execution space instance a device id names (interface version: its encoding). */
static uint32_t kokkos_device(struct cv *cv, uint64_t version, uint32_t dev, int fence)
{
	static const char *const types[] = {"Serial", "OpenMP",	 "Cuda", "HIP",	   "OpenMPTarget",
					    "HPX",    "Threads", "SYCL", "OpenACC"};
	unsigned type = dev >> 24;
	char name[32], buf[96];
	if (type < sizeof(types) / sizeof(types[0]))
		snprintf(name, sizeof(name), "%s", types[type]);
	else
		snprintf(name, sizeof(name), "device type %u", type);
	if (version >= 20211015) { /* 3.6 on: 8 bits type, 7 bits device, 17 bits instance */
		unsigned device = (dev >> 17) & 0x7fu, inst = dev & 0x1ffffu;
		int gpu = type == 2 || type == 3 || type == 4 || type == 7 || type == 8;
		if (fence && (dev & 0xffffffu) == 0)
			snprintf(buf, sizeof(buf), "%s (global fence)", name);
		else if (fence && (dev & 0xffffffu) == 0xffffffu)
			snprintf(buf, sizeof(buf), "%s (deep copy resources)", name);
		else if (gpu)
			snprintf(buf, sizeof(buf), "%s device %u instance %u", name, device, inst);
		else
			snprintf(buf, sizeof(buf), "%s instance %u", name, inst);
	} else if (dev & 0xffffffu) { /* 3.4, 3.5: type << 24 | instance */
		snprintf(buf, sizeof(buf), "%s instance %u", name, dev & 0xffffffu);
	} else {
		snprintf(buf, sizeof(buf), "%s", name);
	}
	return cv_string(cv, buf);
}

static enum cv_role kokkos_role(unsigned k)
{
	switch (k) {
	case LT_KOKKOS_parallel_for:
	case LT_KOKKOS_parallel_reduce:
	case LT_KOKKOS_parallel_scan:
		return CV_ROLE_PARALLEL;
	case LT_KOKKOS_fence:
		return CV_ROLE_BARRIER;
	case LT_KOKKOS_section:
		return CV_ROLE_PHASE;
	case LT_KOKKOS_deep_copy:
		return CV_ROLE_DATA_TRANSFER;
	}
	return CV_ROLE_USER;
}

/* The region of Kokkos construct k named `name` (one per construct and name). */
static uint32_t kokkos_region(struct cv *cv, unsigned k, const char *name, const char *raw)
{
	char key[1100];
	snprintf(key, sizeof(key), "%u:%s", k, name);
	struct cv_region r = {cv_string(cv, name),
			      cv_string(cv, raw ? raw : name),
			      CV_NO_STRING,
			      0,
			      kokkos_role(k),
			      CV_PARADIGM_KOKKOS,
			      cv_string(cv, rd_kokkos_name(k)) + 1};
	return cv_region_id(cv, 'K', key, &r);
}

static struct kspace *kokkos_space(struct pstate *ps, const char *name)
{
	uint32_t sid = cv_string(ps->cv, name);
	for (uint32_t i = 0; i < ps->nkspaces; i++)
		if (ps->kspaces[i].name == sid)
			return &ps->kspaces[i];
	if (ps->nkspaces == 64) /* Kokkos has a handful */
		return NULL;
	struct kspace *a = realloc(ps->kspaces, (ps->nkspaces + 1) * sizeof(*a));
	if (!a)
		return NULL;
	ps->kspaces = a;
	char mname[128];
	snprintf(mname, sizeof(mname), "Kokkos %s memory", name);
	a[ps->nkspaces] = (struct kspace){sid, cv_metric_id(ps->cv, mname, 0, "B"), 0};
	return &a[ps->nkspaces++];
}

/* When Kokkos finalized its tool, in the converter's ns (0: it never did). */
static uint64_t kokkos_end_ns(struct pstate *ps)
{
	uint64_t ticks = ps->p->kokkos_end_ticks;
	return ticks ? cv_mono_to_ns(ps, rd_ticks_to_ns(ps->p, ticks)) : 0;
}

/* What Kokkos frees of itself after kokkosp_finalize_library, when it no longer calls the
 * tool (3.4 to 4.6 pause the tools before they finalize the execution spaces): the host
 * backends' per-thread scratch memory, allocated while a kernel ran and reported then, but
 * never reported freed.  Exact labels: any other View never freed is a leak, whatever its
 * name ("Kokkos::SortImpl::..." of a BinSort the program never destroyed). */
static int kokkos_frees_unseen(const char *label)
{
	static const char *const labels[] = {"Kokkos::Serial::scratch_mem",
					     "Kokkos::OpenMP::scratch_mem", NULL};
	for (int i = 0; labels[i]; i++)
		if (!strcmp(label, labels[i]))
			return 1;
	return 0;
}

/* An allocation (sub 0) or deallocation: a moment of role ALLOCATE or DEALLOCATE with the
 * View's label, size and address, then the space's new total.  The total counts only what
 * was seen allocated: Kokkos 4 starts its backends before it loads the tool, so it may
 * free memory whose allocation the tool never saw; such a free leaves the total as it is
 * and is only counted (stats.kokkos_unseen_frees). */
static void kokkos_alloc(struct pstate *ps, struct cv_loc *l, uint64_t ns, const struct lt_rec *r,
			 const uint64_t *pl)
{
	struct cv *cv = ps->cv;
	if (r->words < 5) {
		cv->stats.anomalies++;
		return;
	}
	const char *space = cv_pstring(ps, (uint32_t)pl[LT_W_KOKKOS_ALLOC_SPACE]);
	const char *label = cv_pstring(ps, r->arg);
	uint64_t addr = pl[LT_W_KOKKOS_ALLOC_ADDR], bytes = pl[LT_W_KOKKOS_ALLOC_BYTES];
	char name[128];
	snprintf(name, sizeof(name), "Kokkos %s %s", r->sub ? "deallocate" : "allocate", space);
	struct cv_region reg = {cv_string(cv, name),
				cv_string(cv, name),
				CV_NO_STRING,
				0,
				r->sub ? CV_ROLE_DEALLOCATE : CV_ROLE_ALLOCATE,
				CV_PARADIGM_KOKKOS,
				0};
	uint32_t rid = cv_region_id(cv, 'K', name, &reg);
	struct cv_attr a[] = {{CV_ATTR_KOKKOS_LABEL, cv_string(cv, label)},
			      {CV_ATTR_KOKKOS_BYTES, bytes},
			      {CV_ATTR_KOKKOS_ADDRESS, addr}};
	cv_enter_attrs(cv, l, ns, rid, a, 3);
	CV_EMIT(cv, leave, l, ns, rid, 0);
	uint64_t *slot = cv_idmap_get(&ps->kmem.map, addr, r->sub == 0);
	const struct kalloc *seen = slot && *slot ? &ps->kmem.a[*slot - 1] : NULL;
	if (r->sub && !seen) { /* allocated before Kokkos loaded us */
		cv->stats.kokkos_unseen_frees++;
		cv->stats.kokkos_unseen_bytes += bytes;
		return;
	}
	struct kspace *sp = kokkos_space(ps, space);
	if (sp) {
		uint64_t total = (uint64_t)sp->bytes;
		if (seen) /* freed, or the same address again never freed: what was seen goes */
			total = total > seen->bytes ? total - seen->bytes : 0;
		if (!r->sub)
			total = total + bytes < total || total + bytes > INT64_MAX ? INT64_MAX
										   : total + bytes;
		sp->bytes = (int64_t)total;
		CV_EMIT(cv, metric, l, ns, sp->metric, total);
	}
	if (r->sub) {
		/* Live when Kokkos finalized its tool, freed by Kokkos after: its own. */
		uint64_t end = kokkos_end_ns(ps);
		if (end && seen->ns <= end && ns >= end) {
			char text[1400];
			snprintf(text, sizeof(text),
				 "kept by Kokkos itself past finalize, freed by it after (not a "
				 "leak): \"%s\", %" PRIu64 " bytes in %s at 0x%" PRIx64,
				 cv->strings[seen->label], seen->bytes, cv->strings[seen->space],
				 seen->addr);
			cv_leak_add(ps, seen, CV_MARK_KOKKOS_KEPT, text);
		}
		cv_alloc_remove(&ps->kmem, (uint32_t)*slot - 1);
		return;
	}
	if (!slot)
		return;
	struct kalloc k = {
	    addr, bytes, ns, cv_string(cv, label), cv_string(cv, space), (uint32_t)(l - cv->locs),
	    0};
	cv_alloc_set(&ps->kmem, slot, &k);
}

/* At the process's end: what Kokkos allocated and never freed.  A leak whatever its label,
 * unless the process never finalized Kokkos, or it is memory Kokkos frees unseen after
 * finalize (kokkos_frees_unseen). */
void cv_kokkos_leaks(struct pstate *ps)
{
	struct cv *cv = ps->cv;
	for (uint32_t i = 0; i < ps->kmem.n; i++) {
		const struct kalloc *k = &ps->kmem.a[i];
		const char *label = cv->strings[k->label];
		int kind = ps->p->kokkos_end_ticks == 0 ? CV_MARK_KOKKOS_UNFINALIZED
			   : kokkos_frees_unseen(label) ? CV_MARK_KOKKOS_KEPT
							: CV_MARK_KOKKOS_LEAK;
		char text[1400];
		snprintf(text, sizeof(text), "%s: \"%s\", %" PRIu64 " bytes in %s at 0x%" PRIx64,
			 kind == CV_MARK_KOKKOS_UNFINALIZED
			     ? "still allocated when the process ended (Kokkos was not finalized)"
			 : kind == CV_MARK_KOKKOS_KEPT
			     ? "kept by Kokkos itself past finalize (its backend's scratch memory, "
			       "freed after the tool is gone: not a leak)"
			     : "never freed (leak)",
			 label, k->bytes, cv->strings[k->space], k->addr);
		cv_leak_add(ps, k, kind, text);
	}
}

/* Kokkos metadata: archive properties KOKKOS::<KEY>. */
void cv_kokkos_metadata(struct cv *cv, const struct rd_process *p)
{
	for (size_t i = 0; i < p->nkokkos_meta; i++) {
		char name[160] = "KOKKOS::";
		size_t n = strlen(name);
		for (const char *k = p->kokkos_meta[2 * i]; *k && n < sizeof(name) - 1; k++)
			name[n++] =
			    isalnum((unsigned char)*k) ? (char)toupper((unsigned char)*k) : '_';
		name[n] = '\0';
		if (n > 8) /* an empty key: OTF2 refuses the name */
			cv_add_prop(cv, name, p->kokkos_meta[2 * i + 1]);
	}
}

/* Pops the innermost Kokkos frame of kind k (with id `id`, where it has one).  Sections may
 * overlap (start A, start B, stop A): what was entered after the frame and is Kokkos's or
 * the user's is left and entered again around its Leave, so that regions stay nested and
 * nothing is lost; anything else above it was left open by the trace and is closed. */
static void kokkos_leave(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
			 unsigned k, uint32_t id)
{
	struct cv *cv = ps->cv;
	int byid = k != LT_KOKKOS_region && k != LT_KOKKOS_deep_copy;
	for (uint32_t i = t->depth; i-- > 0;) {
		struct frame *f = &t->stack[i];
		if (f->fn != FN_KOKKOS(k) || (byid && (uint32_t)f->obj != id))
			continue;
		uint32_t above = t->depth - i - 1, j;
		for (j = i + 1; j < t->depth; j++)
			if (t->stack[j].fn != FN_USER &&
			    (t->stack[j].fn < FN_KOKKOS(0) ||
			     t->stack[j].fn >= FN_KOKKOS(LT_KOKKOS_MAX)))
				break;
		if (above && j == t->depth && above <= 64) {
			struct frame keep[64];
			memcpy(keep, &t->stack[i + 1], above * sizeof(*keep));
			for (j = t->depth; j-- > i + 1;)
				CV_EMIT(cv, leave, l, ns, t->stack[j].region, 0);
			CV_EMIT(cv, leave, l, ns, f->region, 0);
			memmove(&t->stack[i], keep, above * sizeof(*keep));
			t->depth--;
			for (j = i; j < t->depth; j++)
				CV_EMIT(cv, enter, l, ns, t->stack[j].region);
			return;
		}
		cv_unwind(cv, l, t, ns, i + 1, CLOSE_LEAVE);
		t->depth = i;
		CV_EMIT(cv, leave, l, ns, f->region, 0);
		return;
	}
	cv->stats.anomalies++;
}

void cv_kokkos_record(struct pstate *ps, struct tstate *t, struct cv_loc *l, uint64_t ns,
		      const struct lt_rec *r)
{
	struct cv *cv = ps->cv;
	const uint64_t *pl = (const uint64_t *)(r + 1);
	unsigned np = r->words - 2u;
	uint64_t version = ps->p->kokkos_version;
	switch (r->type) {
	case LT_REC_KOKKOS_BEGIN: {
		unsigned k = r->sub;
		if (k >= LT_KOKKOS_MAX || k == LT_KOKKOS_deep_copy) {
			cv->stats.anomalies++;
			break;
		}
		uint64_t w = lt_rec_word(r, LT_W_KOKKOS_BEGIN_ID);
		uint32_t id = (uint32_t)w, dev = (uint32_t)(w >> 32);
		uint32_t reg;
		if (k == LT_KOKKOS_section) {
			uint64_t *name = cv_idmap_get(&ps->ksections, id, 0);
			char unknown[64];
			snprintf(unknown, sizeof(unknown), "Kokkos profile section %u", id);
			reg = kokkos_region(cv, k, name && *name ? cv->strings[*name - 1] : unknown,
					    NULL);
		} else {
			/* One region per kind and name: looked up once per string of the process.
			 */
			uint64_t *cached =
			    cv_idmap_get(&ps->kregions, (uint64_t)(k + 1) << 32 | r->arg, 1);
			if (cached && *cached) {
				reg = (uint32_t)*cached - 1;
			} else if (k <= LT_KOKKOS_parallel_scan) {
				const char *raw = cv_pstring(ps, r->arg);
				char name[2048];
				kokkos_kernel_name(cv, version, raw, name, sizeof(name));
				reg = kokkos_region(cv, k, name, raw);
			} else {
				reg = kokkos_region(cv, k, cv_pstring(ps, r->arg), NULL);
			}
			if (cached && rd_string(ps->p, r->arg))
				*cached = reg + 1;
		}
		if (cv_push(cv, t, reg, FN_KOKKOS(k), id, 0))
			break;
		if (k <= LT_KOKKOS_fence) {
			struct cv_attr a = {CV_ATTR_KOKKOS_DEVICE,
					    kokkos_device(cv, version, dev, k == LT_KOKKOS_fence)};
			cv_enter_attrs(cv, l, ns, reg, &a, 1);
		} else {
			CV_EMIT(cv, enter, l, ns, reg);
		}
		break;
	}
	case LT_REC_KOKKOS_END:
		if (r->sub >= LT_KOKKOS_MAX) {
			cv->stats.anomalies++;
			break;
		}
		kokkos_leave(ps, t, l, ns, r->sub, r->arg);
		break;
	case LT_REC_KOKKOS_COPY: {
		if (np < 5) {
			cv->stats.anomalies++;
			break;
		}
		const char *dst = cv_pstring(ps, (uint32_t)(pl[LT_W_KOKKOS_COPY_SPACES] >> 32));
		const char *src = cv_pstring(ps, (uint32_t)pl[LT_W_KOKKOS_COPY_SPACES]);
		char name[300];
		snprintf(name, sizeof(name), "Kokkos::deep_copy %s->%s", src, dst);
		uint32_t reg = kokkos_region(cv, LT_KOKKOS_deep_copy, name, NULL);
		if (cv_push(cv, t, reg, FN_KOKKOS(LT_KOKKOS_deep_copy), 0, 0))
			break;
		/* A copy of memory onto itself (deep_copy of a host mirror that is the view
		 * itself) moves nothing: 0 bytes, not the view's size at a bandwidth of nothing. */
		uint64_t bytes = pl[LT_W_KOKKOS_COPY_BYTES];
		if (pl[LT_W_KOKKOS_COPY_DST] == pl[LT_W_KOKKOS_COPY_SRC] &&
		    (uint32_t)(pl[LT_W_KOKKOS_COPY_SPACES] >> 32) ==
			(uint32_t)pl[LT_W_KOKKOS_COPY_SPACES])
			bytes = 0;
		struct cv_attr a[] = {
		    {CV_ATTR_KOKKOS_BYTES, bytes},
		    {CV_ATTR_KOKKOS_SRC,
		     cv_string(cv, cv_pstring(ps, (uint32_t)pl[LT_W_KOKKOS_COPY_LABELS]))},
		    {CV_ATTR_KOKKOS_DST,
		     cv_string(cv, cv_pstring(ps, (uint32_t)(pl[LT_W_KOKKOS_COPY_LABELS] >> 32)))}};
		cv_enter_attrs(cv, l, ns, reg, a, 3);
		break;
	}
	case LT_REC_KOKKOS_ALLOC:
		kokkos_alloc(ps, l, ns, r, pl);
		break;
	case LT_REC_KOKKOS_INFO: {
		char text[1200];
		switch (r->sub) {
		case LT_KOKKOS_SECTION_CREATE:
			if (np >= 1) {
				uint64_t *name = cv_idmap_get(&ps->ksections,
							      (uint32_t)pl[LT_W_KOKKOS_INFO_ID], 1);
				if (name)
					*name = cv_string(cv, cv_pstring(ps, r->arg)) + 1;
			}
			break;
		case LT_KOKKOS_SECTION_DESTROY:
			break; /* its id is never reused: its name stays for late stops */
		case LT_KOKKOS_DV_SYNC:
		case LT_KOKKOS_DV_MODIFY: {
			int dev = lt_rec_word(r, LT_W_KOKKOS_INFO_FLAG) != 0;
			snprintf(text, sizeof(text), "DualView \"%s\" %s", cv_pstring(ps, r->arg),
				 r->sub == LT_KOKKOS_DV_SYNC
				     ? (dev ? "synced to the device" : "synced to the host")
				     : (dev ? "modified on the device" : "modified on the host"));
			CV_EMIT(cv, marker, l, ns, CV_MARK_KOKKOS_DUALVIEW, text);
			break;
		}
		case LT_KOKKOS_EVENT:
			CV_EMIT(cv, marker, l, ns, CV_MARK_KOKKOS_EVENT, cv_pstring(ps, r->arg));
			break;
		default:
			cv->stats.anomalies++;
		}
		break;
	}
	}
}
