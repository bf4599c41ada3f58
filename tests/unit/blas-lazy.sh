#!/bin/sh
# blas-lazy.sh: the real binary starts without LAPACKE or BLAS (they are opened at first
# use: src/core/blasdl.c). LD_DEBUG=libs makes the dynamic loader name every library it
# loads: none of liblapacke, libblas, libopenblas for --version, --help and a script without
# linear algebra; liblapacke for ns.eigvals (closed-form values) and a numeric ns.spectrum; and NS_LAPACK_SONAME / NS_BLAS_SONAME naming missing libraries give
# clean Lua errors while the rest of the script goes on.
set -u
ns=${NORMSCOPE:-./normscope}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns-blas-lazy.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok() { # cond-status, name
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi
}
# noload FILE...: 0 when the loader's log saw libc (so it is a real log) and no LAPACK/BLAS
noload() {
  cat "$@" >"$tmp/log" 2>/dev/null || return 1
  grep -q 'calling init: .*libc[.]so' "$tmp/log" || return 1
  ! grep -E 'calling init: .*/lib(lapacke|blas|openblas|lapack)[.]so' "$tmp/log" >/dev/null
}

LD_DEBUG=libs "$ns" --version >/dev/null 2>"$tmp/v"
grep -q 'calling init: .*libc[.]so' "$tmp/v"
ok $? "LD_DEBUG=libs reports the libraries loaded (libc seen): the checks below mean something"
noload "$tmp/v"; ok $? "--version loads no LAPACKE or BLAS"
LD_DEBUG=libs "$ns" --help >/dev/null 2>"$tmp/h"
noload "$tmp/h"; ok $? "--help loads no LAPACKE or BLAS"

cat >"$tmp/plain.lua" <<'LUA'
local y = ns.normalize(ns.tensor{-2, -1, 1, 2}, {kind = "layer"})
print(string.format("%.6f", y:flat()[4]))
LUA
out=$(LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/p" "$ns" run "$tmp/plain.lua")
ok $? "a script without linear algebra runs ($out)"
noload "$tmp"/p.*; ok $? "and loads no LAPACKE or BLAS"

cat >"$tmp/spec.lua" <<'LUA'
local e = ns.eigvals(ns.tensor{{2, 1}, {1, 2}})
local s, how = ns.spectrum(ns.tensor{-2, -1, 1, 2}, {kind = "layer", gamma = ns.tensor{1, 2, 3, 4}})
print(string.format("%.15f %.15f %s %d", e[1], e[2], how, #s))
LUA
rm -f "$tmp"/p.*
out=$(LD_DEBUG=libs LD_DEBUG_OUTPUT="$tmp/p" "$ns" run "$tmp/spec.lua" 2>&1)
echo "# eigvals, spectrum: $out"
# [[2,1],[1,2]] has the eigenvalues 1 and 3; a gamma makes the spectrum a numeric one
[ "$out" = "1.000000000000000 3.000000000000000 numeric 4" ]
ok $? "ns.eigvals and a numeric ns.spectrum work after the lazy load in the same process"
grep -q 'calling init: .*liblapacke[.]so' "$tmp"/p.*
ok $? "and they loaded liblapacke"

cat >"$tmp/missing.lua" <<'LUA'
local okl, e = pcall(ns.eigvals, ns.tensor{{2, 1}, {1, 2}})
print(okl, e)
local okm, em = pcall(ns.matmul, ns.tensor{{1, 2}, {3, 4}}, ns.tensor{{1, 0}, {0, 1}})
print(okm, em)
print("still running", ns.normalize(ns.tensor{1, 3}, {kind = "layer"}):flat()[2])
LUA
out=$(NS_LAPACK_SONAME=libns-no-such-lapacke.so.3 NS_BLAS_SONAME=libns-no-such-blas.so.3 \
  "$ns" run "$tmp/missing.lua" 2>&1)
st=$?
printf '%s\n' "$out" | sed 's/^/# /'
ok $st "missing libraries: the script finishes (exit 0)"
printf '%s\n' "$out" | grep -q '^false.*cannot load libns-no-such-lapacke[.]so[.]3: '
ok $? "ns.eigvals fails with 'cannot load libns-no-such-lapacke.so.3: <reason>'"
printf '%s\n' "$out" | grep -q '^false.*matmul: cannot load libns-no-such-blas[.]so[.]3: '
ok $? "ns.matmul fails with 'matmul: cannot load libns-no-such-blas.so.3: <reason>'"
printf '%s\n' "$out" | grep -q '^still running'
ok $? "the rest of the script runs after the errors"
echo "1..$n"
exit $fail
