#!/bin/sh
# stock-lua.sh: every Lua test once more under the stock interpreter lua5.4 with the
# installed-style C module normscope.so (require "normscope"), one TAP line per file.
here=$(dirname "$0")
top_srcdir=${top_srcdir:-$here/../..}
top_builddir=${top_builddir:-.}
export top_srcdir top_builddir
lua=${LUA_INTERP:-}
[ -n "$lua" ] || lua=$(command -v lua5.4 2>/dev/null)
if [ -z "$lua" ]; then
  echo "1..0 # SKIP lua5.4 not found"
  exit 0
fi
n=0
fail=0
for t in tensor normalize stats rng torch_rng estimators vjp residual io claims stack plot figures \
  explorer experiments panelfig ../fuzz/lua_api_fuzz; do
  n=$((n + 1))
  out=$(sh "$here/run-lua.sh" "$here/$t.lua" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok' &&
    printf '%s\n' "$out" | grep -q '^1\.\.'; then
    echo "ok $n - $t.lua under stock lua5.4"
  else
    echo "not ok $n - $t.lua under stock lua5.4 (exit $rc)"
    printf '%s\n' "$out" | grep -v '^ok' | sed 's/^/# /'
    fail=1
  fi
done
echo "1..$n"
exit $fail
