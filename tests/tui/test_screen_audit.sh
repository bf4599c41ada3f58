#!/bin/sh
# test_screen_audit.sh: `a` opens the audit panel on the file x came from (or on x), with
# each check's verdict; Enter on a finding puts the explorer in the state that shows it,
# one undo step: the dead channel under the cursor, the layout the statistics suggest.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# The files, written by normscope's Lua (ns.rng, ns.save), not by the audit:
# dead.csv   (32, 5): column 4 (channel 3 from 0) constant 2, the others N(c, 1 + c).
# nhwc.npy   (8, 4, 4, 6) stored channels-last: channel c on axis 4 has mean 3c and
#            std 1 + c, so axis 4's slices differ, axis 2's do not.
cat >"$tmp/make.lua" <<LUA
local dir = "$tmp"
local g = ns.rng(7)
local rows = {}
for i = 1, 32 do
  local r = {}
  for c = 1, 5 do r[c] = c == 4 and 2 or g:normal(c, c, 1)[1] end
  rows[i] = r
end
local t = ns.tensor(rows)
local f = io.open(dir .. "/dead.csv", "w")
for i = 1, 32 do
  local r = {}
  for c = 1, 5 do r[c] = string.format("%.17g", t[(i - 1) * 5 + c]) end
  f:write(table.concat(r, ","), "\n")
end
f:close()
local v = {}
local z = g:normal(0, 1, 8 * 4 * 4 * 6):flat()
for i = 1, #z do
  local c = (i - 1) % 6
  v[i] = 3 * c + (1 + c) * z[i]
end
ns.save(dir .. "/nhwc.npy", ns.tensor(v, {8, 4, 4, 6}, "fp32"))
LUA
"$NS" run "$tmp/make.lua" >"$tmp/make.log" 2>&1
check "the test files were written" test -s "$tmp/dead.csv" -a -s "$tmp/nhwc.npy"

# ---- a dead channel: batch norm over (32, 5), channel 4 (1-based) constant
start 120 40 "$tmp/dead.csv"
started
lua 'set{kind="batch"}'
keys a
check "a opens the audit panel on the file" wait_for "Audit  (Up/Down"
check "the panel names the file it audits" wait_for "dead.csv (the file x came from"
check "near_zero_variance warns" wait_re "near_zero_variance +warn"
check "the other checks are listed with verdicts" wait_re "batch_dependence +yes"
keys Down
check "Down selects near_zero_variance" wait_re "> near_zero_variance"
check "its detail names the dead statistic (1-based 4)" wait_for "(1-based 4)"
keys Escape
check "Esc closes the panel" gone "Audit  (Up/Down"
keys a
check "a on the unchanged state reopens the same audit (the selection kept)" \
  wait_re "> near_zero_variance +warn"
keys Enter
check "Enter closes the panel and says what it shows" wait_for "near_zero_variance: warn; the cursor is on element 4"
lua 'print(get().cursor[1], get().cursor[2], get().kind)'
# (the Lua output is one line while the prompt is closed: its last line, without a frame)
check "the cursor is on the dead channel: row 1, column 4" wait_re "(^|│)1 +4 +batch"
keys a
check "a again reopens the audit" wait_re "near_zero_variance +warn"
keys Escape
check "Esc closes it" gone "Audit  (Up/Down"
keys q
check "q quits" wait_for "EXIT=0"

# ---- a transposed layout: channels last, audited as the default nchw
start 120 40 "$tmp/nhwc.npy"
started
lua 'set{kind="batch"}'
lua 'print("axes", tostring(get().axes))'
check "batch norm on rank 4: the kind's default axes" wait_re "(^|│)axes +default"
keys a
check "axes warns: the statistics suggest nhwc" wait_re "axes +warn"
check "the detail says try nhwc" wait_for "suggest nhwc"
keys Enter
check "Enter on axes closes the panel" wait_for "axes: warn"
lua 'print("axes", table.concat(get().axes, ","))'
check "the state now reduces over nhwc's axes 1,2,3" wait_re "(^|│)axes +1,2,3"
keys u
lua 'print("axes", tostring(get().axes))'
check "u undoes the jump in one step" wait_re "(^|│)axes +default"
keys q
check "q quits (nhwc)" wait_for "EXIT=0"

# ---- the default example: the audit runs on x itself
start 120 40
started
keys a
check "no file: the audit runs on x" wait_for "of x ((4) fp64, in memory)"
check "and lands" wait_re "outliers +(ok|warn)"
keys a
check "a closes the panel" gone "Audit  (Up/Down"
keys q
check "q quits (default)" wait_for "EXIT=0"
check "terminal sane" sane_tty
done_testing
