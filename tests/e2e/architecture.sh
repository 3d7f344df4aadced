#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The runtime's architecture, checked:
#  1. the core (src/core) names no module: no module, paradigm or sampler word outside the
#     option table (config.c, config.h).  The words are the option table's module and
#     sampler names, plus the libraries and sources the modules use;
#  2. interposers meet only through the core: a file of src/interpose includes no other
#     interposer's header, and each interposer object's undefined lt_* symbols are defined
#     by the core or the shared helpers (src/common), never by another module.  A module
#     split over a folder of src/interpose is one module: its private headers and symbols
#     are for its own files only; and no more modules than LT_MODULES_MAX (each owns a word
#     of every thread's module storage);
#  3. no source file of the repository is over 1,500 lines (runtime files over 600 are
#     listed, not failed).
# Each violation is printed; the test fails when there is one.
. "$(dirname "$0")/lib.sh"

OBJ=$BUILD/CMakeFiles/trace_objs.dir/src
[ -d "$OBJ/core" ] || fail "no runtime objects under $OBJ"
violations=0
violation() {
	echo "VIOLATION: $*"
	violations=$((violations + 1))
}

# ---- 1. the core names no module ----
table() { # the quoted words of the C array $1 in config.c
	awk -v name="$1" 'index($0, name "[] = {") { on = 1 } on { print } on && /};/ { exit }' \
		"$SRC/src/core/config.c" | grep -o '"[a-z]*"' | tr -d '"'
}
# The module words are LT_MODULE_WORDS's (src/common/modules.h), which config.c's table uses.
names=$(sed -n 's/^.*X([A-Z]*, "\([a-z]*\)").*/\1/p' "$SRC/src/common/modules.h"; table lt_sampler_names)
[ "$(echo "$names" | wc -w)" -ge 8 ] || fail "cannot read the option table's names: $names"
# Module names the core uses in their ordinary sense (the pthread API it is built on, /proc,
# the user, memory and CPUs): not paradigm names.
ordinary=" pthread proc user memory cpu "
words=
for n in $names; do
	case $ordinary in *" $n "*) continue ;; esac
	words="$words${words:+|}$n"
done
# Substrings: the libraries and interfaces behind the modules and samplers.
libs='kokkos|cupti|cuda|hip|ompt|gomp|openmp|omp_|papi|sampler|rapl|thermal|numa|mpi'
core_files=$(ls "$SRC"/src/core/*.[ch] | grep -v '/config\.[ch]$')
hits=$(grep -niE "$libs" $core_files; grep -niwE "$words" $core_files)
if [ -n "$hits" ]; then
	violation "the core names modules (words: $libs; whole words: $words):"
	echo "$hits" | sed 's/^/    /'
fi

# ---- 2. interposers meet only through the core ----
# A module is one file of src/interpose, or one folder there (a large one: its files share a
# private header).  A file includes the core's module.h and lock.h, the shared helpers, the
# format and the public API, and, in a module's folder, that folder's own headers.
root=$(realpath "$SRC")
for f in "$SRC"/src/interpose/*.c "$SRC"/src/interpose/*/*.c; do
	[ -e "$f" ] || continue
	dir=$(realpath "$(dirname "$f")")
	name=${f#"$SRC"/src/}
	while read -r inc; do
		p=$(realpath -m "$dir/$inc")
		case $p in
		"$root"/src/core/module.h | "$root"/src/core/lock.h | "$root"/src/common/*.h) continue ;;
		esac
		[ "$dir" != "$root/src/interpose" ] && [ "$(dirname "$p")" = "$dir" ] && continue
		if [ ! -e "$p" ]; then
			case $inc in format.h | libtrace/*.h) continue ;; esac
		fi
		violation "$name includes \"$inc\" (allowed: the core's module.h and lock.h," \
			"src/common/*.h, format.h, libtrace/*.h, its own module folder's headers)"
	done < <(sed -n 's/^#include "\(.*\)".*/\1/p' "$f")
done
# Symbols: what the core and the shared helpers define, then each module's needs: an object's
# undefined lt_* symbols are the core's, the shared helpers', or its own module's (the files
# of an interposer's folder; for a sampler, the sampler thread's directory).
defined=$(nm --defined-only "$OBJ"/core/*.o "$OBJ"/common/*.o | awk 'NF == 3 {print $3}' |
	sort -u)
check_module() { # check_module OBJECTS...: one module's objects
	local own o s
	own=$(nm --defined-only "$@" | awk 'NF == 3 {print $3}' | sort -u)
	for o in "$@"; do
		for s in $(nm --undefined-only "$o" | awk '$2 ~ /^lt_/ {print $2}'); do
			grep -qx "$s" <<<"$defined" && continue
			grep -qx "$s" <<<"$own" && continue
			violation "${o#"$OBJ"/} uses $s, which neither the core, src/common nor its" \
				"own module defines"
		done
	done
}
for o in "$OBJ"/interpose/*.o "$OBJ"/counters/*.o "$OBJ"/api/*.o; do
	[ -e "$o" ] && check_module "$o"
done
for d in "$OBJ"/interpose/*/; do
	[ -d "$d" ] && check_module "$d"*.o
done
[ -d "$OBJ/samplers" ] && check_module "$OBJ"/samplers/*.o

# Each module owns one word of every thread's module storage, indexed by its place in the
# section: one module more than LT_MODULES_MAX would write past it.  The test copy of the
# runtime has every module of src/ plus the test module.
max=$(sed -n 's/^#define LT_MODULES_MAX \([0-9]*\).*/\1/p' "$SRC/src/core/module.h")
count=$(cat "$SRC"/src/*/*.c "$SRC"/src/*/*/*.c "$SRC"/tests/modules/*.c 2>/dev/null | grep -c '^LT_MODULE(')
[ -n "$max" ] && [ "$count" -gt 1 ] || fail "cannot count the modules ($count) or read LT_MODULES_MAX ($max)"
[ "$count" -le "$max" ] || violation "$count modules registered, LT_MODULES_MAX is $max (raise it)"

# ---- 3. file lengths ----
if git -C "$SRC" rev-parse >/dev/null 2>&1; then
	files=$(git -C "$SRC" ls-files | grep -E '\.(c|h|cpp|cu|py|sh|cmake|in|spec)$|CMakeLists\.txt$')
else
	files=$(cd "$SRC" && find . -path ./build -prune -o -type f \( -name '*.[ch]' -o \
		-name '*.cpp' -o -name '*.py' -o -name '*.sh' -o -name CMakeLists.txt \) -print)
fi
for f in $files; do
	[ -f "$SRC/$f" ] || continue
	n=$(wc -l <"$SRC/$f")
	if [ "$n" -gt 1500 ]; then
		violation "$f has $n lines (at most 1,500)"
	elif [ "$n" -gt 600 ] && [[ $f == src/* ]]; then
		echo "note: runtime file $f has $n lines (over 600)"
	fi
done

[ $violations = 0 ] || fail "$violations architecture violation(s)"
echo "ok: the core names no module, interposers meet only through the core, no file over 1,500 lines"
