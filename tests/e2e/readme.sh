#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# README.md stays an entry point (300 lines at most); every relative link of README.md and
# docs/*.md points to a file that exists (and, with #anchor, to one of its headings); the
# directory map of docs/development.md names directories that exist; the runtime reads the
# environment in src/core/config.c only.  (The settings table: settings.sh.)
. "$(dirname "$0")/lib.sh"

n=$(wc -l <"$SRC/README.md")
[ "$n" -le 300 ] || fail "README.md has $n lines: keep it under 300, move the rest to docs/"
echo "README.md: $n lines"

# Relative links [text](path#anchor): the file exists; the anchor is one of its headings,
# spelled as GitHub spells them (lower case, punctuation dropped, spaces as hyphens).
python3 - "$SRC" <<'PY' || fail "broken links in README.md or docs/"
import os, re, sys
src = sys.argv[1]
files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(src, "docs"))
                               if f.endswith(".md"))
def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} +(.*?) *$", line)
        if m:
            s = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
            out.add(s)
    return out
bad = links = 0
for f in files:
    text = open(os.path.join(src, f), encoding="utf-8").read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # code blocks hold no links
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        links += 1
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(os.path.join(src, f)), path)) \
            if path else os.path.join(src, f)
        if not os.path.exists(dest):
            print("%s: link to %s: no such file" % (f, target), file=sys.stderr)
            bad += 1
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            print("%s: link to %s: no such heading" % (f, target), file=sys.stderr)
            bad += 1
print("%d relative links in %d files" % (links, len(files)))
sys.exit(1 if bad else 0)
PY

# The runtime reads the environment in config.c only.
others=$(grep -rln --include='*.c' 'getenv *(' "$SRC/src" | grep -v 'src/core/config.c' || true)
[ -z "$others" ] || fail "getenv outside src/core/config.c: $others"

# Every directory of the map exists, and the map is there.
map=$(sed -n 's/^| `\([^`]*\/\)` |.*/\1/p' "$SRC/docs/development.md")
[ -n "$map" ] || fail "docs/development.md has no directory map"
for d in $map; do
	[ -d "$SRC/$d" ] || fail "docs/development.md's directory map names $d, which does not exist"
done
echo "the directory map's $(wc -w <<<"$map") directories exist"
echo ok
