#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The post-mortem tools on hostile trace files (issue 29).  Each of meta, events and ring
# replaced by a FIFO, a link to /dev/zero, a link to /dev/urandom: trace-dump, trace2otf2,
# trace-report and trace-report --compare exit at once, with a non-zero status and a message
# naming the file (a FIFO used to hang them all, /dev/zero to grow them to gigabytes); so do
# saved profiles and archive files of the same kinds.  An events file cut at a chunk
# boundary, which loses a thread's last chunks, is damage (trace-dump 1, trace2otf2 3) and
# names the thread.  Regions nested deeper than trace2otf2 follows are said, never dropped
# silently.  Converted outputs are as private as the trace: files 0600, directories 0700.
. "$(dirname "$0")/lib.sh"
need_converter
REPORT=$BUILD/trace-report
[ -x "$REPORT" ] || skip "trace-report was not built"

traced "$WORK/t" "$TESTBIN/count_events" 2 200 >/dev/null || fail "count_events failed"
proc=$(ls -d "$WORK"/t/*/)
proc=${proc%/}
name=$(basename "$proc")
[ -f "$proc/meta" ] && [ -f "$proc/events" ] && [ -f "$proc/ring" ] || fail "the trace lacks meta, events or ring"
"$DUMP" "$WORK/t" >/dev/null 2>"$WORK/err" || fail "trace-dump of the good trace: exit status $? ($(head -2 "$WORK/err"))"
"$REPORT" --no-git --json -o "$WORK/good.json" "$WORK/t" 2>"$WORK/err" || fail "trace-report of the good trace: $(head -2 "$WORK/err")"

# refused WHAT FILE CMD...: CMD ends within 20 s, with a non-zero status that is not a
# crash, and says that FILE is not a regular file.
refused() {
	local what=$1 file=$2
	shift 2
	timeout 20 "$@" </dev/null >"$WORK/out" 2>"$WORK/err"
	local s=$?
	[ $s = 124 ] && fail "$what: still running after 20 s (it hangs or reads for ever)"
	[ $s = 0 ] && fail "$what: exit status 0"
	[ $s -ge 125 ] && fail "$what: exit status $s (a crash or out of memory): $(tail -2 "$WORK/err")"
	grep -qF "$file is " "$WORK/err" && grep -q "not a regular file" "$WORK/err" ||
		fail "$what: exit status $s, but no message naming $file as not a regular file: $(head -3 "$WORK/err")"
}

# hostile KIND PATH: PATH replaced by a FIFO, a link to /dev/zero or one to /dev/urandom.
hostile() {
	rm -f "$2"
	case $1 in
	fifo) mkfifo "$2" ;;
	zero) ln -s /dev/zero "$2" ;;
	urandom) ln -s /dev/urandom "$2" ;;
	esac
}

n=0
for file in meta events ring; do
	for kind in fifo zero urandom; do
		rm -rf "$WORK/h" "$WORK/h.otf2"
		mkdir "$WORK/h"
		cp -a "$proc" "$WORK/h/"
		hostile $kind "$WORK/h/$name/$file"
		bad="$WORK/h/$name/$file"
		refused "trace-dump, $file as $kind" "$bad" "$DUMP" "$WORK/h"
		refused "trace2otf2, $file as $kind" "$bad" "$CONVERT" -q "$WORK/h" -o "$WORK/h.otf2"
		refused "trace-report, $file as $kind" "$bad" "$REPORT" --no-git "$WORK/h"
		refused "trace-report --compare, $file as $kind" "$bad" "$REPORT" --no-git --compare "$WORK/t" "$WORK/h"
		n=$((n + 4))
	done
done
# Saved profiles (--compare's baselines) and OTF2 archive files of the same kinds.
for kind in fifo zero urandom; do
	hostile $kind "$WORK/$kind.json"
	refused "trace-report, a profile as $kind" "$WORK/$kind.json" "$REPORT" "$WORK/$kind.json"
	refused "trace-report --compare, a profile as $kind" "$WORK/$kind.json" \
		"$REPORT" --compare "$WORK/$kind.json" "$WORK/good.json"
	refused "trace-report --compare, a candidate profile as $kind" "$WORK/$kind.json" \
		"$REPORT" --compare "$WORK/good.json" "$WORK/$kind.json"
	n=$((n + 3))
done
"$CONVERT" -q "$WORK/t" -o "$WORK/a.otf2" || fail "trace2otf2 of the good trace: exit status $?"
"$REPORT" --no-git "$WORK/a.otf2" >/dev/null 2>"$WORK/err" || fail "trace-report of the good archive: $(head -2 "$WORK/err")"
for f in traces.def traces/0.evt; do
	for kind in fifo zero; do
		rm -rf "$WORK/b.otf2"
		cp -a "$WORK/a.otf2" "$WORK/b.otf2"
		hostile $kind "$WORK/b.otf2/$f"
		refused "trace-report, archive's $f as $kind" "$WORK/b.otf2/$f" "$REPORT" --no-git "$WORK/b.otf2"
		n=$((n + 1))
	done
done
echo "$n runs on FIFOs and devices: each refused at once, naming the file"

# An events file cut at a chunk boundary: a thread's last chunks lost, in a process that
# ended normally (its ring kept, as the runtime leaves it).  Small chunks: several a thread.
LIBTRACE_BUFFER_SIZE=64K traced "$WORK/c" "$TESTBIN/count_events" 2 2000 >/dev/null || fail "count_events failed"
cproc=$(ls -d "$WORK"/c/*/)
cproc=${cproc%/}
"$DUMP" "$WORK/c" >/dev/null 2>"$WORK/err" || fail "trace-dump of the uncut trace: exit status $? ($(head -2 "$WORK/err"))"
"$CONVERT" -q "$WORK/c" -o "$WORK/c.otf2" 2>"$WORK/err" || fail "trace2otf2 of the uncut trace: exit status $? ($(head -2 "$WORK/err"))"
# The start of the last chunk of a thread that has chunks before it and ends with it
# (LT_CHUNK_LAST), by a parser written from format.h alone: "OFFSET THREAD SEQ".
read -r cut thread seq < <(python3 - "$cproc/events" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, found = 4096, None
while off + 64 <= len(data):
    magic, hsize, thread, tid, seq, cap, used, lost, flags = struct.unpack_from("<IIIIQQQQI", data, off)
    assert magic == 0x4b43544c, "bad chunk at %d" % off
    if flags & 1 and seq > 0 and thread < 0xfffffff0:
        found = (off, thread, seq)
    off += cap  # header + stored records, raw or packed
assert found, "no thread with several chunks"
print(*found)
PY
)
[ -n "$cut" ] || fail "no chunk boundary to cut at"
cp -a "$WORK/c" "$WORK/cut"
truncate -s "$cut" "$WORK/cut/$(basename "$cproc")/events"
timeout 60 "$DUMP" "$WORK/cut" >/dev/null 2>"$WORK/err"
s=$?
[ $s = 1 ] || fail "trace-dump, events cut at chunk $seq of thread $thread: exit status $s, expected 1 (damage)"
grep -q "thread $thread: its last chunk is missing" "$WORK/err" ||
	fail "trace-dump, events cut at a chunk boundary: the thread is not named: $(head -3 "$WORK/err")"
timeout 60 "$CONVERT" -q "$WORK/cut" -o "$WORK/cut.otf2" >/dev/null 2>"$WORK/err"
s=$?
[ $s = 3 ] || fail "trace2otf2, events cut at chunk $seq of thread $thread: exit status $s, expected 3 (damaged)"
grep -q "thread $thread: its last chunk is missing" "$WORK/err" ||
	fail "trace2otf2, events cut at a chunk boundary: the thread is not named: $(head -3 "$WORK/err")"
echo "events cut before chunk $seq of thread $thread (offset $cut): damage, with the thread named"

# A cut before a thread's first chunk, the ring gone too: nothing of the thread is left but
# the meta file's count of the chunks it wrote ("chunks THREAD N", written as a thread
# ends): the cut is at the first chunk of the worker thread that wrote its first last.
LIBTRACE_BUFFER_SIZE=64K traced "$WORK/w" "$TESTBIN/count_events" 3 3000 >/dev/null ||
	fail "count_events failed"
wproc=$(ls -d "$WORK"/w/*/)
wproc=${wproc%/}
read -r cut thread < <(python3 - "$wproc/events" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, first = 4096, {}
while off + 64 <= len(data):
    magic, hsize, thread, tid, seq, cap, used = struct.unpack_from("<IIIIQQQ", data, off)
    assert magic == 0x4b43544c, "bad chunk at %d" % off
    if 0 < thread < 0xfffffff0:  # not the main thread, which does not end
        first.setdefault(thread, off)
    off += cap  # header + stored records, raw or packed
thread = max(first, key=first.get)
print(first[thread], thread)
PY
)
[ -n "$cut" ] || fail "no thread to cut away"
grep -aq "^chunks $thread " "$wproc/meta" || fail "meta has no chunks line for thread $thread"
rm -rf "$WORK/wcut"
cp -a "$wproc" "$WORK/wcut"
rm -f "$WORK/wcut/ring"
truncate -s "$cut" "$WORK/wcut/events"
timeout 60 "$DUMP" "$WORK/wcut" >/dev/null 2>"$WORK/err"
s=$?
[ $s = 1 ] || fail "trace-dump, every chunk of thread $thread cut away: exit status $s, expected 1"
grep -q "thread $thread: wrote [0-9]* chunks\?, 0 found" "$WORK/err" ||
	fail "trace-dump, every chunk of thread $thread cut away: not said: $(head -3 "$WORK/err")"
echo "every chunk of thread $thread cut away: damage, with the thread named"

# Regions nested deeper than the converter follows: said, counted, damage.
traced "$WORK/deep" "$TESTBIN/deep_regions" 70000 >/dev/null || fail "deep_regions failed"
timeout 120 "$CONVERT" "$WORK/deep" -o "$WORK/deep.otf2" >/dev/null 2>"$WORK/err"
s=$?
[ $s = 3 ] || fail "trace2otf2, 70000 nested regions: exit status $s, expected 3 ($(head -2 "$WORK/err"))"
grep -q "[0-9]* regions nested deeper than 65536 levels left out" "$WORK/err" ||
	fail "trace2otf2, 70000 nested regions: no warning: $(head -3 "$WORK/err")"
otf2-print --silent -Werror "$WORK/deep.otf2/traces.otf2" >/dev/null 2>&1 ||
	fail "trace2otf2, 70000 nested regions: otf2-print -Werror rejects the archive"
echo "70000 nested regions: $(grep -o '[0-9]* regions nested deeper[^(]*' "$WORK/err")"

# Outputs as private as the trace, whatever the umask.
umask 022
rm -rf "$WORK/m.otf2"
"$CONVERT" -q "$WORK/t" -o "$WORK/m.otf2" || fail "trace2otf2: exit status $?"
"$CONVERT" -q -f paraver "$WORK/t" -o "$WORK/m" || fail "trace2otf2 -f paraver: exit status $?"
"$REPORT" --no-git -o "$WORK/m.txt" "$WORK/t" || fail "trace-report: exit status $?"
"$REPORT" --no-git --json -o "$WORK/m.json" "$WORK/t" || fail "trace-report --json: exit status $?"
"$REPORT" --no-git --csv -o "$WORK/m.csv" "$WORK/t" || fail "trace-report --csv: exit status $?"
"$REPORT" --no-git --compare -o "$WORK/m.cmp" "$WORK/good.json" "$WORK/t"
s=$?
[ $s -le 1 ] || fail "trace-report --compare: exit status $s"
files=0
while read -r mode path; do
	case $mode in
	d*) want=700 ;;
	*) want=600 ;;
	esac
	[ "$(stat -c %a "$path")" = $want ] || fail "$path: mode $(stat -c %a "$path"), expected $want"
	files=$((files + 1))
done < <(find "$WORK/m.otf2" "$WORK/m.prv" "$WORK/m.pcf" "$WORK/m.row" "$WORK/m.txt" "$WORK/m.json" \
	"$WORK/m.csv" "$WORK/m.cmp" -printf '%y %p\n')
[ $files -ge 10 ] || fail "only $files outputs found"
echo "$files outputs: files 0600, directories 0700"
echo ok
