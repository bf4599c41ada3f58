#!/bin/sh
# test_screen_output.sh: the output panel shows a matrix as it is stored, a row a line: each
# line is labelled with the row's index along every axis but the last ("1,2,2" of a
# (1, 2, 2, 2) tensor), the label in a column of its own, then a value per column; so a
# 3 x 4 x needs 3 lines where it needed 12. The arrows move by rows and columns there and
# the rows shown follow (a vector keeps its element list: test_screen_review.sh's B13).
# The values are computed here with awk (layer norm of each row, eps 1e-5).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# row 2 = (2, 4, 6, 9): mean 5.25, population variance 6.6875
Y21=$(f "%.5f" "(2 - 5.25) / sqrt(6.6875 + 1e-5)")
Y24=$(f "%.5f" "(9 - 5.25) / sqrt(6.6875 + 1e-5)")
start 80 24
started
lua 'set{x={{1,2,3,4},{2,4,6,9},{0,1,0,-1}}}'
check "80x24: a 3x4 x: row 2 of y is one line, its four values across ($Y21 ... $Y24)" \
  wait_re "│ *2 +$Y21 +-?[0-9.]+ +-?[0-9.]+ +$Y24 +│"
check "  the columns are numbered over the values" wait_re "│y +1 +2 +3 +4 +│"
check "  all three rows are listed: no row window" gone "rows 1-"
# a (1, 2, 2, 2) tensor: its 2-D slices' rows, labelled sample,channel,row
lua 'set{x={{{{1,2},{3,5}},{{5,6},{7,9}}}}}'
check "a 4-D x: the rows are labelled with their three leading indices, apart from the values" \
  wait_re "│1,2,2 +-?[0-9]+\.[0-9]+ +-?[0-9]+\.[0-9]+ +│"
# a tall matrix (30 x 2): a window onto its rows that follows the cursor by rows
lua 'local t = {} for i = 1, 30 do t[i] = {i, i * i} end set{x = t}'
check "a 30x2 x: a window onto the rows, counted in rows" wait_re "rows 1-[0-9]+/30"
keys M-3
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do keys Down; done
check "  Alt-3 then 15 Down: the output's window ends at row 16" wait_re "rows [0-9]+-16/30"
keys End
check "  End: the last rows" wait_re "rows [0-9]+-30/30"
keys q
check "q quits with status 0" wait_for "EXIT=0"
done_testing
