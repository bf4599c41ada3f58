#!/bin/sh
# test_screen_degenerate.sh: inputs where the numbers stop being ordinary, on screen at
# 80x24: NaN typed into a cell, zero variance with eps 0, one value per statistic (with
# ddof 0 and 1), eps = 0 rank lines for layer and RMS norm, the RMS shift probe at eps 0,
# and rank-3 (B,T,D) / rank-4 (N,C,H,W) files. Every degenerate case must say in words
# what is degenerate. Expected numbers come from the formulas here (awk), not the program.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# at the prompt: type a chunk, run it, leave the prompt

# Small tensors written by the program's own .npy writer (ns.save; the reader and writer
# are checked against numpy fixtures in tests/lua).
cat >"$tmp/mk.lua" <<EOF
local v = {}
for i = 1, 24 do v[i] = (i * 7) % 11 - 5 end
ns.save("$tmp/activations_btd.npy", ns.tensor(v, {2, 3, 4}))
local w = {}
for i = 1, 32 do w[i] = (i * 5) % 13 - 6 end
ns.save("$tmp/nchw.npy", ns.tensor(w, {2, 4, 2, 2}))
EOF
"$NS" run "$tmp/mk.lua" || { echo "1..0 # SKIP could not write the fixtures"; exit 0; }

start 80 24
started
check "80x24: the settings' * is explained on screen" wait_for "* = default (kind's or dtype's)"
# a batch wider than the panel is tall: the target lines give way to a summary line and
# never overwrite the matrix (they did: stray digits of column 5 at the right edge)
lua 'set{batch={{1,2,3,4,5,6,7,8},{0,1,0,1,0,1,0,1},{2,2,2,2,2,2,2,2}}, focus="batch"}'
# (the rows of the target and its companion come first: two target lines are left)
T2=$(f "%.6f" "(2 - 5/3) / sqrt(6/27 + 1e-5)") # BN of the target in column (2, 1, 2)
check "80x24, 3x8 batch: T col 2 = $T2, nothing drawn over it" \
  wait_re "T col 2: +$T2 \(was $T2\) +│"
check "80x24, 3x8 batch: the other columns summed up" wait_for "T cols 3-8: 0 FLIPs"
check "80x24, 3x8 batch: the target and its companion rows are both shown" \
  wait_re "C 2 +0 +1 +0 +1"
# a one-feature batch at eps 0 (lesson 004-03, step 4): each row's LN is 0/0, and the panel
# says why its LN cells are nan; with eps back, no such line
lua 'set{batch={{3},{0},{0},{0}}, eps=0}'
check "80x24, 4x1 batch at eps 0: the panel says why LN is nan" wait_for "nan = 0/0: var 0 and eps 0"
lua 'set{batch={{3},{0},{0},{0}}, eps=1e-5}'
check "  with eps 1e-5 the line is gone" gone "nan = 0/0"
keys M-1

# -- NaN typed into a cell. More Backspaces than characters must keep the edit open:
# the letters of "nan" are also keys (n negates, a opens the audit), which must not fire.
keys Right Enter
sleep 0.1
keys BSpace BSpace BSpace BSpace BSpace
lit nan
keys Enter
check "NaN typed into a cell (extra Backspaces stay in the edit)" wait_re "│ +1 +-2 +nan +1 +2"
keys M-2
check "  the letters of nan did not fire (axes unchanged, no audit)" wait_for "A axes  {1}*"
keys M-1
check "  input says how many NaN it holds" wait_for "x has 1 NaN 0 Inf"
check "  spectrum says why J is undefined, in words" wait_for "Jacobian undefined: x holds NaN"
check "  probes say undefined" wait_re "x\+10 +max\|y'-y\| nan undefined"
check "  the degenerate statistic names NaN" wait_for "1 degenerate statistic: x holds NaN"
keys M-7
check "  precision says the variance is undefined" wait_for "x holds NaN or Inf: the variance"
keys M-1
keys u
check "undo brings the number back" wait_for "mean 0  std 1.58114  rms 1.58114"

# -- Inf typed as 1e999 (strtod overflows to inf)
keys Enter
sleep 0.1
keys BSpace BSpace BSpace
lit 1e999
keys Enter
check "1e999 in a cell is inf, and said so" wait_for "x has 0 NaN 1 Inf"
keys u

# -- zero variance with eps 0: s = 0, y = 0/0
lua 'set{x={3,3,3,3}, eps=0}'
check "zero variance, eps 0: said in words" wait_for "1 degenerate statistic: all equal and"
check "  J undefined, with the reason" wait_for "Jacobian undefined: all equal and eps"

# -- values that differ, whose fp32 raw-moment variance cancels to 0: not "all equal"
lua 'set{x={9998,9999,10001,10002}, dtype="fp32", algo="raw", eps=0}'
check "cancelled variance: said as cancellation in fp32, not 'all equal'" \
  wait_for "cancelled to 0 in fp32"
check "  and not called all equal" gone "all equal"

# -- d = 1: centering leaves nothing; with ddof 1 the variance is 0/0
lua 'set{x={3}, eps=1e-5}'
check "d = 1, ddof 0: y = beta whatever x is" wait_for "1 value per statistic: x - mean = 0,"
lua 'set{ddof=1}'
check "d = 1, ddof 1: said in words" wait_for "1 degenerate statistic: 1 value and"
check "  J undefined for the same reason" wait_for "Jacobian undefined: 1 value and ddof"

# -- eps = 0 on the default x: layer norm loses the ones and the radial direction; RMS norm
# only the radial one, and its shift probe moves by max|(x+10)/rms(x+10) - x/rms(x)|.
lua 'set{x={-2,-1,1,2}, ddof=0, eps=0}'
check "layer, eps 0: rank 2 = d-2: ones+radial dirs removed" \
  wait_for "rank 2 = d-2: ones+radial dirs removed"
lua 'set{kind="rms"}'
check "rms, eps 0: rank 3 = d-1: radial dir removed" wait_for "rank 3 = d-1: radial dir removed"
DEV=$(awk 'BEGIN { split("-2 -1 1 2", x); r0 = sqrt(2.5); r1 = sqrt(102.5); m = 0
  for (i = 1; i <= 4; i++) { d = (x[i] + 10) / r1 - x[i] / r0; if (d < 0) d = -d; if (d > m) m = d }
  printf "%.4g", m }')
check "rms, eps 0: shift probe $DEV (claims.tsv 2.055094741), NOT invariant" \
  wait_re "x\+10 +max\|y'-y\| $DEV NOT invariant"
keys q
wait_for "EXIT="

# -- a rank-3 (B,T,D) file: layer norm over D, one statistic per (b,t): 6 ones directions
start 80 24 "$tmp/activations_btd.npy"
started
check "rank-3 file: shape in the title" wait_for "1 Input x (2, 3, 4)"
# the title is longer than the frame: it ends in an ellipsis, then the focus marker
# (kept, B6) and a space, off the corner
check "a clipped title ends in '… ◀ ' before the frame's corner" \
  wait_re "1 Input x \(2, 3, 4\) from activ[^│]*… ◀ ─*╮"
check "rank-3 file: J rank 18 = d-6 (one ones direction per (b,t))" \
  wait_for "rank 18 = d-6: ones dirs removed"
# group kind on a rank-4 file: G steps up through the divisors of C = 4, g down
keys q
wait_for "EXIT="
start 80 24 "$tmp/nchw.npy"
started
lua 'set{kind="group"}'
check "rank-4 file, group norm, 1 group: rank 30 = d-2 (one ones direction per sample)" \
  wait_for "rank 30 = d-2: ones dirs removed"
keys g
check "g below 1 group names the divisors of C" \
  wait_for "groups: already the fewest (1); 4 channels divide into 1, 2, 4 groups"
keys G
check "G: 2 groups, rank 28 = d-4" wait_for "rank 28 = d-4: ones dirs removed"
keys G G
check "G above C groups says so" wait_for "groups: already the most (4)"
lua 'set{mode="eval", kind="batch"}'
check "eval batch norm on a file whose channels differ from the train panel: note fits" \
  wait_for "train panel features differ"
check "eval batch norm: the spectrum says J is diagonal" wait_for "eval: fixed statistics, J diagonal"
lua 'set{kind="layer", axes={1,3,4}}'
check "eval with explicit axes over the batch: the same (the core's batch rule)" \
  wait_for "eval: fixed statistics, J diagonal"
keys q
check "q quits with status 0" wait_for "EXIT=0"

# -- 120x40: the train/eval panel has room for what its "gap" column means
start 120 40
started
check "120x40: the gap is explained" wait_for "gap: max|y(running) - y(own stats)|"
check "120x40: the settings' * is explained" wait_for "* = default (kind's or dtype's)"
keys q
wait_for "EXIT="
done_testing
