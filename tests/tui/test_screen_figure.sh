#!/bin/sh
# test_screen_figure.sh: the figure view (f): the focused panel's figure, large, redrawn
# live as the state changes, at 80x24 and 120x40; Esc or f closes it. Then a loaded
# (N,C,H,W) file: histograms per channel, and bars of the per-channel mean and variance of
# x and of y, checked against the tensor reductions of normscope run and the closed form
# of a normalization along the right axes (means 0, variances v/(v+eps)) against one
# along the wrong axes; and degenerate channels (constant, NaN, only one).
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# The files, written by normscope run (numpy's default_rng(7)): (6, 3, 4, 4) with channel
# means 5, -2, 10 and standard deviations 1, 3, 0.5; (2, 6, 2, 2) for the cursor's
# channel; (4, 3, 2, 2) with a constant channel 2 and a NaN in channel 3; (4, 1, 2, 2).
cat >"$tmp/make.lua" <<'LUA'
local g = ns.rng(7)
local x = g:normal(0, 1, {6, 3, 4, 4})
ns.save(arg[1] .. "/x4.npy",
  x * ns.tensor({1, 3, 0.5}, {1, 3, 1, 1}) + ns.tensor({5, -2, 10}, {1, 3, 1, 1}))
ns.save(arg[1] .. "/x6.npy", g:normal(1, 2, {2, 6, 2, 2}))
local d = g:normal(0, 1, {4, 3, 2, 2}):flat()
for b = 0, 3 do
  for k = 1, 4 do d[b * 12 + 4 + k] = 5 end -- channel 2: every value 5
end
d[12] = 0 / 0                             -- channel 3 of the first example: one NaN
ns.save(arg[1] .. "/xdeg.npy", ns.tensor(d, {4, 3, 2, 2}))
ns.save(arg[1] .. "/x1.npy", g:normal(3, 1, {4, 1, 2, 2}))
LUA
# per channel (axis 2): mean and variance of x, and of y = layer norm (the wrong axes)
cat >"$tmp/ref.lua" <<'LUA'
local x = ns.load(arg[1])
local y = ns.normalize(x, {kind = "layer"})
local mx, vx = x:mean({1, 3, 4}):flat(), x:var({1, 3, 4}):flat()
local my, vy = y:mean({1, 3, 4}):flat(), y:var({1, 3, 4}):flat()
for c = 1, #mx do print(string.format("%d %.17g %.17g %.17g %.17g", c, mx[c], vx[c], my[c], vy[c])) end
LUA
"$NS" run "$tmp/make.lua" "$tmp" >/dev/null 2>&1
"$NS" run "$tmp/ref.lua" "$tmp/x4.npy" >"$tmp/ref.txt" 2>&1

# bars MODE: the bar rows of the pane against ref.txt; MODE right (batch norm: y's means
# 0 and variances v/(v+1e-5), no bar drawn for the means) or wrong (layer norm: y's
# numbers are ref.txt's, and they are visibly not 0 and 1: a mean bar is drawn)
bars() {
  capture | awk -v mode="$1" '
    function close_to(a, b, rel, abs_) { d = a - b; if (d < 0) d = -d
      m = b < 0 ? -b : b; return d <= rel * m + abs_ }
    NR == FNR { mx[$1] = $2; vx[$1] = $3; my[$1] = $4; vy[$1] = $5; next }
    /^│c[0-9]+ / {
      c = substr($1, length("│c") + 1) + 0
      k = 0
      for (i = 1; i <= NF; i++) if ($i ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/) v[++k] = $i + 0
      if (k != 4) { print "row " c ": " k " numbers"; bad = 1; next }
      rows++
      if (!close_to(v[1], mx[c], 1e-5, 1e-6) || !close_to(v[2], vx[c], 1e-5, 1e-6)) {
        print "x of c" c ": " v[1] " " v[2] " want " mx[c] " " vx[c]; bad = 1 }
      split($0, seg, / c[0-9]+ /)
      drawn = 0
      n = split("█ ▉ ▊ ▋ ▌ ▍ ▎ ▏ ▐ ▕ < >", gl, " ")
      for (i = 1; i <= n; i++) if (index(seg[3], gl[i])) drawn = 1
      if (mode == "right") {
        want = vx[c] / (vx[c] + 1e-5)
        if (!close_to(v[3], 0, 0, 1e-9) || !close_to(v[4], want, 1e-5, 1e-6) || drawn) {
          print "y of c" c ": " v[3] " " v[4] " want 0 " want " (bar drawn: " drawn ")"; bad = 1 }
      } else {
        if (!close_to(v[3], my[c], 1e-4, 1e-6) || !close_to(v[4], vy[c], 1e-4, 1e-6)) {
          print "y of c" c ": " v[3] " " v[4] " want " my[c] " " vy[c]; bad = 1 }
        off = v[3] < 0 ? -v[3] : v[3]; if (off > 0.1 && drawn) visible = 1
        off = v[4] - 1; if (off < 0) off = -off; if (off > 0.1) visible = 1
      }
    }
    END { if (rows != 3) { print rows + 0 " bar rows"; bad = 1 }
          if (mode == "wrong" && !visible) { print "no visible difference"; bad = 1 }
          exit bad }' "$tmp/ref.txt" - >"$tmp/bars.out"
}

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
  # the probes equal y here: they share its legend entry, not drawn over it (N11)
  check "$1x$2: the output's figure: x, y and both probes" wait_for "x  ○ y = y(x+10) = y(2x)"
  keys S
  check "$1x$2: live: S moves the shift probe to 11 in the legend" wait_for "○ y = y(x+11)"
  keys f M-4 f
  check "$1x$2: the spectrum's figure: eigenvalues against eps" \
    wait_for "eigenvalues of J against eps"
  check "$1x$2: with the current eps marked" wait_for "eps = 1e-05 (now)"
  check "$1x$2: beside it the amplitude of N(a x) against a" \
    wait_for "amplitude RMS N(a x) against a"
  check "$1x$2: for the state's eps and 100 times it" \
    wait_for "● eps 1e-05 (now)  ○ eps 0.001 (100x)"
  # a layer norm's RMS: sqrt(a^2 v / (a^2 v + eps)) runs from 0 (small a) to 1 (large a)
  check "$1x$2: the amplitude axis runs 0.0 .. 1.0" wait_re "1\.0┤.*" 
  check "$1x$2: ... down to 0.0" wait_re "0\.0┤"
  keys e
  check "$1x$2: live: e moves the mark to 1e-06" wait_for "eps = 1e-06 (now)"
  check "$1x$2: live: and the amplitude's two eps" wait_for "● eps 1e-06 (now)  ○ eps 0.0001 (100x)"
  keys E f M-5 f
  check "$1x$2: the batch figure: BN and LN heatmaps side by side" \
    wait_re "BN down the columns \(T 1, C 2\) +LN across the rows"
  # BN of the columns (0, 2) and (1, -1): -1 1 / 1 -1 (eps 1e-5 rounds to 1.00)
  check "$1x$2: BN and LN values of row 1" wait_re "1 +-1\.00 +1\.00 .* 1 +-1\.00 +1\.00"
  keys f M-6 f
  check "$1x$2: the train figure: running mean against merged batches" \
    wait_for "running mean of feature 1"
  check "$1x$2: with its three estimators" wait_for "momentum  ○ cumulative  ◆ exact"
  check "$1x$2: beside it eval- against train-mode outputs" \
    wait_for "y in eval mode against train mode"
  check "$1x$2: of the momentum estimator, with the diagonal" \
    wait_re "● eval mode \(momentum\) +○ equal \(no gap\)|○ equal \(no gap\)"
  check "$1x$2: the estimator is named" wait_for "● eval mode (momentum)"
  keys C
  check "$1x$2: live: C switches the scatter to the cumulative average" \
    wait_for "● eval mode (cumulative)"
  keys C
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

no_c2() { ! capture | grep -q "^│c2 "; }
check "the reference numbers were computed" sh -c "[ \$(wc -l <'$tmp/ref.txt') -eq 3 ]"
for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2" "$tmp/x4.npy"
  started
  lua 'set{kind="batch"}'
  keys f
  check "$1x$2 file: the input figure per channel" wait_for "x (6, 3, 4, 4), channels: axis 2"
  check "$1x$2 file: y's histograms of the three channels" wait_for "y = batch(x) per channel"
  check "$1x$2 file: each channel's 96 values" wait_re "c1 \(n=96\) +. c2 \(n=96\) +. c3 \(n=96\)"
  check "$1x$2 file: the four bar charts" wait_re "mean of x +var of x +mean of y \(0\?\) +var of y \(1\?\)"
  check "$1x$2 file: batch norm (the channels' axes): y's means 0, variances v/(v+eps)" bars right
  [ -s "$tmp/bars.out" ] && sed 's/^/# /' "$tmp/bars.out"
  keys f
  lua 'set{kind="layer"}'
  keys f
  check "$1x$2 file: layer norm redraws y" wait_for "y = layer(x) per channel"
  check "$1x$2 file: layer norm (the wrong axes for channels): y's bars are not 0 and 1" bars wrong
  [ -s "$tmp/bars.out" ] && sed 's/^/# /' "$tmp/bars.out"
  keys q
  check "$1x$2 file: q quits" wait_for "EXIT=0"

  # six channels: the first three, and the cursor's channel when it is another
  start "$1" "$2" "$tmp/x6.npy"
  started
  if [ "$1" -ge 110 ]; then k=4; else k=3; fi
  keys f
  check "$1x$2 six channels: $k of 6 histograms" wait_for "y = layer(x): $k of 6 channels"
  check "$1x$2 six channels: the bars list all six" wait_re "^│c6 "
  # grid rows of (2, 6, 2, 2): (b*6 + c)*2 + h; row 8 is example 1, channel 5
  keys f Down Down Down Down Down Down Down Down f
  check "$1x$2 six channels: the cursor's channel 5 joins the histograms" wait_for "c5 (cursor)"
  keys q
  check "$1x$2 six channels: q quits" wait_for "EXIT=0"

  # degenerate channels: constant (variance 0: y = 0 with eps), NaN, and one channel only
  start "$1" "$2" "$tmp/xdeg.npy"
  started
  lua 'set{kind="batch"}'
  keys f
  check "$1x$2 degenerate: the figure draws" wait_for "x (4, 3, 2, 2), channels: axis 2"
  check "$1x$2 degenerate: the NaN is left out of the histograms, in words" \
    wait_for "1 NaN value left out"
  check "$1x$2 degenerate: the constant channel's variance 0, y's mean and var 0" \
    wait_re "^│c2 .* 5 c2 .* 0 c2 .* 0 c2 .* 0 +│"
  check "$1x$2 degenerate: the NaN channel's numbers are nan" wait_re "^│c3 .*nan c3 .*nan c3"
  keys q
  check "$1x$2 degenerate: q quits" wait_for "EXIT=0"
  start "$1" "$2" "$tmp/x1.npy"
  started
  keys f
  check "$1x$2 one channel: one histogram of 16 values" wait_for "c1 (n=16)"
  check "$1x$2 one channel: its bar row" wait_re "^│c1 .* c1 .* c1 .* c1 "
  check "$1x$2 one channel: and no other" no_c2
  keys q
  check "$1x$2 one channel: q quits" wait_for "EXIT=0"
done

done_testing
