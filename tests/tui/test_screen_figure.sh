#!/bin/sh
# test_screen_figure.sh: the figure view (f): the focused panel's figure, large, redrawn
# live as the state changes, at 80x24 and 120x40; Esc or f closes it.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2"
  started
  keys f
  check "$1x$2: f opens the input's figure" wait_for "Figure: 1 Input"
  check "$1x$2: histograms of x and y, 4 values each" wait_re "x \(n=4\) +. y \(n=4\)"
  # x = -2 -1 1 2: the value axis runs from -2 to 2
  check "$1x$2: the histogram's axis spans x (-2.0 .. 2.0)" wait_re "^│ +-2\.0 .* 2\.0│"
  keys Escape
  check "$1x$2: Esc closes it" wait_for "╭─ 3 Output"
  keys M-3 f
  check "$1x$2: the output's figure: x, y and both probes" wait_for "x  ○ y  ◆ y(x+10)  △ y(2x)"
  keys S
  check "$1x$2: live: S moves the shift probe to 11 in the legend" wait_for "◆ y(x+11)"
  keys f M-4 f
  check "$1x$2: the spectrum's figure: eigenvalues against eps" \
    wait_for "eigenvalues of J against eps"
  check "$1x$2: with the current eps marked" wait_for "eps = 1e-05 (now)"
  keys e
  check "$1x$2: live: e moves the mark to 1e-06" wait_for "eps = 1e-06 (now)"
  keys E f M-5 f
  check "$1x$2: the batch figure: BN and LN heatmaps side by side" \
    wait_re "BN down the columns \(T 1, C 2\) +LN across the rows"
  # BN of the columns (0, 2) and (1, -1): -1 1 / 1 -1 (eps 1e-5 rounds to 1.00)
  check "$1x$2: BN and LN values of row 1" wait_re "1 +-1\.00 +1\.00 .* 1 +-1\.00 +1\.00"
  keys f M-6 f
  check "$1x$2: the train figure: running mean against merged batches" \
    wait_for "running mean (feature 1) against merged batches"
  check "$1x$2: with its three estimators" wait_for "momentum  ○ cumulative  ◆ exact"
  keys f M-7 f
  check "$1x$2: the precision figure in fp64" \
    wait_for "relative error of var(x + offset) in fp64, acc fp64"
  keys t
  check "$1x$2: live: t switches it to fp32" wait_for "var(x + offset) in fp32, acc fp32"
  keys f
  check "$1x$2: f closes the figure" wait_for "7 Precision: fp32"
  keys q
  check "$1x$2: q quits" wait_for "EXIT=0"
done

done_testing
