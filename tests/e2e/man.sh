#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The man pages: `cmake --install` puts trace-run.1, trace2otf2.1 (when trace2otf2 is
# built), trace-report.1 and trace-dump.1 in share/man/man1 and libtrace.7 in
# share/man/man7; man renders each without a warning; each command's page names every long
# option its --help prints, and documents no option the command lacks.
. "$(dirname "$0")/lib.sh"

command -v man >/dev/null || skip "man is not installed (apt-get install man-db groff-base)"
command -v groff >/dev/null || skip "groff is not installed (apt-get install groff-base)"

inst=$WORK/inst
cmake --install "$BUILD" --prefix "$inst" >"$WORK/install.log" 2>&1 || {
	tail "$WORK/install.log" >&2
	fail "cmake --install $BUILD failed"
}
pages=(man1/trace-run.1 man1/trace-report.1 man1/trace-dump.1 man7/libtrace.7)
commands=(trace-run trace-report trace-dump)
if [ -x "$BUILD/trace2otf2" ]; then
	pages+=(man1/trace2otf2.1)
	commands+=(trace2otf2)
fi
for p in "${pages[@]}"; do
	f=$inst/share/man/$p
	[ -f "$f" ] || fail "cmake --install put no $p under share/man"
	cmp -s "$f" "$SRC/docs/man/${p#*/}" || fail "the installed $p is not docs/man/${p#*/}"
	# Warnings from man's formatter (groff -ww) are errors; so is any other output on stderr.
	warnings=$(MANWIDTH=80 man -l --warnings "$f" 2>&1 >/dev/null)
	[ -z "$warnings" ] || fail "man -l --warnings $p: $warnings"
	MANWIDTH=80 man -l "$f" 2>/dev/null | grep -q '^NAME' || fail "man -l $p renders no NAME section"
done
echo "installed and rendered without warnings: ${pages[*]}"

# long_options: the long options of option lines (indented at most 6 columns, possibly
# after a short option), one per line, sorted.
long_options() {
	sed -n 's/^ \{1,6\}\(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z0-9-]*\).*/\2/p' | sort -u
}
for c in "${commands[@]}"; do
	"$BUILD/$c" --help >"$WORK/$c.help" 2>&1 || fail "$c --help: exit status $?"
	# Required: the options of the option lines and of the usage lines; allowed: every long
	# option --help mentions.
	{
		long_options <"$WORK/$c.help"
		grep -E "^(usage: +| +)$c " "$WORK/$c.help" | grep -oE -e '--[a-z][a-z0-9-]*'
	} | sort -u >"$WORK/$c.help.opts"
	grep -oE -e '--[a-z][a-z0-9-]*' "$WORK/$c.help" | sort -u >"$WORK/$c.help.all"
	[ -s "$WORK/$c.help.opts" ] || fail "no option found in $c --help"
	# The page's text, rendered without hyphenation or adjustment, one option per word.
	MANWIDTH=200 man -l "$inst/share/man/man1/$c.1" 2>/dev/null | sed 's/.\x08//g' >"$WORK/$c.txt"
	missing=$(while read -r o; do
		grep -q -e "$o\b" "$WORK/$c.txt" || echo "$o"
	done <"$WORK/$c.help.opts")
	[ -z "$missing" ] || fail "man page $c.1 does not name these options of $c --help: $missing"
	# Every option the page lists under OPTIONS (its tagged paragraphs) is one of --help's.
	sed -n '/^\.SH OPTIONS/,/^\.SH /{/^\.TP/{n;p}}' "$SRC/docs/man/$c.1" | sed 's/\\-/-/g' |
		grep -o -e '--[a-z][a-z0-9-]*' | sort -u >"$WORK/$c.man.opts"
	extra=$(comm -23 "$WORK/$c.man.opts" "$WORK/$c.help.all")
	[ -z "$extra" ] || fail "man page $c.1 documents options $c --help does not print: $extra"
	echo "$c.1 names the $(wc -l <"$WORK/$c.help.opts") long options of $c --help"
done
echo ok
