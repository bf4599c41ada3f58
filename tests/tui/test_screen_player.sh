#!/bin/sh
# test_screen_player.sh: the lesson player in tmux, at the sizes and on the screens that
# issue 21 names: lesson 2 (000-15.1) at 80x24 shows its output rows and the spectrum's
# eigenvalue rows, nothing drawn over anything; lesson 15 (001-s06) shows the target and the
# companion rows together at 80x24 and 120x40; lesson 22 (002-01) shows all five rows of the
# running matrix at 80x24. Then the player's keys: n p Space step (n no longer negates), ~
# negates, = answers (in the pane and at the prompt), a wrong answer says how far off and
# reveals a hint, H the next hint, V another variant, a prediction asked before its step's
# set, the next lesson one key away at the end; and the layout dump draws the screen tmux
# shows.
. "${top_srcdir:-.}/tests/tui/test_screen-lib.sh"

not_shown() { ! capture | grep -qE -- "$1"; }
save() { lua ":w $tmp/$1.lua" && test -s "$tmp/$1.lua"; }
"$NS" lesson --states 000-15.1 >"$tmp/states2.txt" 2>&1
step_state() { awk -v k="$1" '/^-- step /{on = ($3 == k); next} on' "$tmp/states2.txt"; }
same_state() { step_state "$2" | cmp -s - "$1"; }

# ---- lesson 2 at 80x24: the output's four rows, the spectrum's entries, nothing garbled
start 80 24 lesson 2
check "lesson 2 at 80x24: step 1" wait_for "step 1/8"
for y in -1.26491 -0.63246 0.63246 1.26491; do
  check "  the output panel shows y = $y" wait_re "│ +[0-9] +$y "
done
check "  no line of one panel runs into another's (no APACK fragment)" not_shown "[0-9]APACK"
check "  the text's last line is on screen" wait_for "the output panel shows y = (-1.26, -0.63, 0.63, 1.26)."
keys n
check "n steps forward (not a negated cell)" wait_for "step 2/8"
save s2
check "  the state is step 2's, exactly" same_state "$tmp/s2.lua" 2
keys p
check "p steps back" wait_for "step 1/8"
keys Space
check "Space steps forward" wait_for "step 2/8"
keys '#'
lit 6
keys Enter
check "step 6: the spectrum panel is focused" wait_re "4 Spectrum[^│]*◀"
for e in ones radial bulk; do
  check "  its $e entry is on screen" wait_re "│$e +[0-9]"
done
check "  its header line whole" wait_for "label  m    closed    LAPACK  fin.diff"
check "  and its agreement line" wait_for "agree: max diff 2.7e-10"
keys q
wait_for "EXIT=0"

# ---- the headless layout dump draws what the terminal shows (lesson 2, step 1, 80x24)
start 80 24 lesson 2
wait_for "step 1/8"
sleep 0.3
capture | sed 's/ *$//' >"$tmp/tmux.txt"
"$NS" lesson --layout-screens 80x24 2 | awk '/^80x24 step 1:/{on=1; next} /^80x24 step/{on=0} on' |
  sed 's/^  |//; s/ *$//' >"$tmp/dump.txt"
check "the layout dump's screen is the one tmux shows" cmp -s "$tmp/tmux.txt" "$tmp/dump.txt"
[ $? -eq 0 ] || diff "$tmp/tmux.txt" "$tmp/dump.txt" | head -20 | sed 's/^/#   /'
keys q
wait_for "EXIT=0"

# ---- lesson 15: the target and its companion together, at both sizes; a prediction
for size in "80 24" "120 40"; do
  set -- $size
  start "$1" "$2" lesson 15
  check "lesson 15 at $1x$2: step 1" wait_for "step 1/4"
  check "  the target row is on screen" wait_re "T(▶|>)1 +0 "
  check "  and the companion row with it" wait_re "C 2 +2 "
  keys n
  check "  step 2 asks its question first" wait_for "Predict first:"
  check "  with its choices" wait_for "3) flip to about +1"
  check "  and the batch is still step 1's" wait_re "C 2 +2 "
  keys =
  check "  = asks for the answer" wait_for "answer = _"
  lit 3
  keys Enter
  check "  the answer is recorded, the truth shown" wait_for "You predicted 3. What happens: 3) flip to about +1 (right)"
  check "  and the step's set is applied (the companion is -2)" wait_re "C 2 +-2 "
  keys q
  wait_for "EXIT=0"
done

# ---- lesson 22 at 80x24: the running matrix's five rows; a numeric answer, hints, variants
start 80 24 lesson 22
wait_for "step 1/4"
keys n
check "lesson 22 step 2 at 80x24" wait_for "step 2/4"
for r in "T(▶|>)1 +1 +3 +7 +2" " 2 +2 +5 +11 +4" " 3 +4 +7 +13 +8" " 4 +7 +9 +17 +10" "C 5 +11 +15 +23 +14"; do
  check "  the batch row /$r/ is on screen" wait_re "$r"
done
keys q
wait_for "EXIT=0"
start 120 40 lesson 22
wait_for "step 1/4"
keys n n
check "step 3 (120x40) asks for a number" wait_for "? type = and your number"
check "  the question does not give its answer" not_shown "29\.76"
keys =
lit 29
keys Enter
check "a wrong answer says how far off" wait_for "29 is too low by 0.76"
check "  and reveals the first hint" wait_for "Hint 1/3: Its mean first"
keys H
check "H reveals the next hint, with the column's numbers" wait_for "Column 3 is (7, 11, 13, 17, 23)"
keys =
lit "148.8/5"
keys Enter
check "an expression is an answer: right" wait_for "29.76 is right"
check "  the step is marked done" wait_re "step 3/4 . . ✓ "
keys V
check "V draws another variant" wait_for "variant 2 of the numbers"
check "  the answer is asked again" wait_for "? type = and your number"
lua '= 1e6'
check "at the prompt, = answers too (wrong: how far off)" wait_for "1e+06 is too high"
keys R
check "R goes back to the step's own numbers" wait_re "C 5 +11 +15 +23 +14"
keys q
wait_for "EXIT=0"

# ---- with a lesson open ~ negates a cell (n steps); at the end, the next lesson is one key away
start 80 24 lesson 15
wait_for "step 1/4"
keys '#'
lit 4
keys Enter
wait_for "step 4/4"
keys n
check "n at the last step names the next lesson" wait_for "n again opens the next one, 001-s07"
keys n
check "  n again opens it" wait_for "step 1/"
check "  it is the next lesson" wait_for "lesson 001-s07"
keys Tab
keys '~'
check "~ negates a cell with a lesson open" wait_re "│ +[0-9,]+ +-?[0-9]"
keys q
wait_for "EXIT=0"

done_testing
