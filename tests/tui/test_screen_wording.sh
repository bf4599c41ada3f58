#!/bin/sh
# test_screen_wording.sh: what the third replay of the explorer review found the screen
# saying wrongly (each check failed before its fix):
# - the Train/eval panel called one step on the batch matrix "rows drawn from" it;
# - at 120x40 it cut the seed of the random source off its first line;
# - the help glossary gave the recompute budget as 16 ms (a key is meant to settle
#   within 100 ms, as the README says);
# - above the full Jacobian's limit the Spectrum header ran "closed|Jv-λv|" together;
# - the Lua pane showed 4 lines at every size (issue 24; 200x60 now shows 14, 120x40 its 4).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# the Train/eval panel's first line (its text between the borders)
train_line() { capture | sed -n '/6 Train\/eval/{n;p;}' | head -1; }

for size in "120 40" "80 24"; do
  set -- $size
  start $1 $2
  started
  keys M-6 # the panel itself at 80x24 (one of the right column)
  check "$1x$2: the random source's line shows its seed" \
    wait_re "[0-9]+ x [0-9]+ of N\(4, std 2\), seed [0-9]+"
  keys b
  check "$1x$2: b: one step on the batch matrix says so" wait_for "one step on the 2x2 batch matrix"
  check "$1x$2:   and not that rows were drawn from it" no_re "rows drawn from the 2x2 batch"
  keys b
  check "$1x$2: b again: the resampled rows say so" wait_re "[0-9]+ x [0-9]+ rows drawn from the 2x2 batch"
  keys q
  wait_for "EXIT=0"
done

start 120 40
started
keys ?
wait_for "Help  (lines 1-"
i=0
while [ $i -lt 30 ] && ! capture | grep -qF "ms at the top right"; do keys NPage; sleep 0.1; i=$((i + 1)); done
check "help: the glossary gives the budget of a key as 100 ms" wait_for "settle within 100 ms"
check "  and no longer 16 ms" no_re "budget is 16 ms"
keys Escape
gone "Esc closes"
lua 'set{x = ns.rng(1):normal(0, 1, 1500)}'
check "1500 elements: the closed-form table's header keeps its columns apart" \
  wait_re "closed +\|Jv-.v\| +FD"
check "  (not run together)" no_re "closed\|Jv"
keys q
wait_for "EXIT=0"

# the Lua pane: twenty printed lines, and how many of them the open prompt shows (run in
# this shell, not in $(...): start keeps its session in shell variables)
lua_lines() { # W H: sets shown to the count of line1 .. line20 with the prompt open
  start "$1" "$2"
  started
  keys :
  wait_re "^> ?$"
  lit 'for i = 1, 20 do print("line" .. i) end'
  keys Enter
  wait_for "line20"
  shown=$(capture | grep -cE "│line[0-9]+ ")
  keys Escape
  keys q
  wait_for "EXIT=0"
}
lua_lines 200 60
check "200x60: the open Lua pane shows 14 lines of its output ($shown)" test "$shown" -eq 14
lua_lines 120 40
check "120x40: it keeps its 4 ($shown)" test "$shown" -eq 4
done_testing
