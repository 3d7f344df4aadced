// SPDX-License-Identifier: BSD-3-Clause
/*
 * sym_bfd.c - the libbfd line backend: source file and line of an ELF virtual address from
 * the DWARF information of a module (or of its debug file), and C++ demangling.
 * Linking this file makes trace2otf2 and trace-report a GPL-3.0-or-later combination (see
 * docs/development.md, "License").
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "bfd_compat.h"
#include "symbols.h"

struct bfd_handle {
	bfd *abfd;
	asymbol **syms;
};

static void *bfd_lines_open(const char *path)
{
	static int initialised;
	if (!initialised) {
		bfd_init();
		initialised = 1;
	}
	bfd *abfd = bfd_openr(path, NULL);
	if (!abfd)
		return NULL;
	abfd->flags |= BFD_DECOMPRESS;
	if (!bfd_check_format(abfd, bfd_object) || !(bfd_get_file_flags(abfd) & HAS_SYMS)) {
		bfd_close(abfd);
		return NULL;
	}
	struct bfd_handle *h = calloc(1, sizeof(*h));
	if (!h) {
		bfd_close(abfd);
		return NULL;
	}
	h->abfd = abfd;
	long size = bfd_get_symtab_upper_bound(abfd);
	if (size > 0 && (h->syms = malloc((size_t)size)) &&
	    bfd_canonicalize_symtab(abfd, h->syms) < 0) {
		free(h->syms);
		h->syms = NULL;
	}
	return h;
}

static int bfd_lines_lookup(void *hp, uint64_t vaddr, const char **file, unsigned *line,
			    const char **function)
{
	struct bfd_handle *h = hp;
	for (asection *s = h->abfd->sections; s; s = s->next) {
		if (!(lt_section_flags(h->abfd, s) & SEC_ALLOC))
			continue;
		bfd_vma vma = lt_section_vma(h->abfd, s);
		if (vaddr < vma || vaddr >= vma + lt_section_size(h->abfd, s))
			continue;
		const char *f = NULL, *fn = NULL;
		unsigned l = 0;
		if (!bfd_find_nearest_line(h->abfd, s, h->syms, vaddr - vma, &f, &fn, &l) || !f)
			return 0;
		*file = f;
		*line = l;
		*function = fn;
		return 1;
	}
	return 0;
}

static void bfd_lines_close(void *hp)
{
	struct bfd_handle *h = hp;
	bfd_close(h->abfd);
	free(h->syms);
	free(h);
}

static char *bfd_lines_demangle(const char *symbol)
{
	return bfd_demangle(NULL, symbol, DMGL_PARAMS | DMGL_ANSI);
}

const struct sym_line_ops sym_bfd_ops = {
    "libbfd", bfd_lines_open, bfd_lines_lookup, bfd_lines_close, bfd_lines_demangle,
};
