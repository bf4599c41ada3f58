#!/bin/sh
# stock.sh: the audit's Lua tests once more under stock lua5.4 with normscope.so.
here=$(dirname "$0")
top_srcdir=${top_srcdir:-$here/../..}
export top_srcdir
n=0
for t in checks verdicts torch torch_layernorm torch_norms; do
  n=$((n + 1))
  out=$(sh "$top_srcdir/tests/lua/run-lua.sh" "$here/$t.lua" 2>&1)
  rc=$?
  if printf '%s\n' "$out" | grep -q '^1\.\.0 # SKIP'; then
    echo "ok $n - $t.lua # SKIP $(printf '%s\n' "$out" | sed -n 's/^1\.\.0 # SKIP //p')"
  elif [ $rc -eq 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok' &&
    printf '%s\n' "$out" | grep -q '^1\.\.'; then
    echo "ok $n - $t.lua under stock lua5.4"
  else
    echo "not ok $n - $t.lua under stock lua5.4 (exit $rc)"
    printf '%s\n' "$out" | grep -v '^ok' | sed 's/^/# /'
  fi
done
echo "1..$n"
