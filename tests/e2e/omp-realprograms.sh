#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Real OpenMP programs from Debian's packages, all built by gcc against libgomp, traced with
# OMP_NUM_THREADS=2: ImageMagick's convert (libMagickCore), GraphicsMagick's gm convert
# (libGraphicsMagick) and numpy's matrix products on OpenBLAS's OpenMP build (libopenblas).
# Each behaves exactly as untraced (output, files, exit status); its trace holds every
# thread libgomp started (counted by strace on an untraced run); its OTF2 archive has
# "!$omp parallel" regions entered by both members of a team, named after the program's
# own outlined functions: "fn._omp_fn.N" or "@file:line" with symbols, and for Debian's
# stripped libraries (whose outlined functions are local symbols, gone with .symtab)
# "libX.so+0xVADDR" - exactly the functions gdb sees passed to GOMP_parallel* in an untraced
# run (when gdb is installed).  A program whose package is missing is skipped (exit 77 at
# the end, naming it) after the others have run.
. "$(dirname "$0")/lib.sh"
need_converter
command -v strace >/dev/null || skip "strace is not installed (tools/bootstrap.sh installs it)"
export OMP_NUM_THREADS=2
missing=()
ran=0

# threads_started CMD...: how many threads CMD starts, counted by strace on a plain run.
threads_started() {
	local log=$WORK/strace.log
	rm -rf "$WORK/st" && cp -a "$WORK/in" "$WORK/st"
	(cd "$WORK/st" && strace -f -qq -e trace=clone,clone3 -o "$log" "$@" >/dev/null 2>&1)
	grep -c CLONE_THREAD "$log"
}

# outlined LIB CMD...: prints "<file name>+0x<vaddr>" of every function CMD's untraced run
# passes to a GOMP_parallel* entry point that LIB imports, as gdb sees it (the first
# argument, %rdi); nothing when gdb is missing.  vaddr = address - the library's load base:
# true for a shared library whose first PT_LOAD has vaddr 0 at file offset 0, as Debian's are.
outlined() {
	local lib=$1
	shift
	command -v gdb >/dev/null || return 0
	local cmds=$WORK/gdb.cmds log=$WORK/gdb.log
	{
		echo "set breakpoint pending on"
		echo "set pagination off"
		for f in $(nm -D --undefined-only "$lib" | grep -o 'GOMP_parallel[A-Za-z_]*' | sort -u); do
			printf 'break %s\ncommands\nsilent\nprintf "fn %%p\\n", $rdi\ncontinue\nend\n' "$f"
		done
		# At exit, the mappings that turn addresses into (file, vaddr).
		printf 'break exit\ncommands\nsilent\ninfo proc mappings\nkill\nquit\nend\nrun\nquit\n'
	} >"$cmds"
	rm -rf "$WORK/gdb" && cp -a "$WORK/in" "$WORK/gdb"
	(cd "$WORK/gdb" && gdb -q -batch -nx -x "$cmds" --args "$@" >"$log" 2>&1 </dev/null)
	python3 - "$log" <<'PY'
import os, re, sys
fns, maps = set(), []
for line in open(sys.argv[1], errors='replace'):
    m = re.match(r'fn (0x[0-9a-f]+)$', line.strip())
    if m:
        fns.add(int(m.group(1), 16))
        continue
    f = line.split()
    if len(f) >= 5 and f[0].startswith('0x') and f[-1].startswith('/'):
        maps.append((int(f[0], 16), int(f[1], 16), f[-1]))
base = {}
for lo, hi, path in maps:
    base[path] = min(base.get(path, lo), lo)
for a in sorted(fns):
    for lo, hi, path in maps:
        if lo <= a < hi:
            print('%s+0x%x' % (os.path.basename(path), a - base[path]))
            break
    else:
        print('unmapped+0x%x' % a)
PY
}

# The archive's OpenMP parallel regions against the program's library (and gdb's list).
cat >"$WORK/omp_regions.py" <<'PY'
import collections, os, re, subprocess, sys
import otf2
anchor, lib, expected = sys.argv[1], sys.argv[2], sys.argv[3]
base = os.path.basename(lib)
nm = subprocess.run(['nm', '-D', '--defined-only', lib], check=True, capture_output=True, text=True)
exported = set(l.split()[-1].split('@')[0] for l in nm.stdout.splitlines())
want = set(open(expected).read().split())
enters = collections.Counter()
where = collections.defaultdict(set)
described = collections.defaultdict(set)
with otf2.reader.open(anchor) as tr:
    for loc, ev in tr.events:
        if type(ev).__name__ == 'Enter' and ev.region.name.startswith('!$omp parallel'):
            enters[ev.region.name] += 1
            where[ev.region.name].add(loc.name)
            described[ev.region.name].add(ev.region.description or '')
errors = []
# An outlined function of a stripped library is named after the exported function that
# forked it, "foo (outlined)", its module+offset the region's description.
named = re.compile(r'!\$omp parallel (\S.*(_omp_fn|@).*|[^ /]+\+0x[0-9a-f]+|\S+ \(outlined\))')
own = []
for name in sorted(enters):
    print('  %-60s %5d enters on %d locations' % (name, enters[name], len(where[name])))
    if not named.fullmatch(name):
        errors.append('region %r is named neither by an outlined function nor module+offset' % name)
    rest = name[len('!$omp parallel '):]
    sym = re.split(r'[ .]', rest, 1)[0]  # foo of "foo._omp_fn.0" or "foo @f.c:1"
    if rest.startswith(base + '+0x') or sym in exported:
        own.append(name)
if not enters:
    errors.append('no "!$omp parallel" region in the archive')
if not own:
    errors.append('no parallel region names a function of %s' % base)
if not any(len(w) >= 2 for w in where.values()):
    errors.append('no parallel region entered on two locations (a team of 2)')
# gdb's outlined functions, named module+offset: the same set when the names are such.
offset = re.compile(r'!\$omp parallel ([^ /]+\+0x[0-9a-f]+)')
got = set(m.group(1) for m in map(offset.fullmatch, enters) if m)
for name in enters:
    if name.endswith(' (outlined)'):
        for text in described[name]:
            d = re.search(r'[^ /]+\+0x[0-9a-f]+', text)
            if d:
                got.add(d.group(0))
            else:
                errors.append('region %r does not say its module+offset: %r' % (name, text))
if want and got and got != want:
    errors.append('outlined functions %s in the archive, gdb saw %s' % (sorted(got), sorted(want)))
for e in errors:
    print('omp_regions: ' + e, file=sys.stderr)
print('%d parallel regions, %d of %s%s' % (len(enters), len(own), base,
      ', the functions gdb saw' if want and got == want else ''))
sys.exit(1 if errors else 0)
PY

# check NAME LIB CMD...: same behaviour, threads against strace, regions against LIB.
check() {
	local name=$1 lib=$2
	shift 2
	same_behaviour "$name" "$@"
	local n
	n=$(threads_started "$@")
	[ "$n" -ge 1 ] || fail "$name: strace saw no thread start with OMP_NUM_THREADS=2"
	local summary
	summary=$($CHECK "$WORK/$name.trace" --processes 1 --threads $((n + 1)) \
		--calls pthread_create="$n" --no-lost) || fail "$name: $summary"
	echo "$name: $n threads started (strace), trace: $summary"
	converted "$WORK/$name.trace" "$WORK/$name.otf2" --processes 1 --locations $((n + 1))
	outlined "$lib" "$@" >"$WORK/$name.outlined"
	[ -s "$WORK/$name.outlined" ] || command -v gdb >/dev/null ||
		echo "$name: gdb is not installed, outlined functions not cross-checked"
	/usr/bin/python3 "$WORK/omp_regions.py" "$WORK/$name.otf2/traces.otf2" "$lib" \
		"$WORK/$name.outlined" || fail "$name: OpenMP regions"
	ran=$((ran + 1))
}

# lib_of PROGRAM PATTERN: the real path of the library matching PATTERN that PROGRAM loads.
lib_of() {
	local p
	p=$(ldd "$1" 2>/dev/null | awk -v pat="$2" '$1 ~ pat { print $3; exit }')
	[ -n "$p" ] && readlink -f "$p"
}

mkdir -p "$WORK/in"

# ImageMagick: libMagickCore gives a loop 2 threads only from 8192 rows on (its workload
# heuristic, GetMagickNumberThreads), hence the tall image; PPM output has no time stamps.
im=/usr/bin/convert-im6.q16
if [ -x $im ] && lib=$(lib_of $im libMagickCore); then
	check imagemagick "$lib" $im -size 128x8192 gradient:red-blue -swirl 60 -blur 0x3 \
		-resize 50%x100% -sharpen 0x1 -negate out.ppm
else
	missing+=("ImageMagick (apt-get install imagemagick-6.q16)")
fi

if [ -x /usr/bin/gm ] && lib=$(lib_of /usr/bin/gm libGraphicsMagick-Q); then
	check graphicsmagick "$lib" /usr/bin/gm convert -size 512x512 gradient:red-blue -swirl 60 \
		-blur 0x3 -resize 50% -sharpen 0x1 -negate out.ppm
else
	missing+=("GraphicsMagick (apt-get install graphicsmagick)")
fi

# numpy on OpenBLAS's OpenMP build, chosen with LD_LIBRARY_PATH whatever the libblas.so.3
# alternative says (set for the whole check: an `env` in the command would exec a second
# process image).  Python dlopens numpy RTLD_LOCAL, so libgomp is outside the global scope
# (RTLD_NEXT does not find it).  Small integers: every product is exact, whatever the
# threads' shares.
blasdir=/usr/lib/x86_64-linux-gnu/openblas-openmp
if [ -f $blasdir/libopenblas.so.0 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	cat >"$WORK/in/matmul.py" <<'PY'
import numpy as np
for n in (256, 400):
    a = (np.arange(n * n, dtype=np.float64) % 7).reshape(n, n)
    b = (np.arange(n * n, dtype=np.float64) % 11).reshape(n, n)
    c = a @ b
    d = a.T @ c
    print(n, c.sum(), d.sum(), c[0, :3], d[-1, -3:])
PY
	LD_LIBRARY_PATH=$blasdir check numpy-openblas "$(readlink -f $blasdir/libopenblas.so.0)" \
		/usr/bin/python3 matmul.py
else
	missing+=("numpy on OpenBLAS-OpenMP (apt-get install python3-numpy libopenblas0-openmp)")
fi

[ ${#missing[@]} = 0 ] || skip "$ran programs checked; not installed: ${missing[*]}"
echo ok
