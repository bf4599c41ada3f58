#!/bin/sh
# test_screen.sh: the explorer's numbers on screen at 80x24 and 120x40, the Lua prompt,
# every settings key, undo and redo. Expected values are computed here with awk from the
# formulas (layer norm of x = (-2,-1,1,2): y = x / sqrt(var + eps), spectrum 0 on ones,
# eps/s^3 radial, 1/s bulk), never taken from the program.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

S=$(f "%.17g" "sqrt(2.5 + 1e-5)")
Y1=$(f "%.5f" "-2 / $S")           # -1.26491: the output column prints 5 decimals
Y2=$(f "%.5f" "-1 / $S")           # -0.63245
BULK=$(f "%.6g" "1 / $S")          # 0.632454
RADIAL=$(f "%.3e" "1e-5 / $S^3")   # 2.530e-06: the spectrum's small values share 3 decimals
TOL=$(f "%.3g" "1e-10 / $S")       # 1e-10 x the largest singular value of J (1/s)

for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2"
  check "$1x$2: the screen comes up" started
  check "$1x$2: y_1 = $Y1 on screen" wait_for " $Y1 "
  check "$1x$2: y_2 = $Y2 on screen" wait_for " $Y2"
  check "$1x$2: ones eigenvalue 0, multiplicity 1" wait_re "ones +1 +0 "
  # closed form, LAPACK and finite differences in one format: the same digits three times
  check "$1x$2: radial eigenvalue eps/s^3 = $RADIAL in all three columns" \
    wait_re "radial +1 +$RADIAL +$RADIAL +$RADIAL"
  check "$1x$2: bulk eigenvalue 1/s = $BULK, multiplicity 2" wait_re "bulk +2 +$BULK"
  check "$1x$2: rank 3 of 4 at tol $TOL" wait_re "rank 3 of 4,? (at )?tol $TOL"
  check "$1x$2: input statistics" wait_for "mean 0  std 1.58114  rms 1.58114"
  check "$1x$2: shift probe: layer norm ignores x+10" wait_re "x\+10 +max\|y'-y\| 0 invariant"
  check "$1x$2: scale probe: eps breaks scale invariance in fp64 (1.9e-06)" \
    wait_re "2x +max\|y'-y\| 1\.9e-06 NOT invariant"
  check "$1x$2: the rank says what it means (ones removed)" wait_for "rank 3 = d-1: ones dir removed"
  if [ "$1" = 120 ]; then
    # the header shows how long the last recompute took: within one frame (16 ms)
    keys E e
    sleep 0.3
    ms=$(capture | head -n 1 | sed -n 's/.* \([0-9.]*\) ms .*/\1/p')
    check "recompute within one frame (${ms:-?} ms < 16 ms)" awk "BEGIN { exit !(\"${ms:-x}\" != \"x\" && ${ms:-99} < 16) }"
  fi
  keys q
  check "$1x$2: q quits with status 0" wait_for "EXIT=0"
done

# The prompt: set{kind="rms"} switches to RMS norm. mean(x) = 0, so y itself stays, but
# the shift probe y(x+10) = (x+10)/sqrt(mean((x+10)^2)+eps) now moves, J has full rank,
# and the bulk has multiplicity 3.
RMS_SHIFT=$(f "%.5f" "8 / sqrt(102.5 + 1e-5)")   # 0.79018: the output column prints 5 decimals
start 80 24
started
keys :
check "prompt opens with :" wait_re "^> ?$"
lit 'set{kind="rms"}'
keys Enter
check "set{kind=\"rms\"}: title says RMSNorm" wait_for "RMSNorm"
check "set{kind=\"rms\"}: shift probe value $RMS_SHIFT" wait_for "$RMS_SHIFT"
check "set{kind=\"rms\"}: bulk multiplicity 3" wait_re "bulk +3 +$BULK"
check "set{kind=\"rms\"}: rank 4 of 4" wait_re "rank 4 of 4,? (at )?tol"
lit 'get().kind'
keys Enter
check "get() returns the state" wait_re "│rms +│"
lit 'error("boom-42")'
keys Enter
check "a Lua error is shown, not fatal" wait_for "boom-42"
lit 'set{eps=-1}'
keys Enter
check "a bad set{} names the field" wait_for "eps: must be"
lit 'for i = 1,'
keys Enter
check "an incomplete chunk asks for more" wait_re "^>> ?$"
lit '2 do end'
keys Enter
check "the continued chunk runs" wait_re "^> ?$"
lit 'ns.nor'
keys Tab
check "Tab completes ns.nor to ns.normalize" wait_re "^> ns\.normalize"
keys C-u
keys Up
check "Up recalls the previous chunk" wait_re "^> for i = 1,"
keys C-u
keys Escape
check "Esc leaves the prompt" wait_for "? help  q quit"
check "the screen is still alive after the error" wait_for "RMSNorm"
keys u
check "u undoes set{kind=rms}" wait_for "LayerNorm"
keys C-r
check "Ctrl-R redoes it" wait_for "RMSNorm"
keys u
wait_for "LayerNorm"
keys q
wait_for "EXIT=0"
check "prompt history is saved for normscope repl" grep -qF 'set{kind="rms"}' "$XDG_STATE_HOME/normscope/history"

# Each settings key changes what it should (80x24: the settings tab is on screen).
start 80 24
started
keys E
check "E: eps 1e-5 -> 1e-4" wait_re "eps +0.0001"
R4=$(f "%.3e" "1e-4 / sqrt(2.5 + 1e-4)^3")
check "E: radial eigenvalue follows eps ($R4)" wait_re "radial +1 +$R4"
keys u
check "u: eps back to 1e-05" wait_re "eps +1e-05"
keys C-r
check "Ctrl-R: eps 1e-4 again" wait_re "eps +0.0001"
keys e e
check "e e: eps 1e-6" wait_re "eps +1e-06"
keys u u u
check "u u u: back to the default eps" wait_re "eps +1e-05"
keys p
check "p: eps added to the std" wait_re "eps@ +std"
check "p: radial eigenvalue now eps/s^2" wait_for "eps/s^2"
keys p d
check "d: ddof 1" wait_re "ddof +1"
D1=$(f "%.6g" "-2 / sqrt(10/3 + 1e-5)")
check "d: y_1 = -2/sqrt(10/3+eps) = $D1" wait_for "$D1"
keys d c
check "c: centering off (layer norm centers by default: the first press changes it)" \
  wait_re "ctr +off"
keys c
check "c c: back to the kind's default" wait_re "ctr +on\\*"
keys w
G1=$(f "%.6g" "-4 / $S")
check "w: gamma 2 doubles y ($G1)" wait_for "$G1"
check "w: gamma shown" wait_re "gamma +2"
keys w
check "w w: beta 0.5" wait_re "beta +0.5"
keys w t
check "t: dtype fp32" wait_re "dtype +fp32"
check "t: the input says x is computed (and shown) as fp32" wait_for "fp64, shown as fp32"
keys T
check "T: accumulation dtype set explicitly" wait_re "acc +fp64 "
keys v
check "v: variance algorithm welford" wait_re "algo +welford"
keys m
check "m: eval mode" wait_re "mode +eval"
keys m o
check "o: momentum halved" wait_re "mom +0.05"
keys A
check "a on a vector: says the one axis is already reduced" wait_for "x has one axis"
keys k
check "k: next kind (rms)" wait_for "RMSNorm"
keys K
check "K: previous kind (layer)" wait_for "LayerNorm"
keys S
check "S: shift probe b = 11" wait_for "x+11"
keys Z
check "Z: scale probe a = 4" wait_for "4x"
keys Tab
check "Tab: focus moves to the settings panel" wait_re "2 Settings ◀"
# typing into the input: cursor on x_1, type 3, Enter
keys Tab Tab Tab Tab Tab Tab
keys 3 Enter
check "typing 3 Enter sets x_1 = 3" wait_re "│ +1 +3 +-1 +1 +2"
keys Right n
check "n negates x_2" wait_re "│ +1 +3 +1 +1 +2"
keys i
check "i inserts an element" wait_for "1 Input x (5)"
keys x
check "x removes it again" wait_for "1 Input x (4)"
keys q
check "q quits" wait_for "EXIT=0"

done_testing
