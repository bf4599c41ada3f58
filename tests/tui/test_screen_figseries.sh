#!/bin/sh
# test_screen_figseries.sh: the figures show every series (review N11: in the Output
# figure y and y(x+10) were drawn under y(2x), so no y could be seen; cumulative under
# exact in the Train/eval one) and put the ticks of an index axis on whole numbers.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

start 120 40
started
keys M-3
keys f
wait_for "Figure: 3 Output"
check "Output figure: y and the probes that equal it share one legend entry" \
  wait_re "○ y = y\(x\+10\) = y\(2x\)"
check "  the element axis has whole-number ticks only" \
  no_re "│ +1\.0 +1\.[0-9]"
check "  (1 2 3 4 under it)" wait_re "│ +1 +2 +3 +4 *│"
keys Escape
# eps 1 breaks the scale invariance visibly: y(2x) is its own series again
lua 'set{eps = 1}'
keys M-3
keys f
check "with eps 1, y(2x) differs from y: its own legend entry" wait_re "y\(2x\) +. y = y\(x\+10\)"
keys Escape
keys M-6
keys f
wait_for "Figure: 6 Train/eval"
check "Train/eval figure: cumulative and exact means share one entry" \
  wait_for "○ cumulative = exact"
keys Escape
keys q
wait_for "EXIT=0"
done_testing
