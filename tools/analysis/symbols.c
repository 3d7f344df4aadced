// SPDX-License-Identifier: BSD-3-Clause
/*
 * symbols.c - modules, their ELF symbol tables and separate debug files, and the cache of
 * resolved addresses (see symbols.h).  Every module file is treated as untrusted input:
 * each table, string and segment is checked against the file size before use.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbols.h"

struct elf_sym {
	uint64_t addr, size;
	const char *name; /* points into the mapped file */
	int rank;	  /* binding preference among aliases: higher wins */
};

struct elf_file {
	void *map;
	size_t size;
	const Elf64_Ehdr *eh;
};

struct cached {
	uint64_t offset;
	struct sym_result r;
	int used;
};

struct module {
	char *path;
	char *base;	     /* file name without directories */
	struct elf_file elf; /* the module itself */
	struct elf_file dbg; /* its separate debug file, if any */
	char *dbg_path;
	struct elf_sym *syms; /* functions, sorted by address */
	size_t nsyms;
	void *lines;	      /* line backend handle */
	struct cached *cache; /* open addressing on offset */
	size_t ncache, cache_cap;
	struct module *next;
};

struct sym_table {
	const struct sym_line_ops *ops;
	char debug_root[256];
	struct module *modules;
	struct cached *unmapped;
	size_t nunmapped, unmapped_cap;
};

static int elf_open(struct elf_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	/* O_NONBLOCK: a FIFO named in a hostile map line must not hang the converter. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -1;
	const Elf64_Ehdr *eh = m;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB) {
		munmap(m, (size_t)st.st_size);
		return -1;
	}
	f->map = m;
	f->size = (size_t)st.st_size;
	f->eh = eh;
	return 0;
}

static void elf_close(struct elf_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	memset(f, 0, sizeof(*f));
}

/* A pointer to [off, off + len) of the file, or NULL when that is not inside it. */
static const void *elf_at(const struct elf_file *f, uint64_t off, uint64_t len)
{
	if (!f->map || off > f->size || len > f->size - off)
		return NULL;
	return (const char *)f->map + off;
}

static const Elf64_Shdr *elf_sections(const struct elf_file *f, size_t *n)
{
	const Elf64_Ehdr *eh = f->eh;
	*n = 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return NULL;
	const Elf64_Shdr *sh = elf_at(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr));
	if (sh)
		*n = eh->e_shnum;
	return sh;
}

static const Elf64_Shdr *elf_section(const struct elf_file *f, const char *name)
{
	size_t n;
	const Elf64_Shdr *sh = elf_sections(f, &n);
	if (!sh || f->eh->e_shstrndx >= n)
		return NULL;
	const Elf64_Shdr *strs = &sh[f->eh->e_shstrndx];
	const char *names = elf_at(f, strs->sh_offset, strs->sh_size);
	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (sh[i].sh_name < strs->sh_size &&
		    strnlen(names + sh[i].sh_name, strs->sh_size - sh[i].sh_name) == strlen(name) &&
		    !strncmp(names + sh[i].sh_name, name, strs->sh_size - sh[i].sh_name))
			return &sh[i];
	return NULL;
}

/* File offset -> ELF virtual address through the PT_LOAD segments; -1 if none holds it. */
static int elf_offset_to_vaddr(const struct elf_file *f, uint64_t off, uint64_t *vaddr)
{
	const Elf64_Ehdr *eh = f->eh;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	const Elf64_Phdr *ph = elf_at(f, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	if (!ph)
		return -1;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (off >= ph[i].p_offset && off - ph[i].p_offset < ph[i].p_memsz) {
			*vaddr = ph[i].p_vaddr + (off - ph[i].p_offset);
			return 0;
		}
	}
	return -1;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank; /* preferred alias first */
	return strcmp(x->name, y->name);
}

/* Adds the function symbols of one table (SHT_SYMTAB or SHT_DYNSYM) of f. */
static void elf_add_symbols(struct module *m, const struct elf_file *f, unsigned type)
{
	size_t n;
	const Elf64_Shdr *sh = elf_sections(f, &n);
	for (size_t i = 0; sh && i < n; i++) {
		if (sh[i].sh_type != type || sh[i].sh_entsize != sizeof(Elf64_Sym) ||
		    sh[i].sh_link >= n)
			continue;
		const Elf64_Sym *syms = elf_at(f, sh[i].sh_offset, sh[i].sh_size);
		const Elf64_Shdr *strsec = &sh[sh[i].sh_link];
		const char *strs = elf_at(f, strsec->sh_offset, strsec->sh_size);
		if (!syms || !strs || strsec->sh_type == SHT_NOBITS)
			continue;
		size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
		struct elf_sym *a = realloc(m->syms, (m->nsyms + count) * sizeof(*a));
		if (!a)
			return;
		m->syms = a;
		for (size_t k = 0; k < count; k++) {
			const Elf64_Sym *s = &syms[k];
			unsigned t = ELF64_ST_TYPE(s->st_info);
			if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
			    s->st_value == 0 || s->st_name >= strsec->sh_size)
				continue;
			const char *name = strs + s->st_name;
			size_t max = strsec->sh_size - s->st_name;
			if (strnlen(name, max) == max || !*name)
				continue;
			unsigned bind = ELF64_ST_BIND(s->st_info);
			int rank = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
			m->syms[m->nsyms++] = (struct elf_sym){s->st_value, s->st_size, name, rank};
		}
	}
}

/* The function symbol covering vaddr, or NULL. */
static const struct elf_sym *elf_find(const struct module *m, uint64_t vaddr)
{
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) { /* first symbol with addr > vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The nearest symbols at or below vaddr, aliases and nested ones included. */
	for (size_t i = lo, seen = 0; i-- > 0 && seen < 64; seen++) {
		const struct elf_sym *s = &m->syms[i];
		if (vaddr < s->addr + (s->size ? s->size : 1))
			return s;
	}
	return NULL;
}

/*
 * A PLT stub: the canonical address of a library function whose address a non-PIC
 * executable takes.  Slot i of .plt.sec (or i + 1 of .plt, after PLT0) jumps through the
 * i-th .rela.plt relocation, whose symbol names the function.  Returns its name or NULL.
 */
static const char *elf_plt_name(const struct elf_file *f, uint64_t vaddr)
{
	const Elf64_Shdr *rela = elf_section(f, ".rela.plt");
	if (!rela || rela->sh_entsize != sizeof(Elf64_Rela))
		return NULL;
	uint64_t index;
	const Elf64_Shdr *sec = elf_section(f, ".plt.sec");
	if (sec && vaddr >= sec->sh_addr && vaddr < sec->sh_addr + sec->sh_size) {
		index = (vaddr - sec->sh_addr) / 16;
	} else if ((sec = elf_section(f, ".plt")) && vaddr >= sec->sh_addr + 16 &&
		   vaddr < sec->sh_addr + sec->sh_size) {
		index = (vaddr - sec->sh_addr) / 16 - 1;
	} else {
		return NULL;
	}
	const Elf64_Rela *r =
	    elf_at(f, rela->sh_offset + index * sizeof(Elf64_Rela), sizeof(Elf64_Rela));
	size_t n;
	const Elf64_Shdr *sh = elf_sections(f, &n);
	if (!r || !sh || rela->sh_link >= n || (index + 1) * sizeof(Elf64_Rela) > rela->sh_size)
		return NULL;
	const Elf64_Shdr *symsec = &sh[rela->sh_link];
	uint64_t si = ELF64_R_SYM(r->r_info);
	if (symsec->sh_link >= n || (si + 1) * sizeof(Elf64_Sym) > symsec->sh_size)
		return NULL;
	const Elf64_Sym *sym = elf_at(f, symsec->sh_offset + si * sizeof(Elf64_Sym), sizeof(*sym));
	const Elf64_Shdr *strsec = &sh[symsec->sh_link];
	const char *strs = elf_at(f, strsec->sh_offset, strsec->sh_size);
	if (!sym || !strs || sym->st_name >= strsec->sh_size ||
	    strnlen(strs + sym->st_name, strsec->sh_size - sym->st_name) ==
		strsec->sh_size - sym->st_name)
		return NULL;
	return strs + sym->st_name;
}

/* ELF virtual address -> file offset through the PT_LOAD segments; -1 if none holds it. */
static int elf_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *off)
{
	const Elf64_Ehdr *eh = f->eh;
	if (eh->e_phentsize != sizeof(Elf64_Phdr))
		return -1;
	const Elf64_Phdr *ph = elf_at(f, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	for (size_t i = 0; ph && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && vaddr >= ph[i].p_vaddr &&
		    vaddr - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = ph[i].p_offset + (vaddr - ph[i].p_vaddr);
			return 0;
		}
	return -1;
}

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	crc = ~crc;
	while (n--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static int try_debug_file(struct module *m, const char *path, int check_crc, uint32_t crc)
{
	struct elf_file f;
	if (strcmp(path, m->path) == 0 || elf_open(&f, path))
		return -1;
	if (check_crc && crc32_update(0, f.map, f.size) != crc) {
		elf_close(&f);
		return -1;
	}
	m->dbg = f;
	m->dbg_path = strdup(path);
	return 0;
}

/* Finds the separate debug file: by build-id first, then by .gnu_debuglink. */
static void find_debug_file(struct sym_table *t, struct module *m)
{
	size_t n;
	const Elf64_Shdr *sh = elf_sections(&m->elf, &n);
	for (size_t i = 0; sh && i < n; i++) {
		if (sh[i].sh_type != SHT_NOTE)
			continue;
		const char *p = elf_at(&m->elf, sh[i].sh_offset, sh[i].sh_size);
		uint64_t at = 0;
		while (p && at + sizeof(Elf64_Nhdr) <= sh[i].sh_size) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(p + at);
			uint64_t name_at = at + sizeof(*nh),
				 desc_at = name_at + ((nh->n_namesz + 3u) & ~3u);
			if (desc_at + nh->n_descsz > sh[i].sh_size)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + name_at, "GNU", 4) && nh->n_descsz >= 2 &&
			    nh->n_descsz <= 64) {
				const unsigned char *id = (const unsigned char *)p + desc_at;
				char path[512];
				int len = snprintf(path, sizeof(path), "%s/.build-id/%02x/",
						   t->debug_root, id[0]);
				for (unsigned k = 1; k < nh->n_descsz && len < 400; k++)
					len +=
					    snprintf(path + len, sizeof(path) - len, "%02x", id[k]);
				snprintf(path + len, sizeof(path) - len, ".debug");
				if (try_debug_file(m, path, 0, 0) == 0)
					return;
			}
			at = desc_at + ((nh->n_descsz + 3u) & ~3u);
		}
	}
	const Elf64_Shdr *link = elf_section(&m->elf, ".gnu_debuglink");
	const char *data = link ? elf_at(&m->elf, link->sh_offset, link->sh_size) : NULL;
	if (!data || link->sh_size < 8)
		return;
	size_t name_len = strnlen(data, link->sh_size);
	size_t crc_at = (name_len + 4) & ~(size_t)3; /* the name, its NUL, padding to 4 */
	if (name_len == 0 || crc_at + 4 > link->sh_size || strchr(data, '/'))
		return;
	uint32_t crc;
	memcpy(&crc, data + crc_at, 4);
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", m->path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), ".");
	char path[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, data);
	if (try_debug_file(m, path, 1, crc) == 0)
		return;
	snprintf(path, sizeof(path), "%s/.debug/%s", dir, data);
	if (try_debug_file(m, path, 1, crc) == 0)
		return;
	snprintf(path, sizeof(path), "%s%s/%s", t->debug_root, dir, data);
	try_debug_file(m, path, 1, crc);
}

static struct module *module_get(struct sym_table *t, const char *path)
{
	for (struct module *m = t->modules; m; m = m->next)
		if (!strcmp(m->path, path))
			return m;
	struct module *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->path = strdup(path);
	const char *b = strrchr(path, '/');
	m->base = strdup(b ? b + 1 : path);
	if (elf_open(&m->elf, path) == 0) {
		find_debug_file(t, m);
		elf_add_symbols(m, &m->elf, SHT_SYMTAB);
		elf_add_symbols(m, &m->elf, SHT_DYNSYM);
		if (m->dbg.map)
			elf_add_symbols(m, &m->dbg, SHT_SYMTAB);
		if (m->nsyms)
			qsort(m->syms, m->nsyms, sizeof(*m->syms), sym_cmp);
		if (t->ops)
			m->lines = t->ops->open(m->dbg_path ? m->dbg_path : path);
		if (!m->lines && t->ops && m->dbg_path)
			m->lines = t->ops->open(path);
	}
	m->next = t->modules;
	t->modules = m;
	return m;
}

struct sym_table *sym_table_new(const struct sym_line_ops *ops, const char *debug_root)
{
	struct sym_table *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->ops = ops;
	snprintf(t->debug_root, sizeof(t->debug_root), "%s",
		 debug_root ? debug_root : "/usr/lib/debug");
	return t;
}

static void result_free(struct sym_result *r)
{
	free((char *)r->plt);
	free((char *)r->function);
	free((char *)r->symbol);
	free((char *)r->file);
}

void sym_table_free(struct sym_table *t)
{
	if (!t)
		return;
	for (struct module *m = t->modules, *next; m; m = next) {
		next = m->next;
		for (size_t i = 0; i < m->cache_cap; i++)
			if (m->cache[i].used)
				result_free(&m->cache[i].r);
		free(m->cache);
		if (m->lines)
			t->ops->close(m->lines);
		free(m->syms);
		elf_close(&m->elf);
		elf_close(&m->dbg);
		free(m->dbg_path);
		free(m->path);
		free(m->base);
		free(m);
	}
	for (size_t i = 0; i < t->nunmapped; i++)
		result_free(&t->unmapped[i].r);
	free(t->unmapped);
	free(t);
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return x;
}

/* The cache slot of offset in m (inserting an empty one), or NULL without memory. */
static struct cached *cache_slot(struct module *m, uint64_t offset)
{
	if ((m->ncache + 1) * 2 > m->cache_cap) {
		size_t cap = m->cache_cap ? m->cache_cap * 2 : 64;
		struct cached *c = calloc(cap, sizeof(*c));
		if (!c)
			return NULL;
		for (size_t i = 0; i < m->cache_cap; i++) {
			if (!m->cache[i].used)
				continue;
			size_t j = hash64(m->cache[i].offset) & (cap - 1);
			while (c[j].used)
				j = (j + 1) & (cap - 1);
			c[j] = m->cache[i];
		}
		free(m->cache);
		m->cache = c;
		m->cache_cap = cap;
	}
	size_t j = hash64(offset) & (m->cache_cap - 1);
	while (m->cache[j].used && m->cache[j].offset != offset)
		j = (j + 1) & (m->cache_cap - 1);
	return &m->cache[j];
}

static char *fmt(const char *f, const char *s, uint64_t v)
{
	char *out = NULL;
	if (asprintf(&out, f, s, (unsigned long long)v) < 0)
		return NULL;
	return out;
}

int sym_resolve(struct sym_table *t, const char *path, uint64_t offset, struct sym_result *out)
{
	struct module *m = module_get(t, path);
	struct cached *c = m ? cache_slot(m, offset) : NULL;
	if (!c) {
		sym_unmapped(t, offset, out);
		return 0;
	}
	if (c->used) {
		*out = c->r;
		return 0;
	}
	struct sym_result r = {0};
	r.module = m->path;
	uint64_t vaddr = offset;
	int have_vaddr = m->elf.map && elf_offset_to_vaddr(&m->elf, offset, &vaddr) == 0;
	const struct elf_sym *s = have_vaddr ? elf_find(m, vaddr) : NULL;
	const char *file = NULL, *dwarf_fn = NULL;
	unsigned line = 0;
	if (have_vaddr && m->lines && t->ops->lookup(m->lines, vaddr, &file, &line, &dwarf_fn) &&
	    file) {
		r.file = strdup(file);
		r.line = line;
	}
	if (!s && have_vaddr && (r.plt = elf_plt_name(&m->elf, vaddr)))
		r.plt = strdup(r.plt);
	const char *raw = s ? s->name : (r.file ? dwarf_fn : r.plt);
	if (raw) {
		r.symbol = strdup(raw);
		char *d = t->ops && t->ops->demangle ? t->ops->demangle(raw) : NULL;
		r.function = d ? d : strdup(raw);
	} else {
		r.function = fmt("%s+0x%llx", m->base, vaddr);
	}
	if (!r.function)
		r.function = strdup("?");
	c->used = 1;
	c->offset = offset;
	c->r = r;
	m->ncache++;
	*out = r;
	return 0;
}

char *sym_demangle(struct sym_table *t, const char *symbol)
{
	return t && t->ops && t->ops->demangle ? t->ops->demangle(symbol) : NULL;
}

void sym_unmapped(struct sym_table *t, uint64_t addr, struct sym_result *out)
{
	for (size_t i = 0; i < t->nunmapped; i++)
		if (t->unmapped[i].offset == addr) {
			*out = t->unmapped[i].r;
			return;
		}
	struct sym_result r = {0};
	r.function = fmt("%s+0x%llx", "[unknown]", addr);
	if (t->nunmapped == t->unmapped_cap) {
		size_t cap = t->unmapped_cap ? t->unmapped_cap * 2 : 16;
		struct cached *a = realloc(t->unmapped, cap * sizeof(*a));
		if (!a) {
			*out = r; /* leaks one name; only without memory */
			return;
		}
		t->unmapped = a;
		t->unmapped_cap = cap;
	}
	t->unmapped[t->nunmapped++] = (struct cached){addr, r, 1};
	*out = r;
}

int sym_find(struct sym_table *t, const char *path, const char *name, uint64_t *offset)
{
	struct module *m = module_get(t, path);
	if (!m || !m->elf.map)
		return -1;
	for (size_t i = 0; i < m->nsyms; i++)
		if (!strcmp(m->syms[i].name, name))
			return elf_vaddr_to_offset(&m->elf, m->syms[i].addr, offset);
	return -1;
}
