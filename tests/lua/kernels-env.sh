#!/bin/sh
# kernels-env.sh: NS_SIMD and NS_THREADS reach ns.normalize (through normscope run) and
# change nothing in the results: the SHA-256 of every output and statistic is the same
# with SIMD on and off and with 1, 2 and 3 threads; a bad NS_THREADS is refused (issue 23:
# exit 2 and a message naming it and its range, as NS_MAX_ELEMENTS is).
set -u
ns=${NORMSCOPE:-./normscope}
script=$(mktemp "${TMPDIR:-/tmp}/ns-kernels-env.XXXXXX.lua")
trap 'rm -f "$script"' EXIT
cat >"$script" <<'LUA'
local g = ns.rng(7)
local parts = {}
local function add(t) parts[#parts + 1] = table.concat(t:flat(), ",") end
local cases = {
  {shape = {6, 20, 9, 11}, spec = {kind = "batch", dtype = "fp32"}},
  {shape = {6, 20, 9, 11}, spec = {kind = "group", groups = 4, dtype = "fp16"}},
  {shape = {37, 300}, spec = {kind = "layer", dtype = "fp32", order = "pairwise"}},
  {shape = {37, 300}, spec = {kind = "rms", dtype = "bf16", gamma = 2}},
  {shape = {5, 7, 30}, spec = {kind = "instance", dtype = "fp64", algo = "welford"}},
}
for _, c in ipairs(cases) do
  local x = g:normal(1, 3, c.shape):astype(c.spec.dtype)
  local y, st = ns.normalize(x, c.spec)
  add(y); add(st.mean); add(st.var); add(st.denom)
end
print(ns.sha256(table.concat(parts, ";")))
LUA
n=0
fail=0
ref=$("$ns" run "$script") || { echo "Bail out! normscope run failed"; exit 1; }
check() { # name, env assignments...
  name=$1
  shift
  got=$(env "$@" "$ns" run "$script")
  n=$((n + 1))
  if [ "$got" = "$ref" ]; then echo "ok $n - $name"; else echo "not ok $n - $name ($got vs $ref)"; fail=1; fi
}
check "NS_SIMD=off gives the same bits" NS_SIMD=off
check "NS_THREADS=2 gives the same bits" NS_THREADS=2
check "NS_THREADS=3 with NS_SIMD=off gives the same bits" NS_THREADS=3 NS_SIMD=off
for bad in lots 0 -1 1e9 65; do
  n=$((n + 1))
  msg=$(env NS_THREADS=$bad "$ns" run "$script" 2>&1 >/dev/null)
  st=$?
  case "$st:$msg" in
  "2:normscope: NS_THREADS: \"$bad\" is not a number of threads from 1 to 64") echo "ok $n - NS_THREADS=$bad is refused: $msg" ;;
  *) echo "not ok $n - NS_THREADS=$bad: exit $st, '$msg'"; fail=1 ;;
  esac
done
info=$(mktemp "${TMPDIR:-/tmp}/ns-kernels-info.XXXXXX.lua")
trap 'rm -f "$script" "$info"' EXIT
echo 'local k = ns.kernels() print(k.isa .. " " .. k.threads)' >"$info"
info() { env "$@" "$ns" run "$info"; }
n=$((n + 1))
got=$(info NS_SIMD=off NS_THREADS=3)
if [ "$got" = "portable 3" ]; then echo "ok $n - ns.kernels() reports NS_SIMD=off NS_THREADS=3"; else echo "not ok $n - ns.kernels() says '$got' under NS_SIMD=off NS_THREADS=3"; fail=1; fi
echo "1..$n"
exit $fail
