#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Debian package: `cpack -G DEB` in the build directory makes libtrace-tracer_<version>,
# every file of it under /opt/libtrace; `dpkg -i` installs it, the installed tools run the
# demo (trace-run traces programs, trace-dump reads their traces, trace-report profiles
# one, trace2otf2 converts it, under mpirun too where Open MPI is: its MPI module lies in
# /opt/libtrace/lib/libtrace/), and `dpkg -r` removes every file it installed.
#
# THIS TEST CHANGES THE MACHINE: it installs a package with dpkg and removes it again (a
# trap removes it when a check fails). It runs only as root, with dpkg and cpack, when CI or
# LIBTRACE_TEST_DEB=1 is set, and never where libtrace-tracer is installed already or
# /opt/libtrace holds files; otherwise it skips.
. "$(dirname "$0")/lib.sh"

pkg=libtrace-tracer
root=/opt/libtrace
[ -n "${CI:-}" ] || [ "${LIBTRACE_TEST_DEB:-}" = 1 ] ||
	skip "installs a package: runs only with CI or LIBTRACE_TEST_DEB=1 set"
[ "$(id -u)" = 0 ] || skip "dpkg -i needs root"
command -v dpkg >/dev/null || skip "no dpkg (not a Debian system)"
command -v cpack >/dev/null || skip "no cpack (apt-get install cmake)"
command -v dpkg-shlibdeps >/dev/null || skip "no dpkg-shlibdeps (apt-get install dpkg-dev)"
state=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
[ -z "$state" ] || [ "$state" = not-installed ] || skip "$pkg is on this machine already ($state)"
[ -z "$(ls -A "$root" 2>/dev/null)" ] || skip "$root holds files already: not overwriting them"
unset LD_LIBRARY_PATH LD_PRELOAD
version=$(sed -n 's/^project(libtrace VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
[ -n "$version" ] || fail "no project(libtrace VERSION ...) in CMakeLists.txt"

# ---- the package
(cd "$BUILD" && cpack -G DEB -B "$WORK/cpack") >"$WORK/cpack.log" 2>&1 || {
	tail -20 "$WORK/cpack.log" >&2
	fail "cpack -G DEB failed in $BUILD"
}
deb=$(ls "$WORK"/cpack/*.deb 2>/dev/null)
[ "$(echo "$deb" | wc -w)" = 1 ] || fail "cpack made '$deb', expected one .deb"
[ "$(dpkg-deb -f "$deb" Package)" = $pkg ] || fail "the package is named $(dpkg-deb -f "$deb" Package)"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] ||
	fail "the package's version is $(dpkg-deb -f "$deb" Version), not $version"
outside=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | grep -vE "^\./($|opt/$|opt/libtrace/)" || true)
[ -z "$outside" ] || fail "files outside $root: $outside"
echo "$(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"

# ---- install; the trap removes the package whatever happens next
cleanup() {
	[ "$(dpkg-query -W -f='${db:Status-Status}' $pkg 2>/dev/null)" = installed ] &&
		dpkg -r $pkg >/dev/null 2>&1
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
dpkg -i "$deb" >"$WORK/dpkg-i.log" 2>&1 || {
	cat "$WORK/dpkg-i.log" >&2
	fail "dpkg -i $(basename "$deb") failed"
}
[ "$(dpkg-query -W -f='${db:Status-Status}' $pkg)" = installed ] || fail "dpkg -i left $pkg not installed"
dpkg -L $pkg >"$WORK/files"
tools=(trace-run trace-dump trace-report)
[ -x "$BUILD/trace2otf2" ] && tools+=(trace2otf2)
for t in "${tools[@]}"; do
	[ -x $root/bin/$t ] || fail "$root/bin/$t is not installed"
	grep -qx "$root/bin/$t" "$WORK/files" || fail "dpkg -L $pkg does not list $root/bin/$t"
	out=$($root/bin/$t --version 2>&1) || fail "$root/bin/$t --version: exit status $?: $out"
	[ "$out" = "$t (libtrace) $version" ] || fail "$root/bin/$t --version says '$out'"
done
for f in $root/lib/libtrace.so $root/lib/libtrace-annotate.so $root/include/libtrace/annotate.h \
	$root/lib/pkgconfig/libtrace.pc $root/share/man/man1/trace-run.1; do
	[ -f $f ] || fail "$f is not installed"
done
echo "installed: $(grep -c . "$WORK/files") paths; ${tools[*]} answer --version $version"

# ---- the demo with the installed tools
$root/bin/trace-run -q -o "$WORK/count" -- "$TESTBIN/count_events" 1 10 >/dev/null 2>&1 ||
	fail "the installed trace-run cannot trace count_events"
n=$($root/bin/trace-dump "$WORK/count" | grep -c ' COUNTER ')
[ "$n" = 20 ] || fail "the installed trace-dump reads $n counter records, expected 20 (2 threads x 10)"
demo=$BUILD/examples/pthread_pipeline
[ -x "$demo" ] || fail "no $demo"
$root/bin/trace-run -q -o "$WORK/demo" -- "$demo" 4 64 2000 >/dev/null 2>&1 ||
	fail "the installed trace-run cannot trace $demo"
threads=$($root/bin/trace-dump "$WORK/demo" | awk '{ print $1, $2 }' | sort -u | wc -l)
[ "$threads" -ge 5 ] || fail "the demo's trace has $threads threads, expected 5 or more (main + 4)"
$root/bin/trace-report -q "$WORK/demo" >"$WORK/report" 2>&1 || fail "the installed trace-report fails: $(cat "$WORK/report")"
grep -q pthread_mutex_lock "$WORK/report" || fail "the installed trace-report names no pthread_mutex_lock"
if [ -x $root/bin/trace2otf2 ]; then
	if $root/bin/trace2otf2 --help | grep -q '^  otf2 '; then
		$root/bin/trace2otf2 -q "$WORK/demo" >/dev/null 2>&1 || fail "the installed trace2otf2 fails"
		[ -f "$WORK/demo.otf2/traces.otf2" ] || fail "the installed trace2otf2 wrote no demo.otf2/traces.otf2"
		if command -v otf2-print >/dev/null; then
			otf2-print --silent -Werror "$WORK/demo.otf2/traces.otf2" >/dev/null ||
				fail "otf2-print -Werror rejects the installed trace2otf2's archive"
		fi
		made=OTF2
		# The converter's MPI module of the package, found relative to bin/.
		if [ -f $root/lib/libtrace/libtrace-convert-mpi-openmpi.so ] &&
			command -v mpirun.openmpi >/dev/null; then
			timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -np 2 \
				$root/bin/trace2otf2 -q "$WORK/demo" -o "$WORK/par.otf2" >"$WORK/par.log" 2>&1 || {
				tail -5 "$WORK/par.log" >&2
				fail "mpirun -np 2 of the installed trace2otf2 fails"
			}
			[ -f "$WORK/par.otf2/traces.otf2" ] || fail "mpirun -np 2 trace2otf2 wrote no archive"
			made="OTF2 (also by mpirun -np 2 trace2otf2)"
		fi
	else
		$root/bin/trace2otf2 -q --format=chrome "$WORK/demo" >/dev/null 2>&1 ||
			fail "the installed trace2otf2 --format=chrome fails"
		[ -s "$WORK/demo.json" ] || fail "the installed trace2otf2 wrote no demo.json"
		made="Trace Event JSON"
	fi
	echo "demo: $threads threads traced, read, profiled and converted to $made by the installed tools"
else
	echo "demo: $threads threads traced, read and profiled by the installed tools (no trace2otf2 built)"
fi

# ---- remove: none of its files is left
dpkg -r $pkg >"$WORK/dpkg-r.log" 2>&1 || {
	cat "$WORK/dpkg-r.log" >&2
	fail "dpkg -r $pkg failed"
}
state=$(dpkg-query -W -f='${db:Status-Status}' $pkg 2>/dev/null || true)
[ "$state" = not-installed ] || [ -z "$state" ] || fail "after dpkg -r, $pkg is '$state'"
left=0
while read -r f; do
	case $f in
	$root | $root/*) ;;
	*) continue ;; # /, /opt: not the package's own
	esac
	if [ -e "$f" ] && [ ! -d "$f" ]; then
		echo "left after dpkg -r: $f" >&2
		left=$((left + 1))
	fi
done <"$WORK/files"
[ $left = 0 ] || fail "$left files of $pkg are left after dpkg -r"
[ -z "$(ls -A $root 2>/dev/null)" ] || fail "$root is not empty after dpkg -r: $(ls -A $root)"
[ -d $root ] && gone="empty" || gone="gone"
echo "dpkg -r: none of the $(grep -c . "$WORK/files") paths is left, $root is $gone"
