#!/bin/sh
# test_screen_labels.sh: row labels that fit (review N10: at End on a (64,256,32,32) file
# the Input's row number 524280 ran into the value 0.88733, and 4-D rows had no (n,c,h)).
# A (3,40,9,2) tensor has 1080 grid rows: the labels are the leading indices "n,c,h",
# each followed by a space before the first value; the Output's labels keep their column.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

"$NS" run - <<LUA
local t = {}
for i = 1, 3 * 40 * 9 * 2 do t[i] = ((i * 7919) % 2000) / 1000 - 1 end
ns.save("$tmp/x4.npy", ns.tensor(t, {3, 40, 9, 2}))
local v = {}
for i = 1, 123456 do v[i] = ((i * 7919) % 2000) / 1000 - 1 end
ns.save("$tmp/v.npy", ns.tensor(v))
LUA
start 120 40 "$tmp/x4.npy"
started
check "4-D: the label column is headed n,c,h" wait_re "│ *n,c,h +1 +2 *│"
check "  the first row is 1,1,1" wait_re "│ *1,1,1 +-?[0-9]"
keys End
check "  End: the last row is labelled 3,40,9" wait_re "│ *3,40,9 +-?[0-9]"
# every label ends in a space before the values: "3,40,9 0.1" never "3,40,90.1"
check "  every label is set off from its values" \
  no_re "│ *[0-9]+,[0-9]+,[0-9]+-?[0-9]\.[0-9]"
# The Output panel shows this tensor as stored, a row a line, with the same n,c,h labels:
# tests/tui/test_screen_output.sh checks its labels, columns and window.
keys q
wait_for "EXIT=0"

# a long vector: the element numbers of the last line fit their column
start 120 40 "$tmp/v.npy"
started
keys End
check "vector: End shows the last line's first element number, then a space" \
  wait_re "│ *12345[0-9] +-?[0-9]"
keys q
wait_for "EXIT=0"
done_testing
