#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# README.md documents every LIBTRACE_* variable of the config table, with its default, and
# nothing else; its directory map names directories that exist.
. "$(dirname "$0")/lib.sh"

"$TESTBIN/test_config" --list | awk -F'\t' '{d = $2 == "" ? "(none)" : "`" $2 "`"; print "`" $1 "` " d}' |
	sort >"$WORK/code"
sed -n 's/^| \(`LIBTRACE_[A-Z_]*`\) | \([^|]*\) |.*/\1 \2/p' "$SRC/README.md" | sed 's/ *$//' |
	sort >"$WORK/readme"
diff -u "$WORK/code" "$WORK/readme" >&2 ||
	fail "README.md's variable table and src/core/config.c differ (- code, + README)"
echo "README documents the $(wc -l <"$WORK/code") variables of the config table"
# The runtime reads the environment in config.c only.
others=$(grep -rln --include='*.c' 'getenv *(' "$SRC/src" | grep -v 'src/core/config.c' || true)
[ -z "$others" ] || fail "getenv outside src/core/config.c: $others"
# Every directory of the map exists.
for d in $(sed -n 's/^| `\([^`]*\/\)` |.*/\1/p' "$SRC/README.md"); do
	[ -d "$SRC/$d" ] || fail "README's directory map names $d, which does not exist"
done
echo ok
