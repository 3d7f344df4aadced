#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# docs/settings.md and the man page libtrace(7) document every LIBTRACE_* variable of the
# config table (src/core/config.c, as test_config --list prints it), with its default, and
# nothing else.
. "$(dirname "$0")/lib.sh"

# (LIBTRACE_MODULES=none: the core linked into test_config would trace it into the cwd.)
LIBTRACE_MODULES=none "$TESTBIN/test_config" --list |
	awk -F'\t' '{print $1 " " ($2 == "" ? "(none)" : $2)}' | sort >"$WORK/code"
[ -s "$WORK/code" ] || fail "test_config --list printed nothing"

# docs/settings.md: rows "| `NAME` | `DEFAULT` | meaning |" or "| `NAME` | (none) | ...".
sed -n 's/^| `\(LIBTRACE_[A-Z_]*\)` | \([^|]*\) |.*/\1 \2/p' "$SRC/docs/settings.md" |
	sed 's/ *$//; s/ `\(.*\)`$/ \1/' | sort >"$WORK/docs"
diff -u "$WORK/code" "$WORK/docs" >&2 ||
	fail "docs/settings.md's variable table and src/core/config.c differ (- code, + docs)"
echo "docs/settings.md documents the $(wc -l <"$WORK/code") variables of the config table"

# libtrace.7: ".TP", ".B NAME", then "Default: none." or "Default: \fBVALUE\fR.".
awk '
	prev == ".TP" && /^\.B LIBTRACE_[A-Z_]*$/ { name = $2; prev = $0; next }
	name != "" {
		d = $0
		if (d == "Default: none.") d = "(none)"
		else if (d ~ /^Default: \\fB.*\\fR\.$/) { sub(/^Default: \\fB/, "", d); sub(/\\fR\.$/, "", d) }
		else d = "(no Default line)"
		print name " " d
		name = ""
	}
	{ prev = $0 }' "$SRC/docs/man/libtrace.7" | sort >"$WORK/man"
# Any other mention of a variable must be one of the table's.
grep -o 'LIBTRACE_[A-Z_]*[A-Z]' "$SRC/docs/man/libtrace.7" | sort -u >"$WORK/named"
cut -d' ' -f1 "$WORK/code" | sort -u >"$WORK/names"
extra=$(comm -23 "$WORK/named" "$WORK/names")
[ -z "$extra" ] || fail "libtrace.7 names variables the config table lacks: $extra"
diff -u "$WORK/code" "$WORK/man" >&2 ||
	fail "libtrace.7's variables and src/core/config.c differ (- code, + man page)"
echo "libtrace.7 documents the $(wc -l <"$WORK/man") variables of the config table"
# docs/ names no variable the table lacks either (apart from CMake's: the build options, the
# HAVE_ definitions, LIBTRACE_PRELOAD_LIBRARY of find_package(libtrace); LIBTRACE_TEST_DEB,
# the switch of e2e.deb, a setting of the test suite, not of the tracer).
extra=$(grep -rhoE 'LIBTRACE_[A-Z_]*[A-Z]' "$SRC/docs" --include='*.md' | sort -u | comm -23 - "$WORK/names" |
	grep -v -E '^LIBTRACE_(NAME|WITH(_[A-Z]+)?|WERROR|SANITIZE|TESTS|BENCH|FUZZ|HAVE_[A-Z_]+|PRELOAD_LIBRARY|TEST_DEB)$' || true)
[ -z "$extra" ] || fail "docs/ name LIBTRACE_* variables the config table lacks: $extra"
echo ok
