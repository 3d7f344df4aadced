#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace-report never writes through a link: every output it writes to a file (-o of the
# table, --json, --csv, --html, --tree and --compare; --junit; --markdown) refuses a name
# that is a symbolic link (exit 3, the link's target unchanged) or a dangling one (its
# target not created), and a FIFO; a regular file of that name is replaced whole, with
# nothing left beside it.  Before the fix, `ln -s victim X; trace-report --json -o X TRACE`
# overwrote victim with the profile.
. "$(dirname "$0")/lib.sh"
REPORT=$BUILD/trace-report
[ -x "$REPORT" ] || skip "trace-report was not built"

traced "$WORK/t" "$TESTBIN/count_events" 2 1000 >/dev/null 2>&1 || fail "count_events failed"
cd "$WORK" || fail "no work directory"
echo "not yours" >victim
ln -s victim link
ln -s missing dangling
mkfifo fifo
report() {
	"$REPORT" -q "$@" >out 2>err
}
check_refused() { # NAME, then the command's options (NAME where the output goes)
	local name=$1
	shift
	report "$@"
	s=$?
	[ $s = 3 ] || fail "trace-report $*: exit status $s, expected 3: $(cat err)"
	[ "$(cat victim)" = "not yours" ] || fail "trace-report $*: wrote through the link"
	[ ! -e missing ] || fail "trace-report $*: created the dangling link's target"
	grep -q "$name" err || fail "trace-report $*: no word about $name: $(cat err)"
}
n=0
for name in link dangling fifo; do
	for mode in "" --json --csv --html --tree; do
		# shellcheck disable=SC2086 # an empty mode is no option
		check_refused $name $mode -o $name t
		n=$((n + 1))
	done
	check_refused $name --compare -o $name t t
	check_refused $name --compare --junit $name t t
	check_refused $name --compare --markdown $name t t
	n=$((n + 3))
done
ls -- *.?????? 2>/dev/null && fail "temporary files left behind"
# A regular file is replaced by a whole report.
for mode in --json --html; do
	echo old >plain
	report $mode -o plain t || fail "trace-report $mode -o plain: $(cat err)"
	[ "$(cat plain)" != old ] && [ -s plain ] || fail "trace-report $mode -o plain: not replaced"
done
grep -qi '<html' plain || fail "--html -o plain: the replaced file is not the page"
report --compare --junit plain t t || fail "trace-report --compare --junit plain: $(cat err)"
grep -q '<testsuites' plain || fail "--junit plain: not replaced by the JUnit report"
ls -- *.?????? 2>/dev/null && fail "temporary files left behind"
echo "$n outputs refused a link, a dangling link or a FIFO; regular files replaced whole"
echo ok
