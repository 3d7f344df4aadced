#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# trace2otf2 on damaged input.  A trace of a few hundred records, its events file cut at
# every record boundary and in the middle of every record (what a killed process or a full
# disk leaves): each converts with exit status 0, keeps exactly the records before the cut
# (counted here by an independent parser of the format), writes an archive otf2-print
# -Werror accepts, and marks the cut.  Then random bytes, a wrong version, missing metadata,
# a directory that is not a trace, unwritable or existing outputs: each gets its documented
# exit status and a message naming the file (and offset), and never a crash.
. "$(dirname "$0")/lib.sh"
need_converter

traced "$WORK/t" "$TESTBIN/count_events" 1 100 >/dev/null || fail "count_events failed"
proc=$(ls -d "$WORK"/t/*/)
proc=${proc%/}
name=$(basename "$proc")
rm -f "$proc/ring" # after a normal exit the ring holds nothing; cut copies stand alone

# Record boundaries of the events file, by a parser written from format.h alone.  The
# fourth field: how many threads that ended (meta "chunks THREAD N") lose whole chunks at
# that cut, which is damage (the reader names them), not only a cut.
python3 - "$proc/events" "$proc/meta" >"$WORK/cuts" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"LIBTRACE", "not an events file"
ended = {int(l.split()[1]) for l in open(sys.argv[2], errors="replace") if l.startswith("chunks ")}
def header(off):
    magic, hsize, thread, tid, seq, cap, used, lost, flags, check, state, packed = \
        struct.unpack_from("<IIIIQQQQIIII", data, off)
    assert magic == 0x4b43544c, "bad chunk at %d" % off
    return hsize, thread, cap, used, packed if flags & 2 else None
starts = []                           # (chunk start, thread)
off = 4096
while off + 64 <= len(data):
    hsize, thread, cap, used, packed = header(off)
    starts.append((off, thread))
    off += cap                        # header + stored records, raw or packed
def lost(cut):
    return len({t for s, t in starts if s >= cut and t in ended})
def varint(pos):                      # a varint of pack.h: (value, offset after it)
    v, shift = 0, 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos
def packed_records(pos, end):         # (start, length) of each packed record (pack.h)
    words_of = {}                     # header table entry -> its header's words
    while pos < end:
        start, b = pos, data[pos]
        pos += 1
        if b == 0x80:                 # a literal header: type, words, sub, arg
            t, words = data[pos], data[pos + 1]
            sub, pos = varint(pos + 2)
            arg, pos = varint(pos)
            h = t | words << 8 | sub << 16 | arg << 32
            words_of[((h * 0x9e3779b97f4a7c15) & (2**64 - 1)) >> 58] = words
        else:                         # entry b % 64; 0x40 + k: its payload again
            words = words_of[b % 64]
        _, pos = varint(pos)          # the time stamp
        if b < 0x40 or b == 0x80:
            for _ in range(words - 2):
                pos = pos + 1 if data[pos] < 0x80 else varint(pos + 1)[1]
        yield start, pos - start
off, before = 4096, 0
print("chunk", off, before, lost(off))    # a cut at a chunk start: 'before' whole records
while off + 64 <= len(data):
    hsize, thread, cap, used, packed = header(off)
    pos, end = off + hsize, off + hsize + (used if packed is None else packed)
    if packed is None:
        recs = []
        while pos < end:
            recs.append((pos, data[pos + 9] * 8))
            pos += data[pos + 9] * 8
    else:
        recs = list(packed_records(pos, end))
    for pos, n in recs:
        print("mid", pos + min(4, n - 1), before, lost(pos))  # inside the record
        print("mid", pos + n - 1, before, lost(pos))  # its last byte missing
        before += 1
        print("cut" if pos + n < off + cap else "chunk", pos + n, before, lost(pos + n))
    if recs and recs[-1][0] + recs[-1][1] < off + cap:  # packed: then its padding
        print("chunk", off + cap, before, lost(off + cap))
    off += cap
print("total", off, before, 0)
PY
total=$(awk '$1 == "total" { print $3 }' "$WORK/cuts")
[ "$total" -ge 200 ] || fail "the trace has only $total records; the test wants a few hundred"
# otf2-print costs 0.7 s an archive on a 2-core VM (it maps 8 MiB buffers by the dozen),
# and a converter built with AddressSanitizer 0.5 s a run: of ~950 cuts, otf2-print reads
# every 16th and every cut at a chunk start, and under ASan the converter runs on every
# other cut (the plain build runs it on all).
every=1
ldd "$CONVERT" 2>/dev/null | grep -q libasan && every=2
ncuts=0
checked=0
printed=0
line=0
damaged=0
while read -r kind offset before lost; do
	[ "$kind" = total ] && continue
	line=$((line + 1))
	[ $((line % every)) = 0 ] || [ "$kind" = chunk ] || continue
	rm -rf "$WORK/c" "$WORK/c.otf2"
	mkdir -p "$WORK/c"
	cp -a "$proc" "$WORK/c/"
	truncate -s "$offset" "$WORK/c/$name/events"
	"$CONVERT" "$WORK/c" -o "$WORK/c.otf2" >"$WORK/out" 2>"$WORK/err"
	s=$?
	if [ "$lost" = 0 ]; then
		[ $s = 0 ] || fail "cut at $offset ($kind): exit status $s ($(head -3 "$WORK/err"))"
	else
		[ $s = 3 ] || fail "cut at $offset ($kind), whole chunks of $lost ended threads lost: exit status $s, expected 3 (damaged)"
		[ "$(grep -c 'found: chunks .* are missing' "$WORK/err")" = "$lost" ] ||
			fail "cut at $offset: $lost threads lost whole chunks, not all named: $(head -3 "$WORK/err")"
		damaged=$((damaged + 1))
	fi
	grep -q "events from $before records" "$WORK/err" ||
		fail "cut at $offset: expected $before records kept: $(tail -1 "$WORK/err")"
	if [ "$kind" = chunk ] || [ $((line % 16)) = 0 ]; then
		otf2-print --silent -Werror "$WORK/c.otf2/traces.otf2" >/dev/null 2>&1 ||
			fail "cut at $offset: otf2-print -Werror rejects the archive"
		printed=$((printed + 1))
	fi
	if [ "$kind" != chunk ]; then
		grep -q "c/$name/events:[0-9]*: chunk truncated" "$WORK/err" ||
			fail "cut at $offset: no message naming the file and offset: $(head -2 "$WORK/err")"
		otf2-marker "$WORK/c.otf2/traces.otf2" | grep -q 'Category: "Truncated trace"' ||
			fail "cut at $offset: no truncation marker"
	fi
	if [ $((ncuts % 50)) = 0 ]; then # the full reader check on a sample
		$OTF2CHECK "$WORK/c.otf2/traces.otf2" >"$WORK/check.log" 2>&1 || {
			tail -5 "$WORK/check.log" >&2
			fail "cut at $offset: check_otf2 failed"
		}
		checked=$((checked + 1))
	fi
	ncuts=$((ncuts + 1))
done <"$WORK/cuts"
echo "$ncuts cuts of a $total-record trace: each converted, its records kept ($damaged of them damage: whole chunks of an ended thread lost; $printed read by otf2-print -Werror, $checked read back whole)"

# expect STATUS PATTERN CMD...: CMD exits with STATUS and prints PATTERN on stderr.
expect() {
	local status=$1 pattern=$2
	shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"
	local got=$?
	[ $got = "$status" ] || fail "$*: exit status $got, expected $status ($(head -2 "$WORK/err"))"
	grep -q -- "$pattern" "$WORK/err" || fail "$*: no message matching '$pattern': $(head -3 "$WORK/err")"
}
fresh() { # fresh NAME: a copy of the trace at $WORK/NAME, no archive beside it
	rm -rf "$WORK/$1" "$WORK/$1.otf2"
	mkdir -p "$WORK/$1"
	cp -a "$proc" "$WORK/$1/"
}

# Random bytes for the events file: damaged (3), an archive of what is left (nothing).
fresh rnd
head -c 20000 /dev/urandom >"$WORK/rnd/$name/events"
expect 3 "rnd/$name/events:0: not a libtrace file" "$CONVERT" -q "$WORK/rnd"
otf2-print --silent -Werror "$WORK/rnd.otf2/traces.otf2" >/dev/null || fail "random events: no valid archive"
# Random bytes over one chunk's records in the middle: the other chunks survive.  Seeded:
# records carry no checksum, and about 1 random pattern in 200 reads as records of valid
# types and lengths (the reader bounds each type's length); this one is damage for certain.
fresh mid
size=$(stat -c %s "$WORK/mid/$name/events")
python3 -c 'import random, sys; random.seed(8); sys.stdout.buffer.write(bytes(random.randrange(256) for _ in range(300)))' |
	dd of="$WORK/mid/$name/events" bs=1 seek=4200 count=300 conv=notrunc 2>/dev/null
"$CONVERT" -q "$WORK/mid" >"$WORK/out" 2>"$WORK/err"
s=$?
[ $s = 3 ] || fail "corrupted records: exit status $s, expected 3 ($(head -2 "$WORK/err"))"
grep -q "mid/$name/events:[0-9]*: " "$WORK/err" || fail "corrupted records: no file:offset message"
otf2-print --silent -Werror "$WORK/mid.otf2/traces.otf2" >/dev/null || fail "corrupted records: no valid archive"
# Random bytes as the whole meta file, and a meta file of another major version.
fresh meta
head -c 3000 /dev/urandom >"$WORK/meta/$name/meta"
expect 2 "meta/$name/meta:1: not a libtrace meta file" "$CONVERT" -q "$WORK/meta"
[ ! -e "$WORK/meta.otf2/traces.otf2" ] || fail "an archive was written for an unreadable trace"
fresh ver
sed -i '1s/.*/libtrace-meta 9.0/' "$WORK/ver/$name/meta"
expect 2 "ver/$name/meta:1: format version 9.0" "$CONVERT" -q "$WORK/ver"
fresh ver2
printf '\x09\x00' | dd of="$WORK/ver2/$name/events" bs=1 seek=8 conv=notrunc 2>/dev/null
expect 3 "ver2/$name/events:0: format version 9" "$CONVERT" -q "$WORK/ver2"
# Missing metadata, a directory that is not a trace, no directory at all.
fresh nometa
rm "$WORK/nometa/$name/meta"
expect 2 "not a libtrace trace directory" "$CONVERT" -q "$WORK/nometa"
expect 2 "not a libtrace trace directory" "$CONVERT" -q -o "$WORK/etc.otf2" /etc
expect 2 "No such file or directory" "$CONVERT" -q "$WORK/nothing-here"
# Outputs that exist or cannot be created.
fresh good
mkdir "$WORK/taken"
expect 4 "taken: exists" "$CONVERT" -q "$WORK/good" -o "$WORK/taken"
touch "$WORK/afile"
expect 4 "afile/x: cannot create it" "$CONVERT" -q "$WORK/good" -o "$WORK/afile/x"
expect 1 "usage" "$CONVERT" --no-such-option "$WORK/good"

# Hostile meta data (found by review): a FIFO named as a module must not hang the symbol
# lookup; a process directory name without a dot; an argument longer than 4 KiB is no
# truncation; a full disk while writing the archive is an output error (4), not success.
fresh fifo
mkfifo "$WORK/a-fifo"
sed -i "s|^exe .*|exe $WORK/a-fifo|; s|^\(map [0-9a-f]* [0-9a-f]* [0-9a-f]*\) .*|\1 $WORK/a-fifo|" "$WORK/fifo/$name/meta"
timeout 60 "$CONVERT" -q "$WORK/fifo" >/dev/null 2>&1
s=$?
[ $s = 0 ] || fail "a FIFO as module: exit status $s (124: it hung)"
fresh nodot
cp -a "$proc" "$WORK/nodot/nodot"
"$CONVERT" -q "$WORK/nodot" >/dev/null 2>&1
s=$?
[ $s = 0 ] || fail "a process directory without a dot: exit status $s"
long=$(printf 'x%.0s' $(seq 4400))
traced "$WORK/longarg" "$TESTBIN/exit_with" 0 "$long" >/dev/null || fail "exit_with failed"
"$CONVERT" "$WORK/longarg" -o "$WORK/longarg.otf2" 2>"$WORK/err" || fail "long argument: exit status $?"
grep -q 'abruptly\|truncated' "$WORK/err" && fail "a long argument read as truncation: $(cat "$WORK/err")"
otf2-print -A "$WORK/longarg.otf2/traces.otf2" 2>/dev/null | grep -q "$long" ||
	fail "the long argument is not in the archive"
LD_PRELOAD=$LIB LIBTRACE_OUTPUT=$WORK/big LIBTRACE_QUIET=1 "$TESTBIN/count_events" 2 100000 >/dev/null
(trap '' XFSZ; ulimit -f 200; exec "$CONVERT" -q "$WORK/big" -o "$WORK/big.otf2") 2>"$WORK/err"
s=$?
[ $s = 4 ] || fail "archive larger than the file size limit: exit status $s, expected 4 ($(head -2 "$WORK/err"))"
grep -q 'writing the archive failed\|reached the file size limit' "$WORK/err" || fail "full disk: no clear message: $(head -2 "$WORK/err")"
echo ok
