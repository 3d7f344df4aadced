#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The install as other projects use it: after `cmake --install` into a prefix outside the
# loader's path,
#  (a) an external CMake project with find_package(libtrace) and libtrace::annotate builds,
#      and its program starts without LD_LIBRARY_PATH; LIBTRACE_PRELOAD_LIBRARY names the
#      installed libtrace.so;
#  (b) a Makefile with `pkg-config --cflags --libs libtrace` likewise;
#  (c) the installed trace-run traces that program (libtrace.so of the install) and the
#      installed trace-dump reads the trace: the program's region and marker are in it;
#  (d) only the public header is installed (no mpi_abi.h);
#  (e) every installed tool answers --version, "<tool> (libtrace) <version>", exit 0, and
#      finds the install's libraries through a relative RPATH ($ORIGIN);
#  (f) the prefix moved elsewhere still works: libtrace.pc and libtraceConfig.cmake name
#      the new place, the moved trace-run and trace-dump trace and read.
. "$(dirname "$0")/lib.sh"

command -v pkg-config >/dev/null || skip "pkg-config is missing (apt-get install pkg-config)"
command -v make >/dev/null || skip "make is missing (apt-get install make)"

prefix=$WORK/prefix
cmake --install "$BUILD" --prefix "$prefix" >"$WORK/install.log" 2>&1 || {
	tail "$WORK/install.log" >&2
	fail "cmake --install $BUILD failed"
}
unset LD_LIBRARY_PATH LD_PRELOAD
version=$(sed -n 's/^project(libtrace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$version" ] || fail "no project(libtrace VERSION ...) in CMakeLists.txt"

# The program: a region and a marker, and what it says when it runs.
mkdir -p "$WORK/cmake-app" "$WORK/make-app"
cat >"$WORK/app.c" <<'EOF'
#include <libtrace/annotate.h>
#include <stdio.h>

int main(void)
{
	ltr_region_begin("install_region");
	ltr_marker("install_marker");
	ltr_region_end("install_region");
	puts("annotated app ran");
	return 0;
}
EOF
cp "$WORK/app.c" "$WORK/cmake-app/app.c"
cp "$WORK/app.c" "$WORK/make-app/app.c"

# ---- (a) find_package(libtrace)
cat >"$WORK/cmake-app/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.16)
project(app LANGUAGES C)
find_package(libtrace 0 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE libtrace::annotate)
file(WRITE ${CMAKE_BINARY_DIR}/preload.txt "${LIBTRACE_PRELOAD_LIBRARY}")
EOF
cmake -S "$WORK/cmake-app" -B "$WORK/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" \
	>"$WORK/cmake-app.log" 2>&1 || {
	tail -20 "$WORK/cmake-app.log" >&2
	fail "(a) the external project does not configure: find_package(libtrace) against $prefix"
}
cmake --build "$WORK/cmake-build" >>"$WORK/cmake-app.log" 2>&1 || {
	tail -20 "$WORK/cmake-app.log" >&2
	fail "(a) the external project does not build with libtrace::annotate"
}
out=$("$WORK/cmake-build/app" 2>&1) || fail "(a) the CMake-built app does not run without LD_LIBRARY_PATH: $out"
[ "$out" = "annotated app ran" ] || fail "(a) the CMake-built app says: $out"
preload=$(cat "$WORK/cmake-build/preload.txt")
installed=$(ls "$prefix"/lib*/libtrace.so | head -1)
[ -f "$preload" ] && [ "$(realpath "$preload")" = "$(realpath "$installed")" ] ||
	fail "(a) LIBTRACE_PRELOAD_LIBRARY is '$preload', not the installed libtrace.so"
echo "(a) find_package(libtrace): built, ran without LD_LIBRARY_PATH; LIBTRACE_PRELOAD_LIBRARY=$preload"

# ---- (b) pkg-config libtrace
cat >"$WORK/make-app/Makefile" <<'EOF'
CFLAGS += $(shell pkg-config --cflags libtrace)
LDLIBS += $(shell pkg-config --libs libtrace)
app: app.c
EOF
export PKG_CONFIG_PATH=$(dirname "$(ls "$prefix"/lib*/pkgconfig/libtrace.pc 2>/dev/null | head -1)")
pkg-config --exists libtrace || fail "(b) pkg-config libtrace: no libtrace.pc under $prefix"
[ "$(pkg-config --modversion libtrace)" = "$version" ] ||
	fail "(b) pkg-config --modversion libtrace: $(pkg-config --modversion libtrace), not $version"
make -C "$WORK/make-app" >"$WORK/make-app.log" 2>&1 || {
	tail -20 "$WORK/make-app.log" >&2
	fail "(b) the Makefile with pkg-config --cflags --libs libtrace does not build"
}
out=$("$WORK/make-app/app" 2>&1) || fail "(b) the pkg-config-built app does not run without LD_LIBRARY_PATH: $out"
[ "$out" = "annotated app ran" ] || fail "(b) the pkg-config-built app says: $out"
echo "(b) pkg-config libtrace ($(pkg-config --libs libtrace)): built, ran without LD_LIBRARY_PATH"

# ---- (c) the installed trace-run and trace-dump
for app in "$WORK/cmake-build/app" "$WORK/make-app/app"; do
	rm -rf "$WORK/trace"
	out=$("$prefix/bin/trace-run" -q -o "$WORK/trace" -- "$app" 2>&1) ||
		fail "(c) the installed trace-run failed on $app: $out"
	[ "$out" = "annotated app ran" ] || fail "(c) under the installed trace-run, $app says: $out"
	"$prefix/bin/trace-dump" "$WORK/trace" >"$WORK/dump" || fail "(c) the installed trace-dump cannot read the trace"
	grep -q 'MARKER "install_marker"' "$WORK/dump" || fail "(c) no marker of $app in the trace"
	[ "$(grep -c 'install_region' "$WORK/dump")" = 2 ] ||
		fail "(c) the trace of $app has not the region's begin and end"
done
echo "(c) the installed trace-run traced both programs, the installed trace-dump read them"

# ---- (d) public headers only
headers=$(cd "$prefix" && find . -name '*.h' | sort)
[ "$headers" = "./include/libtrace/annotate.h" ] || fail "(d) installed headers: $headers"
echo "(d) installed headers: $headers"

# ---- (e) --version, RPATH
tools=(trace-run trace-dump trace-report)
[ -x "$BUILD/trace2otf2" ] && tools+=(trace2otf2)
for t in "${tools[@]}"; do
	[ -x "$prefix/bin/$t" ] || fail "(e) $t is not installed"
	out=$("$prefix/bin/$t" --version 2>&1) || fail "(e) $t --version: exit status $?: $out"
	[ "$out" = "$t (libtrace) $version" ] || fail "(e) $t --version says '$out'"
done
for f in "$prefix"/bin/*; do
	[ "$(head -c 4 "$f" | tail -c 3)" = ELF ] || continue # trace-run is a script
	readelf -d "$f" | grep -E 'RUNPATH|RPATH' | grep -q '\$ORIGIN' ||
		fail "(e) $f has no \$ORIGIN RPATH: $(readelf -d "$f" | grep -E 'RUNPATH|RPATH')"
done
echo "(e) ${tools[*]}: --version says '<tool> (libtrace) $version'; the binaries' RPATH is relative"

# ---- (f) a moved prefix
moved=$WORK/moved
mv "$prefix" "$moved"
export PKG_CONFIG_PATH=${PKG_CONFIG_PATH/$prefix/$moved}
case $(pkg-config --cflags libtrace) in
*"$moved"/*) ;;
*) fail "(f) after a move, pkg-config --cflags libtrace says $(pkg-config --cflags libtrace)" ;;
esac
cmake -S "$WORK/cmake-app" -B "$WORK/cmake-moved" -DCMAKE_PREFIX_PATH="$moved" \
	>"$WORK/cmake-moved.log" 2>&1 || fail "(f) find_package(libtrace) fails in the moved prefix"
case $(cat "$WORK/cmake-moved/preload.txt") in
"$moved"/*) ;;
*) fail "(f) after a move, LIBTRACE_PRELOAD_LIBRARY is $(cat "$WORK/cmake-moved/preload.txt")" ;;
esac
rm -rf "$WORK/trace"
"$moved/bin/trace-run" -q -o "$WORK/trace" -- "$TESTBIN/count_events" 1 10 >/dev/null 2>&1 ||
	fail "(f) the moved trace-run cannot trace"
n=$("$moved/bin/trace-dump" "$WORK/trace" | grep -c ' COUNTER ')
[ "$n" = 20 ] || fail "(f) the moved trace-dump reads $n counter records, expected 20 (2 threads x 10)"
echo "(f) the moved prefix: pkg-config, find_package, trace-run and trace-dump still work"
