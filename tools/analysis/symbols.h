/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * symbols.h - code addresses to names, post mortem.
 *
 * An address of a traced process is first turned into (module path, file offset) through
 * the process's recorded memory map, then resolved in that module: the function from the
 * ELF symbol tables (of the module, or of its separate debug file found by build-id or
 * .gnu_debuglink), source file and line from the debug information through a line backend
 * (libbfd where it was built in).  Results are cached per (module, offset).  Names are
 * never bare addresses: an address no symbol covers is named "module+0xOFFSET", OFFSET
 * being the ELF virtual address as addr2line takes it.
 */
#ifndef LIBTRACE_SYMBOLS_H
#define LIBTRACE_SYMBOLS_H

#include <stdint.h>

struct sym_table;

struct sym_result {
	const char *function; /* demangled name, or "module+0x..."; never NULL */
	const char *symbol;   /* the name as in the symbol table (mangled), or NULL */
	const char *file;     /* source file, or NULL */
	unsigned line;	      /* 0 when unknown */
	const char *module;   /* path of the module, or NULL when no mapping holds the address */
	const char *plt;      /* a PLT stub: the name of the function it jumps to, else NULL */
};

/*
 * A line backend: what a debug-information reader provides.  open() returns a handle or
 * NULL (no debug information); lookup() returns 1 and sets file/line (and the function
 * name it found, or NULL) for an ELF virtual address, 0 when it knows nothing.  The strings
 * stay valid until close().  demangle() returns a malloc'ed string or NULL.
 */
struct sym_line_ops {
	const char *name;
	void *(*open)(const char *path);
	int (*lookup)(void *h, uint64_t vaddr, const char **file, unsigned *line,
		      const char **function);
	void (*close)(void *h);
	char *(*demangle)(const char *symbol);
};

extern const struct sym_line_ops sym_bfd_ops; /* only where built with libbfd */

/* debug_root: where debug files live (normally "/usr/lib/debug"); ops may be NULL. */
struct sym_table *sym_table_new(const struct sym_line_ops *ops, const char *debug_root);
void sym_table_free(struct sym_table *t);

/* Resolves the code at file offset `offset` of module `path`.  Returns 0; out stays valid
 * as long as the table. */
int sym_resolve(struct sym_table *t, const char *path, uint64_t offset, struct sym_result *out);

/* The file offset in module `path` of the function `name`: 0, or -1 when it has none. */
int sym_find(struct sym_table *t, const char *path, const char *name, uint64_t *offset);

/* For an address outside every mapping: "[unknown]+0xADDR". */
/* A demangled copy of a C++ symbol name (malloc'ed), or NULL. */
char *sym_demangle(struct sym_table *t, const char *symbol);

void sym_unmapped(struct sym_table *t, uint64_t addr, struct sym_result *out);

#endif /* LIBTRACE_SYMBOLS_H */
