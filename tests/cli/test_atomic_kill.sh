#!/bin/sh
# test_atomic_kill.sh: a process saving a large explorer state in a loop (save() goes
# through ns_file_write_atomic: temporary file, fsync, rename) is killed with SIGKILL at
# random moments; after every kill the state file must still load and hold one of the two
# states the loop writes, whole. TAP: one line per kill.
set -u
ns=${NORMSCOPE:-${top_builddir:-.}/normscope}
kills=${KILLS:-10}
T=$(mktemp -d "${TMPDIR:-/tmp}/nskill.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
cat >"$T/writer.lua" <<'LUA'
-- two states that differ in every element of a 200000-element x (about 4 MB of text)
local path = arg[1]
local n = 200000
local a, b = {}, {}
for i = 1, n do a[i] = i + 0.25 b[i] = -i - 0.5 end
local ea = ns.explorer{x = ns.tensor(a), eps = 0.125}
local eb = ns.explorer{x = ns.tensor(b), eps = 0.5}
ea:save(path)
io.stdout:write("ready\n")
io.stdout:flush()
while true do
  eb:save(path)
  ea:save(path)
end
LUA
cat >"$T/check.lua" <<'LUA'
local e = ns.explorer()
local ok, err = pcall(e.load, e, arg[1])
if not ok then print("unloadable: " .. tostring(err)) os.exit(1) end
local s = e:get()
local x, n = s.x, #s.x
local sum = 0
for i = 1, n do sum = sum + x[i] end
-- state a: x_i = i + 0.25, eps 1/8; state b: x_i = -i - 0.5, eps 1/2 (sums exact in doubles)
local ta, tb = n * (n + 1) / 2 + 0.25 * n, -(n * (n + 1) / 2) - 0.5 * n
if n == 200000 and sum == ta and s.eps == 0.125 then print("a") os.exit(0) end
if n == 200000 and sum == tb and s.eps == 0.5 then print("b") os.exit(0) end
print(("neither state: %d elements, sum %.17g, eps %g"):format(n, sum, s.eps))
os.exit(1)
LUA
f="$T/state.lua"
bad=0
i=0
while [ $i -lt "$kills" ]; do
  i=$((i + 1))
  "$ns" run "$T/writer.lua" "$f" >"$T/out" 2>"$T/err" &
  pid=$!
  # wait until the first whole file is written, then a while more (0.05 .. 1.2 s)
  w=0
  while ! grep -q ready "$T/out" 2>/dev/null && [ $w -lt 600 ]; do sleep 0.05; w=$((w + 1)); done
  sleep "$(awk -v s="$i" 'BEGIN { srand(s * 7919); printf "%.2f", 0.05 + rand() * 1.15 }')"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  got=$("$ns" run "$T/check.lua" "$f" 2>&1)
  if [ $? -eq 0 ]; then
    echo "ok $i - killed while saving: the file holds state $got, whole"
  else
    echo "not ok $i - killed while saving: $got"
    sed 's/^/# writer: /' "$T/err" | head -n 5
    bad=1
  fi
done
left=$(find "$T" -name 'state.lua.tmp*' | wc -l)
echo "# $left temporary files left behind by the killed writers (never renamed over the file)"
echo "1..$i"
exit $bad
