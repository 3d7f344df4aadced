#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# The Spack package (packaging/spack) against the CMake build, without Spack: package.py is
# valid Python (parsed with ast, never run); every -D of its cmake_args is an option or cache
# variable of CMakeLists.txt; every LIBTRACE_WITH_* option, and every option an optional
# dependency's lookup depends on, is set from a variant; every dependency CMakeLists.txt
# looks up (find_package, pkg_check_modules, find_path: the table below says which Spack
# package each is) has a depends_on, under that variant's condition; the package depends on
# nothing CMakeLists.txt does not look up.
. "$(dirname "$0")/lib.sh"

REPO=$SRC/packaging/spack
PKG=$REPO/packages/libtrace-tracer/package.py
[ -f "$PKG" ] || fail "no Spack package: $PKG"
grep -qE '^ +namespace: *libtrace *$' "$REPO/repo.yaml" 2>/dev/null ||
	fail "$REPO/repo.yaml does not give the repository's namespace (libtrace)"

python3 - "$PKG" "$SRC/CMakeLists.txt" <<'PY' || fail "package.py does not match CMakeLists.txt"
import ast, os, re, sys

pkg_path, cmake_path = sys.argv[1], sys.argv[2]

# What each lookup of CMakeLists.txt is in Spack: a package name, or None (nothing to
# depend on).  A lookup missing here fails the test: add it here and to package.py.
DEPENDENCIES = {
    ("find_package", "PkgConfig"): "pkgconfig",
    ("find_package", "Threads"): None,  # the C library's
    ("find_package", "BFD"): "binutils",  # cmake/FindBFD.cmake: libbfd, bfd.h
    ("find_package", "Python3"): "python",  # generates the MPI wrappers
    ("pkg-config", "otf2"): "otf2",
    ("pkg-config", "ompi-c"): "mpi",
    ("pkg-config", "mpich"): "mpi",
    ("header", "cupti.h"): "cuda",
    ("header", "cuda.h"): "cuda",
}
# A virtual package stands for these lookups: the package must require their providers.
PROVIDERS = {("pkg-config", "ompi-c"): "openmpi", ("pkg-config", "mpich"): "mpich"}
ALWAYS = {"c", "cmake"}  # what every CMake package of C depends on

errors = []

# ---- CMakeLists.txt ----
text = "\n".join(re.sub(r"(^|\s)#.*$", "", line) for line in open(cmake_path))
commands = re.findall(r"\b(\w+)\s*\(((?:[^()]|\([^()]*\))*)\)", text)
options = {a.split()[0] for c, a in commands if c == "option"}
cache = set(options)
for c, a in commands:
    words = a.split()
    if c == "set" and "CACHE" in words[1:]:
        cache.add(words[0])
    if c in ("find_path", "find_library", "find_program", "find_file"):
        cache.add(words[0])
if len(options) < 4:
    sys.exit("cannot read the options of CMakeLists.txt: %s" % sorted(options))

lookups = []  # (kind, name, options its enclosing if()s name)
stack = []
for c, a in commands:
    c = c.lower()
    if c == "if":
        stack.append(a)
    elif c in ("elseif", "else"):
        stack[-1] = a if c == "elseif" else ""  # an else branch is not what an option selects
    elif c == "endif":
        stack.pop()
    if c not in ("find_package", "pkg_check_modules", "find_path", "find_library"):
        continue
    guard = {w for cond in stack for w in re.findall(r"\w+", cond) if w in options}
    words = a.split()
    if c == "find_package":
        found = [("find_package", words[0])]
    elif c == "pkg_check_modules":
        keywords = {"REQUIRED", "QUIET", "IMPORTED_TARGET", "GLOBAL", "NO_CMAKE_PATH",
                    "NO_CMAKE_ENVIRONMENT_PATH"}
        found = [("pkg-config", re.split(r"[<>=]", w)[0]) for w in words[1:]
                 if w not in keywords]
    else:
        names = words[words.index("NAMES") + 1:] if "NAMES" in words else words[1:2]
        kind = "header" if c == "find_path" else "library"
        found = [(kind, names[0])]
    lookups += [(k, n, guard) for k, n in found]
if not any(k == "pkg-config" for k, _, _ in lookups):
    sys.exit("cannot read the lookups of CMakeLists.txt")

# ---- package.py ----
source = open(pkg_path).read()
try:
    tree = ast.parse(source, pkg_path)
    compile(source, pkg_path, "exec")
except SyntaxError as e:
    sys.exit("package.py is not valid Python: %s" % e)
name = os.path.basename(os.path.dirname(pkg_path))
classes = [n for n in tree.body if isinstance(n, ast.ClassDef)
           and any(isinstance(b, ast.Name) and b.id == "CMakePackage" for b in n.bases)]
if len(classes) != 1:
    sys.exit("package.py has no class deriving from CMakePackage")
cls = classes[0]
spack_class = "".join(w.capitalize() for w in re.split(r"[-_]", name))
if cls.name != spack_class:
    errors.append("the class of package %s is %s: Spack looks for %s"
                  % (name, cls.name, spack_class))

def string(node, what):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    sys.exit("package.py: %s is not a string literal (this test cannot check it)" % what)

def kwarg(call, key):
    for k in call.keywords:
        if k.arg == key:
            return string(k.value, key)
    return ""

def directives(fn):
    return [s.value for s in cls.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
            and isinstance(s.value.func, ast.Name) and s.value.func.id == fn]

variants = {string(c.args[0], "a variant's name") for c in directives("variant")}
depends = [(re.match(r"[\w-]+", string(c.args[0], "a dependency")).group(0), kwarg(c, "when"))
           for c in directives("depends_on")]
requires = [([string(a, "a requirement") for a in c.args], kwarg(c, "when"))
            for c in directives("requires")]

methods = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "cmake_args"]
if not methods:
    sys.exit("package.py has no cmake_args")
defines, from_variant, strings = [], {}, []
for node in ast.walk(methods[0]):
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        strings.append(node.value)
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("define", "define_from_variant")):
        continue
    var = string(node.args[0], "a CMake variable of cmake_args")
    defines.append(var)
    if node.func.attr == "define_from_variant":
        v = string(node.args[1], "a variant") if len(node.args) > 1 else var.lower()
        from_variant[var] = v
        if v not in variants:
            errors.append("cmake_args sets %s from variant %s, which package.py does not have"
                          % (var, v))
if not defines:
    sys.exit("cannot read the CMake variables of cmake_args")

# ---- the checks ----
for var in defines:
    if var not in cache:
        errors.append("cmake_args passes -D%s: CMakeLists.txt has no such option or cache"
                      " variable" % var)
for v in sorted(variants):
    if v not in from_variant.values() and not any("+" + v in s for s in strings):
        errors.append("variant %s changes nothing in cmake_args" % v)
selecting = {o for o in options if o.startswith("LIBTRACE_WITH_")}
selecting |= {o for _, _, guard in lookups for o in guard}
for o in sorted(selecting):
    if o not in from_variant:
        errors.append("option %s of CMakeLists.txt is set from no variant" % o)
wanted = set(ALWAYS)
for kind, n, guard in lookups:
    if (kind, n) not in DEPENDENCIES:
        errors.append("CMakeLists.txt looks up %s %s: add it to the table of this test and"
                      " a depends_on to package.py" % (kind, n))
        continue
    dep = DEPENDENCIES[(kind, n)]
    if dep is None:
        continue
    wanted.add(dep)
    conds = [when for d, when in depends if d == dep]
    if not conds:
        errors.append("CMakeLists.txt looks up %s %s: package.py has no depends_on(\"%s\")"
                      % (kind, n, dep))
        continue
    need = ["+" + from_variant[o] for o in guard if o in from_variant]
    if not any(all(c in when for c in need) for when in conds):
        errors.append("depends_on(\"%s\") is not under %s (CMake looks %s up only with %s)"
                      % (dep, " ".join(need), n, " ".join(sorted(guard))))
    if (kind, n) in PROVIDERS:
        p = "^" + PROVIDERS[(kind, n)]
        if not any(p in specs and all(c in when for c in need) for specs, when in requires):
            errors.append("CMake finds %s by its pkg-config name %s: no requires() names %s"
                          % (dep, n, p))
for d, when in depends:
    if d not in wanted:
        errors.append("depends_on(\"%s\"): CMakeLists.txt does not look it up" % d)

for e in errors:
    print("package.py: " + e, file=sys.stderr)
print("%d variants, %d CMake variables, %d dependencies, %d lookups of CMakeLists.txt"
      % (len(variants), len(defines), len(depends), len(lookups)))
sys.exit(1 if errors else 0)
PY
echo "the Spack package matches CMakeLists.txt"
