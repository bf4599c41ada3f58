#!/bin/sh
# test_screen_review.sh: the findings of the explorer review (shared/reviews/
# explorer-review.md, sections b and c) that belong to the screen, each on the real
# screen. Every check names its finding (B1 ... B17, c: for section c). Expected numbers
# come from the formulas, computed here with awk.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

# lua CHUNK: runs CHUNK at the prompt and leaves it
lua() {
  keys :
  wait_re "^> ?$" 5 || return 1
  lit "$1"
  keys Enter
  sleep 0.2
  keys Escape
  wait_for "? help" 5
}
# lacks REGEX: the pane does not match REGEX (after the checks before it waited for the
# screen to settle)
lacks() { ! capture | grep -qE -- "$1"; }
# sgr CODE: the pane's colours include SGR CODE (e.g. 38;5;25)
sgr() { T capture-pane -e -p -t "$SES" | grep -q -- "$1"; }
# cells Y: the bar cells (full and partial blocks) of the output row whose three values
# are Y: the text after them up to the panel's frame (the bar, its axis, the bar)
cells() {
  capture | grep -m1 -E -- " $1 +$1 +$1 " | sed -E "s/.* $1 +$1 +$1 ([^│]*│[^│]*)│.*/\1/" |
    grep -o '[█▉▊▋▌▍▎▏]' | wc -l
}
# wheel UP|DOWN COL ROW: an xterm (X10) mouse wheel report at 1-based COL, ROW
wheel() {
  b=$([ "$1" = DOWN ] && echo 97 || echo 96) # 32 + 65 / 64
  lit "$(printf '\033[M')$(printf "\\$(printf '%03o' "$b")")$(printf "\\$(printf '%03o' $((32 + $2)))")$(printf "\\$(printf '%03o' $((32 + $3)))")"
}

# ---- B1: the spectrum computes the map on screen, or says which one it computes
start 120 40
started
lua 'set{x={9998,9999,10001,10002}, dtype="fp32", algo="raw"}'
check "B1: the title says the closed form and LAPACK are of the exact fp64 map" \
  wait_for "4 Spectrum: exact fp64 J"
# the step balances truncation (h/s)^2 and rounding u|x|/(s h), at least 4 ulps of |x|;
# here raw moments cancel to var 0, so s = sqrt(eps): h = 4 u |x| (u = fp32's epsilon)
STEP=$(f "%.2g" "4 * 2^-23 * 10002")
check "B1: the FD column says it is the fp32 raw map, with a step fp32 resolves ($STEP)" \
  wait_for "FD: fp32 raw map, step $STEP"
check "B1: no bare ? in the spectrum" lacks '(ones|radial|bulk) .* \?( |│)'
check "B1: the FD says the derivative is undetermined in fp32, not DISAGREE" \
  wait_for "FD undetermined in fp32"
# two-pass fp32 at the same x is well conditioned: its FD agrees with the exact J
lua 'set{algo="twopass"}'
STEP=$(f "%.2g" "exp(log(2^-23 * 10002 * (2.5 + 1e-5)) / 3)")
check "B1: fp32 two-pass: the step (u |x| s^2)^(1/3) = $STEP" wait_for "FD: fp32 twopass map, step $STEP"
check "B1: fp32 two-pass: the FD agrees with the exact J" wait_re "agree: max diff"
lua 'set{algo="raw"}'
# B8 on the same screen: the footer's dtype is the point, and it is whole
check "B8: the input footer shows 'fp64, shown as fp32' whole" wait_for "fp64, shown as fp32"
# fp16 rounds all four to 10000: the map on screen is constant, s = sqrt(eps)
lua 'set{dtype="fp16", algo="twopass"}'
BULK16=$(f "%.4f" "1 / sqrt(1e-5)")
check "B1: fp16: the spectrum is of the collapsed input (bulk 1/sqrt(eps) = $BULK16)" \
  wait_re "bulk +2 +${BULK16%??}"
check "B1: fp16: y is 0 (all four inputs are 10000 in fp16)" wait_re "│ +1 +0\.0+ "
check "c: the input grid shows what fp16 stores (10000 four times)" \
  wait_re "│ +1 +10000 +10000 +10000 +10000 "
keys q
wait_for "EXIT=0"

# ---- B2: the README's path (eps 0 carries over): the words say what happened
start 120 40
started
lua 'set{eps=0}'
lua 'set{x={9998,9999,10001,10002}, dtype="fp32", algo="raw"}'
check "B2: the variance cancelled in fp32, y = +-inf (not 'all equal')" \
  wait_for "cancelled to 0 in fp32"
lua 'set{eps=1e-2}'
RAD=$(f "%.6f" "1e-2 / (2.5 + 1e-2)^1.5")
check "B2: README line 4: the radial eigenvalue $RAD (eps/s^3 of the exact map)" \
  wait_re "radial +1 +$RAD"
check "B2: and no DISAGREE (closed form and LAPACK agree)" lacks DISAGREE
keys q
wait_for "EXIT=0"

# ---- B3: symmetric bars at 80x24, 100x30 and 120x40 (x = -2 -1 1 2: y is symmetric)
for size in "80 24" "100 30" "120 40"; do
  set -- $size
  start "$1" "$2"
  started
  wait_for "1.26491"
  neg=$(cells "-1\.26491")
  pos=$(cells " 1\.26491")
  check "B3: $1x$2: y = -1.265 and +1.265 get bars of one length ($neg and $pos cells)" \
    test "$neg" -eq "$pos" -a "$neg" -gt 0
  keys q
  wait_for "EXIT=0"
done

# ---- B4: a constant row: eigenvalues paired by label, no false DISAGREE
start 120 40
started
lua 'set{x={{1,2,3,4},{2,0,-1,5},{3,3,3,3}}}'
check "B4: the constant row's 316.2278 is paired in all three columns (~: relabelled)" \
  wait_re "radial +1 +316\.2278 +316\.2278~ +316\.2278~"
check "B4: agree" wait_re "agree: max diff"
check "B4: no DISAGREE" lacks DISAGREE
keys q
wait_for "EXIT=0"

# ---- B5, B6: the Input title follows the state's source; the focus marker survives a cut
printf '1,2,3\n4,5,7\n' >"$tmp/a_rather_long_file_name_for_a_title.csv"
start 120 40 "$tmp/a_rather_long_file_name_for_a_title.csv"
started
check "B6: a cut title keeps the focus marker" wait_re "1 Input x \(2, 3\) from a_r[^│]*… ◀ ─"
lua 'reset()'
check "B5: after reset() the title names no file" wait_for "1 Input x (4) ◀"
keys u
check "B5: u brings the file's x back, and its name" wait_re "1 Input x \(2, 3\) from a_r"
lua 'set{x={1,2,3}}'
check "B5: set{x=...} drops the file name" wait_for "1 Input x (3) ◀"
keys q
wait_for "EXIT=0"

# ---- B8, c: nothing cut mid-value; the stat line keeps s
start 120 40
started
lua 'set{x={0.1, 0.7, 1.3, 2.9}}'
S=$(f "%.6g" "sqrt(((0.1-1.25)^2 + (0.7-1.25)^2 + (1.3-1.25)^2 + (2.9-1.25)^2) / 4 + 1e-5)")
check "B8: the stat line shows s = $S whole" wait_re " s $S( |│)"
check "c: the scale verdict says eps breaks it" wait_for "eps 1e-05 breaks the scale invariance"
keys q
wait_for "EXIT=0"

# ---- B9: "1,5" and "2 5" are refused with a message, the cell is unchanged
start 120 40
started
lit "1,5"
keys Enter
check "B9: 1,5 is refused" wait_for 'not a number: "1,5"; decimals take a point'
check "B9: x_1 is still -2" wait_re "│ +1 +-2 +-1 +1 +2"
lit "2 5"
keys Enter
check "B9: 2 5 is refused" wait_for 'not a number: "2 5"; one number per cell'
check "B9: x_1 is still -2 after 2 5" wait_re "│ +1 +-2 +-1 +1 +2"

# ---- B11: kept digits capped at what the accumulation dtype holds
keys t
KEPT=$(f "%.1f" "-log(2^-23) / log(10)")
check "B11: fp32: an exact two-pass variance keeps $KEPT digits, not 17" \
  wait_re "twopass +2\.5 +0 +$KEPT +0\.0"

# ---- B14: the LN column at 120x40
check "B14: 120x40: batch, BN and LN side by side" wait_re "batch +BN +LN"

# ---- B15, B16: k names what it skipped; eval mode changes the batch panel's claim
keys k
wait_for "RMSNorm"
keys k
wait_for "BatchNorm"
keys k
check "B15: k on a vector names the kinds it skipped and why" wait_for "skipped instance, group:"
keys K
wait_for "BatchNorm"
keys m
check "B16: in eval mode the batch panel says it shows train mode" wait_for "(train mode)"
check "B16: and that eval-mode BN does not couple the rows" \
  wait_for "eval mode (m): BN uses running stats"
keys q
wait_for "EXIT=0"

# ---- B12, B13: hidden rows are counted; lists scroll with keys and the wheel both ways
start 120 40
started
lua 'set{x={1,2,3,4,5,6,7,8,9,10,11,12,13}}'
check "B13: the output says which of its 13 rows it lists" wait_re "rows 1-[0-9]+/13"
keys M-3 Down Down
check "B13: Alt-3 then Down keeps the focus on the output" wait_re "3 Output y = LayerNorm\(x\) ◀"
keys End
check "B13: End shows the last rows" wait_re "rows [0-9]+-13/13"
keys Home
check "B13: Home goes back to the first" wait_re "rows 1-[0-9]+/13"
# (five turns: with the Lua output collapsed to a line the output lists 11 of its 13 rows)
wheel DOWN 50 5
wheel DOWN 50 5
wheel DOWN 50 5
wheel DOWN 50 5
wheel DOWN 50 5
check "B12: the wheel scrolls the output down" wait_re "rows [2-9]-[0-9]+/13"
wheel UP 50 5
wheel UP 50 5
wheel UP 50 5
wheel UP 50 5
wheel UP 50 5
check "B12: and back up" wait_re "rows 1-[0-9]+/13"
keys ?
wait_for "Help  (lines 1-"
wheel DOWN 50 5
check "B12: the wheel scrolls the help" wait_re "Help  \(lines 4-"
keys Escape
keys q
wait_for "EXIT=0"

start 80 24
started
lua 'set{x={{1,2,3,4},{2,0,-1,5},{3,3,3,3}}}'
check "B13: 80x24: the spectrum says which entries it lists" wait_re "entries 1-[0-9]+/[0-9]+"
lua 'set{batch={{1,2},{3,4},{5,6},{7,8},{9,10},{11,12}}}'
keys M-5
check "B13: the batch panel says which rows it shows" wait_re "rows 1-[0-9]/6"
keys End
check "B13: End in the batch panel reaches row 6" wait_re "rows [0-9]-6/6"
keys q
wait_for "EXIT=0"

# ---- B17: one rank wording at every width and in every view ("rank 3 of 4": the panel said
# "rank 0/1" where the D view said "rank 4 of 4"; tui_rank words both); Tab Tab lists once
for size in "80 24" "100 30" "120 40"; do
  set -- $size
  start "$1" "$2"
  started
  check "B17: $1x$2: rank 3 of 4 at tol" wait_re "rank 3 of 4,? (at )?tol [0-9.e-]+ +\(1e-10 smax\)"
  keys D
  wait_for "Residual block"
  keys l
  check "B17: $1x$2: the D view words the rank the same way" wait_re "rank 4 of 4 +rank [0-9] of 4"
  keys Escape
  keys q
  wait_for "EXIT=0"
done
start 120 40
started
lua 'set{x={5}}'
check "B17: n = 1: rank 0 of 1 in the same wording" wait_re "rank 0 of 1,? (at )?tol"
keys :
lit "se"
keys Tab
sleep 0.2
keys Tab
sleep 0.3
check "B17: Tab Tab shows the candidates once" \
  test "$(capture | grep -c 'select  set  setmetatable')" -eq 1
keys C-u Escape
keys q
wait_for "EXIT=0"

# ---- c: ? shows the focused panel first, with its meaning; keys say why they do nothing
start 80 24
started
keys M-4 ?
check "c: help starts with the focused panel" wait_for "4 Spectrum (the focused panel)"
check "c: and says what radial means" wait_for "radial: the"
keys Escape
keys M-6 Up
check "c: Up in panel 6 says where it works" \
  wait_for "Up does nothing in 6 Train/eval: it works in input"
keys M-2 Down Down Down Left
# Left steps a row back, Right up (review N12: on the eps row Right made eps smaller)
check "c: settings: arrows pick the eps row, Left steps it down (1e-6)" wait_re "eps +1e-06"
keys q
wait_for "EXIT=0"

# ---- themes and :w / :e
out=$("$NS" --theme purple 2>&1 </dev/null)
st=$?
check "--theme purple: exit status 2 (bad usage)" test "$st" -eq 2
check "--theme purple: says which themes exist" sh -c 'case "$1" in *"dark, light or contrast"*) exit 0;; *) exit 1;; esac' - "$out"
start 120 40 --theme light
started
# light's negative ink is colour 25 (dark's 33): the input's -2 is drawn in it
check "--theme light: its own colours" sgr '38;5;25m'
lua "w $tmp/saved.lua"
check ":w FILE saves the state" wait_for "state saved to $tmp/saved.lua"
check ":w wrote a set{} chunk" grep -q "^set{" "$tmp/saved.lua"
lua 'set{kind="rms"}'
wait_for "RMSNorm"
lua "e $tmp/saved.lua"
check ":e FILE loads it back (layer norm again)" wait_for "LayerNorm"
# c: the hint no longer invites a second colon, and one typed anyway is the prompt's
lua ':set{kind="rms"}'
check "c: :set{...} typed inside the prompt runs set{...}" wait_for "RMSNorm"
keys q
wait_for "EXIT=0"

done_testing
