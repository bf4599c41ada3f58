#!/bin/sh
# test_screen_views.sh: the experiment views at 80x24 and 120x40, with the
# numbers the chapters state: D the residual block (000 15.4), B the backward pass (003),
# V a shifted evaluation and one training step on the batch (002, 000 exercise 4), L the
# deep stacks (004). The expected numbers are computed here with awk from the formulas, or
# read from the claims registry (data/claims.tsv, values from numpy/torch), never taken
# from the program.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

CLAIMS="${top_srcdir:-.}/data/claims.tsv"
claim() { awk -F '\t' -v id="$1" '$1 == id { print $4 }' "$CLAIMS"; }
claim_tol() { awk -F '\t' -v id="$1" '$1 == id { print $5 }' "$CLAIMS"; }
# g6 V: V as the views print it (%.6g)
g6() { f "%.6g" "$1"; }
# near ID V: V (read off the screen) is the claim's value within its tolerance and the
# rounding of 6 printed digits
near() {
  awk -v v="$2" -v e="$(claim "$1")" -v t="$(claim_tol "$1")" \
    'BEGIN { d = v - e; if (d < 0) d = -d; a = e < 0 ? -e : e; exit !(v != "" && d <= t + 6e-6 * a) }'
}

# ---- 000 15.4: J_pre = I + W J_N(x), J_post = J_N(x + W x)(I + W), layer norm, eps 0 ----
cat >"$tmp/resid.lua" <<'EOF'
set{x = {0.5, -1, 2, 0.25}, eps = 0,
    W = {{0.5, -0.2, 0.1, 0}, {0.3, 0.4, -0.1, 0.2}, {-0.2, 0.1, 0.6, -0.3}, {0, 0.2, 0.1, 0.5}}}
EOF
# J_N(x) = (I - 11^T/d)/s - c c^T/(d s^3), c = x - mean; J_pre[1][1] = 1 + sum_k W[1][k] J_N[k][1]
JPRE11=$(awk 'BEGIN {
  split("0.5 -1 2 0.25", x, " "); split("0.5 -0.2 0.1 0", w, " "); d = 4
  for (i = 1; i <= d; i++) m += x[i] / d
  for (i = 1; i <= d; i++) { c[i] = x[i] - m; v += c[i] * c[i] / d }
  s = sqrt(v); j = 1
  for (k = 1; k <= d; k++) acc += w[k] * (((k == j) - 1 / d) / s - c[k] * c[j] / (d * s ^ 3))
  printf "%6.3f", 1 + acc }')
SMIN=$(g6 "$(claim c15-pre-norm-smin)") # 0.920464
RPOST=$(claim c15-post-norm-rank)       # 2

# ---- 003: x = (2,4,6,8), eps 0, upstream g = (1,-2,0.5,3) ----
# dL/dx = (g - mean g - x_hat mean(g x_hat)) / s: direct g/s, via the mean -mean(g)/s,
# via the variance -x_hat mean(g x_hat)/s
cat >"$tmp/vjp.lua" <<'EOF'
set{x = {2, 4, 6, 8}, eps = 0, upstream = {1, -2, 0.5, 3}}
EOF
vjp_row() { # vjp_row I: the i-th row as the view prints it (a regex of its numbers)
  awk -v want="$1" 'BEGIN {
    split("2 4 6 8", x, " "); split("1 -2 0.5 3", g, " "); d = 4
    for (i = 1; i <= d; i++) { m += x[i] / d; mg += g[i] / d }
    for (i = 1; i <= d; i++) v += (x[i] - m) ^ 2 / d
    s = sqrt(v)
    for (i = 1; i <= d; i++) { h[i] = (x[i] - m) / s; mgh += g[i] * h[i] / d }
    i = want
    printf "%d +%.6g +%.6g +%.6g +%.6g +%.6g +%.6g", i, x[i], g[i],
      (g[i] - mg - h[i] * mgh) / s, g[i] / s, -mg / s, -h[i] * mgh / s }'
}
# vjp_row2 I: the figure's row (2 decimals): g, dL/dx, direct, via mean, via var
vjp_row2() {
  vjp_row "$1" | awk '{ n = split($0, v, / \+/); printf "%.2f", v[3]
    for (k = 4; k <= n; k++) printf " +%.2f", v[k] }'
}
DX1=$(g6 "$(claim g-grad-first)") # 0.737902, the chapter's number
DX1X2=$(g6 "2 * $(claim g-grad-first)")

# ---- 002: shifted evaluation (default_rng(90): 1000 training draws of N(0,1), 300 eval) ----
cat >"$tmp/shift.lua" <<'EOF'
set{seed = 90, train_batches = 1, batch_size = 1000, train_loc = 0, train_scale = 1,
    eval_size = 300,
    batch = {{1, 3, 7, 2}, {2, 5, 11, 4}, {4, 7, 13, 8}, {7, 9, 17, 10}, {11, 15, 23, 14}}}
EOF
STORED=$(g6 "$(claim n-eval-stored-mean)") # 2.11789: eval output mean under stored stats
ONESTEP=$(g6 "$(claim n-torch-train-eval-maxdiff)") # 8.4268: one step, then eval
RMEAN1=$(f "%.6g" "0.1 * (1 + 2 + 4 + 7 + 11) / 5") # momentum 0.1 x the column mean

for size in "80 24" "120 40"; do
  set -- $size
  W=$1
  H=$2

  # D: the residual block
  start "$W" "$H" --state "$tmp/resid.lua"
  started
  keys D
  check "${W}x$H: D opens the residual-block view" wait_for "Residual block: where N goes"
  check "${W}x$H: placement none explains itself" wait_for "placement none: the block is x + W x"
  keys l
  check "${W}x$H: l sets placement pre" wait_for "placement pre "
  check "${W}x$H: J_pre and J_post side by side" wait_re "J_pre = I \+ W J_N\(x\) +J_post"
  check "${W}x$H: J_pre[1][1] = $JPRE11 (from W and J_N)" wait_re "^│ *$JPRE11 "
  check "${W}x$H: smallest singular value of J_pre $SMIN (000 15.4)" wait_re "^│s4 +$SMIN "
  check "${W}x$H: J_pre keeps rank 4, J_post has rank $RPOST" \
    wait_re "rank 4 of 4 +rank $RPOST of 4"
  check "${W}x$H: which paths pass through J_N" \
    wait_for "post: every path goes through N, so J_post has rank $RPOST"
  check "${W}x$H: pre: the identity path skips N" wait_for "pre: the identity path skips N"
  keys l
  check "${W}x$H: l again: post is the placement now" \
    wait_re "post: N\(x \+ W x\)  \(the placement now\)"
  keys f
  check "${W}x$H: f: the figure of the residual block" wait_for "Figure: residual block"
  check "${W}x$H: J_pre and J_post heatmaps with their ranks" \
    wait_re "J_pre = I \+ W J_N\(x\)  \(rank 4\) +J_post = J_N\(x\+Wx\)\(I\+W\)  \(rank $RPOST\)"
  check "${W}x$H: the heatmap's J_pre[1][1] $(f "%.2f" "$JPRE11")" wait_re "^│1 +$(f "%.2f" "$JPRE11") "
  keys f
  check "${W}x$H: f again: back to the view" wait_for "Residual block: where N goes"
  keys D
  check "${W}x$H: D again closes the view" wait_for "1 Input"

  # B: the backward pass
  start "$W" "$H" --state "$tmp/vjp.lua"
  started
  keys B
  check "${W}x$H: B opens the backward view" wait_for "Backward pass: dL/dx and its three paths"
  check "${W}x$H: first dL/dx is the chapter's $DX1" wait_re "^│ +1 +2 +1 +$DX1 "
  for i in 1 2 3 4; do
    check "${W}x$H: row $i: x, g, dL/dx, direct, via mean, via var" wait_re "^│ +$(vjp_row $i)"
  done
  check "${W}x$H: sum of dL/dx ~ 0" wait_re "sum of dL/dx per statistic, max \|\.\| +[0-9.e-]+ +~ 0"
  check "${W}x$H: dL/dx . x_hat ~ 0" wait_re "dL/dx \. x_hat per statistic, max \|\.\| +[0-9.e-]+ +~ 0"
  check "${W}x$H: dL/dx agrees with J^T g" wait_re "agreement with J\^T g.* ~ 0: agrees"
  # the prompt shows over the view, and a set{} there is drawn when the view comes back:
  # dL/dx is linear in g, so twice g gives twice the first dL/dx
  keys :
  check "${W}x$H: : opens the prompt over the view" wait_re "^> ?$"
  lit 'set{upstream = {2, -4, 1, 6}}'
  keys Enter
  sleep 0.2
  keys Escape
  check "${W}x$H: back in the view: dL/dx_1 = 2 x $DX1 = $DX1X2" wait_re "^│ +1 +2 +2 +$DX1X2 "
  keys :
  wait_re "^> ?$"
  lit 'set{upstream = {1, -2, 0.5, 3}}'
  keys Enter
  sleep 0.2
  keys Escape
  wait_re "^│ +1 +2 +1 +$DX1 "
  keys f
  check "${W}x$H: f: the backward paths as a heatmap" wait_for "Figure: backward pass"
  check "${W}x$H: its first row: g, dL/dx and the three paths" \
    wait_re "^│1 +$(vjp_row2 1)"
  keys Escape
  check "${W}x$H: Esc closes it" wait_for "1 Input"

  # V: the shifted evaluation, then one step on the batch
  start "$W" "$H" --state "$tmp/shift.lua"
  started
  keys V
  check "${W}x$H: V opens the shifted-evaluation view" wait_for "a shifted evaluation distribution"
  check "${W}x$H: unshifted: the training distribution" \
    wait_for "evaluation: 300 draws of N(0, 1)  (the training distribution)"
  keys ')' ')'
  check "${W}x$H: H H shift the evaluation mean to 2" wait_for "evaluation: 300 draws of N(2, 1)"
  check "${W}x$H: the eval output's mean under the stored statistics $STORED (002)" \
    wait_re "stored \(exact\) stats $STORED "
  check "${W}x$H: the gap split into estimator and shift parts" \
    wait_re "^│exact +[0-9.e-]+ +[0-9.e-]+ +[0-9.e-]+"
  keys f
  check "${W}x$H: f: the eval outputs under stored and own statistics" \
    wait_for "evaluation outputs, eval N(2, 1) against training N(0, 1)"
  check "${W}x$H: two histograms" wait_re "y\(stored stats\) \(n=300\) +. y\(own stats\) \(n=300\)"
  keys f
  keys y
  check "${W}x$H: y halves the evaluation std" wait_for "evaluation: 300 draws of N(2, 0.5)"
  keys b
  check "${W}x$H: b: one step of a fresh module on the batch" \
    wait_for "training: one step of a fresh module on the 5x4 batch matrix"
  check "${W}x$H: BN train/eval outputs differ by $ONESTEP (002's 'equal: False')" \
    wait_re "BN train/eval outputs equal: False +\(max \|train - eval\| $ONESTEP,"
  check "${W}x$H: running mean = 0.1 x the batch mean ($RMEAN1)" wait_re "running mean\[1\] $RMEAN1 "
  check "${W}x$H: no split without an exact distribution" wait_for "the split needs the rng source"
  keys b
  check "${W}x$H: b again: resampled rows" wait_for "training: resampled rows"
  keys V
  check "${W}x$H: V closes it" wait_for "1 Input"

  # L: the deep stacks, computed while keys stay free
  start "$W" "$H"
  started
  keys L
  check "${W}x$H: L says it is computing" wait_for "computing... run"
  keys Escape
  check "${W}x$H: keys work while it computes (Esc back to the panels)" wait_for "1 Input" 2
  keys e L
  check "${W}x$H: the layer-20 table arrives" wait_for "layer-20 std at batch" 120
  line() { capture | grep -F -- "$1" | head -n 1; }
  nonorm=$(line "no norm")
  bnorm=$(line "  batch norm  ")
  set -- $(echo "$nonorm" | sed 's/[│]//g')
  check "${W}x$H: no norm, init 1/16: $3 (004)" near e-none-l20-xavier "$3"
  check "${W}x$H: no norm, init 0.01: $4" near e-none-l20-001 "$4"
  check "${W}x$H: no norm, init 1: $5" near e-none-l20-1 "$5"
  set -- $(echo "$bnorm" | sed 's/[│]//g')
  check "${W}x$H: batch norm, init 1/16, batch 512: $3" near e-bn-l20-512 "$3"
  set -- $(line "batch norm (1/16)" | sed 's/[│]//g')
  k=4
  for b in 4 8 32 256; do
    eval "v=\${$k}"
    check "${W}x$H: batch norm at batch $b: $v" near "e-bn-l20-batch$b" "$v"
    k=$((k + 1))
  done
  set -- $(line "layer norm (1/16)" | sed 's/[│]//g')
  k=4
  for b in 4 8 32 256 512; do
    eval "v=\${$k}"
    check "${W}x$H: layer norm at batch $b: $v" near "e-ln-l20-batch$b" "$v"
    k=$((k + 1))
  done
  check "${W}x$H: the per-layer std figure" wait_for "std of h_k per layer (batch 512)"
  check "${W}x$H: ... with the three initialisations, with and without batch norm" \
    wait_re "none 1/16 .* none 0\.01 .* none 1 .* BN 1/16"
  check "${W}x$H: the layer-20 std against the batch size" wait_for "layer-20 std against batch"
  keys L
  check "${W}x$H: L closes it; e (pressed while computing) was applied" wait_re "eps +1e-06"
  keys q
  check "${W}x$H: q quits" wait_for "EXIT=0"
done

done_testing
