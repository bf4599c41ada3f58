#!/bin/sh
# test_screen_live.sh: the explorer at sizes where it used to wait or give up.
# 1. The spectrum panel above the full Jacobian's limit (a vector of 2048): the closed form
#    (ones 0, radial eps/s^3, bulk 1/s with its multiplicity), each compared with awk's
#    formula, and the check J v = lambda v along each eigenvector by the JVP and by finite
#    differences; LAPACK says it formed no J.
# 2. A 1000-element vector: "computing..." may show, then LAPACK's column lands from the
#    worker thread and agrees with the closed form.
# 3. Key folding on a 2000 x 512 file: five e presses sent at once end at eps 1e-10, the
#    screen's output and spectrum equal those of a session put in that state by set{},
#    and undo walks back through all five steps.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# a number's relative distance from an expected one is below tol
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; s = b < 0 ? -b : b; exit !(d <= t * s) }'; }
# the field k of the spectrum panel's first row labelled L (the panel is the screen's
# right column at 120x40: cut from the row's label on)
row() { capture | grep -o "│$1 [^│]*" | head -1 | tr -d '│' | awk -v k="$2" '{ print $k }'; }

# ---- 1. d = 2048, one statistic: v_i = ((i * 37) mod 101) / 10 - 5
d=2048
awk -v d=$d 'BEGIN { s = ""; for (i = 0; i < d; i++) s = s (i ? "," : "") ((i * 37) % 101) / 10 - 5; print s }' >"$tmp/v.csv"
S=$(awk -v d=$d 'BEGIN { for (i = 0; i < d; i++) { v = ((i * 37) % 101) / 10 - 5; m += v; x[i] = v }
  m /= d; for (i = 0; i < d; i++) q += (x[i] - m) ^ 2; printf "%.17g", sqrt(q / d + 1e-5) }')
BULK=$(f "%.17g" "1 / $S")
RAD=$(f "%.17g" "1e-5 / ($S * $S * $S)")
start 120 40 "$tmp/v.csv"
check "d=$d: the screen is up" wait_for "x (1, 2048) from" 10
check "d=$d: the spectrum lists the closed form" wait_re "│bulk +2046 "
check "d=$d: ones, multiplicity 1, eigenvalue 0" test "$(row ones 2)/$(row ones 3)" = "1/0"
b=$(row bulk 3)
check "d=$d: bulk = 1/s = $BULK (screen $b)" near "$b" "$BULK" 1e-5
rd=$(row radial 3)
check "d=$d: radial = eps/s^3 = $RAD (screen $rd)" near "$rd" "$RAD" 1e-3
# the JVP and FD residuals |J v - lambda v| of each labelled direction: small numbers
for L in ones radial bulk; do
  j=$(row $L 4)
  fd=$(row $L 5)
  check "d=$d: $L checked, |Jv - lv| = $j by the JVP, $fd by FD" \
    awk -v j="$j" -v f="$fd" 'BEGIN { exit !(j != "" && f != "" && j + 0 < 1e-9 && f + 0 < 1e-6) }'
done
check "d=$d: the panel says the check passed" wait_for "Jv=λv ok: 1 stat, m 2048"
check "d=$d: LAPACK formed no J, and says so" wait_for "LAPACK: J not formed (n 2048)"
check "d=$d: rank from the closed form" wait_for "rank 2047 of 2048 (closed form)"
keys q
check "d=$d: q quits" wait_for "EXIT=0"

# ---- 2. d = 1000: the full J comes from the worker thread
awk 'BEGIN { s = ""; for (i = 0; i < 1000; i++) s = s (i ? "," : "") ((i * 37) % 101) / 10 - 5; print s }' >"$tmp/w.csv"
start 120 40 "$tmp/w.csv"
check "d=1000: the screen is up" wait_for "x (1, 1000) from" 10
check "d=1000: LAPACK's column lands (worker thread)" wait_re "closed +LAPACK +(FD|fin.diff)" 60
check "d=1000: closed form and LAPACK agree" wait_re "│agree: max diff"
check "d=1000: rank 999 = d-1 from the SVD of J" wait_for "rank 999 = d-1"
keys q
check "d=1000: q quits" wait_for "EXIT=0"

# ---- 3. key folding on 2000 x 512
awk 'BEGIN { for (r = 0; r < 2000; r++) { l = ""; for (c = 0; c < 512; c++) l = l (c ? "," : "") ((r * 512 + c) * 7919 % 1013) / 100 - 5; print l } }' >"$tmp/m.csv"
panels() { # the output and spectrum panels: the middle column above the prompt
  capture | sed -n '2,33p' | cut -c36-75
}
start 120 40 "$tmp/m.csv"
check "2000x512: the screen is up" wait_for "x (2000, 512) from" 30
check "2000x512: eps starts at 1e-05" wait_re "eps +1e-05"
keys e e e e e
check "five e presses: eps 1e-10" wait_re "eps +1e-10" 30
sleep 1
panels >"$tmp/after_keys"
# undo has all five steps
keys u
check "undo 1: eps 1e-09" wait_re "eps +1e-09" 10
keys u u u
check "undo 4: eps 1e-06" wait_re "eps +1e-06" 10
keys u
check "undo 5: eps back to 1e-05" wait_re "eps +1e-05" 10
keys q
check "2000x512: q quits" wait_for "EXIT=0" 10
# the same state reached in one step shows the same panels
start 120 40 "$tmp/m.csv"
check "2000x512 again: up" wait_for "x (2000, 512) from" 30
lua 'set{eps = 1e-10}'
check "set{eps = 1e-10}: eps 1e-10" wait_re "eps +1e-10" 30
sleep 1
panels >"$tmp/after_set"
check "the folded keys' screen equals the screen of that state" cmp -s "$tmp/after_keys" "$tmp/after_set"
[ "$failed" -eq 0 ] || diff "$tmp/after_keys" "$tmp/after_set" | sed 's/^/#   /'
keys q
check "q quits" wait_for "EXIT=0" 10

done_testing
