#!/bin/sh
# test_screen_odds.sh: small items of review N15: n on a 0 keeps 0 (it showed -0 and y
# -0.00000), the autosaved last.lua is private (0600, as the history), and a saved eps
# reads as typed (1e-07, not 9.9999999999999995e-08) while still loading back exactly.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
lua 'set{x = {0, 1, 2, 3}, eps = 1e-7}'
keys M-1 n
sleep 0.3
check "n on a 0: the cell keeps 0" wait_re "│ +1 +0 +1 +2 +3 *│"
check "  no -0 anywhere" no_re "(^|[ │])-0(\.0+)?( |│)"
keys q
wait_for "EXIT=0"
last="$XDG_STATE_HOME/normscope/last.lua"
check "last.lua is private (0600)" test "$(stat -c %a "$last")" = 600
check "  eps saved as 1e-07" grep -q "eps = 1e-07," "$last"
out=$("$NS" run - <<LUA
local e = ns.explorer()
e:load("$last")
print(e:get().eps == 1e-7)
LUA
)
check "  and it loads back to the same double" test "$out" = true
# the header's calc read-out wherever the tabs leave room for it (review section 2: it was
# absent at 100x30, whose compact header has room)
start 100 30
started
check "100x30: the header shows the last recompute's time" wait_re "calc [0-9.]+ ms"
# "= EXPR" at the prompt with no lesson question open: the value, and why (it was Lua's
# "unexpected symbol near '='")
keys :
wait_re "^> ?$"
lit "= 6 * 7"
keys Enter
check "= EXPR with no question open shows the value" wait_re "│42 +│"
check "  and says = answers a lesson's question" wait_for "(no question is open: = shows the value)"
check "  not a syntax error" gone "unexpected symbol near '='"
keys Escape
wait_for "? help"
keys q
wait_for "EXIT=0"
done_testing
