#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gen_wrappers.py [--fortran] SPEC OUT.c - writes the MPI wrappers described in mpi.spec (see
its head), for one binding:

  C          int MPI_Send(...) calls PMPI_Send (both companion libraries)
  --fortran  void mpi_send_(...), with the other spellings Open MPI exports (mpi_send,
             mpi_send__, MPI_SEND), takes every argument by reference and calls Open MPI's
             pmpi_send_ (the Open MPI companion only: see fortran.h)

Each wrapper opens the function's region (ltm_enter), records what its kind says before and
after the real call, and closes the region with the return code.  What is recorded is
written once, by body(), over the C values of the parameters under their spec names; the
binding says how to get them (the Fortran one converts the handles it needs).  The
recording helpers are called whether or not the call is traced (they check), because some
take part in communication every rank must do alike (a new communicator's id is
broadcast)."""
import re
import sys

KINDS = {'plain', 'send', 'recv', 'sendrecv', 'isend', 'irecv', 'coll', 'comm_new', 'comm_free'}
# Handle types and the name of their MPI_<Name>_f2c conversion.
HANDLES = {'MPI_Comm': 'Comm', 'MPI_Datatype': 'Type', 'MPI_Request': 'Request', 'MPI_Op': 'Op',
           'MPI_Group': 'Group', 'MPI_Info': 'Info', 'MPI_Win': 'Win'}


class Param:
    def __init__(self, text, lineno):
        m = re.match(r'(.*?)(\w+)\s*(\[\])?$', text.strip())
        if not m or not m.group(1).strip():
            fail(lineno, 'parameter ' + text)
        self.ctype = m.group(1).strip()       # 'const int', 'MPI_Comm *', 'const void *'
        self.name = m.group(2)
        self.array = bool(m.group(3))
        self.base = self.ctype.replace('const', '').replace('*', '').strip()
        self.pointer = self.array or '*' in self.ctype
        self.lineno = lineno


class Func:
    def __init__(self, lineno, kind, name, params, keys):
        self.lineno, self.kind, self.name, self.keys = lineno, kind, name, keys
        self.text = params  # as the spec writes them: the C prototype's
        self.params = [] if params.strip() == 'void' else [Param(p, lineno) for p in params.split(',')]
        self.names = [p.name for p in self.params]

    def param(self, name):
        return next(p for p in self.params if p.name == name)


def fail(lineno, what):
    sys.exit('%s:%d: %s' % (SPEC, lineno, what))


def parse(path):
    funcs = []
    for lineno, line in enumerate(open(path), 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        m = re.match(r'(\w+)\s+(\w+)\s+(MPI_\w+)\((.*?)\)((?:\s+\w+=.*)?)$', line)
        if not m:
            fail(lineno, 'not KIND RETURN NAME(PARAMETERS) [key=value...]')
        kind, ret, name, params, rest = m.groups()
        if kind not in KINDS:
            fail(lineno, 'unknown kind ' + kind)
        if ret != 'int':
            fail(lineno, 'only int functions')
        keys = dict(re.findall(r'(\w+)=(.*?)(?=\s+\w+=|$)', rest.strip()))
        funcs.append(Func(lineno, kind, name, params, keys))
    return funcs


def expr(e):
    """A spec expression in C."""
    e = re.sub(r'\bSUM\(', 'ltm_sum_bytes_c(comm, ', e)
    e = re.sub(r'\bB\(', 'ltm_bytes(', e)
    e = re.sub(r'\bP\b', 'P_', e)
    return re.sub(r'\bME\b', 'ME_', e)


def body(f, b):
    """The recording code before and after the real call (which leaves its result in rc)."""
    pre, post = [], []
    kind, keys = f.kind, f.keys

    def need(*ps):
        for p in ps:
            if p not in f.names:
                fail(f.lineno, '%s needs a parameter %s' % (kind, p))

    if kind == 'send':
        need('dest', 'tag', 'count', 'datatype', 'comm')
        pre.append('ltm_send(&c, comm, dest, tag, count, datatype);')
    elif kind in ('recv', 'sendrecv'):
        need('status', 'comm')
        pre += b.status_pre()
        if kind == 'sendrecv':
            if keys.get('replace') == '1':
                need('count', 'datatype', 'dest', 'sendtag')
                pre.append('ltm_send(&c, comm, dest, sendtag, count, datatype);')
            else:
                need('sendcount', 'sendtype', 'dest', 'sendtag')
                pre.append('ltm_send(&c, comm, dest, sendtag, sendcount, sendtype);')
        post.append('if (rc == MPI_SUCCESS)')
        post.append('\tltm_recv(&c, comm, %s);' % b.status())
    elif kind == 'isend':
        need('dest', 'tag', 'count', 'datatype', 'comm', 'request')
        post.append('if (rc == MPI_SUCCESS)')
        post.append('\tltm_isend(&c, comm, dest, tag, count, datatype, %s);'
                    % b.deref(f.param('request')))
    elif kind == 'irecv':
        need('source', 'tag', 'comm', 'request')
        post.append('if (rc == MPI_SUCCESS)')
        post.append('\tltm_irecv(&c, comm, source, tag, %s);' % b.deref(f.param('request')))
    elif kind == 'coll':
        need('comm')
        for k in ('op', 'root', 'sent', 'recv'):
            if k not in keys:
                fail(f.lineno, 'coll needs ' + k + '=')
        root = '-1' if keys['root'] == 'none' else keys['root']
        sent, recv = expr(keys['sent']), expr(keys['recv'])
        uses = sent + recv + root
        pre.append('if (c.t) {')
        if 'P_' in uses:
            pre.append('\tint P_ = ltm_comm_size(comm);')
        if 'ME_' in uses:
            pre.append('\tint ME_ = ltm_comm_rank(comm);')
        pre.append('\tltm_coll(&c, LT_MPI_%s, comm, %s, (uint64_t)(%s), (uint64_t)(%s));'
                   % (keys['op'], root, sent, recv))
        pre.append('}')
    elif kind == 'comm_new':
        new = keys.get('new')
        if not new or new not in f.names:
            fail(f.lineno, 'comm_new needs new=PARAMETER')
        need('comm')
        pre.append('if (c.t)')
        pre.append('\tltm_coll(&c, LT_MPI_CREATE_HANDLE, comm, -1, 0, 0);')
        post.append('if (rc == MPI_SUCCESS)')
        post.append('\tltm_comm_new(&c, %s);' % b.deref(f.param(new)))
    elif kind == 'comm_free':
        need('comm')
        pre.append('uint64_t key_ = ltm_comm_key(%s);' % b.deref(f.param('comm')))
        post.append('if (rc == MPI_SUCCESS)')
        post.append('\tltm_comm_free(key_);')
    return pre, post


HEAD = ['static inline uint64_t ltm_sum_bytes_c(MPI_Comm comm, const int *counts, '
        'MPI_Datatype type)', '{', '\treturn ltm_sum_bytes(counts, type, comm);', '}', '']


class C:
    """int MPI_Send(...) { ... PMPI_Send(...) ... }: the parameters are the C values."""
    includes = ['#include <stdint.h>', '', '#include "ltm.h"']

    def deref(self, p):
        return '*' + p.name  # the handle an output (or in-out) parameter holds after the call

    def status_pre(self):
        return ['MPI_Status st_;', 'if (status == MPI_STATUS_IGNORE)', '\tstatus = &st_;']

    def status(self):
        return 'status'

    def wrapper(self, f, pre, post):
        return (['int %s(%s)' % (f.name, f.text), '{', '\tstruct ltm_call c;',
                 '\tltm_enter(&c, "%s", __builtin_return_address(0));' % f.name]
                + ['\t' + s for s in pre]
                + ['\tint rc = P%s(%s);' % (f.name, ', '.join(f.names))]
                + ['\t' + s for s in post]
                + ['\tltm_leave(&c, rc);', '\treturn rc;', '}', ''])


class Fortran:
    """void mpi_send_(... MPI_Fint *ierr) { ... pmpi_send_(...) ... }: parameter p arrives
    as f_p, by reference; its C value, where the recording uses it, is a local named p."""
    includes = ['#include <stdint.h>', '', '#include "fortran.h"']

    def deref(self, p):
        return 'PMPI_%s_f2c(*f_%s)' % (HANDLES[p.base], p.name)

    def status_pre(self):
        return ['MPI_Fint st_[LTMF_STATUS_INTS];', 'MPI_Status cst_;',
                'if (f_status == MPI_F_STATUS_IGNORE)', '\tf_status = st_;']

    def status(self):
        return 'ltmf_status(f_status, &cst_)'

    def ftype(self, p):
        if 'void' in p.ctype:
            return 'void *'      # a choice buffer: passed on as it came (MPI_IN_PLACE...)
        if p.base == 'MPI_Aint':
            return 'MPI_Aint *'  # INTEGER(KIND=MPI_ADDRESS_KIND)
        if 'char' in p.ctype:
            fail(p.lineno, 'no Fortran binding for strings: mark the function fortran=no')
        return 'MPI_Fint *'      # INTEGER, LOGICAL, handles, statuses, arrays of them

    def local(self, f, p):
        """The declaration of p's C value."""
        if p.array and p.base == 'int':
            return 'const int *%s = f_%s;' % (p.name, p.name)
        if not p.pointer and p.base in ('int', 'MPI_Aint'):
            return '%s %s = *f_%s;' % (p.base, p.name, p.name)
        if not p.pointer and p.base in HANDLES:
            return '%s %s = %s;' % (p.base, p.name, self.deref(p))
        fail(f.lineno, 'the Fortran wrapper cannot convert parameter %s' % p.name)

    def wrapper(self, f, pre, post):
        lower = f.name.lower()
        real = 'p%s_' % lower
        types = [self.ftype(p) for p in f.params] + ['MPI_Fint *']
        params = ', '.join('%sf_%s' % (t, p.name) for t, p in zip(types, f.params))
        params += (', ' if params else '') + 'MPI_Fint *ierr'
        code = ' '.join(pre + post)
        used = [p for p in f.params if re.search(r'\b%s\b' % p.name, code)]
        args = ', '.join(['f_' + n for n in f.names] + ['ierr'])
        return (['static void (*real_%s)(%s);' % (real, ', '.join(types)), '',
                 'void %s_(%s)' % (lower, params), '{', '\tstruct ltm_call c;',
                 '\tltm_enter(&c, "%s", __builtin_return_address(0));' % f.name]
                + ['\t' + self.local(f, p) for p in used]
                + ['\t' + s for s in pre]
                + ['\tLTMF_REAL(%s)(%s);' % (real, args), '\tint rc = *ierr;']
                + ['\t' + s for s in post]
                + ['\tltm_leave(&c, rc);', '}']
                + ['LTMF_ALIAS(%s_, %s);' % (lower, alias)
                   for alias in (lower, lower + '__', f.name.upper())]
                + [''])


def main():
    global SPEC
    args = sys.argv[1:]
    fortran = args[:1] == ['--fortran']
    if fortran:
        args = args[1:]
    if len(args) != 2:
        sys.exit('usage: gen_wrappers.py [--fortran] SPEC OUT.c')
    SPEC, out_path = args
    b = Fortran() if fortran else C()
    out = ['/* Generated by src/mpi/gen_wrappers.py%s from src/mpi/mpi.spec: do not edit. */'
           % (' --fortran' if fortran else '')] + b.includes + [''] + HEAD
    seen = set()
    for f in parse(SPEC):
        if f.name in seen:
            fail(f.lineno, f.name + ' twice')
        seen.add(f.name)
        if fortran and f.keys.get('fortran') == 'no':
            continue
        pre, post = body(f, b)
        out += b.wrapper(f, pre, post)
    with open(out_path, 'w') as fh:
        fh.write('\n'.join(out))


SPEC = None
main()
