#!/bin/sh
# test_screen_mask.sh: the mask field on screen. 002's padding example (one sequence of 5
# positions x 2 features, the last 2 positions padding), normalized per feature across
# the positions with the mask: the output panel says so in its title, counts the kept
# elements under y's moments (which are over those),
# and shows the masked positions as a dot instead of a number (a row of the stored tensor per
# position) (and '.' with --ascii), and the
# real positions' values are those of the 3 real tokens alone (computed here with awk);
# the spectrum labels one zero per masked element "masked"; a mask that keeps nothing of a
# statistic is said in words; a shape that no longer fits is refused, naming the mask.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

SET='set{x={{{1,4},{3,8},{5,6},{0,0},{0,0}}}, kind="batch", axes={2}, mask={{{1},{1},{1},{0},{0}}}}'
# feature 1 keeps 1, 3, 5 (mean 3), feature 2 keeps 4, 8, 6 (mean 6); both var 8/3
Y11=$(f "%.5f" "(1 - 3) / sqrt(8/3 + 1e-5)")
Y22=$(f "%.5f" "(8 - 6) / sqrt(8/3 + 1e-5)")
# without the mask the padding zeros enter: feature 1 over 1, 3, 5, 0, 0 (mean 1.8)
U11=$(f "%.5f" "(1 - 1.8) / sqrt(((1-1.8)^2 + (3-1.8)^2 + (5-1.8)^2 + 2*1.8^2)/5 + 1e-5)")

start 120 40
started
lua "$SET"
check "120x40: the output title says there is a mask" wait_for "3 Output y = BatchNorm(x, mask)"
check "  y's moments are over the 6 kept elements" wait_for "kept 6/10: mean 0.000000 std 0.999998"
check "  a real position is the 3 real tokens' normalization: y(1,1) = $Y11" \
  wait_re "│1,1 +$Y11 "
# the output shows the (1, 5, 2) tensor as it is stored: a row per position, labelled with
# its sample and position ("1,2"), a column per feature
check "  and y(2,2) = $Y22 (position 2's row, feature 2's column)" wait_re "│1,2 +-?[0-9.]+ +$Y22 "
check "  a masked position shows a dot in each feature, no number" \
  wait_re "│1,4 +· +· +│"
check "  the spectrum labels the masked zeros (2 positions x 2 features)" \
  wait_re "│masked +4 +0 +0 +0 *│"
check "  the rank line names the masked directions" wait_for "ones+masked dirs removed"
lua 'set{mask=false}'
check "mask = false: the padding enters, y(1,1) = $U11" wait_re "│1,1 +$U11 "
check "  no dot and no kept count any more" gone "kept 6/10"
check "  nor in the title" gone "(x, mask)"
lua "$SET"
lua 'set{mask={{{0},{0},{0},{0},{0}}}}'
check "a mask that keeps nothing: said in words" \
  wait_for "keeps no element of a statistic"
lua 'set{mask={1,0,1}}'
check "a mask that does not broadcast is refused, naming it" \
  wait_for "mask: shape (3) does not broadcast"
lua 'set{mask={{{1},{1},{1},{0},{0}}}}'
lua 'set{x=ns.full({1,4,2}, 1)}'
check "an x the mask no longer fits is refused, naming the mask" \
  wait_for "does not fit the mask"
keys q
check "q quits with status 0" wait_for "EXIT=0"

# 80x24, ASCII only: the dot is '.'
start 80 24 --ascii
started
lua "$SET"
keys M-1 Down Down Down
check "80x24 --ascii: masked positions show '.' (the rows follow the cursor)" wait_re "\|1,4 +\. +\. +\|"
check "80x24 --ascii: the kept count fits" wait_for "kept 6/10: mean 0.000000 std 0.999998"
keys q
check "q quits with status 0" wait_for "EXIT=0"
done_testing
