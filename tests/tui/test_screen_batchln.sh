#!/bin/sh
# test_screen_batchln.sh: the Batch panel shows LN when there is room, and says what it
# leaves out when there is not (explorer review B14: for a loaded 3x4 or 5x4 batch the
# panel said "BN and LN: no room here" at 120x40, and its title said "BN columns, LN rows"
# over a panel that drew no LN).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# the batch panel's text: the lines from its title to its bottom (the right column at
# 120x40, the right one of the compact layout at 80x24)
batch_text() {
  capture | sed -n '/5 Batch/,/╰/p' | sed -n 's/.*│\([^│]*\)│$/\1/p'
}
batch_has() { batch_text | grep -qE -- "$1"; }
batch_lacks() { ! batch_has "$1"; }
title() { capture | grep -o '╭─ 5 Batch [^─]*' | head -1; }
title_has() { title | grep -qE -- "$1"; }
title_lacks() { ! title_has "$1"; }

# LN of the target row (1, 2, 3, 4): mean 2.5, variance 1.25; at 1 to 6 decimals
ln_re() { # the four LN values of row 1 as a regex, each with the digits it shows
  v=""
  for x in 1 2 3 4; do
    z=$(f "%.1f" "($x - 2.5) / sqrt(1.25 + 1e-5)")
    v="$v +$(echo "$z" | sed 's/\./\\./')[0-9]*"
  done
  echo "T.1$v"
}
LN_T=$(ln_re)
B34='{{1,2,3,4},{0,1,0,1},{2,2,2,5}}'
B54='{{1,2,3,4},{0,1,0,1},{2,2,2,5},{1,1,0,3},{4,0,2,2}}'
B23='{{1,2,3},{0,1,5}}'

start 120 40
started
for b in "3x4 $B34" "5x4 $B54"; do
  set -- $b
  lua "set{batch=$2, focus=\"batch\"}"
  wait_for "5 Batch $1"
  check "120x40 $1: the title says BN and LN are drawn" title_has "BN columns, LN rows"
  check "120x40 $1: the LN block is drawn (its name)" batch_has "^ +LN( |$)"
  check "120x40 $1: LN of the target row" batch_has "$LN_T"
  check "120x40 $1: no 'no room' note" batch_lacks "no room|not shown"
done
lua "set{batch=$B23, focus=\"batch\"}"
wait_for "5 Batch 2x3"
check "120x40 2x3: batch, BN and LN all drawn" batch_has "LN"
check "  the LN of the target row ((1,2,3): -1.22 0 1.22)" batch_has "T.1 +-1\.2[0-9]* +-?0(\.0+)? +1\.2[0-9]*"
check "  and the title says so" title_has "BN columns, LN rows"
keys q
wait_for "EXIT=0"

# 80x24: what does not fit is named, with the key (f) whose figure shows it; the title
# names only what is drawn
start 80 24
started
lua "set{batch=$B34, focus=\"batch\"}"
keys M-5
wait_for "5 Batch 3x4"
check "80x24 3x4: the panel names what it leaves out and the key that shows it" \
  batch_has "BN and LN not shown: f shows them"
check "  the title does not claim LN rows" title_lacks "LN rows"
check "  the target's and companion's rows are both drawn" batch_has "C 2 +0"
check "  the target columns without a line are summed up" batch_has "T cols [0-9]-4: 0 FLIPs"
keys f
check "  f: the figure shows BN and LN" wait_re "BN down the columns.*LN across the rows"
keys Escape
keys q
wait_for "EXIT=0"
done_testing
