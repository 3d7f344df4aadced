/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bfd_compat.h - the one place that knows binutils version differences.
 *
 * binutils >= 2.34 take a section only (bfd_section_vma(sec)); older ones took the bfd
 * too (bfd_get_section_vma(abfd, sec)) and had bfd_get_section_flags.  Debian 12 ships 2.40.
 * The demangler flags live in libiberty's demangle.h, which binutils-dev does not install.
 */
#ifndef LIBTRACE_BFD_COMPAT_H
#define LIBTRACE_BFD_COMPAT_H

#include <bfd.h>

#ifdef bfd_get_section_vma /* binutils < 2.34 */
#define lt_section_vma(abfd, sec)   bfd_get_section_vma(abfd, sec)
#define lt_section_size(abfd, sec)  bfd_get_section_size(sec)
#define lt_section_flags(abfd, sec) bfd_get_section_flags(abfd, sec)
#else
#define lt_section_vma(abfd, sec)   bfd_section_vma(sec)
#define lt_section_size(abfd, sec)  bfd_section_size(sec)
#define lt_section_flags(abfd, sec) bfd_section_flags(sec)
#endif

#ifndef DMGL_PARAMS
#define DMGL_PARAMS (1 << 0) /* libiberty demangle.h */
#define DMGL_ANSI   (1 << 1)
#endif

#endif /* LIBTRACE_BFD_COMPAT_H */
