#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The preloaded library exports exactly the allow-list (both ways), depends on libc alone,
# and works under LD_BIND_NOW=1 (one undefined symbol would make every program fail).
. "$(dirname "$0")/lib.sh"

command -v nm >/dev/null || skip "nm (binutils) is not installed"
grep -v '^#' "$SRC/tests/exports.txt" | sort >"$WORK/allowed"
nm -D --defined-only "$LIB" | awk '{print $3}' | sort >"$WORK/exported"
extra=$(comm -13 "$WORK/allowed" "$WORK/exported")
missing=$(comm -23 "$WORK/allowed" "$WORK/exported")
[ -z "$extra" ] || fail "exported but not in tests/exports.txt: $extra"
[ -z "$missing" ] || fail "in tests/exports.txt but not exported: $missing"
# Nothing generic that Debian's WAND libtrace (trace_*) could clash with.
! grep -q '^trace_' "$WORK/exported" || fail "a trace_* symbol is exported"
echo "exports: $(wc -l <"$WORK/exported") symbols, as allowed"

needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ "$needed" = "libc.so.6 " ] || fail "DT_NEEDED is '$needed', expected libc.so.6 only"
echo "DT_NEEDED: $needed"

for prog in /bin/true "$TESTBIN/count_events 2 100" "$BUILD/examples/pthread_pipeline 2 8 1000"; do
	rm -rf "$WORK/t"
	LD_BIND_NOW=1 traced "$WORK/t" $prog >/dev/null || fail "LD_BIND_NOW=1 $prog failed"
	ls "$WORK"/t/*/meta >/dev/null || fail "LD_BIND_NOW=1 $prog left no trace"
	echo "LD_BIND_NOW=1 $prog: ok"
done
echo ok
