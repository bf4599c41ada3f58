#!/bin/sh
# test_screen_pane.sh: a step's text longer than the lesson pane (the fixture
# tests/tui/pane-scroll.lua at 80x24) scrolls with } and { above its try-it and verdict,
# which stay on the pane's last rows whatever is scrolled: the bar says "} more" while
# there is more below and "{ back" at the end; the verdict follows the state.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"
top=${top_srcdir:-.}
# above A B: a line with A stands right above a line with B (fixed strings), within 5 s
above() {
  i=0
  while [ $i -lt 100 ]; do
    capture | awk -v a="$1" -v b="$2" 'index($0, a) { la = NR } index($0, b) { lb = NR }
      END { exit !(la > 0 && lb == la + 1) }' && return 0
    sleep 0.05
    i=$((i + 1))
  done
  return 1
}

start 80 24 lesson "$top/tests/tui/pane-scroll.lua"
check "80x24: the long step is on screen" wait_for "A long text above its try-it"
check "  its first line" wait_for "The first line of the long text."
check "  the bar says there is more" wait_re "its try-it +\} more *$"
check "  the try-it is on screen" wait_for "Try it: Make the mean of x 10"
check "  and its verdict right under it" above "Try it: Make the mean" "? not yet: the mean is 2.5"
keys '}'
check "} scrolls the text: its first line goes" gone "The first line of the long text."
check "  the try-it stays" wait_for "Try it: Make the mean of x 10"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do keys '}'; done
check "} to the end: the text's last line" wait_for "The last line of the long text."
check "  the bar says the way back" wait_re "its try-it +\{ back *$"
check "  the try-it is still there, above its verdict" above "Try it: Make the mean" "? not yet: the mean is 2.5"
lua 'set{x={7,9,11,13}}'
check "the try-it done: its verdict turns, the text where it was" wait_re "(✓|\+) done: that is it"
check "  the text's last line still shown" wait_for "The last line of the long text."
keys '{'
check "{ scrolls back" wait_re "its try-it +\} more *$"
keys q
check "q quits with status 0" wait_for "EXIT=0"
done_testing
