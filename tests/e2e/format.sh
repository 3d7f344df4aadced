#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Every C source follows .clang-format (kernel style).
. "$(dirname "$0")/lib.sh"
command -v clang-format >/dev/null || skip "clang-format is not installed"
cd "$SRC" || fail "cd"
files=$(find src include tools tests bench examples -name '*.[ch]')
clang-format --dry-run -Werror $files 2>"$WORK/fmt" || {
	head -20 "$WORK/fmt" >&2
	fail "not formatted: run clang-format -i on the files above"
}
echo "$(echo "$files" | wc -l) files formatted"
